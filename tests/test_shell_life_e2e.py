"""End to end (issue 11): two real ``p2p`` shells in tmux on one Mosquitto; one side quits
mid-round and starts again, takes its round up from the log and the round ends right for both."""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

import pytest
from test_shell_e2e import Tmux, _env

pytestmark = [
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
    pytest.mark.slow,
]


def _status(tmux: Tmux) -> str:
    lines = tmux.screen().rstrip("\n").splitlines()
    return lines[-2] if len(lines) >= 2 else ""


def _wait_status(tmux: Tmux, text: str, timeout: float = 15.0) -> str:
    deadline = time.monotonic() + timeout
    while text not in (status := _status(tmux)):
        if time.monotonic() > deadline:
            raise AssertionError(f"{text!r} not on the status line:\n{tmux.screen()}")
        time.sleep(0.05)
    return status


def _shell(broker_url: str, config: Path, nick: str) -> Tmux:
    command = [sys.executable, "-m", "p2p", "--broker", broker_url, "--nick", nick, "--lang", "en"]
    return Tmux(command, _env(config), size=(120, 40))


def test_two_shells_one_restarts_mid_round_and_the_round_ends_right_for_both(tmp_path: Path, broker_url: str) -> None:
    alice = _shell(broker_url, tmp_path / "alice", "alice")
    bob = _shell(broker_url, tmp_path / "bob", "bob")
    try:
        alice.wait("Connected to", 15)
        bob.wait("Connected to", 15)
        alice.wait("bob [", 15)
        alice.type("/invite bob connect4 start=me")
        bob.wait("/accept or /decline", 15)
        bob.type("/accept")
        for who, column in ((alice, "1"), (bob, "7"), (alice, "1")):
            _wait_status(who, "(you)")
            who.keys(column)
            time.sleep(0.4)
        _wait_status(bob, "To move: Yellow (you)")
        bob.keys("C-q")  # bob quits in the middle of the round ...
        bob.wait("EXITED 0", 15)
        bob.close()
        alice.wait("bob went offline — you win in", 15)
        bob = _shell(broker_url, tmp_path / "bob", "bob")  # ... and starts again
        bob.wait("Resumed round", 20)
        _wait_status(bob, "Round 1 · To move: Yellow (you)", 20)
        alice.wait("bob is back", 20)
        for who, column in ((bob, "7"), (alice, "2"), (bob, "7"), (alice, "2"), (bob, "7")):
            _wait_status(who, "(you)")
            who.keys(column)
            time.sleep(0.4)
        assert "over: Yellow (you) wins" in _wait_status(bob, "over:")
        assert "over: Yellow (bob) wins" in _wait_status(alice, "over:")
        for tmux in (alice, bob):  # the status reads the chain's end at once; the score follows the end's notice
            _wait_status(tmux, "alice 0 · bob 1", 20)
        for tmux in (alice, bob):
            tmux.keys("C-q")
            tmux.wait("EXITED 0", 15)
    finally:
        alice.close()
        bob.close()
