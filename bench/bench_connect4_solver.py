"""The solver on Pascal Pons' test sets: per position, and as a whole process beside his C++.

    python bench/bench_connect4_solver.py                   # default --limit per set
    python bench/bench_connect4_solver.py --limit 50 --sets Test_L2_R2
    python bench/bench_connect4_solver.py --process --runs 7 --sets Test_L3_R1 [--before REV]

``--process`` (issue 28): ``p2p solve connect4`` as a user runs it, a whole process reading
the positions of a set on stdin, side by side in one run with Pons' own solver built from
his repository (``main.cpp`` at HEAD: one position per line, table kept between lines,
no opening book), alternating runs; wall time and CPU (user + sys) of each process,
medians, and the ratio; every answer checked against the set's published score.  Pons'
source is ``--pons PATH`` (a checkout or a bare git directory) or cloned from GitHub into
``~/.cache/p2p-bench/connect4``; it is built with ``make`` in a temporary directory.
``--before REV`` adds the ``p2p`` of an older commit of this repository (``git
archive``), run the same way.  ``p2p solve`` shares a batch from a file out to every
core by default, which lowers its wall time and not its CPU: the ``--jobs 1`` row is the
same command in one process; read the wall and CPU columns side by side.  Start-up rows: the interpreter alone, ``p2p --version``
and ``p2p solve`` on empty input.

Without ``--process``:
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
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from p2p.ai.connect4_solver import Solver, parse_position

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data" / "connect4_testsets"
PONS_GIT = "https://github.com/PascalPons/connect4"

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


def pons_solver(source: str | None, build: Path) -> Path:
    """Pons' ``c4solver`` built with his Makefile from ``source`` (a checkout or a bare git
    directory such as a mirror's ``repo``; default: a clone in ``~/.cache/p2p-bench/connect4``),
    in ``build``.  A clone, archive or build that fails ends the bench with one line."""
    if source is None:
        cache = Path.home() / ".cache" / "p2p-bench" / "connect4"
        if not cache.exists():
            cache.parent.mkdir(parents=True, exist_ok=True)
            clone = subprocess.run(["git", "clone", "-q", "--depth", "1", PONS_GIT, str(cache)],
                                   capture_output=True, text=True, check=False)
            if clone.returncode != 0:
                shutil.rmtree(cache, ignore_errors=True)
                reason = (clone.stderr.strip().splitlines() or [f"exit status {clone.returncode}"])[-1]
                raise SystemExit(f"cannot clone {PONS_GIT} ({reason}): pass Pons' source with "
                                 "--pons PATH (a checkout or a bare git directory)")
        source = str(cache)
    src = Path(source)
    if (src / "Makefile").exists():
        for item in src.iterdir():
            if item.suffix in (".cpp", ".hpp") or item.name == "Makefile":
                shutil.copy(item, build)
    else:  # a bare repository (or a mirror's ``repo``): its HEAD
        archive = subprocess.run(["git", "--git-dir", str(src), "archive", "HEAD"],
                                 capture_output=True, check=False)
        if archive.returncode != 0:
            raise SystemExit(f"--pons {source}: neither a checkout with a Makefile nor a git "
                             "directory whose HEAD git archive can read")
        subprocess.run(["tar", "x", "-C", str(build)], input=archive.stdout, check=True)
    made = subprocess.run(["make", "-s", "-C", str(build), "c4solver"], capture_output=True, text=True,
                          check=False)
    if made.returncode != 0:
        reason = (made.stderr.strip().splitlines() or [f"exit status {made.returncode}"])[-1]
        raise SystemExit(f"cannot build Pons' c4solver from {source} with make ({reason}); "
                         "the bench needs make and g++")
    return build / "c4solver"


CHILD_ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
"""The processes' environment: Python writes and reads its bytecode caches as in a user's
install (with ``PYTHONDONTWRITEBYTECODE`` set, every run would compile ``p2p`` anew: 20-40 ms
that no user pays); a warm-up run of each process writes them before any timed run."""


def timed(argv: list[str], stdin: Path | None, cwd: Path) -> tuple[float, float, str]:
    """Wall seconds, CPU seconds (user + sys) and stdout of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(stdin or os.devnull, "rb") as feed:
        t0 = time.perf_counter()
        out = subprocess.run(argv, stdin=feed, capture_output=True, cwd=cwd, env=CHILD_ENV, check=False)
        wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    if out.returncode != 0:
        raise SystemExit(f"{argv[0]} failed ({out.returncode}): {out.stderr.decode()[-300:]}")
    return wall, cpu, out.stdout.decode()


