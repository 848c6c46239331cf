"""``p2p position``: apply moves from the start and print the position (or JSON).

Headless and scriptable: ``p2p position --json connect4 4 4 5`` prints one JSON object
with ``to_move``, ``over``, ``scores``, ``winners``, ``eliminated``, ``legal``,
``history`` and ``state_hash``.  A bad game, option or move exits with status 2 and one
line naming the move and its ply.
"""

from __future__ import annotations

import argparse
import json
import re

from p2p.cli import UsageError
from p2p.games import create_game, game_names
from p2p.games.base import Game, MoveError, OptionError, OptionValue


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("game", metavar="GAME", nargs="?", help=f"one of: {', '.join(game_names())}")
    parser.add_argument(
        "moves", metavar="MOVE", nargs="*",
        help="moves in the game's notation (none: the start position)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--players", type=int, help="number of players (cube: 2 or 3)")
    parser.add_argument("--first", type=int, help="starting seat, 0-based")
    parser.add_argument("--board", metavar="WxH", help="board size for connect4, e.g. 8x7")
    parser.add_argument("--popout", action="store_true", help="connect4: the Pop Out variant")
    parser.add_argument("--fen4", metavar="FEN4", help="chess4: start from this FEN4 position")


def _options(args: argparse.Namespace) -> dict[str, OptionValue]:
    options: dict[str, OptionValue] = {}
    defaults = create_game(args.game).options()
    if args.players is not None:
        if "players" in defaults:
            options["players"] = args.players
        elif args.players != create_game(args.game).players:
            raise UsageError(f"{args.game} is played by {create_game(args.game).players} players")
    if args.first is not None:
        options["first"] = args.first
    if args.board is not None:
        if "width" not in defaults:
            raise UsageError(f"--board applies to {_having('width')} only")
        match = re.fullmatch(r"(\d+)[xX](\d+)", args.board)
        if not match:
            raise UsageError(f"--board {args.board!r}: expected WxH, e.g. 7x6")
        options["width"], options["height"] = int(match[1]), int(match[2])
    if args.popout:
        if "popout" not in defaults:
            raise UsageError(f"--popout applies to {_having('popout')} only")
        options["popout"] = True
    return options


def _having(option: str) -> str:
    """The games that have ``option`` ("connect4")."""
    return ", ".join(name for name in game_names() if option in create_game(name).options())


def build(args: argparse.Namespace) -> Game:
    """The game after the given moves; ``UsageError`` names a bad move and its ply."""
    if args.game is None:
        raise UsageError(f"which game? GAME is one of: {', '.join(game_names())}")
    if args.game not in game_names():
        raise UsageError(f"unknown game {args.game!r} (known: {', '.join(game_names())})")
    if args.fen4 is not None:
        from p2p.commands.perft import start_position

        game = start_position(args.game, args.fen4, "fen4")
    else:
        try:
            game = create_game(args.game, _options(args))
        except (OptionError, ValueError) as err:
            raise UsageError(str(err)) from None
    apply_moves(game, args.moves)
    return game


def apply_moves(game: Game, chunks: list[str]) -> None:
    """Play ``chunks`` (split as ``split_moves`` does); ``UsageError`` names the first bad
    move as ``move N 'X': reason`` (``p2p solve`` words its errors the same way)."""
    moves = [m for chunk in chunks for m in split_moves(game, chunk)]
    for ply, move in enumerate(moves, start=1):
        try:
            game.apply(move)
        except MoveError as err:
            raise UsageError(f"move {ply} {move!r}: {err}") from None


def split_moves(game: Game, chunk: str) -> list[str]:
    """The moves in one command-line word: the engine's ``split_moves`` (Connect Four's
    ``4453`` is four moves, as in the usual notation)."""
    return game.split_moves(chunk)


def describe(game: Game) -> dict[str, object]:
    """The JSON view of a position."""
    return {
        "game": game.name,
        "to_move": game.to_move(),
        "over": game.is_over(),
        "scores": list(game.scores()),
        "winners": list(game.winners()),
        "eliminated": list(game.eliminated()),
        "legal": game.legal_moves(),
        "history": game.history(),
        "state_hash": game.state_hash(),
    }


def run(args: argparse.Namespace) -> int:
    game = build(args)
    if args.json:
        print(json.dumps(describe(game), sort_keys=True))
        return 0
    print(game.render())
    names = game.seat_names()
    scores = ", ".join(f"{names[s]} {p}" for s, p in enumerate(game.scores()))
    if game.is_over():
        winners = game.winners()
        result = "draw" if not winners else "winner: " + ", ".join(names[s] for s in winners)
        print(f"over · {result} · {scores}")
    else:
        print(f"to move: {names[game.to_move() or 0]} · {scores}")
    return 0
