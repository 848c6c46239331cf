"""``p2p solve`` in batches: legality is checked on the solver's own board, and a bad line
is refused with the same one-line message as when every line was replayed through the
game's engine (issue 28)."""

from __future__ import annotations

import argparse
import io
import itertools
import random
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from p2p.ai.connect4_solver import parse_position
from p2p.cli import UsageError
from p2p.commands import solve as solve_command
from p2p.commands.position import apply_moves
from p2p.games import create_game

REPO = Path(__file__).resolve().parents[1]
DRAWN_FULL_BOARD = "123456712345672143657214365712345671234567"
"""42 moves, no four: the engine allows it, the solver has nothing left to solve."""


def _args(**overrides: object) -> argparse.Namespace:
    values: dict[str, object] = {"game": "connect4", "position": None, "analyze": False, "weak": False,
                                 "width": 7, "height": 6, "jobs": None}
    values.update(overrides)
    return argparse.Namespace(**values)


def _engine_then_solver(text: str, width: int, height: int) -> tuple[int, int, int] | str:
    """What ``p2p solve`` did before issue 28 for one line: replay it through the game's
    engine (its refusal wins), then parse it for the solver."""
    try:
        apply_moves(create_game("connect4", {"width": width, "height": height}), [text])
        pos = parse_position(text, width, height)
    except (UsageError, ValueError) as err:
        return str(err)
    return pos.current, pos.mask, pos.moves


def _now(text: str, width: int, height: int) -> tuple[int, int, int] | str:
    try:
        pos = solve_command._position(parse_position, text, _args(width=width, height=height))
    except (UsageError, ValueError) as err:
        return str(err)
    return pos.current, pos.mask, pos.moves


def _random_line(rng: random.Random, width: int, height: int) -> str:
    """A random game cut at a random ply; often run on past its end (a win, a full
    column, the full board), sometimes with a stray character."""
    pos = parse_position("", width, height)
    line = ""
    for _ in range(rng.randint(0, width * height)):
        cols = [c for c in range(width) if pos.can_play(c)]
        if not cols or rng.random() < 0.03:
            break
        col = rng.choice(cols)
        line += str(col + 1)
        if pos.is_winning_move(col):
            break
        pos.play_column(col)
    if rng.random() < 0.4:
        line += "".join(str(rng.randint(1, width)) for _ in range(rng.randint(1, 3)))
    if rng.random() < 0.1 and line:
        i = rng.randrange(len(line))
        line = line[:i] + rng.choice(["0", "8", "9", "x", " ", "p", "\u0665", "-"]) + line[i + 1:]
    return line


@pytest.mark.parametrize(("width", "height"), [(7, 6), (4, 4), (5, 4), (9, 7)])
def test_a_line_reads_as_when_the_engine_replayed_it(width: int, height: int) -> None:
    """Random lines, legal and not: the same position, or the same refusal word for word."""
    rng = random.Random(f"solve-batch-{width}x{height}")
    lines = [_random_line(rng, width, height) for _ in range(600)]
    lines += ["4444444", "1212121", "12121214", "48", "0", "", " 4455", "4 4", "p4", DRAWN_FULL_BOARD]
    refused = 0
    for line in lines:
        if width != 7 and line in ("4444444", DRAWN_FULL_BOARD):
            continue
        before = _engine_then_solver(line, width, height)
        assert _now(line, width, height) == before, line
        refused += isinstance(before, str)
    assert 100 < refused < len(lines) - 100  # both kinds were tried


def test_a_batch_of_legal_lines_never_replays_through_the_engine(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from p2p.games.connect4 import Connect4

    def no_replay(self: Connect4, move: str) -> None:
        raise AssertionError("a legal line was replayed through the engine")

    monkeypatch.setattr(Connect4, "push", no_replay)
    lines = [line.split()[0] for line in (REPO / "tests/data/connect4_testsets/Test_L3_R1")
             .read_text().splitlines()[:30]]
    monkeypatch.setattr(sys, "stdin", io.StringIO("".join(f"{line}\n" for line in lines)))
    assert solve_command.run(_args()) == 0
    assert [row.split()[0] for row in capsys.readouterr().out.splitlines()] == lines
    # A bad line still goes to the engine for its wording (and meets the patched push).
    monkeypatch.setattr(sys, "stdin", io.StringIO("4444444\n"))
    with pytest.raises(AssertionError, match="replayed"):
        solve_command.run(_args())


def _p2p_solve(stdin: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "p2p", "solve", "connect4"],
        input=stdin, capture_output=True, text=True, cwd=REPO, timeout=120, check=False,
    )


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("4444444", "move 7 '4': column 4 is full"),
        ("12121214", "move 8 '4': the round is over"),
        ("1212121", "move 7: column 1 wins, so the game is over"),
        (DRAWN_FULL_BOARD, "move 42: the board is full, so the game is over"),
        ("44x5", "move 3 'x': 'x' is not a column (1-7)"),
        ("448", "move 3 '8': column 8 does not exist (1-7)"),
    ],
)
def test_a_bad_line_in_a_batch_stops_it_with_one_line(bad: str, message: str) -> None:
    """The lines before it are answered, the bad one is named with its number and the
    message ``p2p solve`` gave before issue 28; nothing after it is solved."""
    out = _p2p_solve(f"4455\n\n44455554221\n{bad}\n4455\n")
    assert out.returncode == 2
    assert out.stdout == "4455 18\n44455554221 -15\n"
    assert out.stderr == f"p2p solve: line 4: {message}\n"


