"""Layout (issue 26.10): ``/help`` at 100 columns left a description's first word
hanging at the right edge behind the padding ("1..7 · a1..d4 · h2-h4        a"); at 80x24
the German offline lobby note ran out of its pane ("(nicht verbunden: /connect oder").
Through the real shell, rendered screen read back."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from p2p.shell.testing import HeadlessShell

HANGING = re.compile(r"\S {3,}\S+ *$")
"""A word after a wide gap at the right edge of the chat pane."""


@pytest.mark.parametrize(("lang", "columns", "rows"), [("en", 100, 40), ("de", 100, 40), ("en", 80, 24),
                                                       ("de", 80, 24)])
def test_help_descriptions_never_hang_at_the_edge(tmp_path: Path, lang: str, columns: int, rows: int) -> None:
    async def scenario() -> None:
        async with HeadlessShell(config_dir=tmp_path, lang=lang, columns=columns, rows=rows, color=False) as h:
            await h.type_line("/help")
            await h.wait_for(lambda: "/quit" in h.screen(), 5)
            chat = [row.split("││")[0] for row in h.screen().splitlines() if row.startswith("│")]
            assert not [row for row in chat if HANGING.search(row)], "\n".join(chat)
            assert any("/quit" in row for row in chat), "\n".join(chat)

    asyncio.run(asyncio.wait_for(scenario(), 30))


def test_the_german_offline_lobby_note_is_wrapped_not_cut_at_80x24(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with HeadlessShell(config_dir=tmp_path, lang="de", columns=80, rows=24, color=False) as h:
            await h.type_line("/play chess4")  # the board takes its width: the lobby pane is narrow
            await h.wait_for(lambda: h.controller.match is not None and "Schach zu viert" in h.screen(), 5)
            screen = h.screen()
            assert "/local)" in screen, screen
            assert "(nicht verbunden: /connect oder" in screen

    asyncio.run(asyncio.wait_for(scenario(), 30))
