"""Slow rounds (issue 26.16), through the real shell in both languages: inviting while a
slow round is on the board said "No game" (as if that round had gone) until the answer;
a live move in another slow round that takes the board there was never listed in the chat."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_shell_many_rounds import accept, run, said, shell

peer_mod = pytest.importorskip("p2p.peer")
Peer = peer_mod.Peer

WORDS = {"en": ("Invitation to dave for Connect Four · waiting for an answer", "No game",
                "On the board (/rounds", "Red (bob): 3"),
         "de": ("Einladung an dave zu Vier in einer Reihe · warte auf Antwort", "Kein Spiel",
                "Auf dem Brett (/rounds", "Rot (bob): 3")}


@pytest.mark.parametrize("lang", ["en", "de"])
def test_an_invitation_and_a_move_that_takes_the_board_are_said(tmp_path: Path, broker_url: str, lang: str) -> None:
    waiting, idle, shown, moved = WORDS[lang]

    async def scenario() -> None:
        async with Peer(broker_url, nick="bob") as bob, Peer(broker_url, nick="carol") as carol, \
                Peer(broker_url, nick="dave") as dave:
            async with shell(tmp_path, broker_url, lang) as h:
                await h.wait_for(lambda: h.controller.online is not None and h.controller.online.connected(), 10)
                me = h.controller.online.peer
                for other in (bob, carol, dave):
                    await h.wait_for(lambda o=other: o.find_peer(me.peer_id) is not None, 10)
                slow_bob = await accept(h, bob, slow=True, start=1)  # we start, then bob
                await h.wait_for(lambda: h.controller.online.round.id == slow_bob.id
                                 and h.controller.online.round.is_my_turn, 15)
                h.send("4")
                await slow_bob.wait_turn(15)  # bob to move in the slow round
                slow_carol = await accept(h, carol, slow=True, start=0)  # carol to move
                await h.wait_for(lambda: h.controller.online.round.id == slow_carol.id, 15)
                # a live invitation while a slow round is on the board: whom, not "No game"
                await h.wait_for(lambda: any(e.nick == "dave" for e in h.controller.state.lobby), 10)
                await h.type_line("/invite dave connect4")
                await h.wait_for(lambda: waiting in h.controller.status_text(), 10)
                assert idle not in h.controller.status_text()
                await h.wait_for(lambda: dave.invitations, 10)
                await dave.invitations[-1].decline()
                # bob moves in his slow round (live): the board goes there, and the move is listed
                await h.wait_for(lambda: not me.busy, 10)
                await slow_bob.play("3")
                await said(h, shown, 15)
                await said(h, moved, 10)
                assert h.controller.online.round.id == slow_bob.id

    run(scenario())
