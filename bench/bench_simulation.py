"""Many simulated schedules of whole rounds (issue 23): how many ran, which failed, how fast.

Run: python bench/bench_simulation.py [--count 10000] [--families mixed,honest,silent_loser]
                                     [--start 0] [--workers 2] [--rules 2]

Each schedule is one seed of one family of ``p2p.sim`` (the pure round machines, a
simulated network with faults and skewed clocks, one adversarial member; every invariant
checked after it).  ``--count`` schedules are split over the families in turn and run in
``--workers`` processes (each schedule is independent and deterministic, so the split
changes nothing but the time).  Prints per family: schedules run, schedules with a
violation, violations by invariant, schedules per second (wall time, all workers), and
the replay command of every failing seed (the first 20 per family); on stderr, each
failing seed as it is found and the progress every 500 schedules.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from p2p.protocol.conflicts import RULES_VERSION  # noqa: E402
from p2p.sim import FAMILIES, simulate  # noqa: E402
from p2p.sim.scenario import Scenario  # noqa: E402

SHOWN = 20


def run_one(job: tuple[str, int, int]) -> tuple[str, int, list[tuple[str, str]]]:
    family, seed, rules = job
    result = simulate(family, seed, rules)
    return family, seed, result.violations


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--families", default="mixed,honest,silent_loser")
    parser.add_argument("--start", type=int, default=0, help="the first seed")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rules", type=int, choices=(2, RULES_VERSION), default=RULES_VERSION,
                        help="the conflict table the members judge by (2: the old one)")
    args = parser.parse_args()
    families = [f for f in args.families.split(",") if f]
    unknown = [f for f in families if f not in FAMILIES]
    if unknown:
        parser.error(f"unknown family {unknown[0]!r} (known: {', '.join(FAMILIES)})")
    jobs = [(families[i % len(families)], args.start + i // len(families), args.rules)
            for i in range(args.count)]
    ran: collections.Counter[str] = collections.Counter()
    failed: dict[str, list[int]] = collections.defaultdict(list)
    codes: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    started = time.perf_counter()
    rules = None if args.rules == RULES_VERSION else args.rules
    with ProcessPoolExecutor(max_workers=max(1, args.workers)) as pool:
        for family, seed, violations in pool.map(run_one, jobs, chunksize=16):
            ran[family] += 1
            if violations:
                failed[family].append(seed)
                codes[family].update({code for code, _ in violations})
                print(f"failing: {Scenario.draw(family, seed).command(rules)}",
                      file=sys.stderr, flush=True)
            done = sum(ran.values())
            if done % 500 == 0:
                print(f"{done} run, {sum(map(len, failed.values()))} failing,"
                      f" {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    wall = time.perf_counter() - started
    total = sum(ran.values())
    print(f"{total} schedules (rules v{args.rules}) in {wall:.1f} s wall, {args.workers} worker(s):"
          f" {total / wall:.1f} schedules/s")
    print(f"{'family':14} {'run':>7} {'violating':>10}  violations by invariant")
    for family in families:
        by_code = ", ".join(f"{c} {n}" for c, n in sorted(codes[family].items())) or "-"
        print(f"{family:14} {ran[family]:7} {len(failed[family]):10}  {by_code}")
    for family in families:
        seeds = sorted(failed[family])
        if not seeds:
            continue
        print(f"\n{family}: failing seeds ({len(seeds)}): {' '.join(map(str, seeds[:200]))}")
        for seed in seeds[:SHOWN]:
            print(f"  {Scenario.draw(family, seed).command(rules)}")
    return 1 if any(failed.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
