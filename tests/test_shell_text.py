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
