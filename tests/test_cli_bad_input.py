"""Bad input stops at the door (issue 19), for the CLI and the examples run as processes:
one line on stderr that says what to do, never a traceback, never a hang."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BAD_URL_HINT = "use mqtt://, mqtts://, ws:// or wss://"


def run(args: list[str], cwd: Path | None = None, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, timeout=timeout, cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT)}, check=False,
    )


def one_line_error(out: subprocess.CompletedProcess[str], *words: str) -> None:
    assert out.returncode != 0
    assert "Traceback" not in out.stderr, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    for word in words:
        assert word in lines[0], lines[0]


@pytest.mark.parametrize("argv", [
    ["--broker", "http://example.com"],
    ["shell", "--broker", "http://example.com"],
    ["--broker", "mqtt://127.0.0.1:1883", "--broker", "bogus://x"],
    ["demo", "--broker", "http://example.com"],
])
def test_the_cli_refuses_a_url_that_is_no_broker(argv: list[str]) -> None:
    out = run(["-m", "p2p", *argv])
    assert out.returncode == 2
    one_line_error(out, BAD_URL_HINT)


@pytest.mark.parametrize("argv, words", [
    (["examples/bot.py", "--broker", "bogus://x"], [BAD_URL_HINT]),
    (["examples/bot.py", "--namespace", "Bad_NS"], ["bad namespace 'Bad_NS'"]),
    (["examples/bot.py", "--level", "godlike"], ["unknown level 'godlike'", "normal"]),
    (["examples/chat_bot.py", "--namespace", "Bad_NS"], ["bad namespace"]),
    (["examples/three_peers.py", "--broker", "http://x"], [BAD_URL_HINT]),
    (["examples/two_bots.py", "--broker", "http://x"], [BAD_URL_HINT]),
])
def test_the_examples_refuse_bad_input_in_one_line(argv: list[str], words: list[str]) -> None:
    one_line_error(run(argv, cwd=ROOT), *words)


@pytest.mark.parametrize("argv", [
    ["examples/two_bots.py"], ["examples/bot.py"], ["examples/three_peers.py"], ["examples/chat_bot.py"],
    ["-m", "p2p", "demo"],
])
def test_a_refused_broker_is_said_in_one_line_within_two_seconds(argv: list[str]) -> None:
    """two_bots.py against a closed port printed the bot task's traceback; every entry
    point waited out the transport's 10 s connect timeout for a refusal."""
    # the interpreter's start and imports, measured now: 1 s on an idle machine, 3-5 s on
    # a loaded CI runner (a fixed 1.5 s allowance failed there with 3.5 s in all)
    started = time.monotonic()
    run(["-c", "import p2p.peer, p2p.cli, p2p.ai"], cwd=ROOT)
    start_up = time.monotonic() - started
    started = time.monotonic()
    out = run([*argv, "--broker", "mqtt://127.0.0.1:1"], cwd=ROOT)
    took = time.monotonic() - started
    # waiting out the 10 s connect timeout costs 10 s plus the start: still far above this
    assert took < 2.0 + 2 * start_up, f"{took:.1f} s (start-up {start_up:.1f} s)"
    one_line_error(out, "cannot connect to mqtt://127.0.0.1:1: connection refused")


def test_replay_refuses_a_named_pipe_instead_of_hanging(tmp_path: Path) -> None:
    fifo = tmp_path / "round.log"
    os.mkfifo(fifo)
    out = run(["-m", "p2p", "replay", str(fifo)], timeout=10)
    assert out.returncode == 2
    one_line_error(out, "not a regular file")


def test_solve_names_one_width_limit_everywhere() -> None:
    """"up to 9" / "between 4 and 10" / --help "at most 9"."""
    help_text = run(["-m", "p2p", "solve", "--help"]).stdout
    assert "4 to 9" in help_text
    for width in ("3", "10"):
        out = run(["-m", "p2p", "solve", "connect4", "--width", width, "4455"])
        assert out.returncode == 2
        one_line_error(out, "--width must be between 4 and 9")


def test_version_from_the_folder_above_a_clone_named_p2p(tmp_path: Path) -> None:
    """``python -m p2p --version`` next to a folder ``p2p`` without __init__.py (a clone)."""
    (tmp_path / "p2p").symlink_to(ROOT)
    out = subprocess.run([sys.executable, "-m", "p2p", "--version"], capture_output=True, text=True,
                         cwd=tmp_path, timeout=30, check=False,
                         env={**os.environ, "PYTHONPATH": ""})
    assert "Traceback" not in out.stderr, out.stderr
    assert out.returncode == 0 and out.stdout.startswith("p2p "), out


def test_top_level_help_says_the_shell_options_work_there() -> None:
    out = run(["-m", "p2p", "--help"])
    assert out.returncode == 0
    assert "shell's options work at the top level" in out.stdout
    assert "--broker URL" in out.stdout and "--nick NAME" in out.stdout
