"""Tournaments between the computer levels, and the time each level takes per move.

    python bench/bench_levels.py connect4 --games 200          # each level vs the next
    python bench/bench_levels.py meister-vs-solver --games 100
    python bench/bench_levels.py cube --games 40 --players 2
    python bench/bench_levels.py connect4 --pairs stark:meister --games 20
    python bench/bench_levels.py timing --games 30     # per-move time on 7x6, 8x7, 9x7

Games alternate who starts; every game uses its own seed (``game number``), so a run is
reproducible.  Per-move wall times are collected for every level (max and median) on the
machine this runs on; the moves themselves never depend on time.
"""

from __future__ import annotations

import argparse
import itertools
import os
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from p2p.ai import choose_move
from p2p.games import create_game

C4_LEVELS = ("neuling", "normal", "stark", "meister")


def play(game_name: str, options: dict, seats: list[str], seed: bytes,
         times: dict[str, list[float]]) -> tuple[int, ...]:
    """Play one game with ``seats[i]`` the level of seat ``i``; returns the winners."""
    game = create_game(game_name, options)
    while not game.is_over():
        seat = game.to_move()
        level = seats[seat]
        t0 = time.perf_counter()
        move = choose_move(game, level, seed)
        times.setdefault(level, []).append(time.perf_counter() - t0)
        game.push(move)
    return game.winners()


def duel(game_name: str, a: str, b: str, games: int, base_options: dict,
         times: dict[str, list[float]], offset: int = 0) -> tuple[int, int, int]:
    """``games`` games of level ``a`` against ``b`` (2 seats), alternating the start.

    Returns (wins of a, draws or shared, wins of b).
    """
    wa = wb = draws = 0
    for i in range(offset, offset + games):
        first = i % 2
        seats = [a, b] if first == 0 else [b, a]
        options = dict(base_options, first=0)
        winners = play(game_name, options, seats, f"duel-{a}-{b}-{i}".encode(), times)
        if len(winners) == 1:
            if seats[winners[0]] == a:
                wa += 1
            else:
                wb += 1
        else:
            draws += 1
        print(f"  {a} vs {b}: game {i + 1 - offset}/{games}: +{wa} ={draws} -{wb}", file=sys.stderr, end="\r")
    print(file=sys.stderr)
    return wa, draws, wb


def three_way(levels: list[str], games: int, times: dict[str, list[float]]) -> dict[str, list[int]]:
    """Cube games of three levels over all 6 seatings; per level: [sole wins, shared, points].

    All six permutations matter, not just rotations: with rotations alone the same level
    always moves right after the same other level, and in a gravity game the player after
    a weak one profits from the cells it opens.
    """
    out = {lv: [0, 0, 0] for lv in levels}
    seatings = list(itertools.permutations(levels))
    for i in range(games):
        seats = list(seatings[i % len(seatings)])
        game = create_game("cube", {"players": 3, "first": 0})
        seed = f"three-{i}".encode()
        while not game.is_over():
            lv = seats[game.to_move()]
            t0 = time.perf_counter()
            move = choose_move(game, lv, seed)
            times.setdefault(lv, []).append(time.perf_counter() - t0)
            game.push(move)
        winners = game.winners()
        for seat, lv in enumerate(seats):
            out[lv][2] += game.scores()[seat]
            if seat in winners:
                out[lv][0 if len(winners) == 1 else 1] += 1
        print(f"  three-way game {i + 1}/{games}", file=sys.stderr, end="\r")
    print(file=sys.stderr)
    return out


def timing_table(times: dict[str, list[float]]) -> str:
    rows = ["| level | moves | median ms | max ms |", "|---|---|---|---|"]
    for level, ts in times.items():
        rows.append(f"| {level} | {len(ts)} | {statistics.median(ts) * 1000:.1f} | {max(ts) * 1000:.1f} |")
    return "\n".join(rows)


