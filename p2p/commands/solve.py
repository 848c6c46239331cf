"""``p2p solve connect4 [POSITION] [--analyze]``: exact Connect Four scores.

A position is the sequence of played columns (``4455``); the score is for the side to
move in Pascal Pons' convention (positive: wins, 22 minus the winner's stones on 7x6;
0: draw; negative: loses).  Without POSITION, one position per line is read from stdin
and ``POSITION SCORE`` printed per line (blank lines are skipped), like Pons' solver.
``--analyze`` prints the score of every column instead (``-`` for a full column).

A batch from a file (``p2p solve connect4 < positions``) of at least ``AUTO_JOBS_LINES``
lines is solved on every core (``--jobs N``: N processes, also for a pipe, which is then
read to its end first; ``--jobs 1``: one process, each answer printed as it is found).
The answers come in the order of the lines either way, and a bad line stops the batch
after the answers to the lines before it.

Early positions are expensive in pure Python (seconds to hours before move ~12 on 7x6);
see ``docs/ai.md``.
"""

from __future__ import annotations

import os
import stat
import sys

from p2p.cli import UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:  # this module is imported on every ``p2p solve``: no typing at run time
    import argparse
    from collections.abc import Callable, Iterator, Sequence
    from types import ModuleType, SimpleNamespace
    from typing import Any, Protocol

    class PositionSolver(Protocol):
        """What a registered game's solver offers (``GameSpec.solver`` names its module)."""

        def analyze(self, pos: Any) -> list[int | None]: ...

        def solve(self, pos: Any, weak: bool = False) -> int: ...

    class Options(Protocol):
        """The command's arguments (``argparse`` or ``quick_arguments`` read them)."""

        game: str
        position: str | None
        analyze: bool
        weak: bool
        width: int
        height: int
        jobs: int | None

MIN_SIZE = 4
MAX_SOLVE_WIDTH = 9
"""Positions are written one digit per column, so the solver takes widths up to 9
(the game itself allows 10 columns)."""
MAX_HEIGHT = 10
AUTO_JOBS_LINES = 100
"""Without ``--jobs`` a batch read from a file is solved on every core from this many
lines on: forking a process costs about as much as solving a few dozen easy positions,
so a short batch (and one position, always) stays in one process."""

