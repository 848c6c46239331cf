"""Four-player chess online when every human gives up (issue 26, items 10 and 12), at
80x24 in both languages: the reason stands before the ranking (it stood beside the
computer seat that did not resign: "… Green (computer easy) 0 points (resignation)"),
the computer seat that played on ranks first alone and the three who resigned share
second (all four ranked first before), and the status line keeps every
member's score whole when the ranking does not fit ("Score alice 0 · bob 0 …" dropped one)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_shell_life_online import run, said, seen_in_lobby

from p2p.shell.connect import attach
from p2p.shell.testing import HeadlessShell

peer_mod = pytest.importorskip("p2p.peer")
Peer = peer_mod.Peer

WORDS = {"en": ("Round 1 over (resignation): ranking 1. Green (computer", "(resignation)", "Score tester 0 · alice 0 · bob 0"),
         "de": ("Runde 1 vorbei (Aufgabe): Rangfolge 1. Grün (Computer", "(Aufgabe)", "Stand tester 0 · alice 0 · bob 0")}


@pytest.mark.parametrize("lang", ["en", "de"])
def test_all_humans_resign_in_chess4_at_80x24(tmp_path: Path, broker_url: str, lang: str) -> None:
    over, why, score = WORDS[lang]

    async def scenario() -> None:
        async with Peer(broker_url, nick="alice") as alice, Peer(broker_url, nick="bob") as bob, \
                HeadlessShell(config_dir=tmp_path, lang=lang, broker=broker_url, rows=24, columns=80,
                              startup=attach(broker_url)) as h:
            await h.wait_for(lambda: h.controller.online is not None and h.controller.online.connected(), 10)
            await seen_in_lobby(h, "alice")
            await seen_in_lobby(h, "bob")
            await h.type_line("/invite alice bob chess4 start=me")
            await h.wait_for(lambda: alice.invitations and bob.invitations, 10)
            ra = await alice.invitations[-1].accept()
            rb = await bob.invitations[-1].accept()
            await h.wait_for(lambda: h.controller.online.round is not None and h.controller.online.round.is_my_turn, 20)
            await h.type_line("/resign" if lang == "en" else "/aufgeben")
            await ra.wait_turn(20)
            await ra.resign()
            await rb.wait_turn(20)
            await rb.resign()
            line = await said(h, over, 20)
            assert line.count(why) == 1 and f"points {why}" not in line and f"Punkte {why}" not in line, line
            # the computer that played on is first alone; the three who resigned share second
            # (all four were "1." before: equal points shared the first place)
            ranking = line.split(": ", 1)[1]
            assert ranking.count("1. ") == 1 and ranking.count("2. ") == 3, line
            assert h.controller.online.round.winners == (3,)  # the chain's result: Green alone
            rows = h.shell._status_rows()
            assert len(rows) <= 2 and all(len(r) <= 78 for r in rows), rows
            assert rows[-1].endswith(score), rows

    run(scenario())
