"""Random playouts per second for Connect Four and Viergewinnt 3D (through the public interface).

Run: python bench/bench_playouts.py [--seconds-per-run 2] [--runs 5]
Prints the median playouts per second over several runs for each game, measured side by
side in the same process.  Playouts pick uniformly among ``legal_moves()`` with a seeded RNG.
"""

from __future__ import annotations

import argparse
import platform
import random
import statistics
import time

from p2p.games import create_game


def playouts_per_second(name: str, options: dict[str, object], seconds: float, seed: int) -> float:
    rng = random.Random(seed)
    done = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        game = create_game(name, options)  # type: ignore[arg-type]
        while not game.is_over():
            legal = game.legal_moves()
            game.push(legal[rng.randrange(len(legal))])
        done += 1
    return done / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds-per-run", type=float, default=2.0)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    cases = [
        ("connect4 7x6", "connect4", {}),
        ("connect4 7x6 Pop Out", "connect4", {"popout": True}),
        ("cube 2 players", "cube", {"players": 2}),
        ("cube 3 players", "cube", {"players": 3}),
    ]
    results: dict[str, list[float]] = {label: [] for label, _, _ in cases}
    for run in range(args.runs):  # interleaved, so load changes hit every case alike
        for label, name, options in cases:
            results[label].append(playouts_per_second(name, options, args.seconds_per_run, run))
    print(f"machine: {platform.machine()} {platform.processor() or ''} python {platform.python_version()}")
    print("| game | playouts/s (median) | min | max |")
    print("|---|---|---|---|")
    for label, values in results.items():
        print(f"| {label} | {statistics.median(values):.0f} | {min(values):.0f} | {max(values):.0f} |")


if __name__ == "__main__":
    main()
