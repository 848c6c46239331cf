"""Computer players for Reversi: square weights, mobility and alpha-beta.

A position is judged from the side to move by **square weights** (corners are worth most,
the squares next to an empty corner cost, edges help) plus **mobility** (how many more
squares the side may play than the opponent); a finished game is worth its disc
difference, far above any weight.  The search is negamax with alpha-beta, best squares
first, iterative deepening within a **node budget** (never a clock), and an exact search
to the end once few squares are empty.

Levels: ``neuling`` (a random legal square, corners preferred), ``normal`` (one ply with
noise), ``stark`` (three plies), ``meister`` (up to five plies, the endgame exact from 8
empty squares).  Every choice is a pure function of the position, the level and the
seed: every peer recomputes a computer seat's move to check it.

>>> from p2p.games.reversi import Reversi
>>> g = Reversi.create({"size": 6})
>>> choose_move(g, "stark", b"s") in g.legal_moves()
True
"""

from __future__ import annotations

import random

from p2p.games.base import NULL_MOVE, Game
from p2p.games.reversi import EMPTY, board_moves, flips, square_name

LEVELS: tuple[str, ...] = ("neuling", "normal", "stark", "meister")
HINT_LEVEL = "stark"
"""``/hint`` asks this level (quick on any machine)."""

LEVEL_SETTINGS: dict[str, tuple[int, int, int, int]] = {
    # level: (max depth, node budget, noise, exact endgame from this many empty squares)
    "neuling": (0, 0, 0, 0),
    "normal": (1, 1_000, 12, 0),
    "stark": (3, 2_500, 0, 6),
    "meister": (5, 8_000, 0, 8),
}
WIN = 1 << 20
MOBILITY = 4


class _Budget(Exception):
    """The node budget ran out (the last finished depth is used)."""


def weights(size: int) -> list[int]:
    """Square weights for a board of ``size``: corners 100, their neighbours -20 and the
    diagonal one -50, edges 10, the rest 1.

    >>> weights(6)[:6]
    [100, -20, 10, 10, -20, 100]
    """
    last = size - 1
    table = []
    for r in range(size):
        for c in range(size):
            dr, dc = min(r, last - r), min(c, last - c)  # distance to the nearest edges
            if dr == 0 and dc == 0:
                w = 100
            elif dr == 1 and dc == 1:
                w = -50
            elif (dr, dc) in ((0, 1), (1, 0)):
                w = -20
            elif dr == 0 or dc == 0:
                w = 10
            else:
                w = 1
            table.append(w)
    return table


class _Search:
    """Negamax with alpha-beta on a plain list of squares."""

    def __init__(self, cells: list[int], size: int, budget: int) -> None:
        self.cells = cells
        self.size = size
        self.weights = weights(size)
        self.budget = budget
        self.nodes = 0

    def evaluate(self, seat: int, own: int, other: int) -> int:
        """Weights and mobility from ``seat``'s side; ``own``/``other``: move counts."""
        total = 0
        for sq, owner in enumerate(self.cells):
            if owner == seat:
                total += self.weights[sq]
            elif owner != EMPTY:
                total -= self.weights[sq]
        return total + MOBILITY * (own - other)

    def final(self, seat: int) -> int:
        mine = self.cells.count(seat)
        theirs = self.cells.count(1 - seat)
        return WIN * (mine > theirs) - WIN * (mine < theirs) + (mine - theirs)

    def ordered(self, moves: list[int]) -> list[int]:
        return sorted(moves, key=lambda sq: -self.weights[sq])

    def negamax(self, seat: int, depth: int, alpha: int, beta: int, passed: bool = False) -> int:
        self.nodes += 1
        if self.nodes > self.budget:
            raise _Budget
        moves = board_moves(self.cells, self.size, seat)
        if not moves:
            if passed:
                return self.final(seat)
            if depth <= 0:
                return self.evaluate(seat, 0, len(board_moves(self.cells, self.size, 1 - seat)))
            return -self.negamax(1 - seat, depth - 1, -beta, -alpha, True)
        if depth <= 0:
            return self.evaluate(seat, len(moves), len(board_moves(self.cells, self.size, 1 - seat)))
        best = -WIN * 4
        for sq in self.ordered(moves):
            turned = self.make(sq, seat)
            try:
                value = -self.negamax(1 - seat, depth - 1, -beta, -alpha)
            finally:
                self.unmake(sq, seat, turned)
            if value > best:
                best = value
            alpha = max(alpha, value)
            if alpha >= beta:
                break
        return best

    def make(self, sq: int, seat: int) -> list[int]:
        """Place a disc of ``seat`` on ``sq``; the discs it turned (for ``unmake``)."""
        turned = flips(self.cells, self.size, sq, seat)
        self.cells[sq] = seat
        for t in turned:
            self.cells[t] = seat
        return turned

    def unmake(self, sq: int, seat: int, turned: list[int]) -> None:
        self.cells[sq] = EMPTY
        for t in turned:
            self.cells[t] = 1 - seat

    def root(self, seat: int, depth: int, moves: list[int], noise: int, rng: random.Random) -> list[tuple[int, int]]:
        """(value, square) of every root move at ``depth``."""
        scored = []
        for sq in moves:
            turned = self.make(sq, seat)
            try:
                value = -self.negamax(1 - seat, depth - 1, -WIN * 4, WIN * 4)
            finally:
                self.unmake(sq, seat, turned)
            scored.append((value + (rng.randint(-noise, noise) if noise else 0), sq))
        return scored


def choose_move(game: Game, level: str, seed: bytes = b"") -> str:
    """The move for the side to move: a square's text, or ``pass`` when it has none."""
    if level not in LEVEL_SETTINGS:
        raise ValueError(f"unknown level {level!r} (known: {', '.join(LEVELS)})")
    seat = game.to_move()
    if seat is None:
        raise ValueError("the game is over")
    size: int = game.size  # type: ignore[attr-defined]  # a Reversi engine's board side
    cells: list[int] = list(game.cells)  # type: ignore[attr-defined]  # its squares
    moves = board_moves(cells, size, seat)
    if not moves:
        return NULL_MOVE
    rng = random.Random(b"reversi:" + level.encode() + b":" + seed + game.encode())
    max_depth, budget, noise, exact_from = LEVEL_SETTINGS[level]
    if max_depth == 0:
        table = weights(size)
        corners = [sq for sq in moves if table[sq] == 100]
        return square_name(rng.choice(corners or moves), size)
    empties = cells.count(EMPTY)
    search = _Search(cells, size, budget)
    moves = search.ordered(moves)
    best = moves[0]
    depths = list(range(1, max_depth + 1))
    if exact_from and max_depth < empties <= exact_from:
        depths.append(empties)  # to the end: exact
    for depth in depths:
        try:
            scored = search.root(seat, depth, moves, noise, rng)
        except _Budget:
            break
        top = max(value for value, _ in scored)
        best = next(sq for value, sq in scored if value == top)
    return square_name(best, size)
