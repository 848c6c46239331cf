"""Speed of the four-player chess move generator: perft nodes per second.

Three figures, each the median of ``--runs`` runs, measured one after another in one
process on the same machine state:

* ``perft(D)`` from the start position with bulk counting (the leaves are counted, not
  played): the classic perft figure, nodes = leaf count;
* ``make/unmake`` nodes/s: the same tree to depth ``D - 1`` with every leaf move really
  played and taken back, in perft mode (eliminations only) and with the full game rules
  (check bonus, draws, repetition key): the rate a search sees.

Wall time and this process's CPU time are both reported: on a shared machine the CPU
figure is the steadier one.

    python bench/bench_chess4_perft.py [--depth 5] [--runs 5] [--markdown docs/chess4.md]

The table is printed as Markdown; ``--markdown FILE`` also replaces the block between
the ``<!-- bench:perft:start -->`` / ``<!-- bench:perft:end -->`` markers of that file.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from p2p.games.chess4.movegen import Position, perft

START, END = "<!-- bench:perft:start -->", "<!-- bench:perft:end -->"


def _played(pos: Position, depth: int) -> int:
    """Nodes of a full make/unmake walk (every node is played, none bulk-counted)."""
    if depth == 0:
        return 1
    n = 0
    for m in pos.gen_moves():
        pos.make(m)
        n += _played(pos, depth - 1)
        pos.unmake()
    return n


def _time(fn) -> tuple[int, float, float]:
    """Nodes, wall seconds and CPU seconds of this process (the CPU figure is less
    disturbed by other jobs on a shared machine)."""
    t0, c0 = time.perf_counter(), time.process_time()
    nodes = fn()
    return nodes, time.perf_counter() - t0, time.process_time() - c0


def _machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()} ({platform.python_implementation()})"


def measure(depth: int, runs: int) -> list[tuple[str, int, float, float]]:
    rows = []

    def bulk() -> int:
        return perft(Position.start(), depth)

    def walk(rules: bool):
        def run() -> int:
            pos = Position.start()
            pos.rules = rules
            pos.track_repetition(rules)
            return _played(pos, depth - 1)

        return run

    for label, fn in (
        (f"perft({depth}), bulk counting", bulk),
        (f"make/unmake to depth {depth - 1}, perft mode", walk(False)),
        (f"make/unmake to depth {depth - 1}, full rules", walk(True)),
    ):
        walls, cpus = [], []
        nodes = 0
        for _ in range(runs):
            nodes, wall, cpu = _time(fn)
            walls.append(wall)
            cpus.append(cpu)
        rows.append((label, nodes, statistics.median(walls), statistics.median(cpus)))
    return rows


def table(rows: list[tuple[str, int, float, float]], runs: int) -> str:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [
        f"Machine: {_machine()}; median of {runs} runs; load average {load:.1f} at the end.",
        "",
        "| measurement | nodes | wall time | nodes/s (wall) | CPU time | nodes/s (CPU) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for label, nodes, wall, cpu in rows:
        lines.append(
            f"| {label} | {nodes:,} | {wall:.2f} s | {nodes / wall:,.0f} | {cpu:.2f} s | {nodes / cpu:,.0f} |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depth", type=int, default=5)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--markdown", type=Path)
    args = parser.parse_args()
    text = table(measure(args.depth, args.runs), args.runs)
    print(text)
    if args.markdown:
        doc = args.markdown.read_text()
        block = f"{START}\n{text}\n{END}"
        if START in doc and END in doc:
            doc = re.sub(
                re.escape(START) + ".*?" + re.escape(END),
                lambda _m: block,
                doc,
                flags=re.DOTALL,
            )
        else:
            doc = doc.rstrip() + "\n\n" + block + "\n"
        args.markdown.write_text(doc)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