BUILT_IN_SOLVERS = {"connect4": "p2p.ai.connect4_solver"}
"""The solver module of each built-in game as its registry entry names it
(``GameSpec.solver``; a test holds the two equal): ``p2p solve connect4`` finds its solver
without importing the registry of games, which costs more start-up than a batch of easy
positions takes to solve.  Any other name is looked up in the registry."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("game", help="the game to solve (only: connect4)")
    parser.add_argument("position", nargs="?", help="played columns, e.g. 4455 (default: read stdin); "
                        "a position early in a game can take hours")
    parser.add_argument("--analyze", "-a", action="store_true", help="score of every column")
    parser.add_argument("--weak", "-w", action="store_true", help="only win (1) / draw (0) / loss (-1)")
    parser.add_argument("--width", type=int, default=7,
                        help=f"board width, {MIN_SIZE} to {MAX_SOLVE_WIDTH} (default 7; a position is one digit per column)")
    parser.add_argument("--height", type=int, default=6, help=f"board height, {MIN_SIZE} to {MAX_HEIGHT} (default 6)")
    parser.add_argument("--jobs", "-j", type=int, default=None,
                        help="processes for a batch on stdin (default: every core for a file of "
                        f"{AUTO_JOBS_LINES} lines or more; a pipe is read to its end first when N > 1)")


_FLAGS = {"--analyze": "analyze", "-a": "analyze", "--weak": "weak", "-w": "weak"}
_NUMBERS = {"--width": "width", "--height": "height", "--jobs": "jobs", "-j": "jobs"}


def quick_arguments(argv: Sequence[str]) -> SimpleNamespace | None:
    """The arguments of ``add_arguments`` read without ``argparse`` (which costs this
    command more start-up than solving a batch of easy positions), or ``None`` for
    anything but the plain forms: ``GAME [POSITION]``, ``--analyze``/``-a``,
    ``--weak``/``-w``, ``--width N``/``--width=N``, ``--height N``/``--height=N``,
    ``--jobs N``/``--jobs=N``/``-j N`` in any order.  ``argparse`` then reads them, with
    its help, abbreviations and error messages.

    >>> vars(quick_arguments(["connect4", "--width=5", "-a", "2233"]))  # doctest: +NORMALIZE_WHITESPACE
    {'game': 'connect4', 'position': '2233', 'analyze': True, 'weak': False, 'width': 5,
     'height': 6, 'jobs': None}
    >>> quick_arguments(["connect4", "--wid", "5"]), quick_arguments(["--help"])
    (None, None)
    """
    from types import SimpleNamespace

    values: dict[str, object] = {"game": None, "position": None, "analyze": False, "weak": False,
                                 "width": 7, "height": 6, "jobs": None}
    positional = ["game", "position"]
    tokens = iter(argv)
    for token in tokens:
        if not token.startswith("-"):
            if not positional:
                return None
            values[positional.pop(0)] = token
        elif token in _FLAGS:
            values[_FLAGS[token]] = True
        else:
            name, equals, number = token.partition("=")
            if name not in _NUMBERS or equals and name == "-j":  # argparse reads "-j=2" as "=2"
                return None
            if not equals:
                number = next(tokens, "-")
            if number.startswith("-"):
                return None
            try:
                values[_NUMBERS[name]] = int(number)
            except ValueError:
                return None
    if values["game"] is None:
        return None
    return SimpleNamespace(**values)


def _solver_module(game_name: str) -> ModuleType:
    """The solver module the game's registry entry names (``GameSpec.solver``); a
    ``UsageError`` naming the games that have one if ``game_name`` has none."""
    import importlib

    path = BUILT_IN_SOLVERS.get(game_name)
    if path is None:
        from p2p.games import game_names, spec

        if game_name not in game_names() or not spec(game_name).solver:
            have = [name for name in game_names() if spec(name).solver]
            raise UsageError(f"cannot solve {game_name!r}: only {', '.join(have)} has a solver")
        path = spec(game_name).solver
    return importlib.import_module(path)


def _check(text: str, args: Options) -> None:
    """``UsageError`` worded as ``p2p position`` words it (``move N 'X': reason``)."""
    from p2p.commands.position import apply_moves
    from p2p.games import create_game

    apply_moves(create_game(args.game, {"width": args.width, "height": args.height}), [text])


def _position(parse_position: Callable[[str, int, int], Any], text: str, args: Options) -> Any:
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


def _answer(solver: PositionSolver, pos: Any, args: Options) -> str:
    if args.analyze:
        scores = solver.analyze(pos)
        if args.weak:
            scores = [None if s is None else (s > 0) - (s < 0) for s in scores]
        return " ".join("-" if s is None else str(s) for s in scores)
    return str(solver.solve(pos, weak=args.weak))


def run(args: Options) -> int:
    module = _solver_module(args.game)
    parse_position = module.parse_position

    if not MIN_SIZE <= args.width <= MAX_SOLVE_WIDTH:
        raise UsageError(f"--width must be between {MIN_SIZE} and {MAX_SOLVE_WIDTH} "
                         "(a position is one digit per column)")
    if not MIN_SIZE <= args.height <= MAX_HEIGHT:
        raise UsageError(f"--height must be between {MIN_SIZE} and {MAX_HEIGHT}")
    try:
        # Fewer nodes near the end than the computer players' search (same scores).
        solver = module.Solver(args.width, args.height, full_window_empties=module.FULL_WINDOW_EMPTIES)
    except ValueError as err:
        raise UsageError(str(err)) from None
    if args.position is not None:
        try:
            print(_answer(solver, _position(parse_position, args.position, args), args))
        except ValueError as err:
            raise UsageError(str(err)) from None
        return 0
    jobs = args.jobs
    if jobs is not None and jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if jobs != 1:
        batch = _whole_batch(jobs)
        if batch is not None:
            _solve_batch(solver, parse_position, batch, args, jobs)
            return 0
    from time import monotonic

    out: list[str] = []  # answers not yet written: one write each time, whatever the
    # stream's buffering (``PYTHONUNBUFFERED`` would make every line a system call)

    def flush() -> None:
        sys.stdout.write("".join(out))
        sys.stdout.flush()
        out.clear()

    number = 0
    for lines in _lines_as_they_come():
        flushed = monotonic()
        for line in lines:
            number += 1
            text = line.strip()
            if not text:
                continue
            try:
                answer = _answer(solver, _position(parse_position, text, args), args)
            except (ValueError, UsageError) as err:
                flush()
                raise UsageError(f"line {number}: {err}") from None
            out.append(f"{text} {answer}\n")
            if monotonic() - flushed >= FLUSH_S:  # a slow run of lines shows its progress
                flush()
                flushed = monotonic()
        # The answers to what has come, before waiting for more (a pipe may wait for them,
        # like Pons' solver's): one write for the lines that came together.
        flush()
    return 0


FLUSH_S = 0.1
"""Answers found are written at least this often (line by line also whenever the lines
read so far are answered; a batch's worker also at its end), not one write per line."""


def _lines_as_they_come() -> Iterator[list[str]]:
    """The lines of stdin in runs: each run all the lines that could be read without
    waiting (a line typed or written alone comes alone, a file comes in big runs).

    Read from the file descriptor in chunks, split at ``\\n`` and decoded as ``sys.stdin``
    splits and decodes; a stdin without a file descriptor (``io.StringIO``) is read line by
    line.
    """
    try:
        fd = sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):
        for line in sys.stdin:
            yield [line]
        return
    encoding = sys.stdin.encoding or "utf-8"
    errors = sys.stdin.errors or "strict"
    rest = b""
    while chunk := os.read(fd, 1 << 16):
        *lines, rest = (rest + chunk).split(b"\n")  # the last one may go on in the next chunk
        yield [line.decode(encoding, errors) for line in lines]
    if rest:
        yield [rest.decode(encoding, errors)]


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _whole_batch(jobs: int | None) -> list[str] | None:
    """The lines of stdin when they are to be solved as a batch: with ``--jobs N`` (N > 1)
    all of them, read to the end; without ``--jobs``, a file's lines if this machine has
    more than one core.  ``None``: answer line by line as the lines come (a pipe or a
    terminal may wait for each answer before it writes the next line)."""
    if jobs is None:
        if _cores() < 2:
            return None
        try:
            if not stat.S_ISREG(os.fstat(sys.stdin.fileno()).st_mode):
                return None
        except (AttributeError, OSError, ValueError):  # no file behind stdin (io.StringIO, closed)
            return None
    return sys.stdin.readlines()