# -- a batch on several processes ----------------------------------------------------------


def _lines(name: str, count: int) -> list[str]:
    return [line.split()[0] for line in (REPO / "tests/data/connect4_testsets" / name)
            .read_text().splitlines()[:count]]


def _solve_file(path: Path, *options: str) -> subprocess.CompletedProcess[str]:
    with path.open() as feed:
        return subprocess.run(
            [sys.executable, "-m", "p2p", "solve", "connect4", *options],
            stdin=feed, capture_output=True, text=True, cwd=REPO, timeout=120, check=False,
        )


@pytest.mark.parametrize("options", [[], ["--analyze"], ["--weak"], ["--analyze", "--weak"]])
def test_jobs_answer_as_one_process_does(tmp_path: Path, options: list[str]) -> None:
    """A file of more than ``AUTO_JOBS_LINES`` lines on every core (the default), on three
    processes and on one: the same answers in the order of the lines."""
    lines = _lines("Test_L3_R1", 120) + _lines("Test_L2_R1", 12)
    feed = tmp_path / "batch"
    feed.write_text("\n".join(lines[:60]) + "\n\n" + "\n".join(lines[60:]) + "\n")
    one = _solve_file(feed, "--jobs", "1", *options)
    assert one.returncode == 0, one.stderr
    assert [row.split()[0] for row in one.stdout.splitlines()] == lines
    for jobs in ([], ["--jobs", "3"], ["-j", "2"]):
        assert _solve_file(feed, *jobs, *options).stdout == one.stdout, jobs


@pytest.mark.parametrize("jobs", [[], ["--jobs", "2"]])
def test_a_bad_line_stops_a_batch_on_several_processes(tmp_path: Path, jobs: list[str]) -> None:
    """The answers to the lines before it (and only those), then its one-line error."""
    lines = _lines("Test_L3_R1", 150)
    feed = tmp_path / "batch"
    feed.write_text("\n".join([*lines, "4444444", *lines[:20]]) + "\n")
    out = _solve_file(feed, *jobs)
    assert out.returncode == 2
    assert [row.split()[0] for row in out.stdout.splitlines()] == lines
    assert out.stderr == "p2p solve: line 151: move 7 '4': column 4 is full\n"


def test_jobs_fork_only_for_a_batch(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                    tmp_path: Path) -> None:
    """From a file on a two-core machine: a batch of ``AUTO_JOBS_LINES`` positions is
    shared out to two processes, a shorter one (and ``--jobs 1``) never forks."""
    import os

    forks: list[int] = []
    real_fork = os.fork

    def counted_fork() -> int:
        forks.append(1)
        return real_fork()

    monkeypatch.setattr(os, "fork", counted_fork)
    monkeypatch.setattr(solve_command, "_cores", lambda: 2)
    lines = _lines("Test_L3_R1", solve_command.AUTO_JOBS_LINES)
    for count, jobs, expected_forks in ((len(lines), None, 2), (len(lines) - 1, None, 0), (len(lines), 1, 0)):
        feed = tmp_path / f"batch{count}"
        feed.write_text("".join(f"{line}\n" for line in lines[:count]))
        forks.clear()
        with feed.open() as stdin:
            monkeypatch.setattr(sys, "stdin", stdin)
            assert solve_command.run(_args(jobs=jobs)) == 0
        assert [row.split()[0] for row in capsys.readouterr().out.splitlines()] == lines[:count]
        assert len(forks) == expected_forks, (count, jobs)


