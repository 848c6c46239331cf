"""One registry entry per game: everything that differs per game is found from it.

A ``GameSpec`` names, as import paths, the module of each layer that knows the game:
the rules engine (``p2p.games``), the computer player (``p2p.ai``), the shell's view
(``p2p.shell``) and the browser's board (``p2p.web``).  Each layer resolves its own path
lazily (``importlib``), so this pure module never imports ``ai``, ``shell`` or ``web``:
the layering of ``docs/architecture.md`` holds, and adding a game is one new module per
layer plus one ``register_game`` line.  See
``docs/adding-a-game.md``.

>>> spec("connect4").title
('Vier in einer Reihe', 'Connect Four')
>>> resolve("p2p.games.connect4:Connect4").name
'connect4'
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field

from p2p.games.base import OptionValue


@dataclass(frozen=True)
class Demo:
    """How ``p2p demo`` plays the game: options, human and computer seats, the level the
    scripted humans' moves are chosen at."""

    options: dict[str, OptionValue] = field(default_factory=dict)
    humans: int = 2
    computers: int = 0
    level: str = "normal"


@dataclass(frozen=True)
class GameSpec:
    """Everything that differs per game, as data and lazily resolved import paths.

    Paths are ``"module"`` or ``"module:attribute"`` (``resolve``); an empty path means
    "this game has none" (no computer player, no fast perft, no notation, no solver).
    """

    name: str
    """The registry key, equal to the engine's ``Game.name`` and the wire name."""
    engine: str
    """The ``Game`` subclass: ``"p2p.games.connect4:Connect4"``."""
    title: tuple[str, str]
    """The game's name as people say it: (German, English)."""
    ai: str = ""
    """The computer player's module: ``LEVELS``, ``choose_move(game, level, seed)``,
    optionally ``hint(game)`` and ``HINT_LEVEL`` (``p2p/ai/__init__.py``)."""
    view: str = ""
    """The shell's view module, whose ``VIEW`` is a ``p2p.shell.game_view.GameView``."""
    web: str = ""
    """The browser face's board module, whose ``VIEW`` is a ``p2p.web.web_view.WebView``
    (empty: the plain text picture with a button per legal move)."""
    aliases: tuple[str, ...] = ()
    """Other words the shell accepts for the name (``/play 4``, ``/play schach``)."""
    demo: Demo = field(default_factory=Demo)
    """How ``p2p demo`` plays it."""
    perft: str = ""
    """A fast ``perft(game, depth)`` for ``p2p perft`` (empty: the generic count)."""
    divide: str = ""
    """Its ``divide(game, depth)`` (with ``perft``)."""
    notation: str = ""
    """A position notation's name for ``p2p position`` / ``perft`` (``"fen4"``)."""
    from_notation: str = ""
    """The classmethod that builds a game from that notation."""
    solver: str = ""
    """An exact solver module for ``p2p solve`` (``Solver``, ``parse_position``)."""


_SPECS: dict[str, GameSpec] = {}


def register_game(game: GameSpec) -> None:
    """Add ``game`` to the registry (or replace the entry of the same name)."""
    _SPECS[game.name] = game


def unregister_game(name: str) -> None:
    """Remove a game again (tests that register a toy game clean up with this)."""
    _SPECS.pop(name, None)


def game_names() -> tuple[str, ...]:
    """The registered games' names, in registration order."""
    return tuple(_SPECS)


def spec(name: str) -> GameSpec:
    """The entry of ``name``; ``KeyError`` with a clear message if none."""
    try:
        return _SPECS[name]
    except KeyError:
        raise KeyError(f"unknown game {name!r} (known: {', '.join(_SPECS)})") from None


def canonical_name(word: str) -> str | None:
    """The game a user's word names (its name or an alias, any case), or ``None``."""
    low = word.lower()
    for entry in _SPECS.values():
        if low == entry.name or low in entry.aliases:
            return entry.name
    return None


def resolve(path: str) -> object:
    """Import ``"module"`` or ``"module:attr.attr"`` and return the module or attribute."""
    module_name, _, attribute = path.partition(":")
    found: object = importlib.import_module(module_name)
    for part in attribute.split(".") if attribute else ():
        found = getattr(found, part)
    return found


# -- the product's games: one line each ---------------------------------------------------

register_game(GameSpec(
    "connect4", "p2p.games.connect4:Connect4", ("Vier in einer Reihe", "Connect Four"),
    ai="p2p.ai.connect4_ai", view="p2p.shell.views.connect4",
    web="p2p.web.views.connect4", aliases=("4", "c4", "vier"),
    solver="p2p.ai.connect4_solver",
))
register_game(GameSpec(
    "cube", "p2p.games.cube:Cube", ("Viergewinnt 3D", "3D Connect Four"),
    ai="p2p.ai.cube_ai", view="p2p.shell.views.cube",
    web="p2p.web.views.cube", aliases=("3d",),
    demo=Demo({"players": 3}, humans=3),
))
register_game(GameSpec(
    "chess4", "p2p.games.chess4:Chess4", ("Schach zu viert", "Four-player chess"),
    ai="p2p.ai.chess4_ai", view="p2p.shell.views.chess4",
    web="p2p.web.views.chess4", aliases=("chess", "schach"),
    demo=Demo(humans=2, computers=2, level="einfach"),
    perft="p2p.games.chess4:perft", divide="p2p.games.chess4:divide",
    notation="fen4", from_notation="p2p.games.chess4:Chess4.from_fen4",
))
register_game(GameSpec("reversi", "p2p.games.reversi:Reversi", ("Reversi", "Reversi"), ai="p2p.ai.reversi_ai", view="p2p.shell.views.reversi", aliases=("othello",), demo=Demo({"size": 6}, level="neuling")))
