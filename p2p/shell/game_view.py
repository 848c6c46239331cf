"""How the shell shows and reads one game: its ``GameView``, found through the registry.

Each game's view module (``GameSpec.view`` in ``p2p/games/registry.py``, for the
product's games ``p2p/shell/views/*.py``) defines ``VIEW = GameView(...)``: the board
picture, the shape of a typed move and how it is resolved, the notes a move earns, the
rules text and a few switches.  Every field has a plain default, so a new game is
playable in the shell with nothing but its rules text (the engine's ``render()`` is the
board, every line goes to the engine).  The data a view's functions take
and give (``BoardView``, ``Resolved``, ``Select``, ``Refused``) live here, low in the
graph, and ``boards``/``move_input`` re-export them.  The modules that dispatch (``boards``,
``move_input``, ``move_notes``, the controller) ask ``view_for(game.name)``; they never
import a view module, so no view imports anything that imports it back.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from p2p.games import Game, game_names, spec
from p2p.games.registry import GameSpec, resolve

if TYPE_CHECKING:
    from prompt_toolkit.formatted_text import StyleAndTextTuples

    from p2p.shell.i18n import Translator

Note = tuple[str, dict[str, object]]
"""A catalogue key and its fields (seat fields are seat indexes, labelled by the caller)."""


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


@dataclass(frozen=True)
class Resolved:
    """Play ``move``."""

    move: str
    """Canonical text, or what the engine parses (``Game.push`` says whether it is legal)."""


@dataclass(frozen=True)
class Select:
    """Select the piece on ``square`` (four-player chess, typed instead of clicked): the
    next square typed or clicked is its target."""

    square: str
    piece: int
    """Its kind: 1 pawn, 2 knight, 3 bishop, 4 rook, 5 queen, 6 king, 7 promoted queen."""


@dataclass(frozen=True)
class Refused:
    """Not a move here: a catalogue key and its fields, for one line."""

    key: str
    fields: dict[str, object] = field(default_factory=dict)


Outcome = Resolved | Select | Refused
"""What ``GameView.resolve`` makes of a move-shaped line (``p2p.shell.move_input``)."""


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
    texts: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    """The game's own catalogue entries, (German, English) per key: a ``reason.<code>``
    for every error code its engine raises that the shared catalogue (``p2p/shell/i18n.py``)
    lacks, ``seat.<Name>`` for its seat names, the keys its ``notes`` and ``off_board`` use.
    The shared catalogue wins on a key both have."""
    move_help: tuple[str, str] = ("", "")
    """How a move is written, for the ``/help`` row of moves (German, English): ``1..7``."""
    seat_styles: Mapping[str, str] = field(default_factory=dict)
    """prompt_toolkit styles of seat names the shell does not colour yet (``boards.SEAT_STYLES``
    has Red, Yellow, Blue, Green): ``{"Black": "fg:ansibrightblack bold"}``."""


PLAIN = GameView()
"""The view of a game whose entry names none."""

_CACHE: dict[str, tuple[GameSpec, GameView]] = {}
"""Resolved views by game name, each with the registry entry it was resolved from: an
entry that was unregistered or replaced since is never served (``view_for`` compares)."""


def view_for(game_name: str) -> GameView:
    """The view of ``game_name`` (``PLAIN`` for a game without one or unknown here).

    >>> view_for("no such game") is PLAIN
    True
    """
    try:
        entry = spec(game_name)
    except KeyError:
        _CACHE.pop(game_name, None)
        return PLAIN
    if not entry.view:
        return PLAIN
    cached = _CACHE.get(game_name)
    if cached is not None and cached[0] is entry:
        return cached[1]
    path = entry.view
    found = resolve(path if ":" in path else path + ":VIEW")
    if not isinstance(found, GameView):
        raise TypeError(f"{path}: VIEW is not a GameView")
    _CACHE[game_name] = (entry, found)
    return found


def game_text(key: str) -> tuple[str, str] | None:
    """A catalogue entry one of the registered games' views brings (``GameView.texts``).

    >>> game_text("reason.no_such_key_anywhere") is None
    True
    """
    for name in game_names():
        pair = view_for(name).texts.get(key)
        if pair is not None:
            return pair
    return None


def move_help() -> tuple[str, str]:
    """The ``/help`` row of how moves are written, from every registered game's view
    (German, English), e.g. ``1..7 · a1..d4 · h2-h4``."""
    pairs = [view_for(name).move_help for name in game_names()]
    return (
        " · ".join(de for de, _ in pairs if de),
        " · ".join(en for _, en in pairs if en),
    )


def rules(game_name: str, lang: str) -> list[str]:
    """The rules of ``game_name`` as lines, in ``lang`` (``de`` or ``en``)."""
    de, en = view_for(game_name).rules
    return (de if lang == "de" else en).splitlines()
