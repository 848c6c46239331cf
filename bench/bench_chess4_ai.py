"""Time per move of the four-player chess computer player, per level.

Positions come from a few seeded self-play games (Einfach players, so they are cheap to
make and cover opening, middle game and thinned-out boards).  Every level is then asked
for a move in the same positions, one after another in one run, so the figures are
side by side on the same machine state.  We report median and maximum wall time and the
median node count of the search.

    python bench/bench_chess4_ai.py [--games 3] [--plies 120] [--every 6] [--levels ...]
                                    [--markdown docs/chess4_ai.md]
    python bench/bench_chess4_ai.py --match normal einfach [--games 4] [--plies 200]

The timing table is printed as Markdown; with ``--markdown`` it also replaces the block
between the ``<!-- bench:start -->`` / ``<!-- bench:end -->`` markers of that file.

``--match A B`` plays games in which level A holds Red and Yellow and level B holds
Blue and Green, then the other way round (so seat order cancels out), each game to its
end or to ``--plies`` plies (the ``move_limit`` option).  It prints points per level and
how often each level had the top score.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from p2p.ai import chess4_ai
from p2p.games import create_game
from p2p.games.base import Game


def sample_positions(games: int, plies: int, every: int) -> list[Game]:
    """Positions every ``every`` plies from ``games`` seeded Einfach self-play games."""
    out: list[Game] = []
    for g in range(games):
        game = create_game("chess4", {})
        for ply in range(plies):
            if game.is_over():
                break
            if ply % every == every - 1:
                out.append(game.copy())
            move = chess4_ai.choose_move(game, "einfach", f"bench-{g}-{ply}".encode())
            game.push(move)
    return out


def match(a: str, b: str, games: int, plies: int, first: int = 0) -> str:
    """Level ``a`` against level ``b``; a Markdown summary of points and wins.

    Game ``g`` uses the seed ``match-<g>``; ``first`` numbers the first game, so that
    another run with another ``first`` plays different games."""
    points = {a: 0, b: 0}
    wins = {a: 0.0, b: 0.0}
    lines = [
        (
            f"Match {a} vs {b}: {games} games, move limit {plies} plies; "
            f"{a} plays Red+Yellow in even games, Blue+Green in odd ones."
        ),
        "",
        "| game | seats R,B,Y,G | plies | end | scores R,B,Y,G | winners |",
        "|---:|---|---:|---|---|---|",
    ]
    for g in range(first, first + games):
        seats = (a, b, a, b) if g % 2 == 0 else (b, a, b, a)
        game = create_game("chess4", {"move_limit": plies})
        t0 = time.perf_counter()
        while not game.is_over():
            seat = game.to_move()
            assert seat is not None
            game.push(chess4_ai.choose_move(game, seats[seat], f"match-{g}".encode()))
        scores = game.scores()
        for seat, level in enumerate(seats):
            points[level] += scores[seat]
        top = game.winners()
        for seat in top:
            wins[seats[seat]] += 1 / len(top)
        reason = getattr(game, "end_reason", lambda: "")()
        lines.append(
            f"| {g + 1} | {','.join(seats)} | {len(game.history())} | {reason} | "
            f"{','.join(map(str, scores))} | {','.join(seats[s] + '@' + 'RBYG'[s] for s in top)} |"
        )
        print(f"game {g + 1} done in {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    lines += [
        "",
        (
            f"Total points: {a} {points[a]}, {b} {points[b]}; top-score finishes (shared ones split): "
            f"{a} {wins[a]:.1f}, {b} {wins[b]:.1f}."
        ),
    ]
    return "\n".join(lines)


def machine() -> str:
    """One line about the machine: CPU model, core count, Python version."""
    model = platform.processor() or "unknown CPU"
    try:
        text = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
        for line in text.splitlines():
            if line.startswith("Model name:"):
                model = line.split(":", 1)[1].strip()
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores (nproc), Python {platform.python_version()} ({platform.python_implementation()})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=3)
    parser.add_argument("--plies", type=int, default=120)
    parser.add_argument("--every", type=int, default=6)
    known = chess4_ai.LEVELS + chess4_ai.EXPERIMENTAL_LEVELS
    parser.add_argument("--levels", nargs="*", default=list(known))
    parser.add_argument("--markdown", type=Path, default=None)
    parser.add_argument("--match", nargs=2, metavar=("LEVEL_A", "LEVEL_B"), default=None)
    parser.add_argument("--first-game", type=int, default=0, help="number of the first match game (its seed)")
    args = parser.parse_args(argv)
    bad = [lvl for lvl in (args.match or []) + args.levels if lvl not in known]
    if bad:
        parser.error(f"unknown level {bad[0]!r} (known: {', '.join(known)})")
    if args.match:
        print(f"Machine: {machine()}.\n")
        print(match(args.match[0], args.match[1], args.games, args.plies, args.first_game))
        return 0
    if not args.levels:
        parser.error("give at least one level")

    positions = sample_positions(args.games, args.plies, args.every)
    rows = []
    for level in args.levels:
        times: list[float] = []
        cpu: list[float] = []
        nodes: list[int] = []
        full = 0
        limit = chess4_ai.SEARCH_LIMITS[level].depth if level in chess4_ai.SEARCH_LIMITS else 1
        for i, pos in enumerate(positions):
            t0, c0 = time.perf_counter(), time.process_time()
            info = chess4_ai.analyse(pos, level, f"bench-{i}".encode())
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
            nodes.append(info.nodes)
            full += info.depth == limit and info.complete
        rows.append(
            (
                level,
                len(times),
                statistics.median(times),
                max(times),
                statistics.median(cpu),
                max(cpu),
                int(statistics.median(nodes)),
                max(nodes),
                f"{full}/{len(times)} at {limit}",
            )
        )
        print(f"{level}: done", file=sys.stderr, flush=True)

    base = rows[0][2] or 1e-9
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [
        f"Machine: {machine()}; load average {load:.1f} at the end of the run.",
        f"Positions: {len(positions)} (every {args.every}th ply of {args.games} seeded Einfach self-play games, up to {args.plies} plies each).",
        "",
        (
            "| level | positions | median s/move (wall) | max s/move (wall) | median CPU s | max CPU s "
            "| median nodes | max nodes | full depth (plies) | median vs einfach (wall) |"
        ),
        "|---|---:|---:|---:|---:|---:|---:|---:|---|---:|",
    ]
    for level, n, med, mx, cmed, cmx, mnodes, xnodes, full_depth in rows:
        lines.append(
            f"| {level} | {n} | {med:.3f} | {mx:.3f} | {cmed:.3f} | {cmx:.3f} | {mnodes} | {xnodes} "
            f"| {full_depth} | {med / base:.1f}x |"
        )
    table = "\n".join(lines)
    print(table)
    if args.markdown is not None:
        text = args.markdown.read_text(encoding="utf-8")
        start, end = "<!-- bench:start -->", "<!-- bench:end -->"
        if start in text and end in text:
            head, rest = text.split(start, 1)
            _, tail = rest.split(end, 1)
            args.markdown.write_text(f"{head}{start}\n{table}\n{end}{tail}", encoding="utf-8")
        else:
            print(f"markers not found in {args.markdown}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
