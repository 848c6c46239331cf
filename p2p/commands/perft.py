"""``p2p perft GAME DEPTH [--fen4 FEN4] [--divide]``: count legal move sequences.

Prints the node count as its last line (with ``--divide``, one ``move: count`` line per
legal move before it).  Four-player chess uses its fast core and design decision 5
(eliminations happen, the count never stops for points or draws); every other game is
counted through the generic ``Game`` interface with ``push``/``pop``.

    $ p2p perft chess4 3
    7800
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from p2p.cli import UsageError
from p2p.games import create_game, game_names, spec
from p2p.games.base import Game, OptionError
from p2p.games.registry import resolve

MAX_DEPTH = 12


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("game", metavar="GAME", help=f"one of: {', '.join(game_names())}")
    parser.add_argument("depth", metavar="DEPTH", help="number of plies (0 or more)")
    parser.add_argument(
        "--fen4", metavar="FEN4", help="chess4: count from this FEN4 position"
    )
    parser.add_argument(
        "--divide",
        action="store_true",
        help="also print the count below each legal move",
    )


def generic_perft(game: Game, depth: int) -> int:
    """Perft through the ``Game`` interface alone (``push``/``pop``)."""
    if depth == 0:
        return 1
    if game.is_over():
        return 0
    moves = game.legal_moves()
    if depth == 1:
        return len(moves)
    total = 0
    for move in moves:
        game.push(move)
        total += generic_perft(game, depth - 1)
        game.pop()
    return total


def generic_divide(game: Game, depth: int) -> list[tuple[str, int]]:
    out = []
    for move in [] if game.is_over() else game.legal_moves():
        game.push(move)
        out.append((move, generic_perft(game, depth - 1)))
        game.pop()
    return out


def start_position(game_name: str, notation: str | None, flag: str) -> Game:
    """The start position, or the one written in the game's notation (``--fen4``);
    ``UsageError`` for a game without that notation or a bad position."""
    entry = spec(game_name)
    if notation is not None and entry.notation != flag:
        some = [name for name in game_names() if spec(name).notation == flag]
        raise UsageError(f"--{flag} applies to {', '.join(some)} only")
    try:
        if notation is not None:
            built = resolve(entry.from_notation)
            assert callable(built)
            game: Game = built(notation)
            return game
        return create_game(game_name)
    except (OptionError, ValueError) as err:
        raise UsageError(str(err)) from None


def _depth(text: str) -> int:
    try:
        depth = int(text)
    except ValueError:
        raise UsageError(f"DEPTH must be a whole number, got {text!r}") from None
    if not 0 <= depth <= MAX_DEPTH:
        raise UsageError(f"DEPTH must be between 0 and {MAX_DEPTH}")
    return depth


def run(args: argparse.Namespace) -> int:
    if args.game not in game_names():
        raise UsageError(f"unknown game {args.game!r} (known: {', '.join(game_names())})")
    depth = _depth(args.depth)
    entry = spec(args.game)
    game = start_position(args.game, args.fen4, "fen4")
    count: Callable[[Game, int], int] = generic_perft
    count_each: Callable[[Game, int], list[tuple[str, int]]] = generic_divide
    if entry.perft:
        count = resolve(entry.perft)  # type: ignore[assignment]  # a perft(game, depth) by contract
        count_each = resolve(entry.divide)  # type: ignore[assignment]  # its divide, likewise
    if args.divide and depth > 0:
        rows = count_each(game, depth)
        for move, n in rows:
            print(f"{move}: {n}")
        print(sum(n for _move, n in rows))
    else:
        print(count(game, depth))
    return 0
