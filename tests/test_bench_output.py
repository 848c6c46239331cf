"""The benches print figures, not tracebacks (issue 19): bench_lobby printed 17 asyncio
tracebacks and a negative "CPU per peer per join"; bench_flood printed each drop line
twice (once per peer).  Small runs, as processes."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def bench(*args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=timeout, env={**os.environ, "PYTHONPATH": str(ROOT)}, check=False)


@pytest.mark.slow
def test_bench_lobby_prints_no_traceback_and_no_negative_figure() -> None:
    out = bench("bench/bench_lobby.py", "--sizes", "20", "--per-process", "10", "--joins", "2", "--idle-seconds", "0",
                "--join-rate", "20")
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr + out.stdout
    row = next(line for line in out.stdout.splitlines() if line.startswith("20 "))
    assert not re.search(r"(?<![\w/])-\d", row), row  # no negative number in the figures


@pytest.mark.slow
def test_bench_flood_prints_each_line_once() -> None:
    out = bench("bench/bench_flood.py", "--runs", "1", "--count", "1000", "--seconds", "1")
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr + out.stdout
    err = [line for line in out.stderr.splitlines() if line.strip()]
    assert len(err) == len(set(err)), err
    assert not any(line.startswith("dropped") for line in err)
    assert "edge drops, both peers" in out.stdout


@pytest.mark.slow
def test_bench_connect_prints_every_broker_and_no_traceback() -> None:
    out = bench("bench/bench_connect.py", "--runs", "1", "--no-rabbitmq")
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr + out.stdout
    rows = {line.split("  ")[0]: line for line in out.stdout.splitlines()[2:]}
    assert any(name.startswith("Mosquitto") and " 5 " in line for name, line in rows.items())
    assert any(name.startswith("amqtt") and "3.1.1" in line for name, line in rows.items())
