"""One language at a time: the catalogues are complete, and a whole session in German
(English) shows no line of English (German).

The session tests type into the real shell (headless, pipe input) and read every chat
line and the rendered screen; marker words that only one language uses must not appear
in the other language's session.
"""

from __future__ import annotations

import asyncio
import itertools
import re
from pathlib import Path

import pytest

from p2p.shell.i18n import CATALOGUE, HELP_LINES, Translator
from p2p.shell.testing import HeadlessShell

SAME_IN_BOTH = {
    # Words that really are the same in German and English (names, symbols, formats).
    "pane.lobby", "pane.lobby.offline", "pane.chat", "status.offline", "level.normal",
    "net.moved", "notice.untranslated", "board.points.line", "piece.owners.same",
    "turn.minutes", "turn.seconds",  # units: "min" and "s" in both
}
"""Keys whose German and English texts may be equal; every other key must differ."""

GERMAN_MARKERS = re.compile(
    r"\b(Runde|gewinnt|gewinnen|Zug|Spiel|nicht|und|ist|der|die|das|Stand|Brett|Stufe|"
    r"Computer einfach|Neuling|Meister|Strg|gast|Einladung|verlassen|aufgeben|Fehler|Ebene)\b"
)
ENGLISH_MARKERS = re.compile(
    r"\b(Round|round|wins|win|move|Move|not|the|is|and|Score|Board|level|Level|Ctrl|guest|"
    r"invitation|resign|mistake|mistakes|computer easy|beginner|master|starter|game over|"
    r"resignation|promoted|out)\b"
)
ALLOWED = re.compile(r"\{\w+\}|/\w+|\b\w+=\w+|connect4|chess4|cube|\bai\b|\b2p\b|h2-h4|\[.*?\]")
"""Command names, options and game ids are the same in both languages (typed by users)."""


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 120))


def test_every_key_in_both_catalogues_differs_where_it_should() -> None:
    same = []
    for key, pair in CATALOGUE.items():
        assert isinstance(pair, tuple) and len(pair) == 2, key
        de, en = pair
        assert de.strip() and en.strip(), f"{key}: a language is empty"
        assert set(re.findall(r"{(\w+)(?::[^}]*)?}", de)) == set(re.findall(r"{(\w+)(?::[^}]*)?}", en)), key
        if de == en and key not in SAME_IN_BOTH and not key.startswith("seat.Player"):
            same.append(key)
    assert same == [], f"same text in German and English: {same}"
    # Each language's half of every key holds no marker of the other language.
    mixed = []
    for key, (de, en) in CATALOGUE.items():
        if key.startswith(("piece.letters", "piece.owners")):
            continue
        if ENGLISH_MARKERS.search(ALLOWED.sub("", de)):
            mixed.append((key, de))
        if GERMAN_MARKERS.search(ALLOWED.sub("", en)):
            mixed.append((key, en))
    assert mixed == []
    for (keys_de, keys_en), (de, en) in HELP_LINES:
        assert de != en and keys_de and keys_en
        assert not ENGLISH_MARKERS.search(ALLOWED.sub("", keys_de + " " + de)), (keys_de, de)
        assert not GERMAN_MARKERS.search(ALLOWED.sub("", keys_en + " " + en)), (keys_en, en)


def test_engine_reasons_have_a_text_in_both_languages() -> None:
    """Every code an engine raises has a ``reason.<code>`` text (no English in German)."""
    codes: set[str] = set()
    root = Path(__file__).resolve().parents[1] / "p2p" / "games"
    pattern = re.compile(r"""(?:MalformedMove|IllegalMove|OptionError)\(\s*f?["'][^"']*["'],\s*"(\w+)\"""")
    for path in root.rglob("*.py"):
        codes |= set(pattern.findall(path.read_text(encoding="utf-8")))
    assert len(codes) > 20
    base = Path(__file__).resolve().parents[1] / "p2p"
    actions = re.compile(r"""ActionError\(\s*f?"[^"]*",\s*"(\w+)\"""")
    for path in [*(base / "peer").glob("*.py"), *(base / "protocol").glob("round*.py")]:
        codes |= set(actions.findall(path.read_text(encoding="utf-8")))
    assert {"busy", "code_unknown", "not_your_turn"} <= codes
    has = Translator("de").has  # the shared catalogue or the game's own view (GameView.texts)
    assert sorted(c for c in codes if not has(f"reason.{c}")) == []
    from p2p.games import create_game
    from p2p.games.base import MoveError

    game = create_game("chess4", {})
    with pytest.raises(MoveError) as err:
        game.push("h2-h5")
    assert "kann nicht nach h5" in Translator("de").reason(err.value)
    assert "cannot move to h5" in Translator("en").reason(err.value)


def _fast_clock(h: HeadlessShell) -> None:
    counter = itertools.count(1000)
    h.controller.clock = lambda: float(next(counter))


def _foreign(lines: list[str], lang: str) -> list[str]:
    marker = ENGLISH_MARKERS if lang == "de" else GERMAN_MARKERS
    return [line for line in lines if marker.search(ALLOWED.sub("", line))]


async def _session(tmp_path: Path, lang: str) -> tuple[list[str], list[str]]:
    """Every game once, help, levels, bad input, analysis: all chat lines and screens."""
    screens: list[str] = []
    async with HeadlessShell(config_dir=tmp_path, lang=lang, columns=120, rows=40,
                             settings=None) as h:
        _fast_clock(h)
        h.controller.analysis_nodes = 20_000

        async def step(line: str, wait: float = 0.05) -> None:
            await h.type_line(line, settle=wait)
            screens.append(h.screen())

        async def play_out(limit: int = 400) -> None:
            game = h.controller.match.game
            for _ in range(limit):
                await h.wait_for(lambda: game.is_over() or not h.controller.match.computer_to_move(), 30)
                if game.is_over():
                    break
                await step(game.legal_moves()[0], 0.0)
            await h.wait_for(lambda: game.is_over(), 30)
            await asyncio.sleep(0.1)
            screens.append(h.screen())

        await step("/help")
        await step("/play connect4")
        await step("9")
        await step("/level")
        await play_out()
        await step("/analyze")
        await h.wait_for(lambda: any("Analys" in line for line in h.controller.state.text_lines()[-3:]), 60)
        await step("/again")
        await step("/resign")
        await step("/play connect4 ai")
        await step("/stats")
        await step("/play connect4 width=99")
        await step("/play cube 2p")
        await step("z9")
        await play_out()
        await step("/play chess4 ai move_limit=8")
        await h.wait_for(lambda: not h.controller.match.computer_to_move(), 30)
        await step("h2-h5")
        await step("a1-a2")
        await play_out()
        await step("/frob")
        await step("/leave")
        screens.append(h.screen())
        lines = h.controller.state.text_lines()
    return lines, screens


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["de", "en"])
def test_a_whole_local_session_speaks_one_language(tmp_path: Path, lang: str) -> None:
    lines, screens = run(_session(tmp_path, lang))
    assert len(lines) > 40
    # Strip the clock and the chat pane's own move lines ("Rot: 4") before checking.
    texts = [line[6:] for line in lines]
    assert _foreign(texts, lang) == []
    board_lines = [row for screen in screens for row in screen.splitlines()]
    assert _foreign(board_lines, lang) == []
