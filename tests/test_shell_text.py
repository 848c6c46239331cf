"""What the shell says, typed into the real shell (headless pipe input, rendered screen):
analysis wording, chess4 notices, ends and refusals, the screen's wrapping and prompt."""

from __future__ import annotations

import asyncio
import itertools
import re
from pathlib import Path

import pytest

from p2p.shell.testing import HeadlessShell


def run(coro, timeout: float = 90):
    return asyncio.run(asyncio.wait_for(coro, timeout))


def fast_clock(h: HeadlessShell) -> None:
    counter = itertools.count(1000)
    h.controller.clock = lambda: float(next(counter))


def chat_texts(h: HeadlessShell) -> list[str]:
    return [line.text for line in h.controller.state.lines]


# -- analysis (issue 11.9) -----------------------------------------------------------------


def test_analysis_estimates_early_moves_and_counts_exactly_the_marked_mistakes(tmp_path: Path) -> None:
    """Yellow does not block Red's three in column 4 (move 6): found although the solver
    cannot answer that early; the summary counts exactly the lines that say "mistake"."""
    pytest.importorskip("p2p.ai.connect4_ai")

    async def scenario() -> None:
        async with HeadlessShell(config_dir=tmp_path, lang="en", columns=120, rows=40) as h:
            fast_clock(h)
            await h.type_line("/play connect4")
            for col in ["4", "1", "4", "1", "4", "2", "4"]:
                await h.type_line(col, settle=0.0)
            await h.wait_screen("over: Red wins")
            await h.type_line("/analyze")
            await h.wait_for(lambda: any(t.startswith("Analysis done") for t in chat_texts(h)), 60)
            lines = chat_texts(h)
            reviews = [t for t in lines if t.startswith("Move ")]
            assert len(reviews) == 7
            assert not any("too early" in t or "(unknown)" in t for t in reviews)
            assert sum("(estimate)" in t for t in reviews) >= 5
            move6 = next(t for t in reviews if t.startswith("Move 6 "))
            assert "mistake" in move6 and "loses" in move6
            marked = sum("mistake" in t for t in reviews)
            summary = next(t for t in lines if t.startswith("Analysis done"))
            assert re.search(rf"\b{marked} mistakes\b", summary), (summary, reviews)
            assert any("strongest search" in t for t in lines)

    run(scenario())


# -- four-player chess notices (issue 11.6) -------------------------------------------------

MATE_LINE = [
    "e1-d3", "b9-c9", "e13-e11", "m9-k9", "d1-e1", "a8-f13", "g14-f13", "k9-j9", "d3-b4", "a4-b4",
    "i13-i11", "m11-k11", "f2-f4", "b4-f4", "f13-e12", "m8-l8", "g1-b6", "a7-b6", "h14-k11", "n11-k11",
    "g2-g4", "f4-f1", "f14-e13", "n9-k6", "e1-f1", "b10-c10",
]
"""Four people at one keyboard; the last move (Blue) checkmates Yellow."""


@pytest.mark.parametrize("lang", ["en", "de"])
def test_chess4_says_check_mate_elimination_and_points(tmp_path: Path, lang: str) -> None:
    async def scenario() -> None:
        async with HeadlessShell(config_dir=tmp_path, lang=lang, columns=100, rows=40) as h:
            fast_clock(h)
            await h.type_line("/play chess4 2p")
            game = h.controller.match.game
            saw_marker = False
            for move in MATE_LINE:
                await h.type_line(move, settle=0.0)
                await h.wait_for(lambda: game.history()[-1:] == [move], 5)
                if any(game.in_check(s) for s in range(4) if s not in game.eliminated()):
                    screen = await h.wait_screen("+ check:" if lang == "en" else "+ Schach:")
                    board = screen.split("│")
                    assert any(re.search(r"\+[rbygü]K", cell) for cell in board), screen
                    saw_marker = True
            assert game.eliminated() == (2,)
            texts = chat_texts(h)
            if lang == "en":
                assert saw_marker and any(t.endswith("is in check (from Blue).") or "is in check" in t for t in texts)
                assert "Blue checkmates Yellow – Yellow is out." in texts
                assert any(re.fullmatch(r"Blue: \+20 points \(checkmate\), now \d+\.", t) for t in texts), texts
                assert any(re.search(r": \+\d+ points \(capture\), now \d+\.", t) for t in texts)
                screen = h.screen()
                assert "out: Yellow" in screen and "D promoted queen" in screen
            else:
                assert "Blau setzt Gelb matt – Gelb ist raus." in texts
                assert any(re.fullmatch(r"Blau: \+20 Punkte \(Matt\), jetzt \d+\.", t) for t in texts), texts
                assert "raus: Gelb" in h.screen() and "U umgewandelte Dame" in h.screen()

    run(scenario())


def test_chess4_points_line_wraps_inside_the_board_pane() -> None:
    from prompt_toolkit.formatted_text import fragment_list_to_text

    from p2p.games import create_game
    from p2p.shell.boards import BoardView, render
    from p2p.shell.chess4_view import BOARD_WIDTH
    from p2p.shell.i18n import Translator

    game = create_game("chess4", {})
    game.position.scores[:] = [120, 135, 140, 155]  # type: ignore[attr-defined]
    for lang in ("de", "en"):
        text = fragment_list_to_text(render(game, BoardView(color=False), Translator(lang)))
        assert all(len(line) <= BOARD_WIDTH for line in text.splitlines()), text
        assert "155" in text and ("Grün" in text or "Green" in text)
