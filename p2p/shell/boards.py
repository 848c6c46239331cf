"""Board pictures for the shell: prompt_toolkit formatted text, one renderer per game
(each game's view, ``p2p/shell/views/``; here the shared pieces and the dispatch).

Each renderer turns a game position into ``(style, text[, mouse_handler])`` fragments.
With ``color=False`` the same picture uses letters only (``X``/``O``, winning stones
upper case and the rest lower case), so nothing depends on colour.  Renderers never
change the game; clicks are reported through ``on_click(move_text)``.
"""

from __future__ import annotations

from collections.abc import Callable

from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.mouse_events import MouseEvent, MouseEventType

from p2p.games import Game
from p2p.shell.game_view import BoardView as BoardView
from p2p.shell.game_view import view_for
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
MIN_WIDTH = 24
"""The board pane is at least this many columns wide (plus its frame), whatever
``GameView.width`` says; a narrower picture is padded."""
PLAIN_STONES = ("X", "O", "+", "#")


def click(view: BoardView, move: str) -> Callable[[MouseEvent], object] | None:
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


def frag(style: str, text: str, handler: Callable[[MouseEvent], object] | None = None) -> tuple:
    """One fragment of a picture: style, text and, when clickable, the mouse handler."""
    return (style, text, handler) if handler is not None else (style, text)


def seat_style(game: Game, seat: int, view: BoardView) -> str:
    """The style of ``seat``'s pieces: its colour (the game view's ``seat_styles``, else
    ``SEAT_STYLES``), plain bold for an unknown colour, nothing without colour."""
    if not view.color:
        return ""
    names = game.seat_names()
    name = names[seat] if seat < len(names) else ""
    return view_for(game.name).seat_styles.get(name) or SEAT_STYLES.get(name, "bold")



def render(game: Game, view: BoardView, t: Translator) -> StyleAndTextTuples:
    """The picture of ``game``; falls back to the engine's plain ``render()``."""
    renderer = view_for(game.name).render
    if renderer is None:
        return [("", game.render())]
    return renderer(game, view, t)


def width(game: Game) -> int:
    """Columns the board picture needs."""
    fn = view_for(game.name).width
    return fn(game) if fn else max(len(line) for line in game.render().splitlines())
