"""Pure rule engines behind one interface (see ``base.Game``), found through the
registry of games (``registry.py``: one ``GameSpec`` per game)."""

from __future__ import annotations

from p2p.games.base import (
    NULL_MOVE,
    Game,
    IllegalMove,
    MalformedMove,
    MoveError,
    OptionError,
    Options,
    Outcome,
    Termination,
    Turn,
    TurnKind,
)
from p2p.games.registry import (
    GameSpec,
    canonical_name,
    game_names,
    register_game,
    resolve,
    spec,
    unregister_game,
)


def game_class(name: str) -> type[Game]:
    """The engine class registered under ``name``; ``KeyError`` with a clear message if none."""
    engine = resolve(spec(name).engine)
    assert isinstance(engine, type) and issubclass(engine, Game), f"{name}: not a Game class"
    return engine


def __getattr__(name: str) -> object:
    """``GAME_NAMES``: the registered games' names *now* (kept for ``examples/`` and
    scripts; new code calls ``game_names()``)."""
    if name == "GAME_NAMES":
        return game_names()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def create_game(name: str, options: Options | None = None) -> Game:
    """A new game of kind ``name`` at its start position."""
    return game_class(name).create(options)


__all__ = [
    "GAME_NAMES",
    "NULL_MOVE",
    "Game",
    "GameSpec",
    "IllegalMove",
    "MalformedMove",
    "MoveError",
    "OptionError",
    "Outcome",
    "Termination",
    "Turn",
    "TurnKind",
    "canonical_name",
    "create_game",
    "game_class",
    "game_names",
    "register_game",
    "spec",
    "unregister_game",
]
