"""Exact Connect Four solver after Pascal Pons' published design.

Negamax with alpha-beta on Pons' bitboard, as described in his blog (parts 4-12; summary
in ``docs/ai.md`` 1.4): the score bound from the number of moves left,
centre-first column order refined by the number of threats a move creates, a
transposition table holding upper and lower bounds, never playing a move that lets the
opponent win at once, and a null-window dichotomic search on the score.

Scores follow Pons' convention for the side to move (reference 1.2): winning with the
stone of move ``n + 1`` scores ``(W*H + 1 - n) // 2`` (on 7x6: 22 minus the winner's
stones), a draw ``0``, a loss the negative of the winner's score.

>>> solve("4455")
18
>>> analyze("44455554221")[3]
-15

The transposition table is a plain ``dict`` keyed by the position key: deterministic
(no ``hash()`` of anything but ints, whose hash is their value), and cleared when it
grows past a fixed number of entries so memory stays bounded.  A search can be bounded
by a node count (``node_limit``); exceeding it raises ``SearchLimit``, never a
wall-clock cut-off, so every peer computes the same thing.
"""

from __future__ import annotations

from p2p.ai.c4_board import Geometry, Position, four_ends, geometry


class SearchLimit(Exception):
    """The node budget of a search ran out before the answer was exact."""


TT_MAX_ENTRIES = 2_000_000
"""The table is emptied when it reaches this size (about 200-250 MB of dict)."""


class Solver:
    """A reusable solver for one board size; keeps its table between positions.

    ``node_limit`` bounds the nodes of each ``solve``/``analyze`` call (``None``: no
    bound).  ``nodes`` counts the nodes of the last call.
    """

    def __init__(self, width: int = 7, height: int = 6, node_limit: int | None = None) -> None:
        self.geo: Geometry = geometry(width, height)
        self.table: dict[int, int] = {}
        self.node_limit = node_limit
        self.nodes = 0
        self._budget = 0

    def reset(self) -> None:
        """Forget the transposition table."""
        self.table.clear()

    # -- public API ------------------------------------------------------------------------

    def solve(self, pos: Position, weak: bool = False) -> int:
        """Exact score of ``pos`` for the side to move (``weak``: only its sign, -1/0/1)."""
        self.nodes = 0
        self._budget = self.node_limit if self.node_limit is not None else -1
        return self._solve(pos.current, pos.mask, pos.moves, weak)

    def analyze(self, pos: Position) -> list[int | None]:
        """Score of each column for the side to move (``None`` for a full column)."""
        self.nodes = 0
        self._budget = self.node_limit if self.node_limit is not None else -1
        out: list[int | None] = []
        for col in range(self.geo.width):
            if not pos.can_play(col):
                out.append(None)
            elif pos.is_winning_move(col):
                out.append(pos.win_score())
            else:
                child = pos.copy()
                child.play_column(col)
                out.append(-self._solve(child.current, child.mask, child.moves, False))
        return out

    # -- search ------------------------------------------------------------------------------

    def _solve(self, cur: int, mask: int, moves: int, weak: bool) -> int:
        geo = self.geo
        size = geo.size
        if geo.winning_cells(cur, mask) & (mask + geo.bottom) & geo.board:
            return 1 if weak else (size + 1 - moves) // 2
        lo = -((size - moves) // 2)
        hi = (size + 1 - moves) // 2
        if weak:
            lo, hi = max(lo, -1), min(hi, 1)
        if len(self.table) > TT_MAX_ENTRIES:
            self.table.clear()
        while lo < hi:
            med = lo + (hi - lo) // 2
            # Probe near zero first: C's truncating lo/2 and hi/2 written for Python.
            if med <= 0 and -((-lo) // 2) < med:
                med = -((-lo) // 2)
            elif med >= 0 and hi // 2 > med:
                med = hi // 2
            r = self._negamax(cur, mask, moves, med, med + 1)
            if r <= med:
                hi = r
            else:
                lo = r
        # Fail-soft searches may prove more than the weak window asked for: keep the sign.
        return max(-1, min(1, lo)) if weak else lo

    def _negamax(self, cur: int, mask: int, moves: int, alpha: int, beta: int) -> int:
        """Pons' negamax; the side to move cannot win at once (caller's guarantee)."""
        self.nodes += 1
        if self.nodes == self._budget:
            raise SearchLimit(f"node limit {self._budget} reached")
        geo = self.geo
        lines = geo.lines
        size = geo.size
        board = geo.board
        free = board ^ mask
        possible = (mask + geo.bottom) & board

        threat = four_ends(cur ^ mask, lines) & free  # the opponent's winning cells
        forced = possible & threat
        if forced:
            if forced & (forced - 1):
                return -((size - moves) // 2)
            possible = forced
        possible &= ~(threat >> 1)
        if not possible:
            return -((size - moves) // 2)
        if moves >= size - 2:
            return 0

        low = -((size - 2 - moves) // 2)
        if alpha < low:
            alpha = low
            if alpha >= beta:
                return alpha
        high = (size - 1 - moves) // 2
        key = cur + mask
        table = self.table
        val = table.get(key)
        min_score = geo.min_score
        max_score = geo.max_score
        if val is not None:
            if val > max_score - min_score + 1:  # lower bound
                low = val + 2 * min_score - max_score - 2
                if alpha < low:
                    alpha = low
                    if alpha >= beta:
                        return alpha
            else:  # upper bound
                high = val + min_score - 1
        if beta > high:
            beta = high
            if alpha >= beta:
                return beta

        # Order: more created threats first, ties centre first (Pons' MoveSorter).
        candidates = []
        for rank, move in geo.centre_first(possible):
            threats = four_ends(cur | move, lines) & free
            candidates.append((threats.bit_count(), rank, move))
        candidates.sort(reverse=True)

        nxt = moves + 1
        for _, _, move in candidates:
            # Play for the side to move: the opponent's stones become "current".
            score = -self._negamax(cur ^ mask, mask | move, nxt, -beta, -alpha)
            if score >= beta:
                table[key] = score + max_score - 2 * min_score + 2
                return score
            if score > alpha:  # noqa: PLR1730 - hot loop, max() is slower
                alpha = score
        table[key] = alpha - min_score + 1
        return alpha


_SOLVERS: dict[tuple[int, int], Solver] = {}


def _shared_solver(width: int, height: int) -> Solver:
    solver = _SOLVERS.get((width, height))
    if solver is None:
        solver = _SOLVERS[(width, height)] = Solver(width, height)
    return solver


def parse_position(position: str, width: int = 7, height: int = 6) -> Position:
    """Parse a move sequence like ``"4455"``; ``ValueError`` (one line) if invalid."""
    return Position.parse(position, width, height)


def solve(position: str, width: int = 7, height: int = 6, weak: bool = False) -> int:
    """Exact score of a position string for the side to move (Pons' convention)."""
    pos = parse_position(position, width, height)
    return _shared_solver(width, height).solve(pos, weak)


def analyze(position: str, width: int = 7, height: int = 6) -> list[int | None]:
    """Exact score of playing each column (``None`` if the column is full)."""
    pos = parse_position(position, width, height)
    return _shared_solver(width, height).analyze(pos)
