"""A Mosquitto that the shell (``/local``) or ``p2p demo`` starts never outlives it, even
after ``kill -9`` (issue 19: one was found running with no parent and its config file
deleted).  Real processes; the broker's fate is read from /proc."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")

SHELL_WITH_LOCAL = """
import asyncio, sys
from pathlib import Path
from p2p.shell.connect import attach_hooks_only
from p2p.shell.testing import HeadlessShell

async def main():
    async def hooks(shell):
        attach_hooks_only(shell)
    async with HeadlessShell(config_dir=Path(sys.argv[1]), startup=hooks) as h:
        await h.type_line("/local")
        await h.wait_for(lambda: any("Local broker running" in x for x in h.controller.state.text_lines()), 20)
        print("ready", flush=True)
        await asyncio.sleep(60)

asyncio.run(main())
"""


def children(pid: int, name: str) -> list[int]:
    """Processes named ``name`` whose parent is ``pid``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":\t", 1) for line in status.splitlines() if ":\t" in line)
        if fields.get("Name", "").strip() == name and int(fields.get("PPid", "0")) == pid:
            found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    """Running (a zombie waiting for an absent reaper counts as gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "State:\tZ" not in status


def wait_gone(pid: int, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


def kill_and_check(proc: subprocess.Popen[str]) -> None:
    brokers = children(proc.pid, "mosquitto")
    assert len(brokers) == 1, brokers
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    try:
        assert wait_gone(brokers[0]), "the broker outlived its killed parent"
    finally:
        if alive(brokers[0]):
            os.kill(brokers[0], signal.SIGTERM)


def test_the_shells_local_broker_dies_with_a_killed_shell(tmp_path: Path) -> None:
    pytest.importorskip("p2p.peer")
    from p2p.net.broker import mosquitto_path

    if mosquitto_path() is None:
        pytest.skip("mosquitto is not installed")
    proc = subprocess.Popen([sys.executable, "-c", SHELL_WITH_LOCAL, str(tmp_path)], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        kill_and_check(proc)
    finally:
        if proc.poll() is None:
            proc.kill()


def test_the_demos_broker_dies_with_a_killed_demo(tmp_path: Path) -> None:
    from p2p.net.broker import mosquitto_path

    if mosquitto_path() is None:
        pytest.skip("mosquitto is not installed")
    proc = subprocess.Popen([sys.executable, "-m", "p2p", "demo", "--game", "chess4"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT), "P2P_CONFIG_DIR": str(tmp_path)})
    try:
        deadline = time.monotonic() + 20
        while not children(proc.pid, "mosquitto"):
            assert time.monotonic() < deadline and proc.poll() is None, "the demo started no broker"
            time.sleep(0.05)
        time.sleep(0.3)  # the watchdog is started right after the broker
        kill_and_check(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
