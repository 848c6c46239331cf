"""Mean solve time per position on Pascal Pons' test sets, next to his C++ figures.

    python bench/bench_connect4_solver.py                   # default --limit per set
    python bench/bench_connect4_solver.py --limit 50 --sets Test_L2_R2

Follows the blog's methodology (part 2 / part 12): a fresh transposition table for every
position, the strong (exact) score, the first N positions of each file.  The C++ columns
are the blog's part-12 means and the part-12 build measured on this kind of machine, both
copied from ``shared/reference/connect4.md`` (sections 1.5 and 1.6), so the ratio compares
a run here with a figure from elsewhere: read it as an order of magnitude.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from p2p.ai.connect4_solver import Solver, parse_position

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "connect4_testsets"

# (blog part 12 mean time in seconds, blog mean nodes, part-12 build on the reference machine)
PONS = {
    "Test_L3_R1": (4.568e-6, 51.28, 5.09e-6),
    "Test_L2_R1": (37.45e-6, 449.6, 40.8e-6),
    "Test_L2_R2": (3.212e-3, 39_900, 4.182e-3),
    "Test_L1_R1": (254.6e-6, 3_298, 289.8e-6),
    "Test_L1_R2": (96.63e-3, 1_201_000, 124.0e-3),
    "Test_L1_R3": (5.490, 65_920_000, 8.13),
}
DEFAULT_LIMIT = {
    "Test_L3_R1": 1000, "Test_L2_R1": 1000, "Test_L1_R1": 300,
    "Test_L2_R2": 50, "Test_L1_R2": 5, "Test_L1_R3": 0,
}


def fmt(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


def run_set(name: str, limit: int) -> str:
    lines = (DATA / name).read_text().splitlines()[:limit]
    solver = Solver()
    times: list[float] = []
    nodes = 0
    correct = 0
    for line in lines:
        pos, score = line.split()
        solver.reset()
        p = parse_position(pos)
        t0 = time.perf_counter()
        got = solver.solve(p)
        times.append(time.perf_counter() - t0)
        nodes += solver.nodes
        correct += got == int(score)
    mean = statistics.fmean(times)
    blog, blog_nodes, here_cpp = PONS[name]
    kpos = nodes / sum(times) / 1000
    return (f"| {name} | {len(lines)} | {fmt(mean)} | {fmt(statistics.median(times))} | "
            f"{fmt(max(times))} | {nodes / len(lines):,.1f} | {kpos:,.0f} | {correct}/{len(lines)} | "
            f"{fmt(blog)} / {blog_nodes:,} | {fmt(here_cpp)} | {mean / here_cpp:,.0f}x |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=None, help="positions per set (first N)")
    parser.add_argument("--sets", default=",".join(k for k, v in DEFAULT_LIMIT.items() if v))
    args = parser.parse_args()
    cpu = platform.machine()
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    print(f"machine: {cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"load average {os.getloadavg()[0]:.1f}")
    print("| set | n | mean | median | max | mean nodes | K pos/s | correct | "
          "Pons blog C++ (part 12) mean / nodes | C++ part 12 on ref. machine | ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name in args.sets.split(","):
        limit = args.limit if args.limit is not None else DEFAULT_LIMIT[name]
        print(run_set(name, limit), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
