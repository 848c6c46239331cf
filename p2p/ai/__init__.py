"""Computer players: one entry point for every game.

``choose_move(game, level, seed)`` is a pure, deterministic function of the position,
the level and the seed: no clock, no unseeded randomness, no time-based cut-offs (search
limits are counted in nodes or depth).  In an online round the admin's client plays the
computer seats and every other peer recomputes the same call to check the move.

Each game's computer player is the module its registry entry names
(``GameSpec.ai``, ``p2p/games/registry.py``): it has ``LEVELS`` (weakest first) and
``choose_move``, and may have ``hint(game)`` and ``HINT_LEVEL``.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False
if TYPE_CHECKING:  # the solver (``p2p solve``) imports this package: no registry at import
    from types import ModuleType

    from p2p.games.base import Game


def module(game_name: str) -> ModuleType:
    """The computer player's module of ``game_name``; ``ImportError`` if it has none."""
    from p2p.games import spec

    path = spec(game_name).ai
    if not path:
        raise ImportError(f"{game_name} has no computer player")
    return importlib.import_module(path)


def levels(game_name: str) -> tuple[str, ...]:
    """The level names of a game's computer player, weakest first."""
    return tuple(module(game_name).LEVELS)


def choose_move(game: Game, level: str, seed: bytes = b"") -> str:
    """The computer's move (canonical text) for the side to move in ``game``.

    ``game`` is not changed.  Raises ``ValueError`` for an unknown level or a finished game.
    """
    if game.is_over():
        raise ValueError("the game is over")
    player = module(game.name)
    if level not in player.LEVELS:
        raise ValueError(f"unknown level {level!r} (known: {', '.join(player.LEVELS)})")
    move: str = player.choose_move(game, level, seed)
    return move


def hint(game: Game) -> str:
    """A suggested move for the side to move: the player's own ``hint`` if it has one,
    else its ``HINT_LEVEL`` (default: the strongest level) with the seed ``b"hint"``."""
    player = module(game.name)
    own = getattr(player, "hint", None)
    if own is not None:
        move = own(game)
        return move if isinstance(move, str) else str(getattr(move, "move", move))
    level = getattr(player, "HINT_LEVEL", player.LEVELS[-1])
    return choose_move(game, level, b"hint")
