"""3D Connect Four in the shell: the four levels side by side with a landing preview,
pillars (``b3``) as moves, the lines a move scored, the rules text."""

from __future__ import annotations

import re
from typing import cast

from prompt_toolkit.formatted_text import StyleAndTextTuples

from p2p.games import Game
from p2p.games.cube import Cube
from p2p.shell.boards import EMPTY_STYLE, PLAIN_STONES, BoardView, click, frag, seat_style
from p2p.shell.game_view import GameView, Note
from p2p.shell.i18n import Translator
from p2p.shell.move_input import Outcome, Refused, Resolved

SHAPE = re.compile(r"^[a-zA-Z]\d{1,2}$")
"""A pillar: a letter and a number (``b3``; ``e9`` is refused as "no pillar")."""

RULES: tuple[str, str] = (
    """Viergewinnt 3D
Ein Würfel aus 4x4x4 Feldern, 16 Säulen a1-d4; ein Stein fällt auf die unterste freie Ebene.
Jede Viererreihe zählt einen Punkt: entlang Linien, Reihen, Säulen, Flächen- und Raumdiagonalen (76).
Eine Viererreihe beendet das Spiel nicht; es endet, wenn alle 64 Felder voll sind.
Die meisten Punkte gewinnen.  Zug: die Säule (b3).  Das Brett zeigt die vier Ebenen nebeneinander.""",
        """3D Connect Four
A 4x4x4 cube, 16 pillars a1-d4; a stone drops to the lowest free level.
Every line of four scores one point: along files, rows, pillars, plane and space diagonals (76).
A four does not end the game; it ends when all 64 cells are full.
Most points win.  Move: the pillar (b3).  The board shows the four levels side by side."""
)


def render_cube(game: Game, view: BoardView, t: Translator) -> StyleAndTextTuples:
    """The four levels side by side (level 1 = bottom on the left), with a landing preview."""
    from p2p.games.cube import SIZE, cell_index, pillar_name

    board: list[int] = cast(Cube, game).board
    last = game.last_cell()  # type: ignore[attr-defined]
    from p2p.games.cube import LINES

    # every scored line stays highlighted (not only the last move's), to the end
    completed = {c for lines in game.lines_of for i in lines for c in LINES[i]}  # type: ignore[attr-defined]
    preview_cell: int | None = None
    preview_text = ""
    if view.preview and not game.is_over():
        try:
            pillar = game.parse(view.preview)  # type: ignore[attr-defined]
        except ValueError:
            pillar = None
        if pillar is not None:
            level = game.heights[pillar]  # type: ignore[attr-defined]
            if level < SIZE:
                preview_cell = pillar + SIZE * SIZE * level
                preview_text = t.t("board.preview", pillar=pillar_name(pillar), level=level + 1)
    out: StyleAndTextTuples = []
    out.append(frag("", "   ".join(t.t("board.level", level=z + 1).ljust(9) for z in range(SIZE)).rstrip() + "\n"))
    for y in range(SIZE - 1, -1, -1):
        for z in range(SIZE):
            out.append(frag("", f"{y + 1}"))
            for x in range(SIZE):
                cell = cell_index(x, y, z)
                handler = click(view, pillar_name(x + SIZE * y))
                seat = board[cell]
                if cell == preview_cell:
                    out.append(frag("bold" if view.color else "", " *" if not view.color else " ◌", handler))
                elif seat < 0:
                    out.append(frag(EMPTY_STYLE if view.color else "", " ·", handler))
                else:
                    mark = "●" if view.color else PLAIN_STONES[seat]
                    style = seat_style(game, seat, view)
                    if view.color and cell in completed:
                        style += " reverse"
                    if view.color and cell == last:
                        style += " underline"
                    elif not view.color and cell in completed:
                        mark = mark.lower()
                    out.append(frag(style, " " + mark, handler))
            out.append(frag("", "   " if z < SIZE - 1 else "\n"))
    out.append(frag("", "   ".join("  a b c d".ljust(9) for _ in range(SIZE)).rstrip() + "\n"))
    points = " · ".join(
        f"{t.seat(name)} {p}" for name, p in zip(game.seat_names(), game.scores())
    )
    out.append(frag("", t.t("board.points", points=points) + "\n"))
    if preview_text:
        out.append(frag("", preview_text + "\n"))
    return out


def cube_width(game: Game) -> int:
    """Four levels of nine columns and the gaps."""
    return 46


def resolve(game: Game, raw: str, selected: str | None = None, letters: str = "") -> Outcome:
    """A pillar a1-d4, or "no pillar e9"."""
    low = raw.lower()
    if len(low) != 2 or low[0] not in "abcd" or low[1] not in "1234":
        return Refused("move.no_pillar", {"pillar": low})
    return Resolved(low)


def off_board(game: Game, text: str) -> Refused | None:
    """"No pillar e9", whoever is to move."""
    outcome = resolve(game, text.strip())
    return outcome if isinstance(outcome, Refused) else None


def notes(game: Game) -> list[Note]:
    """The lines of four the last move completed and the new score."""
    lines = game.last_completed()  # type: ignore[attr-defined]
    if not lines:
        return []
    before = game.copy()
    before.pop()
    seat = before.to_move()
    if seat is None:
        return []
    return [("cube.scored", {"seat": seat, "count": len(lines), "total": game.scores()[seat]})]


VIEW = GameView(
    rules=RULES, render=render_cube, width=cube_width, shape=SHAPE, resolve=resolve,
    off_board=off_board, notes=notes, move_help=("a1..d4", "a1..d4"),
)
