"""Stale or wrong text (issue 19), through the headless shell's real input: what stays
on the screen after it stopped being true, plurals, and lines cut or malformed."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path

from p2p.shell.testing import HeadlessShell


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 60))


def test_the_cube_preview_goes_away_with_the_move(tmp_path: Path) -> None:
    """Typing b2 showed the landing mark and "Preview b2: level 1"; after Enter played
    it, both stayed on the board until the next key."""
    async def scenario() -> None:
        async with HeadlessShell(config_dir=tmp_path, rows=30, columns=100) as h:
            await h.type_line("/play cube 2p")
            h.send("b2")
            await h.wait_screen("Preview b2: level 1")
            assert "◌" in h.screen()
            h.send("\r")
            await h.wait_for(lambda: h.controller.current_game().history() == ["b2"], 5)
            await asyncio.sleep(0.1)
            assert "Preview" not in h.screen(), h.screen()
            assert "◌" not in h.screen(), h.screen()

    run(scenario())


def test_plurals_in_both_languages(tmp_path: Path) -> None:
    """ "1 new line(s) of four, now 1 points" / "1 neue Viererreihe(n), jetzt 1 Punkte":
    one line and one point, in the shell's own words, German and English."""
    async def scenario(lang: str) -> list[str]:
        (tmp_path / lang).mkdir()
        async with HeadlessShell(config_dir=tmp_path / lang, lang=lang, columns=100, rows=30) as h:
            ticks = itertools.count(1000)
            h.controller.clock = lambda: float(next(ticks))  # no input lock between the moves
            await h.type_line("/play cube 2p")
            for move in ["a1", "b1", "a1", "b1", "a1", "b1", "a1"]:
                await h.type_line(move, settle=0.01)
            return h.controller.state.text_lines()

    english = run(scenario("en"))
    assert any("Red: 1 new line of four, now 1 point." in line for line in english), english
    german = run(scenario("de"))
    assert any("Rot: 1 neue Viererreihe, jetzt 1 Punkt." in line for line in german), german


def test_the_plural_formatter_counts_one_and_many() -> None:
    from p2p.shell.i18n import Translator

    t = Translator("de")
    assert t.t("net.resynced", count=1) == "Runde abgeglichen (1 Ereignis)."
    assert t.t("net.resynced", count=3) == "Runde abgeglichen (3 Ereignisse)."
    t = Translator("en")
    assert t.t("net.resynced", count=1) == "Round resynchronised (1 event)."
    assert "(1 move)" in t.t("round.resumed", code="c", game="g", moves=1)
    assert "(2 moves)" in t.t("round.resumed", code="c", game="g", moves=2)
    assert t.t("chess.points", seat="Red", delta="+1", why="capture", total=1) == "Red: +1 point (capture), now 1."


def test_the_status_line_breaks_between_parts_never_in_a_word() -> None:
    from p2p.shell.wrap import fit_status

    text = "Round 12 · To move: Yellow (bernadette-long) · Score annabelle-x 1 · bernadette-long 0 · carl 3"
    rows = fit_status(text, 78)
    assert len(rows) == 2 and all(len(r) <= 78 for r in rows), rows
    assert " · ".join(rows) == text  # nothing lost, only broken at a " · "
    words = set(text.split())
    assert all(w in words for r in rows for w in r.split()), rows
    three = fit_status(text + " · connected to wss://broker.example:8084/mqtt", 30)
    assert len(three) == 2 and three[-1].endswith("…") and all(len(r) <= 30 for r in three), three
    assert all(w in words | {"…", "·"} for r in three for w in r.split()), three


def test_the_status_line_of_three_long_names_at_80_columns(tmp_path: Path, broker_url: str) -> None:
    """"… bob 1 · car": the status line was cut at the terminal's edge."""
    import pytest

    peer_mod = pytest.importorskip("p2p.peer")
    from p2p.shell.connect import attach
    from p2p.shell.settings import Settings

    async def scenario() -> None:
        async with peer_mod.Peer(broker_url, nick="annabelle-longname") as anna, \
                peer_mod.Peer(broker_url, nick="bernadette-longname") as bern, \
                HeadlessShell(config_dir=tmp_path, broker=broker_url, startup=attach(broker_url),
                              settings=Settings(nick="carl-the-third-one"), rows=24, columns=80) as h:
            await h.wait_for(lambda: h.controller.online is not None and h.controller.online.connected(), 10)
            my_id = h.controller.online.peer.peer_id
            await h.wait_for(lambda: anna.find_peer(my_id[:8]) is not None and anna.find_peer("bernadette-longname")
                             is not None, 10)
            await anna.invite(["bernadette-longname", my_id[:8]], "cube", {"players": 3}, start=0)
            for _ in range(400):
                if bern.invitations:
                    break
                await asyncio.sleep(0.025)
            await bern.invitations[-1].accept()
            await h.wait_for(lambda: h.controller.online.commands.pending() is not None, 10)
            await h.type_line("/accept")
            await h.wait_for(lambda: "Round 1 · To move" in h.controller.status_text(), 20)
            text = h.controller.status_text()
            assert len(text) > 78, text
            await h.wait_for(lambda: "carl-the-third-one 0" in h.screen(), 5)
            rows = [r.strip() for r in h.screen().splitlines()[-3:-1]]  # the status rows above the input
            assert " · ".join(rows) == text, rows

    run(scenario())
