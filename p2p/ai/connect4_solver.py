"""Exact Connect Four solver after Pascal Pons' published design.

Negamax with alpha-beta on Pons' bitboard, as described in his blog (parts 4-12; summary
in ``docs/ai.md`` 1.4): the score bound from the number of moves left,
centre-first column order refined by the number of threats a move creates, a
transposition table holding upper and lower bounds, never playing a move that lets the
opponent win at once, and a null-window dichotomic search on the score (``p2p solve``
searches a position near the end once with the full window instead:
``FULL_WINDOW_EMPTIES``).

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

TYPE_CHECKING = False
if TYPE_CHECKING:  # ``p2p solve`` imports this module: nothing at run time that it does not use
    from collections.abc import Callable


class SearchLimit(Exception):
    """The node budget of a search ran out before the answer was exact."""


TT_MAX_ENTRIES = 2_000_000
"""The table is emptied when it reaches this size (about 200-250 MB of dict), checked
between positions and every ``TRIM_EVERY`` nodes of a search."""

TRIM_EVERY = 1 << 18
"""Within one search the table and the memos are checked against their bounds every this
many nodes (between positions at every position): a long search of an early position
holds at most the bound plus this many entries, instead of growing until memory runs out."""

ORDER_MAX_ENTRIES = 500_000
"""The memos of move orders and of line ends (``_search``) are each emptied when they
reach this size (together about 150-200 MB); they only save work, so emptying them never
changes a result or a node count."""


FULL_WINDOW_EMPTIES = 16
"""``p2p solve`` searches a position with at most this many empty cells once with the
full window of its possible scores instead of Pons' null-window dichotomy.  Near the end
the dichotomy's repeated searches cost more than the wider window: on Pons' end-game set
(1-13 empty cells) 34% fewer nodes, and fewer on middle positions with 14-16 empty
cells; from about 17-18 empty cells on the dichotomy wins, and by far at the start
(26x the time on his opening set).  ``docs/performance.md`` has the figures."""


class Solver:
    """A reusable solver for one board size; keeps its table between positions.

    ``node_limit`` bounds the nodes of each ``solve``/``analyze`` call (``None``: no
    bound).  ``nodes`` counts the nodes of the last call.  ``full_window_empties``: a
    strong ``solve`` of a position with at most this many empty cells is one full-window
    search (same score, fewer nodes near the end: ``FULL_WINDOW_EMPTIES`` is what
    ``p2p solve`` uses); the default ``0`` keeps Pons' search and node counts exactly,
    as the computer players' node-limited searches need.
    """

    def __init__(self, width: int = 7, height: int = 6, node_limit: int | None = None,
                 full_window_empties: int = 0) -> None:
        self.geo: Geometry = geometry(width, height)
        self.table: dict[int, int] = {}
        self.node_limit = node_limit
        self.full_window_empties = full_window_empties
        self.nodes = 0
        self._orders: dict[int, int | tuple[tuple[int, int], ...]] = {}
        self._ends: dict[int, int] = {}
        self._playable: dict[int, tuple[tuple[int, int], ...]] = {}
        self._start, self._count, self._negamax, self._negamax_once = _search(
            self.geo, self.table, self._orders, self._ends, self._playable)

    def reset(self) -> None:
        """Forget the transposition table (and the memos of move orders and line ends)."""
        self.table.clear()
        self._orders.clear()
        self._ends.clear()
        self._playable.clear()

    # -- public API ------------------------------------------------------------------------

    def solve(self, pos: Position, weak: bool = False) -> int:
        """Exact score of ``pos`` for the side to move (``weak``: only its sign, -1/0/1)."""
        self._start(self.node_limit if self.node_limit is not None else -1)
        try:
            return self._solve(pos.current, pos.mask, pos.moves, weak)
        finally:
            self.nodes = self._count()

    def analyze(self, pos: Position) -> list[int | None]:
        """Score of each column for the side to move (``None`` for a full column)."""
        self._start(self.node_limit if self.node_limit is not None else -1)
        out: list[int | None] = []
        try:
            for col in range(self.geo.width):
                if not pos.can_play(col):
                    out.append(None)
                elif pos.is_winning_move(col):
                    out.append(pos.win_score())
                else:
                    child = pos.copy()
                    child.play_column(col)
                    out.append(-self._solve(child.current, child.mask, child.moves, False))
        finally:
            self.nodes = self._count()
        return out

    # -- search ------------------------------------------------------------------------------

    def _solve(self, cur: int, mask: int, moves: int, weak: bool) -> int:
        geo = self.geo
        size = geo.size
        if four_ends(cur, geo.lines) & (mask + geo.bottom) & geo.board:  # a win at once (playable cells are free)
            return 1 if weak else (size + 1 - moves) // 2
        lo = -((size - moves) // 2)
        hi = (size + 1 - moves) // 2
        if weak:
            lo, hi = max(lo, -1), min(hi, 1)
        if len(self.table) > TT_MAX_ENTRIES:
            self.table.clear()
        if len(self._orders) > ORDER_MAX_ENTRIES:
            self._orders.clear()
        if len(self._ends) > ORDER_MAX_ENTRIES:
            self._ends.clear()
        if len(self._playable) > ORDER_MAX_ENTRIES:
            self._playable.clear()
        negamax = self._negamax
        if not weak and size - moves <= self.full_window_empties:
            # Fail-soft alpha-beta on the whole range: a result at lo or hi is a bound
            # that the range itself makes exact.  One search visits few positions twice:
            # no memo of move orders (it costs more than it saves here).
            return self._negamax_once(cur, mask, moves, lo, hi, -1, -1)
        while lo < hi:
            med = lo + (hi - lo) // 2
            # Probe near zero first: C's truncating lo/2 and hi/2 written for Python.
            if med <= 0 and -((-lo) // 2) < med:
                med = -((-lo) // 2)
            elif med >= 0 and hi // 2 > med:
                med = hi // 2
            r = negamax(cur, mask, moves, med, med + 1, -1, -1)
            if r <= med:
                hi = r
            else:
                lo = r
        # Fail-soft searches may prove more than the weak window asked for: keep the sign.
        return max(-1, min(1, lo)) if weak else lo


def _search(
    geo: Geometry, table: dict[int, int], orders: dict[int, int | tuple[tuple[int, int], ...]],
    ends: dict[int, int], playable: dict[int, tuple[tuple[int, int], ...]],
) -> tuple[Callable[[int], None], Callable[[], int], Callable[[int, int, int, int, int, int, int], int],
           Callable[[int, int, int, int, int, int, int], int]]:
    """Pons' negamax for one board size as closures: ``start(budget)`` (``-1``: none),
    ``count()`` (nodes since ``start``) and two variants of
    ``negamax(cur, mask, moves, alpha, beta, wins, mine)``: the first memoizes move
    orders for the dichotomy's repeated searches, the second (for one full-window search,
    which visits few positions twice) does not; they visit the same nodes.

    The hot loop of the whole solver, written for CPython; it visits exactly the nodes of
    the plain search, in the same order, and leaves the same table (the tests compare):

    * the geometry in local variables, ``four_ends`` written out with the board's shifts;
    * the move order of a position memoized in ``orders`` (the dichotomic search visits
      about a third to a half of its nodes again; the order is a function of the
      position alone): per position key the playable non-losing moves as an int until
      they are sorted, then the sorted ``(move, winning cells after it)`` pairs; ``0``
      marks a lost position;
    * winning cells handed down instead of computed again: ``wins`` (the opponent's,
      which the parent computed to order its moves) and ``mine`` (ours, the parent's
      ``wins``), ``-1`` where the caller has none;
    * a move's winning cells are ``mine`` joined with ``four_ends`` of our stones in the
      move's star (the cells a line through it can use) plus the move, memoized in
      ``ends`` by that int; a position with one move hands them to its child too;
    * the playable cells of each set of playable cells, centre first with their ranks,
      memoized in ``playable`` (not one ``&`` per column and position);
    * candidates sorted on one small int (threats, then rank), the kids taken out with
      ``zip`` (a comprehension is a function call in CPython 3.11).
    """
    size = geo.size
    board = geo.board
    bottom = geo.bottom
    min_score = geo.min_score
    max_score = geo.max_score
    lower_mark = max_score - min_score + 1
    lower_off = 2 * min_score - max_score - 2
    lower_store = max_score - 2 * min_score + 2
    upper_off = min_score - 1
    s1, s2, s3 = geo.lines
    s1b, s1c, s2b, s2c, s3b, s3c = 2 * s1, 3 * s1, 2 * s2, 3 * s2, 2 * s3, 3 * s3
    # Centre first (Pons' columnOrder), each column with its rank: higher is nearer the centre.
    columns = tuple((geo.width - i, geo.columns[c]) for i, c in enumerate(geo.order))
    # Per cell: the cells a line of four through it can use besides it (its "star": the
    # row, both diagonals and the column).  A move's new winning cells depend only
    # on our stones in its star, so ``four_ends`` of (star stones | move), cached by that
    # int in ``ends``, joined with our winning cells before the move, gives our winning
    # cells after it.
    stars: dict[int, int] = {}
    for c in range(geo.width):
        for row in range(geo.height):
            cell = 1 << (c * geo.h1 + row)
            star = 0
            for dc, dr in ((1, 0), (1, 1), (1, -1), (0, 1)):
                for k in range(-3, 4):
                    cc, rr = c + k * dc, row + k * dr
                    if k and 0 <= cc < geo.width and 0 <= rr < geo.height:
                        star |= 1 << (cc * geo.h1 + rr)
            stars[cell] = star
    stars_get = stars.__getitem__
    ends_get = ends.get
    playable_get = playable.get
    table_get = table.get
    orders_get = orders.get
    # Per number of moves played: the score of a lost position, and the bounds of Pons'
    # search (a win or loss needs at least two more moves).
    lost = tuple(-((size - n) // 2) for n in range(size + 1))
    lows = tuple(-((size - 2 - n) // 2) for n in range(size + 1))
    highs = tuple((size - 1 - n) // 2 for n in range(size + 1))
    last_two = size - 2
    nodes = 0
    budget = -1
    checkpoint = TRIM_EVERY

    def start(limit: int) -> None:
        nonlocal nodes, budget, checkpoint
        nodes = 0
        budget = limit
        checkpoint = TRIM_EVERY if limit < 0 else min(limit, TRIM_EVERY)

    def trim() -> None:
        """At a checkpoint: the node budget, then the tables' bounds (one long search of
        an early position would otherwise grow them without end)."""
        nonlocal checkpoint
        if nodes == budget:
            raise SearchLimit(f"node limit {budget} reached")
        if len(table) > TT_MAX_ENTRIES:
            table.clear()
        for memo in (orders, ends, playable):
            if len(memo) > ORDER_MAX_ENTRIES:
                memo.clear()
        checkpoint = nodes + TRIM_EVERY if budget < 0 else min(budget, nodes + TRIM_EVERY)

    def count() -> int:
        return nodes

    def variant(memo: bool) -> Callable[[int, int, int, int, int, int, int], int]:
        """The negamax with the move orders memoized in ``orders`` (``memo``) or not."""

        def negamax(cur: int, mask: int, moves: int, alpha: int, beta: int, wins: int, mine: int) -> int:
            """The side to move cannot win at once (caller's guarantee); ``wins`` is
            ``four_ends`` of the opponent's stones when the caller has it, else ``-1``."""
            nonlocal nodes
            nodes += 1
            if nodes == checkpoint:
                trim()
            key = cur + mask
            kids = orders_get(key) if memo else None
            if kids is None:
                free = board ^ mask
                possible = (mask + bottom) & board
                if wins < 0:
                    o = cur ^ mask  # the opponent's stones: its winning cells (four_ends, written out)
                    r = (o << 1) & (o << 2) & (o << 3)
                    a = o << s1
                    b = o >> s1
                    r |= (a & (o << s1b) & ((o << s1c) | b)) | (b & (o >> s1b) & (a | (o >> s1c)))
                    a = o << s2
                    b = o >> s2
                    r |= (a & (o << s2b) & ((o << s2c) | b)) | (b & (o >> s2b) & (a | (o >> s2c)))
                    a = o << s3
                    b = o >> s3
                    wins = r | (a & (o << s3b) & ((o << s3c) | b)) | (b & (o >> s3b) & (a | (o >> s3c)))
                threat = wins & free
                forced = possible & threat
                if forced:
                    if forced & (forced - 1):
                        if memo:
                            orders[key] = 0
                        return lost[moves]
                    possible = forced
                possible &= ~(threat >> 1)
                kids = possible
                if memo:
                    orders[key] = possible
                if not possible:
                    return lost[moves]
            elif not kids:
                return lost[moves]
            if moves >= last_two:
                return 0

            low = lows[moves]
            if alpha < low:
                alpha = low
                if alpha >= beta:
                    return alpha
            high = highs[moves]
            val = table_get(key)
            if val is not None:
                if val > lower_mark:  # lower bound
                    low = val + lower_off
                    if alpha < low:
                        alpha = low
                        if alpha >= beta:
                            return alpha
                else:  # upper bound
                    high = val + upper_off
            if beta > high:
                beta = high
                if alpha >= beta:
                    return beta

            if type(kids) is int:
                possible = kids
                if possible & (possible - 1):
                    # Order: more created threats first, ties centre first (Pons' MoveSorter).
                    free = board ^ mask
                    if mine < 0:
                        s = cur
                        r = (s << 1) & (s << 2) & (s << 3)
                        a = s << s1
                        b = s >> s1
                        r |= (a & (s << s1b) & ((s << s1c) | b)) | (b & (s >> s1b) & (a | (s >> s1c)))
                        a = s << s2
                        b = s >> s2
                        r |= (a & (s << s2b) & ((s << s2c) | b)) | (b & (s >> s2b) & (a | (s >> s2c)))
                        a = s << s3
                        b = s >> s3
                        mine = r | (a & (s << s3b) & ((s << s3c) | b)) | (b & (s >> s3b) & (a | (s >> s3c)))
                    cells = playable_get(possible)
                    if cells is None:
                        playable[possible] = cells = tuple(
                            [(rank, possible & column) for rank, column in columns if possible & column])
                    candidates = []
                    for rank, move in cells:
                        s = (cur & stars_get(move)) | move
                        r = ends_get(s, -1)
                        if r < 0:
                            r = (s << 1) & (s << 2) & (s << 3)
                            a = s << s1
                            b = s >> s1
                            r |= (a & (s << s1b) & ((s << s1c) | b)) | (b & (s >> s1b) & (a | (s >> s1c)))
                            a = s << s2
                            b = s >> s2
                            r |= (a & (s << s2b) & ((s << s2c) | b)) | (b & (s >> s2b) & (a | (s >> s2c)))
                            a = s << s3
                            b = s >> s3
                            r |= (a & (s << s3b) & ((s << s3c) | b)) | (b & (s >> s3b) & (a | (s >> s3c)))
                            ends[s] = r
                        r |= mine
                        candidates.append(((r & free).bit_count() << 4 | rank, (move, r)))
                    candidates.sort(reverse=True)
                    _, kids = zip(*candidates)
                elif mine >= 0:
                    # One move: its winning cells for the child, as above.
                    s = (cur & stars_get(possible)) | possible
                    r = ends_get(s, -1)
                    if r < 0:
                        r = (s << 1) & (s << 2) & (s << 3)
                        a = s << s1
                        b = s >> s1
                        r |= (a & (s << s1b) & ((s << s1c) | b)) | (b & (s >> s1b) & (a | (s >> s1c)))
                        a = s << s2
                        b = s >> s2
                        r |= (a & (s << s2b) & ((s << s2c) | b)) | (b & (s >> s2b) & (a | (s >> s2c)))
                        a = s << s3
                        b = s >> s3
                        r |= (a & (s << s3b) & ((s << s3c) | b)) | (b & (s >> s3b) & (a | (s >> s3c)))
                        ends[s] = r
                    kids = ((possible, r | mine),)
                else:
                    kids = ((possible, -1),)
                if memo:
                    orders[key] = kids

            nxt = moves + 1
            opp = cur ^ mask
            for move, made in kids:  # type: ignore[union-attr]
                # Play for the side to move: the opponent's stones become "current"; ``made``
                # (the winning cells of our stones with the move) are the child's threats.
                score = -negamax(opp, mask | move, nxt, -beta, -alpha, made, wins)
                if score >= beta:
                    table[key] = score + lower_store
                    return score
                if score > alpha:  # noqa: PLR1730 - hot loop, max() is slower
                    alpha = score
            table[key] = alpha - min_score + 1
            return alpha

        return negamax

    return start, count, variant(True), variant(False)


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
