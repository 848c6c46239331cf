"""Static evaluation of a four-player chess position, in centipawns, for one seat.

Free-for-all is decided by points, so the evaluation is built on them:

    worth(s) = 100 * points(s) + material(s) + placement(s)      (material only while s is live)
    value(root) = worth(root) - (max of the others' worth + mean of the others' worth) / 2

* ``points`` are the game's real ``scores()``: captures, mates, check bonuses and
  draws already counted by the rules engine.
* ``material`` is what a seat still has to play with, at the scoring values (pawn 1,
  knight 3, bishop 5, rook 5, queen 9).  A promoted queen is worth only 1 point to the
  capturer but plays like a queen, so its owner keeps it at ``PROMOTED_KEEP``.
  Pieces of an eliminated seat are grey and worth nothing to anybody.
* ``placement`` is small: pawns gain as they near promotion, knights, bishops and queens
  like the centre, a king likes its own pieces around it (light king safety).
* Hanging pieces of the root seat: a piece that a live opponent attacks and that is
  either undefended or attacked by something cheaper counts as partly lost.  Search
  plies follow the real turn order, so the opponents who move after the search horizon
  would otherwise be invisible; this is the cheap stand-in for them.

Comparing with the *best* other seat as well as the average matters in FFA: taking
points off the leader is worth more than taking them off the last.
"""

from __future__ import annotations

from collections.abc import Sequence

from p2p.games.chess4.board import (
    BISHOP,
    DIAG,
    DQUEEN,
    EMPTY,
    KING,
    KING_STEPS,
    KNIGHT,
    KNIGHT_STEPS,
    OFF,
    ORTHO,
    PAWN,
    PAWN_CAPTURES,
    QUEEN,
    ROOK,
    SIZE,
    SQUARES,
    file_of,
    rank_of,
)
from p2p.games.chess4.movegen import attacked

POINTS = (0, 1, 3, 5, 5, 9, 20, 1)
"""Points for capturing a piece, by kind (index = kind; king +20, promoted queen 1)."""

PROMOTED_KEEP = 7
"""What a promoted queen is worth to its owner (it plays like a queen, scores like a pawn)."""

KEEP = (0, 100, 300, 500, 500, 900, 0, PROMOTED_KEEP * 100)
"""Material value to the owner, centipawns, by kind (the king is not counted: losing it is
losing everything, which ``points``/elimination already express)."""

HANG_WEIGHT_MOVER = 4
"""Hanging-piece penalty in quarters of the loss when an opponent moves next."""
HANG_WEIGHT_SELF = 1
"""... and when the root seat itself is to move (it can still save one piece)."""

SHELTER = 8
"""Centipawns per own piece next to the king (at most ``SHELTER_MAX`` pieces)."""
SHELTER_MAX = 4

WIN = 1_000_000
"""Value of a finished game won (or shared) by the root seat; lost ones are ``-WIN``."""


def _centre_distance(sq: int) -> int:
    """0 on the four centre squares, 6 at the edge of the 14x14 board."""
    f, r = file_of(sq), rank_of(sq)
    return max(abs(2 * f - 13), abs(2 * r - 13)) // 2


def _advance(seat: int, sq: int) -> int:
    """Steps a pawn of ``seat`` on ``sq`` has made from its start line (0..6 before promotion)."""
    f, r = file_of(sq), rank_of(sq)
    return (r - 1, f - 1, 12 - r, 12 - f)[seat]


_PAWN_BONUS = (0, 4, 9, 15, 24, 36, 50, 50, 50, 50, 50, 50, 50)


def _table() -> list[list[int]]:
    """``TABLE[piece][sq]``: material plus placement of ``piece`` on ``sq`` for its owner."""
    table = [[0] * SIZE for _ in range(64)]
    for seat in range(4):
        for kind in range(1, 8):
            p = (seat << 3) | kind
            for sq in SQUARES:
                d = _centre_distance(sq)
                v = KEEP[kind]
                if kind == PAWN:
                    v += _PAWN_BONUS[max(0, _advance(seat, sq))]
                elif kind == KNIGHT:
                    v += (6 - d) * 6
                elif kind == BISHOP:
                    v += (6 - d) * 3
                elif kind in (QUEEN, DQUEEN):
                    v += (6 - d) * 2
                table[p][sq] = v
    return table


