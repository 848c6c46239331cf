"""The offline countdown counts to the forfeit the others really sign (issue 26.3): the
chain's offline limit from the head, and the forfeiter's grace of the limit plus a third
from when the goodbye arrived -- not "out in 0 s" at the limit and then a minute more."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_shell_life_online import bob_accepts, online_shell, run, said, status

from p2p.protocol.round import TurnTimeouts

peer_mod = pytest.importorskip("p2p.peer")
Peer = peer_mod.Peer

FAST = TurnTimeouts(silent_ms=600_000, offline_ms=30_000)
"""Offline limit 30 s: the grace is 40 s."""


@pytest.mark.parametrize("lang", ["en", "de"])
def test_the_offline_countdown_counts_to_the_limit_plus_a_third(tmp_path: Path, broker_url: str,
                                                               lang: str) -> None:
    words = {"en": ("you win in", r"bob offline · out in (\d+) s", "have (\\d+) s to come back"),
             "de": ("du gewinnst in", r"bob offline · raus in (\d+) s", "hast du (\\d+) s")}[lang]

    async def scenario() -> None:
        async with online_shell(tmp_path, broker_url, lang=lang, peer_options={"turn_timeouts": FAST}) as h:
            await h.wait_for(lambda: h.controller.online is not None and h.controller.online.connected(), 10)
            bob = Peer(broker_url, nick="bob", turn_timeouts=FAST)
            await bob.start()
            try:
                rb = await bob_accepts(h, bob, "connect4 start=bob")
                await rb.wait_turn(20)
                # our /quit warning names the time the others give us to come back
                await h.type_line("/quit")
                quit_line = next(x for x in h.controller.state.text_lines() if re.search(words[2], x))
                assert re.search(words[2], quit_line)[1] == "40", quit_line  # type: ignore[index]
            finally:
                await bob.close()  # bob quits on his turn: his goodbye says offline
            line = await said(h, f"bob {'went offline' if lang == 'en' else 'ist offline gegangen'}", 10)
            secs = int(re.search(rf"{words[0]} (\d+) s", line)[1])  # type: ignore[index]
            assert 35 <= secs <= 40, line  # the grace (40 s), not the limit (30 s)
            await h.wait_for(lambda: re.search(words[1], status(h)) is not None, 5)
            shown = int(re.search(words[1], status(h))[1])  # type: ignore[index]
            assert 31 <= shown <= 40, status(h)

    run(scenario())


@pytest.mark.parametrize("lang", ["en", "de"])
def test_a_member_who_goes_offline_before_his_turn_is_told_at_least_the_limit(tmp_path: Path, broker_url: str,
                                                                            lang: str) -> None:
    """Bob goes offline while it is our turn: the line names the least he will have once
    it is his turn (the limit, 30 s; it said "has 180 s" while the status line then
    counted from 237), and the status line's countdown after our move is not below it."""
    words = {"en": ("once it is bob's turn, bob has at least 30 s to return", r"bob offline · out in (\d+) s"),
             "de": ("ist bob am Zug, bleiben mindestens 30 s zum Zurückkommen", r"bob offline · raus in (\d+) s")}[lang]

    async def scenario() -> None:
        async with online_shell(tmp_path, broker_url, lang=lang, peer_options={"turn_timeouts": FAST}) as h:
            await h.wait_for(lambda: h.controller.online is not None and h.controller.online.connected(), 10)
            bob = Peer(broker_url, nick="bob", turn_timeouts=FAST)
            await bob.start()
            try:
                await bob_accepts(h, bob, "connect4 start=me")
                await h.wait_for(lambda: h.controller.online.round is not None
                                 and h.controller.online.round.is_my_turn, 20)
            finally:
                await bob.close()  # bob quits while it is our turn
            await said(h, words[0], 10)
            await h.type_line("4")
            await h.wait_for(lambda: re.search(words[1], status(h)) is not None, 10)
            shown = int(re.search(words[1], status(h))[1])  # type: ignore[index]
            assert 30 <= shown <= 40, status(h)

    run(scenario())
