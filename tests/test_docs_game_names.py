"""README and docs/shell.md name every game as the screen does, in both languages (the
registry's titles), and say that there is no private message command (issue 26.17)."""

from __future__ import annotations

from pathlib import Path

import pytest

from p2p.games import game_names, spec

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("doc", ["README.md", "docs/shell.md"])
def test_the_docs_name_every_game_as_the_screen_does(doc: str) -> None:
    text = " ".join((ROOT / doc).read_text(encoding="utf-8").split())  # words, not line breaks
    for name in game_names():
        if name.startswith("toy"):
            continue
        german, english = spec(name).title
        assert german in text and english in text, (doc, name, spec(name).title)
    assert "no private message command" in text, doc
