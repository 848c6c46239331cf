"""``/replay`` of a round that ended without a move (issue 26.8) says so, in both
languages, instead of "Replay only after the round has ended"."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_shell_life_online import online_shell, run, said, status

peer_mod = pytest.importorskip("p2p.peer")
Peer = peer_mod.Peer

WORDS = {"en": ("The round ended without a move", "Round 1 over", "Replay only after"),
         "de": ("Die Runde endete ohne einen Zug", "Runde 1 vorbei", "Wiedergabe erst nach")}


@pytest.mark.parametrize("lang", ["en", "de"])
def test_replay_of_a_round_over_without_moves_says_there_is_nothing(tmp_path: Path, broker_url: str,
                                                                   lang: str) -> None:
    nothing, over, wrong = WORDS[lang]

    async def scenario() -> None:
        async with Peer(broker_url, nick="alice") as alice, online_shell(tmp_path, broker_url, lang=lang) as h:
            await h.wait_for(lambda: h.controller.online is not None and h.controller.online.connected(), 10)
            my_id = h.controller.online.peer.peer_id
            await h.wait_for(lambda: alice.find_peer(my_id[:8]) is not None, 10)
            ra = await alice.invite([my_id[:8]], "connect4", start=0)
            await h.wait_for(lambda: h.controller.online.commands.pending() is not None, 10)
            await h.type_line("/accept")
            await ra.wait_turn(20)
            await ra.resign()  # alice gives up before the first move
            await said(h, over, 20)
            await h.type_line("/replay")
            await said(h, nothing)
            assert not any(wrong in x for x in h.controller.state.text_lines())
            assert h.controller.online.replay_ply is None
            assert over.split()[0] in status(h)

    run(scenario())


@pytest.mark.parametrize("lang", ["en", "de"])
def test_replay_while_the_round_runs_still_says_after_the_end(tmp_path: Path, broker_url: str, lang: str) -> None:
    nothing, _over, wrong = WORDS[lang]

    async def scenario() -> None:
        async with Peer(broker_url, nick="alice") as alice, online_shell(tmp_path, broker_url, lang=lang) as h:
            await h.wait_for(lambda: h.controller.online is not None and h.controller.online.connected(), 10)
            my_id = h.controller.online.peer.peer_id
            await h.wait_for(lambda: alice.find_peer(my_id[:8]) is not None, 10)
            ra = await alice.invite([my_id[:8]], "connect4", start=0)
            await h.wait_for(lambda: h.controller.online.commands.pending() is not None, 10)
            await h.type_line("/accept")
            await ra.wait_turn(20)
            await h.type_line("/replay")
            await said(h, wrong)
            assert not any(nothing in x for x in h.controller.state.text_lines())

    run(scenario())
