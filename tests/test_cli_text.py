"""The CLI and the README as a user meets them (issue 11.11): run as processes."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from p2p import __version__

ROOT = Path(__file__).resolve().parents[1]


def p2p(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "p2p", *args], capture_output=True, text=True, timeout=timeout,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}, check=False,
    )


def test_version() -> None:
    out = p2p("--version")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"p2p {__version__}"
    assert "--version" in p2p("--help").stdout


def test_position_without_moves_shows_the_start_and_without_a_game_asks_for_one() -> None:
    out = p2p("position", "cube")
    assert out.returncode == 0, out.stderr
    assert "to move: Red" in out.stdout
    out = p2p("position")
    assert out.returncode == 2
    assert "GAME" in out.stderr and "MOVE" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("moves", ["449", "44x", "4444444"])
def test_solve_and_position_word_the_same_error_the_same_way(moves: str) -> None:
    pos = p2p("position", "connect4", moves)
    solve = p2p("solve", "connect4", moves)
    assert pos.returncode == solve.returncode == 2
    assert pos.stderr.removeprefix("p2p position: ") == solve.stderr.removeprefix("p2p solve: ")
    assert re.match(r"move \d+ '.': ", solve.stderr.removeprefix("p2p solve: "))


def test_demo_seed_help_tells_the_truth() -> None:
    text = " ".join(p2p("demo", "--help").stdout.split())
    assert "--seed" in text and "varies between runs" in text


@pytest.mark.slow
def test_demo_writes_round_logs_that_replay_with_names(tmp_path: Path) -> None:
    env = {"P2P_CONFIG_DIR": str(tmp_path)}
    out = p2p("demo", "--game", "connect4", "--quiet", env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    paths = re.findall(r"round log: (\S+)", out.stdout)
    assert len(paths) == 2
    for path in paths:
        assert Path(path).is_file() and Path(path).is_relative_to(tmp_path / "rounds" / "demo")
    hint = re.search(r"try: p2p replay --moves (\S+)", out.stdout)
    assert hint is not None
    replay = p2p("replay", "--moves", hint[1], env=env)
    assert replay.returncode == 0, replay.stderr
    assert re.search(r"seat 0 \w+: ann \(", replay.stdout) and re.search(r"seat 1 \w+: ben \(", replay.stdout)
    plies = [line for line in replay.stdout.splitlines() if line.strip().startswith("ply ")]
    assert plies and all(re.search(r" by (Red|Yellow) (ann|ben) \(", line) for line in plies), plies
    assert not re.search(r"by [0-9a-f]{8}\b", replay.stdout) and "player" not in replay.stdout


@pytest.mark.slow
def test_two_bots_example_prints_names() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "two_bots.py"), "--game", "connect4"],
        capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert out.returncode == 0, out.stderr
    # robo has left the lobby by now: its name must still be known
    seats = next(line for line in out.stdout.splitlines() if line.startswith("seats:"))
    assert "alice (" in seats and "robo (" in seats and "?" not in seats, seats
    line = next(line for line in out.stdout.splitlines() if line.startswith("winners:"))
    assert "?" not in line, line


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_readme_local_broker_instructions_work_on_debian(tmp_path: Path) -> None:
    """The README never tells a Debian user to run ``mosquitto -p 1883`` (the system
    service already holds the port, and /usr/sbin is not on PATH); its hand-started
    broker command runs as written (on a free port here)."""
    readme = (ROOT / "README.md").read_text()
    assert "mosquitto -p 1883" not in readme
    assert "only where systemd runs" in readme  # a container has no service after the install
    command = re.search(r"`(/usr/sbin/mosquitto -p (\d+))`", readme)
    assert command is not None
    assert f"mqtt://127.0.0.1:{command[2]}" in readme
    if not Path("/usr/sbin/mosquitto").exists():
        pytest.skip("mosquitto is not installed in /usr/sbin")
    port = _free_port()
    argv = command[1].replace(command[2], str(port)).split()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={"PATH": "/usr/bin:/bin"})  # a normal user's PATH
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise AssertionError("the README's broker command did not start a broker") from None
                time.sleep(0.05)
    finally:
        proc.terminate()
        proc.wait(5)
