"""Time from process start to the shell's first rendered screen.

Runs the real ``python -m p2p --local`` in a pseudo-terminal (80x24) several times,
measures until the first full screen has been written (the status line and the input
prompt, the last rows drawn, have arrived), then quits with Ctrl-Q.  Prints each run and the median.

    python bench/bench_shell_startup.py [--runs 7] [--broker URL]

Target (issue 6): median under 0.5 s on the development machine.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import platform
import pty
import select
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time

MARKERS = (b"/help for commands", b">")
"""The status line and the prompt are the last rows drawn on the first screen."""


def one_run(config_dir: str, extra: list[str], timeout: float = 10.0) -> tuple[float, float]:
    """Seconds from spawning the process to the first complete screen, and the CPU
    seconds (user + system) the whole process used from start to quit.

    The CPU time is an upper bound of the start-up work that does not grow when other
    processes compete for the machine, so it is the steadier number on a shared box.
    """
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    env = dict(os.environ, P2P_CONFIG_DIR=config_dir, TERM="xterm-256color", LANG="en_US.UTF-8")
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "p2p", *extra], stdin=slave, stdout=slave, stderr=slave,
        env=env, close_fds=True, start_new_session=True,
    )
    os.close(slave)
    seen = b""
    elapsed = None
    try:
        while time.perf_counter() - start < timeout:
            ready, _, _ = select.select([master], [], [], 0.05)
            if ready:
                try:
                    seen += os.read(master, 65536)
                except OSError:
                    break
                if all(m in seen for m in MARKERS):
                    elapsed = time.perf_counter() - start
                    break
        os.write(master, b"\x11")  # Ctrl-Q
        cpu = _reap(proc, master)
    finally:
        os.close(master)
    if elapsed is None:
        raise RuntimeError("the shell did not draw its first screen in time: " + seen[-300:].decode(errors="replace"))
    return elapsed, cpu


def _reap(proc: subprocess.Popen[bytes], master: int, timeout: float = 5.0) -> float:
    """Wait for the child (draining its output) and return its user + system CPU seconds."""
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        pid, _status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid == proc.pid:
            proc.returncode = 0
            return usage.ru_utime + usage.ru_stime
        ready, _, _ = select.select([master], [], [], 0.02)
        if ready:
            try:
                os.read(master, 65536)
            except OSError:
                pass
    proc.kill()
    _pid, _status, usage = os.wait4(proc.pid, 0)
    proc.returncode = -9
    return usage.ru_utime + usage.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument(
        "--broker", metavar="URL",
        help="start with this broker instead of --local (the connection is made after the first screen)",
    )
    args = parser.parse_args()
    extra = ["--broker", args.broker] if args.broker else ["--local"]
    print("command: p2p " + " ".join(extra))
    with tempfile.TemporaryDirectory() as config_dir:
        one_run(config_dir, extra)  # warm-up: byte-compiles, fills the OS cache
        times = []
        cpus = []
        for i in range(args.runs):
            t, cpu = one_run(config_dir, extra)
            times.append(t)
            cpus.append(cpu)
            print(f"run {i + 1}: first screen after {t * 1000:.0f} ms; whole run used {cpu * 1000:.0f} ms CPU")
    median = statistics.median(times)
    print(f"median {median * 1000:.0f} ms over {args.runs} runs (min {min(times) * 1000:.0f}, max {max(times) * 1000:.0f})")
    print(f"median CPU of a whole run (start, first screen, quit): {statistics.median(cpus) * 1000:.0f} ms")
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, {platform.platform()}")
    print("target < 500 ms:", "met" if median < 0.5 else "NOT met")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
