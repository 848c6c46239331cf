"""How the shell shows and reads one game: its ``GameView``, found through the registry.

Each game's view module (``GameSpec.view`` in ``p2p/games/registry.py``, for the
product's games ``p2p/shell/views/*.py``) defines ``VIEW = GameView(...)``: the board
picture, the shape of a typed move and how it is resolved, the notes a move earns, the
rules text and a few switches.  Every field has a plain default, so a new game is
playable in the shell with nothing but its rules text (the engine's ``render()`` is the
board, every line goes to the engine).  The modules that dispatch (``boards``,
``move_input``, ``move_notes``, the controller) ask ``view_for(game.name)``; they never
import a view module, so no view imports anything that imports it back.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from p2p.games import Game, spec
from p2p.games.registry import resolve

if TYPE_CHECKING:
    from prompt_toolkit.formatted_text import StyleAndTextTuples

    from p2p.shell.boards import BoardView
    from p2p.shell.i18n import Translator
    from p2p.shell.move_input import Outcome, Refused

Note = tuple[str, dict[str, object]]
"""A catalogue key and its fields (seat fields are seat indexes, labelled by the caller)."""


@dataclass(frozen=True)
class GameView:
    """Everything the shell does differently for one game (defaults: nothing special)."""

    rules: tuple[str, str] = ("", "")
    """``/rules``: the rules as (German, English) text."""
    render: Callable[[Game, BoardView, Translator], StyleAndTextTuples] | None = None
    """The board picture (``None``: the engine's plain ``render()``)."""
    width: Callable[[Game], int] | None = None
    """Columns the picture needs (``None``: the widest line of ``render()``)."""
    shape: re.Pattern[str] | None = None
    """The shape of a typed move (``None``: no line is taken as a move before the engine
    accepts it, see ``move_input.looks_like_move``)."""
    resolve: Callable[[Game, str, str | None, str], Outcome] | None = None
    """A move-shaped line -> move, selection or refusal (``None``: the line as typed)."""
    off_board: Callable[[Game, str], Refused | None] | None = None
    """Why a line cannot be a move on this board at all (asked before the turn)."""
    notes: Callable[[Game], list[Note]] | None = None
    """What the last move did, as catalogue notes (``move_notes``)."""
    single_key: Callable[[Game], bool] | None = None
    """True when a lone key press is a whole move on this board (Connect Four's digits)."""
    click_selects: bool = False
    """A board click selects a piece first and then its target (four-player chess)."""
    ranking: bool = False
    """The result is a ranking by points, not a list of winners (four-player chess)."""
    fill_with_computers: bool = False
    """Empty seats of a round are filled with computer players (four-player chess)."""
    default_mode: Literal["ai", "2p"] = "ai"
    """``/play NAME`` without ``ai``/``2p``: against the computer or at one keyboard."""


PLAIN = GameView()
"""The view of a game whose entry names none."""

_CACHE: dict[str, GameView] = {}


def view_for(game_name: str) -> GameView:
    """The view of ``game_name`` (``PLAIN`` for a game without one or unknown here)."""
    try:
        path = spec(game_name).view
    except KeyError:
        return PLAIN
    if not path:
        return PLAIN
    cached = _CACHE.get(path)
    if cached is None:
        found = resolve(path if ":" in path else path + ":VIEW")
        if not isinstance(found, GameView):
            raise TypeError(f"{path}: VIEW is not a GameView")
        cached = _CACHE[path] = found
    return cached


def rules(game_name: str, lang: str) -> list[str]:
    """The rules of ``game_name`` as lines, in ``lang`` (``de`` or ``en``)."""
    de, en = view_for(game_name).rules
    return (de if lang == "de" else en).splitlines()
