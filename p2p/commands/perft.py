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

from p2p.cli import UsageError
from p2p.games import GAME_NAMES, create_game
from p2p.games.base import Game, OptionError

MAX_DEPTH = 12


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("game", metavar="GAME", help=f"one of: {', '.join(GAME_NAMES)}")
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


def _depth(text: str) -> int:
    try:
        depth = int(text)
    except ValueError:
        raise UsageError(f"DEPTH must be a whole number, got {text!r}") from None
    if not 0 <= depth <= MAX_DEPTH:
        raise UsageError(f"DEPTH must be between 0 and {MAX_DEPTH}")
    return depth


def run(args: argparse.Namespace) -> int:
    if args.game not in GAME_NAMES:
        raise UsageError(f"unknown game {args.game!r} (known: {', '.join(GAME_NAMES)})")
    depth = _depth(args.depth)
    if args.fen4 is not None and args.game != "chess4":
        raise UsageError("--fen4 applies to chess4 only")
    divided = bool(args.divide) and depth > 0
    result: int | list[tuple[str, int]]
    if args.game == "chess4":
        from p2p.games.chess4 import Chess4, divide, perft

        try:
            chess = (
                Chess4.from_fen4(args.fen4)
                if args.fen4 is not None
                else Chess4.create()
            )
        except (OptionError, ValueError) as err:
            raise UsageError(str(err)) from None
        result = divide(chess, depth) if divided else perft(chess, depth)
    else:
        game = create_game(args.game)
        result = generic_divide(game, depth) if divided else generic_perft(game, depth)
    if isinstance(result, int):
        print(result)
    else:
        for move, n in result:
            print(f"{move}: {n}")
        print(sum(n for _move, n in result))
    return 0
