"""Connect Four in the shell: the board with gravity, column numbers as moves, a lone
digit key as a whole move, the double-four note, the rules text."""

from __future__ import annotations

import re
from typing import cast

from prompt_toolkit.formatted_text import StyleAndTextTuples

from p2p.games import Game
from p2p.games.connect4 import Connect4
from p2p.shell.boards import (
    EMPTY_STYLE,
    HIGHLIGHT,
    PLAIN_STONES,
    BoardView,
    click,
    frag,
    seat_style,
)
from p2p.shell.game_view import GameView, Note
from p2p.shell.i18n import Translator
from p2p.shell.move_input import Outcome, Refused, Resolved

SHAPE = re.compile(r"^[pP]?\d{1,3}$")
"""A column (``4``), or a Pop Out move (``p4``)."""

RULES: tuple[str, str] = (
    """Vier in einer Reihe
Zwei Spieler (Rot, Gelb) werfen abwechselnd einen Stein in eine Spalte; er fällt nach unten.
Wer zuerst vier eigene Steine in einer Reihe hat (waagrecht, senkrecht, diagonal), gewinnt.
Volles Brett ohne Vierer: unentschieden.  Zug: die Spaltennummer (1-7).
Pop Out (popout=true): statt einzuwerfen darfst du einen eigenen Stein unten herausziehen (p3);
wer dabei Vierer für beide erzeugt, gewinnt; dreimal dieselbe Stellung ist unentschieden.""",
        """Connect Four
Two players (Red, Yellow) take turns dropping a stone into a column; it falls to the bottom.
The first with four own stones in a row (horizontal, vertical, diagonal) wins.
A full board without four is a draw.  Move: the column number (1-7).
Pop Out (popout=true): instead of dropping you may pull one of your stones out at the bottom (p3);
a pop that makes fours for both wins for the popper; the same position three times is a draw."""
)


def render_connect4(game: Game, view: BoardView, t: Translator) -> StyleAndTextTuples:
    """Columns 1..W with gravity; winning line(s) highlighted, the other stones dimmed."""
    width, height = cast(Connect4, game).width, cast(Connect4, game).height
    lines = getattr(game, "winning_lines", ())
    winning = {cell for line in lines for cell in line.cells}
    last = game.last_column() if hasattr(game, "last_column") else None
    out: StyleAndTextTuples = []
    for row in range(height - 1, -1, -1):
        out.append(frag("", "│"))
        for column in range(width):
            handler = click(view, str(column + 1))
            seat = game.cell(column, row)  # type: ignore[attr-defined]
            if seat < 0:
                out.append(frag(EMPTY_STYLE if view.color else "", " ·", handler))
                continue
            won = (column, row) in winning
            if view.color:
                style = seat_style(game, seat, view)  # the losing discs keep their colour
                if won:
                    style += " reverse"
                out.append(frag(style, " ●" if not won else " ◆", handler))
            else:
                stone = PLAIN_STONES[seat]
                out.append(frag("", " " + (stone.lower() if winning and not won else stone), handler))
        out.append(frag("", " │\n"))
    out.append(frag("", "└" + "─" * (2 * width + 1) + "┘\n"))
    out.append(frag("", " "))
    for column in range(width):
        label = str(column + 1)[-1]
        style = HIGHLIGHT if (last == column and view.color) else ""
        out.append(frag(style, " " + label, click(view, str(column + 1))))
    out.append(frag("", "\n"))
    if last is not None and not view.color:
        out.append(frag("", " " + "  " * last + " ^\n"))
    if getattr(game, "popout", False):
        out.append(frag("", f" Pop Out: p1..p{width}\n"))
    return out


def connect4_width(game: Game) -> int:
    """Two columns per board column and the frame."""
    return 2 * cast(Connect4, game).width + 3


def resolve(game: Game, raw: str, selected: str | None = None, letters: str = "") -> Outcome:
    """A column within the board, or "no column 9"."""
    width = int(game.options().get("width", 7))
    digits = raw[1:] if raw[:1] in "pP" else raw
    if digits.isdigit() and not 1 <= int(digits) <= width:
        return Refused("move.no_column", {"column": int(digits), "width": width})
    return Resolved(raw)


def off_board(game: Game, text: str) -> Refused | None:
    """"No column 9" on a 7-column board, whoever is to move."""
    outcome = resolve(game, text.strip())
    return outcome if isinstance(outcome, Refused) else None


def notes(game: Game) -> list[Note]:
    """A double four, or fours for both after a pop."""
    lines = getattr(game, "winning_lines", ())
    if len(lines) < 2:
        return []
    owners = {line.seat for line in lines}
    if len(owners) > 1:
        return [("c4.both", {})]
    return [("c4.double", {"seat": next(iter(owners)), "count": len(lines)})]


def single_key(game: Game) -> bool:
    """A lone digit is a move on boards of at most 9 columns (wider ones need two)."""
    return int(game.options().get("width", 7)) <= 9


VIEW = GameView(
    rules=RULES, render=render_connect4, width=connect4_width, shape=SHAPE, resolve=resolve,
    off_board=off_board, notes=notes, single_key=single_key, default_mode="2p",
    move_help=("1..7", "1..7"),
)
