"""Slow rounds in the shell (issue 20): ``/invite ... turn=1d`` and the invitation shows it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from p2p.shell.connect import attach
from p2p.shell.i18n import Translator
from p2p.shell.testing import HeadlessShell
from p2p.shell.turn_limit import parse_turn_limit, say_turn_limit

peer_mod = pytest.importorskip("p2p.peer")


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("1d", 86_400), ("30m", 1800), ("2h", 7200), ("90", 5400), ("2t", 172_800), ("3std", 10_800),
     ("59s", None), ("31d", None), ("1x", None), ("", None), ("-1d", None), ("1.5h", None)],
)
def test_parse_turn_limit(text: str, seconds: int | None) -> None:
    assert parse_turn_limit(text) == seconds


def test_a_turn_limit_is_said_in_both_languages() -> None:
    assert say_turn_limit(Translator("en"), 86_400) == "1 day"
    assert say_turn_limit(Translator("de"), 172_800) == "2 Tage"
    assert say_turn_limit(Translator("en"), 7200) == "2 hours"
    assert say_turn_limit(Translator("de"), 1800) == "30 min"


def test_slow_invitations_both_ways_in_the_shell(tmp_path: Path, broker_url: str) -> None:
    async def scenario() -> None:
        async with HeadlessShell(
            config_dir=tmp_path, lang="de", broker=broker_url, startup=attach(broker_url),
            columns=160, rows=40,
        ) as h:
            await h.wait_screen("Verbunden mit", 10)
            my_id = h.controller.online.peer.peer_id
            async with peer_mod.Peer(broker_url, nick="bob") as bob:
                for _ in range(200):
                    if bob.find_peer(my_id[:8]) is not None and h.controller.online.peer.find_peer("bob"):
                        break
                    await asyncio.sleep(0.05)
                # bob invites us to a slow round: the invitation says the limit, in German
                rnd = await bob.invite([my_id[:8]], "connect4", start=0, turn_limit=86_400)
                assert rnd.turn_limit == 86_400
                await h.wait_for(lambda: any("Langsame Runde: 1 Tag pro Zug" in x
                                             for x in h.controller.state.text_lines()), 10)
                await h.type_line("/decline")
                await asyncio.sleep(0.3)
                # a bad limit: one line, nothing sent
                await h.type_line("/invite bob connect4 turn=5x")
                await h.wait_for(lambda: any("turn= braucht eine Dauer" in x
                                             for x in h.controller.state.text_lines()), 5)
                assert bob.invitations == []
                # our slow invitation reaches bob with its limit
                await h.type_line("/invite bob connect4 turn=2h")
                for _ in range(200):
                    if bob.invitations:
                        break
                    await asyncio.sleep(0.05)
                (invitation,) = bob.invitations
                assert invitation.turn_limit == 7200
                theirs = await invitation.accept()
                assert theirs.turn_limit == 7200

    asyncio.run(asyncio.wait_for(scenario(), 60))
