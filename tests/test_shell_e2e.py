"""End to end: the real ``p2p`` program in a real terminal (tmux), typed into like a person."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


class Tmux:
    """One tmux server on a private socket running one program in an 80x24 window."""

    def __init__(self, command: list[str], env: dict[str, str], size: tuple[int, int] = (80, 24)) -> None:
        self.socket = f"p2p-test-{uuid.uuid4().hex[:8]}"
        exports = " ".join(f"{k}={_quote(v)}" for k, v in env.items())
        line = f"env {exports} {' '.join(_quote(c) for c in command)}; echo EXITED $?; sleep 30"
        self._tmux("new-session", "-d", "-s", "main", "-x", str(size[0]), "-y", str(size[1]), line)

    def _tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=10, check=True
        )
        return done.stdout

    def keys(self, *keys: str) -> None:
        self._tmux("send-keys", "-t", "main", *keys)

    def type(self, text: str) -> None:
        """Type literally, then Enter."""
        self._tmux("send-keys", "-t", "main", "-l", text)
        self._tmux("send-keys", "-t", "main", "Enter")

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", "main")

    def wait(self, text: str, timeout: float = 10.0) -> str:
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if text in screen:
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} not on screen:\n{screen}")
            time.sleep(0.05)

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, timeout=10, check=False)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def _env(config_dir: Path) -> dict[str, str]:
    return {
        "P2P_CONFIG_DIR": str(config_dir),
        "PYTHONPATH": str(Path(__file__).resolve().parents[1]),
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
        "PATH": os.environ.get("PATH", ""),
    }


def test_local_round_in_a_real_terminal(tmp_path: Path) -> None:
    tmux = Tmux([sys.executable, "-m", "p2p", "--local", "--lang", "de", "--nick", "anna"], _env(tmp_path))
    try:
        tmux.wait("Kein Spiel")
        tmux.type("/play connect4")
        tmux.wait("Runde 1 · Am Zug: Rot")
        for column in "4545454":
            tmux.keys(column)  # a lone digit plays at once
            time.sleep(0.35)  # a person is slower than the 0.25 s input lock
        screen = tmux.wait("vorbei: Rot gewinnt")
        assert "Stand 1:0" in screen
        assert "◆" in screen  # the winning line is highlighted
        tmux.type("hallo")
        tmux.wait("anna: hallo")
        tmux.type("/quit")
        tmux.wait("EXITED 0")
    finally:
        tmux.close()
    assert "shell.json" in os.listdir(tmp_path)


def test_cli_without_a_terminal_says_so_in_one_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "p2p", "--local"], capture_output=True, text=True, timeout=30,
        env={**os.environ, **_env(tmp_path)}, stdin=subprocess.DEVNULL, check=False,
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "needs a terminal" in done.stderr
    assert "Traceback" not in done.stderr


def test_online_round_against_a_scripted_peer_in_a_real_terminal(tmp_path: Path, broker_url: str) -> None:
    env = _env(tmp_path)
    bot = subprocess.Popen(
        [sys.executable, "-m", "p2p.shell.bot", broker_url, "robo", "neuling"],
        env={**os.environ, **env, "P2P_CONFIG_DIR": str(tmp_path / "bot")},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    tmux = Tmux([sys.executable, "-m", "p2p", "--broker", broker_url, "--nick", "anna", "--lang", "en"], env)
    try:
        tmux.wait("Connected to", 15)
        tmux.wait("robo [", 15)
        tmux.type("hi robo")
        tmux.wait("anna: hi robo")
        tmux.type("/invite robo connect4 start=me")
        tmux.wait("To move: Red (you)", 15)
        column = 0
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            screen = tmux.screen()
            status = screen.splitlines()[-2] if len(screen.splitlines()) >= 2 else ""
            if "over" in status:
                break
            if "(you)" in status:
                tmux.keys(str(column % 7 + 1))  # a full column is refused with one line: next one
                column += 1
            time.sleep(0.3)
        screen = tmux.wait("Round 1 over", 10)
        assert "Score" in screen
        tmux.keys("C-q")
        tmux.wait("EXITED 0", 10)
    finally:
        tmux.close()
        bot.terminate()
        bot.wait(10)


def test_first_start_without_internet_offers_a_local_broker_and_a_computer(tmp_path: Path) -> None:
    from p2p.net.broker import mosquitto_path

    if mosquitto_path() is None:
        pytest.skip("mosquitto is not installed")
    # A bare `p2p` as the README's first command runs it: the default public broker.
    # This machine has no internet, so the shell must say so and offer /local.
    tmux = Tmux([sys.executable, "-m", "p2p", "--nick", "anna", "--lang", "en"], _env(tmp_path), size=(100, 30))
    try:
        tmux.wait("Note: the brokers", 10)  # three public brokers by default: "... are public"
        deadline = time.monotonic() + 20
        while "cannot be reached" not in tmux.screen():
            if "Connected to" in tmux.screen():
                pytest.skip("this machine reaches the public broker; the offline path cannot be shown")
            assert time.monotonic() < deadline, tmux.screen()
            time.sleep(0.1)
        tmux.type("/local")
        tmux.wait("computer [", 20)
        tmux.type("/invite computer connect4 start=me")
        tmux.wait("To move: Red (you)", 15)
        tmux.type("/resign")
        tmux.wait("Round 1 over", 10)
        tmux.keys("C-q")
        tmux.wait("EXITED 0", 15)
    finally:
        tmux.close()