def test_each_answer_comes_before_the_next_line_is_written() -> None:
    """A program that writes one position and waits for its answer before the next gets
    it (the answers of what has come are written before stdin is read again)."""
    with subprocess.Popen([sys.executable, "-m", "p2p", "solve", "connect4"], cwd=REPO, text=True,
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        watchdog = threading.Timer(60, proc.kill)  # an answer that never comes fails, not hangs
        watchdog.start()
        try:
            for line, answer in (("4455", "18"), ("44455554221", "-15"), ("4455", "18")):
                proc.stdin.write(f"{line}\n")
                proc.stdin.flush()
                assert proc.stdout.readline() == f"{line} {answer}\n"
            proc.stdin.close()
            assert proc.wait(timeout=60) == 0
        finally:
            watchdog.cancel()
            proc.kill()


def test_lines_split_as_a_text_file_splits_them() -> None:
    """More than one read's worth of lines on a pipe, ``\\n`` and ``\\r\\n``: every line
    answered once, and a bad line named by its number (a lone ``\\r`` ends no line, as
    before)."""
    lines = _lines("Test_L3_R1", 1000) * 3
    feed = "".join(line + ("\r\n" if i % 3 else "\n") for i, line in enumerate(lines))
    assert len(feed) > 1 << 16
    out = _p2p_solve(feed + "4455\n\n4444444\n4455")
    assert out.returncode == 2
    assert [row.split()[0] for row in out.stdout.splitlines()] == [*lines, "4455"]
    assert out.stderr == f"p2p solve: line {len(lines) + 3}: move 7 '4': column 4 is full\n"
    out = _p2p_solve("4455\r\n\r\n4455")
    assert (out.returncode, out.stdout) == (0, "4455 18\n4455 18\n")
    out = _p2p_solve("4455\n4455\r4455\n")
    assert (out.stdout, out.stderr) == ("4455 18\n", "p2p solve: line 2: move 5 '\\r': '\\r' is not a column (1-7)\n")


class _Flushes:
    """A stdout that keeps what had been written at each flush."""

    def __init__(self) -> None:
        self.text = ""
        self.flushed: list[str] = []

    def write(self, text: str) -> int:
        self.text += text
        return len(text)

    def flush(self) -> None:
        self.flushed.append(self.text)


@pytest.mark.parametrize("seconds_per_reading", [0.0, 1.0])
def test_line_by_line_one_write_per_read_unless_slow(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, seconds_per_reading: float) -> None:
    """Lines read together are answered with one flush; when answering them is slow
    (a clock that moves a second each time it is read), every answer is flushed as found."""
    import time

    clock = iter(itertools.count(step=seconds_per_reading) if seconds_per_reading else itertools.repeat(0.0))
    monkeypatch.setattr(time, "monotonic", lambda: next(clock))
    lines = _lines("Test_L3_R1", 5)
    feed = tmp_path / "batch"
    feed.write_text("".join(f"{line}\n" for line in lines))
    out = _Flushes()
    monkeypatch.setattr(sys, "stdout", out)
    with feed.open() as stdin:
        monkeypatch.setattr(sys, "stdin", stdin)
        assert solve_command.run(_args(jobs=1)) == 0
    assert [row.split()[0] for row in out.text.splitlines()] == lines
    if seconds_per_reading:
        assert [len(text.splitlines()) for text in out.flushed[:5]] == [1, 2, 3, 4, 5]
    else:
        assert out.flushed == [out.text]


def test_a_failing_worker_ends_the_batch_with_an_error(monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A worker that fails (here: an answer that raises) ends the batch, no hang: the
    answers before its first missing one, then an error (``p2p`` prints it as one line)."""
    lines = _lines("Test_L3_R1", 120)
    real_answer = solve_command._answer

    def answer(solver: object, pos: object, args: object) -> str:
        if pos.current == broken.current and pos.mask == broken.mask:  # type: ignore[attr-defined]
            raise MemoryError("worker out of memory")
        return real_answer(solver, pos, args)  # type: ignore[arg-type]

    broken = parse_position(lines[51])
    monkeypatch.setattr(solve_command, "_answer", answer)
    feed = tmp_path / "batch"
    feed.write_text("".join(f"{line}\n" for line in lines))
    with feed.open() as stdin:
        monkeypatch.setattr(sys, "stdin", stdin)
        with pytest.raises(RuntimeError, match="1 of 2 solver processes failed"):
            solve_command.run(_args(jobs=2))
    assert [row.split()[0] for row in capsys.readouterr().out.splitlines()] == lines[:51]
