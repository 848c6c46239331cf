"""Pure rule engines behind one interface (see ``base.Game``)."""

from __future__ import annotations

import importlib

from p2p.games.base import (
    Game,
    IllegalMove,
    MalformedMove,
    MoveError,
    OptionError,
    Options,
)

_MODULES = {
    "connect4": ("p2p.games.connect4", "Connect4"),
    "cube": ("p2p.games.cube", "Cube"),
    "chess4": ("p2p.games.chess4", "Chess4"),
}

GAME_NAMES: tuple[str, ...] = tuple(_MODULES)


def game_class(name: str) -> type[Game]:
    """The engine class registered under ``name``; ``KeyError`` with a clear message if none."""
    try:
        module_name, class_name = _MODULES[name]
    except KeyError:
        raise KeyError(f"unknown game {name!r} (known: {', '.join(GAME_NAMES)})") from None
    engine: type[Game] = getattr(importlib.import_module(module_name), class_name)
    return engine


def create_game(name: str, options: Options | None = None) -> Game:
    """A new game of kind ``name`` at its start position."""
    return game_class(name).create(options)


__all__ = [
    "GAME_NAMES",
    "Game",
    "IllegalMove",
    "MalformedMove",
    "MoveError",
    "OptionError",
    "create_game",
    "game_class",
]
