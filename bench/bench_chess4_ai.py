"""Time per move of the four-player chess computer player, per level.

Positions come from a few seeded self-play games (Einfach players, so they are cheap to
make and cover opening, middle game and thinned-out boards).  Every level is then asked
for a move in the same positions, one after another in one run, so the figures are
side by side on the same machine state.  We report median and maximum wall time and the
median node count of the search.

    python bench/bench_chess4_ai.py [--games 3] [--plies 120] [--every 6] [--levels ...]
                                    [--markdown docs/chess4_ai.md]

The timing table is printed as Markdown; with ``--markdown`` it also replaces the block
between the ``<!-- bench:start -->`` / ``<!-- bench:end -->`` markers of that file.
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

from p2p.ai import chess4_ai  # noqa: E402
from p2p.games import create_game  # noqa: E402
from p2p.games.base import Game  # noqa: E402


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
    parser.add_argument("--levels", nargs="*", default=list(chess4_ai.LEVELS))
    parser.add_argument("--markdown", type=Path, default=None)
    args = parser.parse_args(argv)

    positions = sample_positions(args.games, args.plies, args.every)
    rows = []
    for level in args.levels:
        times: list[float] = []
        nodes: list[int] = []
        for i, pos in enumerate(positions):
            t0 = time.perf_counter()
            info = chess4_ai.analyse(pos, level, f"bench-{i}".encode())
            times.append(time.perf_counter() - t0)
            nodes.append(info.nodes)
        rows.append(
            (
                level,
                len(times),
                statistics.median(times),
                max(times),
                int(statistics.median(nodes)),
                max(nodes),
            )
        )
        print(f"{level}: done", file=sys.stderr, flush=True)

    base = rows[0][2] or 1e-9
    lines = [
        f"Machine: {machine()}.",
        f"Positions: {len(positions)} (every {args.every}th ply of {args.games} seeded Einfach self-play games, up to {args.plies} plies each).",
        "",
        "| level | positions | median s/move | max s/move | median nodes | max nodes | median vs einfach |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for level, n, med, mx, mnodes, xnodes in rows:
        lines.append(f"| {level} | {n} | {med:.3f} | {mx:.3f} | {mnodes} | {xnodes} | {med / base:.1f}x |")
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