def run_processes(args: argparse.Namespace) -> int:
    python = sys.executable
    with tempfile.TemporaryDirectory(prefix="bench-c4-") as tmp:
        work = Path(tmp)
        build = work / "pons"
        build.mkdir()
        pons = pons_solver(args.pons, build)
        commands: dict[str, tuple[list[str], Path]] = {
            "Pons' C++ c4solver": ([str(pons)], work),
            "p2p solve connect4": ([python, "-m", "p2p", "solve", "connect4"], REPO),
            # One process (a batch from a file is shared out to every core by default).
            "p2p solve connect4 --jobs 1": ([python, "-m", "p2p", "solve", "connect4", "--jobs", "1"], REPO),
        }
        if args.before:
            old = work / "before"
            old.mkdir()
            archive = subprocess.run(["git", "-C", str(REPO), "archive", args.before, "p2p"],
                                     check=True, capture_output=True).stdout
            subprocess.run(["tar", "x", "-C", str(old)], input=archive, check=True)
            commands[f"p2p solve connect4 at {args.before}"] = ([python, "-m", "p2p", "solve", "connect4"], old)
        startup: dict[str, tuple[list[str], Path]] = {
            "start-up: python -c pass": ([python, "-c", "pass"], REPO),
            "start-up: python -m p2p --version": ([python, "-m", "p2p", "--version"], REPO),
            "start-up: p2p solve connect4 < /dev/null": ([python, "-m", "p2p", "solve", "connect4"], REPO),
        }
        for argv, cwd in [*commands.values(), *startup.values()]:
            timed(argv, None, cwd)  # warm-up: bytecode caches written, files in the page cache
        load0 = os.getloadavg()[0]
        print(machine_line(load0), flush=True)
        print("| set | what | positions | runs | wall median | CPU median | wall / C++ | CPU / C++ | correct |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---|")
        for name in args.sets.split(","):
            lines = (DATA / name).read_text().splitlines()
            if args.limit is not None:
                lines = lines[: args.limit]
            feed = work / f"{name}.in"
            feed.write_text("".join(line.split()[0] + "\n" for line in lines))
            walls: dict[str, list[float]] = {label: [] for label in commands}
            cpus: dict[str, list[float]] = {label: [] for label in commands}
            correct: dict[str, bool] = dict.fromkeys(commands, True)
            for _ in range(args.runs):
                for label, (argv, cwd) in commands.items():
                    wall, cpu, out = timed(argv, feed, cwd)
                    walls[label].append(wall)
                    cpus[label].append(cpu)
                    correct[label] &= out.splitlines() == lines
            base_wall = statistics.median(walls["Pons' C++ c4solver"])
            base_cpu = statistics.median(cpus["Pons' C++ c4solver"])
            for label in commands:
                wall, cpu = statistics.median(walls[label]), statistics.median(cpus[label])
                print(f"| {name} | {label} | {len(lines)} | {args.runs} | {fmt(wall)} | {fmt(cpu)} | "
                      f"{wall / base_wall:.2f}x | {cpu / base_cpu:.2f}x | "
                      f"{'all' if correct[label] else 'NO'} |", flush=True)
        for label, (argv, cwd) in startup.items():
            samples = [timed(argv, None, cwd)[:2] for _ in range(args.runs)]
            wall = statistics.median(w for w, _ in samples)
            cpu = statistics.median(c for _, c in samples)
            print(f"| - | {label} | 0 | {args.runs} | {fmt(wall)} | {fmt(cpu)} | - | - | - |", flush=True)
        print(f"load average {load0:.1f} at the start, {os.getloadavg()[0]:.1f} at the end")
    return 0


def machine_line(load: float) -> str:
    cpu = platform.machine()
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    return (f"machine: {cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, "
            f"load average {load:.1f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=None, help="positions per set (first N)")
    parser.add_argument("--sets", default=None, help="comma-separated test sets")
    parser.add_argument("--process", action="store_true",
                        help="whole processes: p2p solve beside Pons' C++ solver")
    parser.add_argument("--runs", type=int, default=7, help="--process: runs of each process")
    parser.add_argument("--pons", default=None, help="--process: Pons' source (checkout or bare git dir)")
    parser.add_argument("--before", default=None, help="--process: also run p2p at this git revision")
    args = parser.parse_args()
    if args.process:
        args.sets = args.sets or "Test_L3_R1"
        return run_processes(args)
    args.sets = args.sets or ",".join(k for k, v in DEFAULT_LIMIT.items() if v)
    print(machine_line(os.getloadavg()[0]))
    print("| set | n | mean | median | max | mean nodes | K pos/s | correct | "
          "Pons blog C++ (part 12) mean / nodes | C++ part 12 on ref. machine | ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name in args.sets.split(","):
        limit = args.limit if args.limit is not None else DEFAULT_LIMIT[name]
        print(run_set(name, limit), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