def _solve_batch(solver: PositionSolver, parse_position: Callable[[str, int, int], Any],
                 lines: list[str], args: Options, jobs: int | None) -> None:
    """Answer ``lines`` in their order on ``jobs`` processes (``None``: one per core, or
    this one alone for fewer than ``AUTO_JOBS_LINES`` positions).

    Every line is read and checked here first, so a bad line stops the batch as in the
    line-by-line loop: the answers to the lines before it, then its one-line error.
    """
    texts: list[str] = []
    positions: list[Any] = []
    error: UsageError | None = None
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if not text:
            continue
        try:
            positions.append(_position(parse_position, text, args))
        except (ValueError, UsageError) as err:
            error = UsageError(f"line {number}: {err}")
            break
        texts.append(text)
    if jobs is None:
        jobs = _cores() if len(positions) >= AUTO_JOBS_LINES else 1
    if not hasattr(os, "fork"):  # Windows: one process
        jobs = 1
    jobs = min(jobs, len(positions))
    write = sys.stdout.write
    flush = sys.stdout.flush
    if jobs <= 1:
        for text, pos in zip(texts, positions, strict=True):
            write(f"{text} {_answer(solver, pos, args)}\n")
            flush()
    else:
        done = 0
        for answers in _in_processes(solver, positions, args, jobs):
            write("".join(f"{text} {answer}\n" for text, answer in zip(texts[done:], answers, strict=False)))
            flush()
            done += len(answers)
    if error is not None:
        raise error


def _in_processes(solver: PositionSolver, positions: list[Any], args: Options,
                  jobs: int) -> Iterator[list[str]]:
    """The answers to ``positions`` in order, in runs as they come: worker ``k`` of
    ``jobs``, forked from this process (nothing imported or sent again; its own copy of
    the table, which exact scores do not depend on), solves positions ``k, k + jobs, ...``
    and sends its answers through a pipe, one line each."""
    import select
    import signal
    import time

    sys.stdout.flush()
    sys.stderr.flush()
    pids: list[int] = []  # workers not yet reaped
    fds: list[int] = []  # the read end of each worker's pipe, by worker
    try:
        for k in range(jobs):
            read_end, write_end = os.pipe()
            pid = os.fork()
            if pid == 0:  # the worker: answer its share and leave at once
                status = 1
                pending: list[str] = []
                try:
                    os.close(read_end)
                    monotonic = time.monotonic
                    last = monotonic()
                    for pos in positions[k::jobs]:
                        pending.append(_answer(solver, pos, args) + "\n")
                        if monotonic() - last >= FLUSH_S:
                            _write_all(write_end, "".join(pending).encode())
                            pending.clear()
                            last = monotonic()
                    status = 0
                finally:
                    try:  # the answers found, also when a later one failed
                        _write_all(write_end, "".join(pending).encode())
                    finally:
                        os._exit(status)  # none of the parent's clean-up in the worker
            os.close(write_end)
            pids.append(pid)
            fds.append(read_end)
        received: dict[int, list[str]] = {fd: [] for fd in fds}
        partial = dict.fromkeys(fds, b"")
        reading = list(fds)
        given = 0
        while reading:
            ready, _, _ = select.select(reading, [], [])
            for fd in ready:
                data = os.read(fd, 1 << 16)
                if not data:
                    reading.remove(fd)
                    continue
                *full, partial[fd] = (partial[fd] + data).split(b"\n")
                received[fd].extend(line.decode() for line in full)
            run: list[str] = []
            while given < len(positions):
                share = received[fds[given % jobs]]
                if len(share) <= given // jobs:
                    break
                run.append(share[given // jobs])
                given += 1
            if run:
                yield run
        failed = 0
        while pids:
            failed += os.waitpid(pids.pop(), 0)[1] != 0
    finally:
        for pid in pids:  # stopped early: an error here, or the reader of our output went away
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        for fd in fds:
            os.close(fd)
    if failed or given < len(positions):
        raise RuntimeError(f"{failed} of {jobs} solver processes failed")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
