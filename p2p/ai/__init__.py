"""Computer players: one entry point for every game.

``choose_move(game, level, seed)`` is a pure, deterministic function of the position,
the level and the seed: no clock, no unseeded randomness, no time-based cut-offs (search
limits are counted in nodes or depth).  In an online round the admin's client plays the
computer seats and every other peer recomputes the same call to check the move.
"""

from __future__ import annotations

import importlib

from p2p.games.base import Game

_MODULES = {
    "connect4": "p2p.ai.connect4_ai",
    "cube": "p2p.ai.cube_ai",
    "chess4": "p2p.ai.chess4_ai",
}


def levels(game_name: str) -> tuple[str, ...]:
    """The level names of a game's computer player, weakest first."""
    return tuple(importlib.import_module(_MODULES[game_name]).LEVELS)


def choose_move(game: Game, level: str, seed: bytes = b"") -> str:
    """The computer's move (canonical text) for the side to move in ``game``.

    ``game`` is not changed.  Raises ``ValueError`` for an unknown level or a finished game.
    """
    if game.is_over():
        raise ValueError("the game is over")
    module = importlib.import_module(_MODULES[game.name])
    if level not in module.LEVELS:
        raise ValueError(f"unknown level {level!r} (known: {', '.join(module.LEVELS)})")
    move: str = module.choose_move(game, level, seed)
    return move
