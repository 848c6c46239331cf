"""Hand-made four-player chess positions for the tests: FEN4 text from a piece map."""

from __future__ import annotations

from p2p.games.chess4.board import FILES


def fen(
    pieces: dict[str, str],
    turn: str = "R",
    dead: str = "0,0,0,0",
    castle_short: str = "0,0,0,0",
    castle_long: str = "0,0,0,0",
    points: str = "0,0,0,0",
    clock: int = 0,
    extras: str = "",
) -> str:
    """FEN4 text from {square: piece}, e.g. {"h1": "rK", "e5": "bQ"}."""
    rows = []
    for rank in range(14, 0, -1):
        cells, run = [], 0
        for f in FILES:
            p = pieces.get(f"{f}{rank}")
            if p is None:
                run += 1
                continue
            if run:
                cells.append(str(run))
                run = 0
            cells.append(p)
        if run:
            cells.append(str(run))
        rows.append(",".join(cells))
    head = [turn, dead, castle_short, castle_long, points, str(clock)]
    if extras:
        head.append(extras)
    return "-".join(head) + "-" + "/".join(rows)