TABLE = _table()

_SLIDE_ORTHO = frozenset((ROOK, QUEEN, DQUEEN))
_SLIDE_DIAG = frozenset((BISHOP, QUEEN, DQUEEN))


def cheapest_attacker(cells: Sequence[int], sq: int, seats: int) -> int:
    """Points of the cheapest piece of a seat in bitmask ``seats`` attacking ``sq`` (0 if none).

    Kings count as 20 (they may take only an undefended piece, which is then a full loss anyway).
    """
    best = 99
    for seat in range(4):
        if (seats >> seat) & 1:
            pawn = (seat << 3) | PAWN
            for step in PAWN_CAPTURES[seat]:
                if cells[sq - step] == pawn:
                    return 1
    for step in KNIGHT_STEPS:
        p = cells[sq + step]
        if p and p != OFF and p & 7 == KNIGHT and (seats >> (p >> 3)) & 1:
            return 3
    for steps, sliders in ((ORTHO, _SLIDE_ORTHO), (DIAG, _SLIDE_DIAG)):
        for step in steps:
            t = sq + step
            p = cells[t]
            if p == EMPTY:
                t += step
                p = cells[t]
                while p == EMPTY:
                    t += step
                    p = cells[t]
                near = False
            else:
                near = True
            if p == OFF or not (seats >> (p >> 3)) & 1:
                continue
            kind = p & 7
            if kind in sliders:
                v = POINTS[kind] if kind != DQUEEN else 9
                best = min(best, v)
            elif near and kind == KING and best > 20:
                best = 20
    return 0 if best == 99 else best


_HANGABLE = tuple(bool(p & 7) and p & 7 not in (PAWN, KING) for p in range(64))
"""``_HANGABLE[piece]``: pieces whose safety the hanging-piece term checks (not pawns, kings)."""


def evaluate(
    cells: list[int],
    plist: Sequence[set[int]],
    kings: Sequence[int],
    live: int,
    scores: Sequence[int],
    root: int,
    to_move: int | None,
) -> int:
    """Centipawn value of a running game for seat ``root`` (see the module docstring).

    ``cells`` is the engine's padded mailbox, ``plist[seat]`` the squares of a seat's
    pieces, ``kings[seat]`` its king's square, ``live`` the bit mask of seats still
    playing, ``to_move`` the seat to move.
    """
    worth = [100 * s for s in scores]
    table = TABLE
    for seat in range(4):
        if not (live >> seat) & 1:
            continue
        near = 0
        k = kings[seat]
        for step in KING_STEPS:
            p = cells[k + step]
            if p and p >> 3 == seat:  # OFF (64) >> 3 is 8, never a seat
                near += 1
        worth[seat] += sum([table[cells[sq]][sq] for sq in plist[seat]]) + SHELTER * min(near, SHELTER_MAX)
    # Pieces of the root seat left hanging to a live opponent.
    if (live >> root) & 1:
        enemies = live & ~(1 << root) & 0xF
        own = 1 << root
        first = second = 0
        for sq in plist[root]:
            p = cells[sq]
            if not _HANGABLE[p] or not attacked(cells, sq, enemies):
                continue
            a = cheapest_attacker(cells, sq, enemies)
            kind = p & 7
            v = POINTS[kind] if kind != DQUEEN else PROMOTED_KEEP
            loss = v if not attacked(cells, sq, own) else v - a
            if loss > first:
                first, second = loss, first
            elif loss > second:
                second = loss
        if first:
            if to_move == root:
                worth[root] -= 25 * HANG_WEIGHT_SELF * second * 5 // 4
            else:
                worth[root] -= 25 * (HANG_WEIGHT_MOVER * first + HANG_WEIGHT_SELF * second) * 5 // 4
    others = [worth[s] for s in range(4) if s != root]
    return worth[root] - (max(others) + sum(others) // 3) // 2


def final_value(scores: Sequence[int], winners: Sequence[int], root: int) -> int:
    """Value of a finished game for ``root``: a win (shared or not) beats any loss."""
    best_other = max(s for i, s in enumerate(scores) if i != root)
    margin = 100 * (scores[root] - best_other)
    return (WIN if root in winners else -WIN) + margin
