"""Board pictures for the shell: prompt_toolkit formatted text, one renderer per game.

Each renderer turns a game position into ``(style, text[, mouse_handler])`` fragments.
With ``color=False`` the same picture uses letters only (``X``/``O``, winning stones
upper case and the rest lower case), so nothing depends on colour.  Renderers never
change the game; clicks are reported through ``on_click(move_text)``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.mouse_events import MouseEvent, MouseEventType

from p2p.games import Game
from p2p.shell.i18n import Translator

SEAT_STYLES: dict[str, str] = {
    "Red": "fg:ansired bold",
    "Yellow": "fg:ansiyellow bold",
    "Blue": "fg:ansiblue bold",
    "Green": "fg:ansigreen bold",
}
DIM = "fg:ansibrightblack"
EMPTY_STYLE = "fg:ansibrightblack"
HIGHLIGHT = "reverse"
PLAIN_STONES = ("X", "O", "+", "#")


@dataclass
class BoardView:
    """What the board pane needs besides the position (all optional)."""

    color: bool = True
    preview: str | None = None
    """Move text typed so far (cube: show where the stone would land)."""
    selected: str | None = None
    """Chess: the selected square, whose legal targets are shown when allowed."""
    show_legal: bool = False
    on_click: Callable[[str], None] | None = None


def _click(view: BoardView, move: str) -> Callable[[MouseEvent], object] | None:
    """A mouse handler that plays ``move`` on click, or ``None`` without a click target."""
    if view.on_click is None:
        return None
    callback = view.on_click

    def handler(event: MouseEvent) -> object:
        if event.event_type == MouseEventType.MOUSE_UP:
            callback(move)
            return None
        return NotImplemented

    return handler


def _frag(style: str, text: str, handler: Callable[[MouseEvent], object] | None = None) -> tuple:
    return (style, text, handler) if handler is not None else (style, text)


def _seat_style(game: Game, seat: int, view: BoardView) -> str:
    if not view.color:
        return ""
    names = game.seat_names()
    return SEAT_STYLES.get(names[seat] if seat < len(names) else "", "bold")


# -- Connect Four --------------------------------------------------------------------


def render_connect4(game: Game, view: BoardView, t: Translator) -> StyleAndTextTuples:
    """Columns 1..W with gravity; winning line(s) highlighted, the other stones dimmed."""
    width: int = game.width
    height: int = game.height
    lines = getattr(game, "winning_lines", ())
    winning = {cell for line in lines for cell in line.cells}
    last = game.last_column() if hasattr(game, "last_column") else None  # type: ignore[attr-defined]
    out: StyleAndTextTuples = []
    for row in range(height - 1, -1, -1):
        out.append(_frag("", "│"))
        for column in range(width):
            handler = _click(view, str(column + 1))
            seat = game.cell(column, row)  # type: ignore[attr-defined]
            if seat < 0:
                out.append(_frag(EMPTY_STYLE if view.color else "", " ·", handler))
                continue
            won = (column, row) in winning
            if view.color:
                style = _seat_style(game, seat, view)  # the losing discs keep their colour
                if won:
                    style += " reverse"
                out.append(_frag(style, " ●" if not won else " ◆", handler))
            else:
                stone = PLAIN_STONES[seat]
                out.append(_frag("", " " + (stone.lower() if winning and not won else stone), handler))
        out.append(_frag("", " │\n"))
    out.append(_frag("", "└" + "─" * (2 * width + 1) + "┘\n"))
    out.append(_frag("", " "))
    for column in range(width):
        label = str(column + 1)[-1]
        style = HIGHLIGHT if (last == column and view.color) else ""
        out.append(_frag(style, " " + label, _click(view, str(column + 1))))
    out.append(_frag("", "\n"))
    if last is not None and not view.color:
        out.append(_frag("", " " + "  " * last + " ^\n"))
    if getattr(game, "popout", False):
        out.append(_frag("", f" Pop Out: p1..p{width}\n"))
    return out


def connect4_width(game: Game) -> int:
    return 2 * int(game.width) + 3


# -- Viergewinnt 3D ----------------------------------------------------------------


def render_cube(game: Game, view: BoardView, t: Translator) -> StyleAndTextTuples:
    """The four levels side by side (level 1 = bottom on the left), with a landing preview."""
    from p2p.games.cube import SIZE, cell_index, pillar_name

    board: list[int] = game.board
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
    out.append(_frag("", "   ".join(t.t("board.level", level=z + 1).ljust(9) for z in range(SIZE)).rstrip() + "\n"))
    for y in range(SIZE - 1, -1, -1):
        for z in range(SIZE):
            out.append(_frag("", f"{y + 1}"))
            for x in range(SIZE):
                cell = cell_index(x, y, z)
                handler = _click(view, pillar_name(x + SIZE * y))
                seat = board[cell]
                if cell == preview_cell:
                    out.append(_frag("bold" if view.color else "", " *" if not view.color else " ◌", handler))
                elif seat < 0:
                    out.append(_frag(EMPTY_STYLE if view.color else "", " ·", handler))
                else:
                    mark = "●" if view.color else PLAIN_STONES[seat]
                    style = _seat_style(game, seat, view)
                    if view.color and cell in completed:
                        style += " reverse"
                    if view.color and cell == last:
                        style += " underline"
                    elif not view.color and cell in completed:
                        mark = mark.lower()
                    out.append(_frag(style, " " + mark, handler))
            out.append(_frag("", "   " if z < SIZE - 1 else "\n"))
    out.append(_frag("", "   ".join("  a b c d".ljust(9) for _ in range(SIZE)).rstrip() + "\n"))
    points = " · ".join(
        f"{t.seat(name)} {p}" for name, p in zip(game.seat_names(), game.scores())
    )
    out.append(_frag("", t.t("board.points", points=points) + "\n"))
    if preview_text:
        out.append(_frag("", preview_text + "\n"))
    return out


def cube_width(game: Game) -> int:
    return 46


# -- four-player chess ------------------------------------------------------------------


def render_chess4(game: Game, view: BoardView, t: Translator) -> StyleAndTextTuples:
    """The 14x14 cross board, grey pieces of eliminated players, last move, legal targets."""
    from p2p.shell import chess4_view

    return chess4_view.render(game, view, t)


def chess4_width(game: Game) -> int:
    from p2p.shell.chess4_view import BOARD_WIDTH

    return BOARD_WIDTH


RENDERERS: dict[str, Callable[[Game, BoardView, Translator], StyleAndTextTuples]] = {
    "connect4": render_connect4,
    "cube": render_cube,
    "chess4": render_chess4,
}
WIDTHS: dict[str, Callable[[Game], int]] = {
    "connect4": connect4_width,
    "cube": cube_width,
    "chess4": chess4_width,
}


def render(game: Game, view: BoardView, t: Translator) -> StyleAndTextTuples:
    """The picture of ``game``; falls back to the engine's plain ``render()``."""
    renderer = RENDERERS.get(game.name)
    if renderer is None:
        return [("", game.render())]
    return renderer(game, view, t)


def width(game: Game) -> int:
    """Columns the board picture needs."""
    fn = WIDTHS.get(game.name)
    return fn(game) if fn else max(len(line) for line in game.render().splitlines())
