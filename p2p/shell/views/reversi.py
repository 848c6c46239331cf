"""Reversi in the shell: the board with clickable squares, a square (``d3``) or ``pass``
(German ``passen``) as a move, notes on turned discs and passes, the game's own texts."""

from __future__ import annotations

import re

from prompt_toolkit.formatted_text import StyleAndTextTuples

from p2p.games import Game
from p2p.games.base import NULL_MOVE
from p2p.games.reversi import EMPTY, Reversi, board_moves, square_name
from p2p.shell.boards import EMPTY_STYLE, PLAIN_STONES, BoardView, click, frag, seat_style
from p2p.shell.game_view import GameView, Note
from p2p.shell.i18n import Translator
from p2p.shell.move_input import Outcome, Refused, Resolved

SHAPE = re.compile(r"^(?:[a-zA-Z]\d{1,2}|pass|passen)$", re.IGNORECASE)
"""A square (``d3``) or a pass (``pass``, ``passen``)."""

RULES: tuple[str, str] = (
    """Reversi
Schwarz und Weiß setzen abwechselnd einen Stein (8x8, oder 6x6 mit size=6).
Ein Stein muss mindestens eine Reihe gegnerischer Steine einschließen (waagrecht, senkrecht,
diagonal); alle eingeschlossenen Steine werden umgedreht.  Wer nicht setzen kann, passt
(passen).  Kann keiner mehr setzen, gewinnt, wer mehr Steine hat.  Zug: ein Feld (d3).""",
    """Reversi
Black and White take turns placing a disc (8x8, or 6x6 with size=6).
A disc must outflank at least one line of the opponent's discs (horizontal, vertical,
diagonal); every outflanked disc turns over.  Who cannot place a disc passes (pass).
When neither can, the one with more discs wins.  Move: a square (d3).""",
)

TEXTS: dict[str, tuple[str, str]] = {
    "reason.reversi_size": ("Reversi gibt es auf 8x8 oder 6x6 (size=8 oder size=6)", "Reversi is played on 8x8 or 6x6 (size=8 or size=6)"),
    "reason.reversi_no_pass": ("passen darf nur, wer keinen Stein setzen kann", "you may pass only when no disc can be placed"),
    "reason.reversi_must_pass": ("du kannst keinen Stein setzen: passen", "no disc can be placed: pass"),
    "reason.reversi_taken": ("{square} ist schon besetzt", "{square} is taken"),
    "reason.reversi_no_flip": ("ein Stein auf {square} schließt keinen Stein ein", "a disc on {square} outflanks no disc"),
    "reversi.no_square": ("{square} ist kein Feld (a1–{last})", "{square} is not a square (a1–{last})"),
    "reversi.turned": ("{seat} dreht {count:Stein|Steine} um.", "{seat} turns {count:disc|discs}."),
    "reversi.passed": ("{seat} passt.", "{seat} passes."),
    "reversi.must_pass": ("{seat} kann keinen Stein setzen und muss passen.", "{seat} cannot place a disc and must pass."),
    "reversi.discs": ("{seat}: {count:Stein|Steine}", "{seat}: {count:disc|discs}"),
}
"""The game's own catalogue entries (``GameView.texts``)."""

SEAT_STYLES = {"Black": "fg:ansiblack bg:ansiwhite bold", "White": "fg:ansiwhite bold"}
"""Black discs as dark marks on a light square, White as bright marks."""


def render(game: Game, view: BoardView, t: Translator) -> StyleAndTextTuples:
    """Rows from the top with their numbers, columns lettered; every square clickable;
    the last disc underlined, squares the side to move may play marked when asked."""
    assert isinstance(game, Reversi)
    size = game.size
    last = game.last_move()
    last_square = last[1] if last is not None else -1
    seat = game.to_move()
    playable = set(board_moves(game.cells, size, seat)) if view.show_legal and seat is not None else set()
    out: StyleAndTextTuples = []
    letters = " ".join(chr(ord("a") + c) for c in range(size))
    out.append(frag("", f"   {letters}\n"))
    for r in range(size):
        out.append(frag("", f"{r + 1:>2}"))
        for c in range(size):
            sq = r * size + c
            handler = click(view, square_name(sq, size))
            owner = game.cells[sq]
            if owner == EMPTY:
                mark = "*" if sq in playable else ("·" if view.color else ".")
                out.append(frag(EMPTY_STYLE if view.color else "", " " + mark, handler))
            else:
                mark = "●" if view.color else PLAIN_STONES[owner]
                style = seat_style(game, owner, view)
                if view.color and sq == last_square:
                    style += " underline"
                elif not view.color and sq == last_square:
                    mark = mark.lower()
                out.append(frag(style, " " + mark, handler))
        out.append(frag("", "\n"))
    for owner, (name, count) in enumerate(zip(game.seat_names(), game.scores())):
        out.append(frag(seat_style(game, owner, view), "●" if view.color else PLAIN_STONES[owner]))
        out.append(frag("", " " + t.t("reversi.discs", seat=t.seat(name), count=count) + "\n"))
    return out


def width(game: Game) -> int:
    """Two columns per square and the row numbers."""
    return 3 + 2 * int(game.size)  # type: ignore[attr-defined]  # a Reversi engine's board side


def resolve(game: Game, raw: str, selected: str | None = None, letters: str = "") -> Outcome:
    """A square, ``pass``/``passen``, or "d9 is not a square"."""
    low = raw.lower()
    if low in ("pass", "passen"):
        return Resolved(NULL_MOVE)
    size = int(game.size)  # type: ignore[attr-defined]  # a Reversi engine's board side
    last = square_name(size * size - 1, size)
    if len(low) < 2 or not "a" <= low[0] <= last[0] or not low[1:].isdigit() or not 1 <= int(low[1:]) <= size:
        return Refused("reversi.no_square", {"square": low, "last": last})
    return Resolved(low)


def off_board(game: Game, text: str) -> Refused | None:
    """"d9 is not a square", whoever is to move."""
    outcome = resolve(game, text.strip())
    return outcome if isinstance(outcome, Refused) else None


def notes(game: Game) -> list[Note]:
    """The discs the last move turned, or the pass; and whether the next seat must pass."""
    assert isinstance(game, Reversi)
    last = game.last_move()
    if last is None:
        return []
    seat, square, turned = last
    said: list[Note] = [("reversi.passed", {"seat": seat})] if square < 0 else [("reversi.turned", {"seat": seat, "count": len(turned)})]
    if game.legal_moves() == [NULL_MOVE]:
        said.append(("reversi.must_pass", {"seat": 1 - seat}))
    return said


VIEW = GameView(
    rules=RULES, render=render, width=width, shape=SHAPE, resolve=resolve, off_board=off_board,
    notes=notes, texts=TEXTS, move_help=("d3 · passen", "d3 · pass"), seat_styles=SEAT_STYLES,
    default_mode="ai",
)
