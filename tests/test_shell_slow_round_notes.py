"""Slow rounds (issue 26.16), through the real shell in both languages: inviting while a
slow round is on the board said "No game" (as if that round had gone) until the answer,
and again after a decline; a live move in another slow round that takes the board there
was never listed in the chat.

Now the board keeps the running slow round while the invitation waits (its moves are
listed, a move typed goes to it), the status line says whom we invited, a decline puts
that round back on the board, and a move elsewhere that takes the board is listed."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_shell_many_rounds import DAY_S, accept, lines, run, said, shell

peer_mod = pytest.importorskip("p2p.peer")
Peer = peer_mod.Peer

WORDS = {"en": {"waiting": "Invitation to dave for Connect Four · waiting for an answer", "idle": "No game",
                "shown": "On the board (/rounds", "moved_bob": "Red (bob): 3", "moved_carol": "Red (carol): 5",
                "mine": "Yellow (you): 2", "declined": "dave declined", "title": "Connect Four"},
         "de": {"waiting": "Einladung an dave zu Vier in einer Reihe · warte auf Antwort", "idle": "Kein Spiel",
                "shown": "Auf dem Brett (/rounds", "moved_bob": "Rot (bob): 3", "moved_carol": "Rot (carol): 5",
                "mine": "Gelb (du): 2", "declined": "dave hat abgelehnt", "title": "Vier in einer Reihe"}}


@pytest.mark.parametrize("lang", ["en", "de"])
def test_an_invitation_and_a_move_that_takes_the_board_are_said(tmp_path: Path, broker_url: str, lang: str) -> None:
    w = WORDS[lang]

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
                # a live invitation while a slow round is on the board: whom, not "No game";
                # the board keeps the slow round
                await h.wait_for(lambda: any(e.nick == "dave" for e in h.controller.state.lobby), 10)
                await h.type_line("/invite dave connect4")
                await h.wait_for(lambda: w["waiting"] in h.controller.status_text(), 10)
                assert w["idle"] not in h.controller.status_text()
                await h.wait_for(lambda: w["title"] in h.screen() and w["idle"] not in h.screen(), 10)
                # carol moves in the slow round on the board: listed; our answer goes to that round
                await slow_carol.play("5")
                await said(h, w["moved_carol"], 15)
                await h.wait_for(lambda: h.controller.current_game().history() == ["5"], 10)  # on the board
                await h.wait_for(lambda: any(r.id == slow_carol.id and r.is_my_turn for r in me.rounds.values()), 15)
                await h.type_line("2")
                await slow_carol.wait_turn(15)
                await said(h, w["mine"], 10)
                assert slow_carol.game.history() == ["5", "2"]
                await h.wait_for(lambda: dave.invitations, 10)
                await dave.invitations[-1].decline()
                # the decline said, and the slow round is back on the board (not "No game")
                await said(h, w["declined"], 15)
                await said(h, w["shown"], 15)
                await h.wait_for(lambda: h.controller.online.round.id == slow_carol.id, 10)
                await h.wait_for(lambda: w["idle"] not in h.controller.status_text() and w["idle"] not in h.screen(), 10)
                # bob moves in his slow round (live): the board goes there, and the move is listed
                await h.wait_for(lambda: not me.busy, 10)
                shown = sum(w["shown"] in x for x in lines(h))  # 2 if carol's start came after our invite
                await slow_bob.play("3")
                await said(h, w["shown"], 15, count=shown + 1)
                await said(h, w["moved_bob"], 10)
                await h.wait_for(lambda: h.controller.online.round.id == slow_bob.id, 10)

    run(scenario())


def test_a_round_accepted_before_our_invitation_takes_the_board_when_it_starts(tmp_path: Path,
                                                                               broker_url: str) -> None:
    """The race behind the reverted early invitation (issue 28 item 3), in a fixed order: we
    accept a slow round whose start is not in yet (a third seat has not answered) and invite
    someone before it starts. The board kept the slow round shown before it, and the
    accepted round's start and moves were never shown (its moves were not listed, its board
    never drawn) -- whether a start comes before or after our invitation goes out is a
    matter of timing. Now the round we accepted takes the board when it starts, whichever
    comes first, and goes back on it after the decline."""

    async def scenario() -> None:
        async with Peer(broker_url, nick="bob") as bob, Peer(broker_url, nick="carol") as carol, \
                Peer(broker_url, nick="dave") as dave, Peer(broker_url, nick="eve") as eve:
            async with shell(tmp_path, broker_url) as h:
                await h.wait_for(lambda: h.controller.online is not None and h.controller.online.connected(), 10)
                online = h.controller.online
                me = online.peer
                for other in (bob, carol, dave, eve):
                    await h.wait_for(lambda o=other: o.find_peer(me.peer_id) is not None, 10)
                await h.wait_for(lambda: all(me.find_peer(o.peer_id) is not None for o in (bob, carol, dave, eve)), 10)
                slow_bob = await accept(h, bob, slow=True, start=1)  # we start, then bob
                await h.wait_for(lambda: online.round.id == slow_bob.id and online.round.is_my_turn, 15)
                h.send("4")
                await slow_bob.wait_turn(15)  # bob to move: his round runs on our board
                # carol invites us and eve to a slow three-seat cube; we accept, eve not yet
                cube = await carol.invite([me.peer_id, eve.peer_id], "cube", start=0, turn_limit=DAY_S)
                await h.wait_for(lambda: me.invitation(cube.id) is not None, 10)
                await h.type_line("/accept")
                await h.wait_for(lambda: online.round.id == cube.id, 15)
                await h.wait_for(lambda: ("accept", me.public_key) in cube.machine.side, 15)
                assert me.rounds[cube.id].game is None  # accepted, not started
                await h.type_line("/invite dave connect4")
                await h.wait_for(lambda: "Invitation to dave for Connect Four" in h.controller.status_text(), 10)
                assert h.controller.current_game().history() == ["4"]  # bob's round, still running
                # eve accepts: carol's round starts while our invitation waits, and takes the board
                await h.wait_for(lambda: any(i.round_id == cube.id for i in eve.invitations), 10)
                await next(i for i in eve.invitations if i.round_id == cube.id).accept()
                await cube.wait_started(15)
                await cube.play("b2")
                await said(h, "Red (carol): b2", 15)  # listed (it was lost)
                await h.wait_for(lambda: h.controller.current_game().history() == ["b2"], 10)  # its board
                assert online.board_round() is me.rounds[cube.id]
                await said(h, "On the board (/rounds", 15)  # its start said where the board went
                # dave declines: the cube goes back on the board, not bob's round
                await h.wait_for(lambda: dave.invitations, 10)
                await dave.invitations[-1].decline()
                await said(h, "dave declined", 15)
                await h.wait_for(lambda: online.round.id == cube.id, 10)
                await h.wait_for(lambda: h.controller.current_game().history() == ["b2"], 10)

    run(scenario())
