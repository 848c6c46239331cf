"""``python -m p2p.sim --family F --seed N [--count K] [--rules 2] [-v]``: run schedules, print failures.

Exit status 1 if any schedule violated an invariant.  ``-v`` prints the whole trace of
each schedule run (what every member signed, received, rewound; what the adversary did).
"""

from __future__ import annotations

import argparse
import sys

from p2p.protocol.conflicts import RULES_VERSION
from p2p.sim import FAMILIES, simulate


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m p2p.sim", description=__doc__)
    parser.add_argument("--family", choices=FAMILIES, default="mixed")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--count", type=int, default=1, help="seeds seed .. seed+count-1")
    parser.add_argument("--rules", type=int, choices=(2, RULES_VERSION), default=RULES_VERSION,
                        help="the conflict table the members judge by (2: the old one of"
                        " issue 23, to see its hole)")
    parser.add_argument("-v", "--verbose", action="store_true", help="print the trace")
    args = parser.parse_args(argv)
    failed = 0
    for seed in range(args.seed, args.seed + args.count):
        result = simulate(args.family, seed, args.rules)
        if args.verbose:
            sc = result.scenario
            print(f"# {sc}")
            print("\n".join(result.trace))
            for index, verdict in sorted(result.verdicts.items()):
                print(f"# member {index}: {verdict[0]} head {verdict[1][:12]} winners {verdict[3]}")
        if not result.ok:
            failed += 1
            print(result.report())
    print(f"{args.count} schedule(s), {failed} with violations")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