def meister_vs_solver(games: int, sets: list[str]) -> str:
    """Meister on the winning side of test-set positions against the exact solver.

    From the empty board the exact solver is out of reach in pure Python, so the games
    start from published positions (``tests/data/connect4_testsets``) whose side to move
    wins; Meister plays that side, the solver (full ``analyze``, best score, ties to the
    centre) the other.  Counts how often Meister fails to convert the win.
    """
    from p2p.ai.connect4_ai import choose_move as c4_move
    from p2p.ai.connect4_solver import Solver, parse_position

    data = Path(__file__).resolve().parents[1] / "tests" / "data" / "connect4_testsets"
    starts = []
    for name in sets:  # the first games/len(sets) winning positions of each set
        winning = [ln.split()[0] for ln in (data / name).read_text().splitlines() if int(ln.split()[1]) > 0]
        starts += [(name, pos) for pos in winning[: games // len(sets)]]
    solver = Solver()
    won = not_won = 0
    mtimes: list[float] = []
    for i, (name, start) in enumerate(starts):
        game = create_game("connect4")
        for ch in start:
            game.push(ch)
        meister_seat = game.to_move()
        while not game.is_over():
            if game.to_move() == meister_seat:
                t0 = time.perf_counter()
                move = c4_move(game, "meister", f"mvs-{i}".encode())
                mtimes.append(time.perf_counter() - t0)
            else:
                pos = parse_position("".join(game.history()))
                scores = solver.analyze(pos)
                top = max(s for s in scores if s is not None)
                col = next(c for c in pos.geo.order if scores[c] == top)
                move = str(col + 1)
            game.push(move)
        if game.winners() == (meister_seat,):
            won += 1
        else:
            not_won += 1
        print(f"  meister vs solver {i + 1}/{len(starts)}: won {won}, not won {not_won}",
              file=sys.stderr, end="\r")
    print(file=sys.stderr)
    return (f"Meister (winning side) vs exact solver, {len(starts)} starts from "
            f"{', '.join(sets)} with score > 0: Meister won {won}, failed to win {not_won}; "
            f"Meister move median {statistics.median(mtimes) * 1000:.1f} ms, "
            f"max {max(mtimes) * 1000:.1f} ms")


def timing_sweep(positions: int) -> str:
    """Time every level on positions of every board size (plies 0..W*H-2, spread evenly).

    The positions come from seeded games between mixed levels; each level then chooses a
    move in each of them.  Reports max and median per (size, level).
    """
    import random

    rows = ["| board | level | positions | median ms (wall) | max ms (wall) | median ms (CPU) | max ms (CPU) |",
            "|---|---|---|---|---|---|---|"]
    for width, height in ((7, 6), (8, 7), (9, 7)):
        rng = random.Random(f"sweep-{width}x{height}")
        samples = []
        while len(samples) < positions:
            game = create_game("connect4", {"width": width, "height": height})
            stop = rng.randrange(0, width * height - 8)
            while not game.is_over() and len(game.history()) < stop:
                game.push(choose_move(game, rng.choice(("neuling", "normal")), str(rng.random()).encode()))
            if not game.is_over():
                samples.append(game)
        for level in C4_LEVELS:
            ts = []
            cpu = []
            for i, game in enumerate(samples):
                t0 = time.perf_counter()
                c0 = time.process_time()
                choose_move(game, level, f"sweep-{i}".encode())
                cpu.append(time.process_time() - c0)
                ts.append(time.perf_counter() - t0)
            rows.append(f"| {width}x{height} | {level} | {len(ts)} | "
                        f"{statistics.median(ts) * 1000:.1f} | {max(ts) * 1000:.1f} | "
                        f"{statistics.median(cpu) * 1000:.1f} | {max(cpu) * 1000:.1f} |")
            print(rows[-1], file=sys.stderr)
    return "\n".join(rows)


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, "
            f"load average at start {os.getloadavg()[0]:.1f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=("connect4", "cube", "meister-vs-solver", "timing"))
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--offset", type=int, default=0,
                        help="first game number (to split a tournament over processes)")
    parser.add_argument("--pairs", default="", help="comma list of a:b level pairs")
    parser.add_argument("--players", type=int, default=2, help="cube: 2 or 3")
    parser.add_argument("--sets", default="Test_L1_R1,Test_L2_R1")
    args = parser.parse_args()
    print(f"machine: {machine()}")
    times: dict[str, list[float]] = {}
    if args.what == "timing":
        print(timing_sweep(args.games))
        return 0
    if args.what == "meister-vs-solver":
        print(meister_vs_solver(args.games, args.sets.split(",")))
        return 0
    name = args.what
    levels = list(C4_LEVELS) if name == "connect4" else list(__import__("p2p.ai.cube_ai", fromlist=["LEVELS"]).LEVELS)
    if name == "cube" and args.players == 3:
        res = three_way(levels[-3:], args.games, times)
        print(f"cube, 3 players, {args.games} games, all six seatings in turn")
        print("| level | sole wins | shared wins | total points |\n|---|---|---|---|")
        for lv, (w, s, pts) in res.items():
            print(f"| {lv} | {w} | {s} | {pts} |")
        print(timing_table(times))
        return 0
    pairs = [tuple(p.split(":")) for p in args.pairs.split(",") if p] or list(itertools.pairwise(levels))
    options = {"players": 2} if name == "cube" else {}
    print(f"{name}: {args.games} games per pair (numbers {args.offset}..{args.offset + args.games - 1}), "
          "alternating start")
    print("| stronger | weaker | stronger wins | draws | weaker wins |\n|---|---|---|---|---|")
    for a, b in pairs:
        wa, d, wb = duel(name, b, a, args.games, options, times, args.offset)
        print(f"| {b} | {a} | {wa} | {d} | {wb} |", flush=True)
    print(timing_table(times))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
