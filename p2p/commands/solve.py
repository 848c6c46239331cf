"""``p2p solve connect4 [POSITION] [--analyze]``: exact Connect Four scores.

A position is the sequence of played columns (``4455``); the score is for the side to
move in Pascal Pons' convention (positive: wins, 22 minus the winner's stones on 7x6;
0: draw; negative: loses).  Without POSITION, one position per line is read from stdin
and ``POSITION SCORE`` printed per line (blank lines are skipped), like Pons' solver.
``--analyze`` prints the score of every column instead (``-`` for a full column).

Early positions are expensive in pure Python (seconds to hours before move ~12 on 7x6);
see ``docs/ai.md``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any, Protocol

from p2p.cli import UsageError

MIN_SIZE = 4
MAX_SOLVE_WIDTH = 9
"""Positions are written one digit per column, so the solver takes widths up to 9
(the game itself allows 10 columns)."""
MAX_HEIGHT = 10


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("game", help="the game to solve (only: connect4)")
    parser.add_argument("position", nargs="?", help="played columns, e.g. 4455 (default: read stdin)")
    parser.add_argument("--analyze", "-a", action="store_true", help="score of every column")
    parser.add_argument("--weak", "-w", action="store_true", help="only win (1) / draw (0) / loss (-1)")
    parser.add_argument("--width", type=int, default=7,
                        help=f"board width, {MIN_SIZE} to {MAX_SOLVE_WIDTH} (default 7; a position is one digit per column)")
    parser.add_argument("--height", type=int, default=6, help=f"board height, {MIN_SIZE} to {MAX_HEIGHT} (default 6)")


def _solver_module(game_name: str) -> ModuleType:
    """The solver module the game's registry entry names (``GameSpec.solver``)."""
    from p2p.games import spec

    return importlib.import_module(spec(game_name).solver)


def _check(text: str, args: argparse.Namespace) -> None:
    """``UsageError`` worded as ``p2p position`` words it (``move N 'X': reason``)."""
    from p2p.commands.position import apply_moves
    from p2p.games import create_game

    apply_moves(create_game(args.game, {"width": args.width, "height": args.height}), [text])


class PositionSolver(Protocol):
    """What a registered game's solver offers (``GameSpec.solver`` names its module)."""

    def analyze(self, pos: Any) -> list[int | None]: ...

    def solve(self, pos: Any, weak: bool = False) -> int: ...


def _position(parse_position: Callable[[str, int, int], Any], text: str, args: argparse.Namespace) -> Any:
    """The solver's position after ``text``, its legality checked on the solver's own board.

    Only a line the solver's board refuses is replayed through the game's engine, so that
    the refusal reads as before and as in ``p2p position`` (``move 7 '4': column 4 is
    full``, ``move 8 '4': the round is over``); what the engine allows and the solver
    does not (a move that wins or fills the board: the game is over, nothing to solve)
    gets the solver's reason.
    """
    if text.isdigit() and text.isascii():
        try:
            return parse_position(text, args.width, args.height)
        except ValueError:
            pass
    _check(text, args)
    return parse_position(text, args.width, args.height)


def _answer(solver: PositionSolver, pos: Any, args: argparse.Namespace) -> str:
    if args.analyze:
        scores = solver.analyze(pos)
        if args.weak:
            scores = [None if s is None else (s > 0) - (s < 0) for s in scores]
        return " ".join("-" if s is None else str(s) for s in scores)
    return str(solver.solve(pos, weak=args.weak))


def run(args: argparse.Namespace) -> int:
    from p2p.games import game_names, spec

    if args.game not in game_names() or not spec(args.game).solver:
        have = [name for name in game_names() if spec(name).solver]
        raise UsageError(f"cannot solve {args.game!r}: only {', '.join(have)} has a solver")
    module = _solver_module(args.game)
    parse_position = module.parse_position

    if not MIN_SIZE <= args.width <= MAX_SOLVE_WIDTH:
        raise UsageError(f"--width must be between {MIN_SIZE} and {MAX_SOLVE_WIDTH} "
                         "(a position is one digit per column)")
    if not MIN_SIZE <= args.height <= MAX_HEIGHT:
        raise UsageError(f"--height must be between {MIN_SIZE} and {MAX_HEIGHT}")
    try:
        solver = module.Solver(args.width, args.height)
    except ValueError as err:
        raise UsageError(str(err)) from None
    if args.position is not None:
        try:
            print(_answer(solver, _position(parse_position, args.position, args), args))
        except ValueError as err:
            raise UsageError(str(err)) from None
        return 0
    write = sys.stdout.write
    flush = sys.stdout.flush
    for number, line in enumerate(sys.stdin, start=1):
        text = line.strip()
        if not text:
            continue
        try:
            answer = _answer(solver, _position(parse_position, text, args), args)
        except (ValueError, UsageError) as err:
            raise UsageError(f"line {number}: {err}") from None
        write(f"{text} {answer}\n")
        flush()  # one answer per line as it is found, like Pons' solver (a pipe may wait for it)
    return 0
