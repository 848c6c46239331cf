"""Depth-limited Connect Four search with a threat evaluation (for the weaker levels).

Negamax with alpha-beta on the solver's bitboards (``c4_board``): exact at won, lost and
drawn positions, an evaluation at the depth limit.  The evaluation counts, for each side,
the cells on which one stone would complete four ("threats"; those on the rows of the
side's own parity count more, after the odd/even threat rule of Allis) and the stones
weighted by how many lines of four pass through their cell.  Moves are ordered by the
table's best move, then by threats created, then centre first.

The search is bounded by depth and by a node count (``SearchLimit`` from the solver
module), never by a clock: iterative deepening keeps the last depth that finished, so
the answer is the same on every machine.
"""

from __future__ import annotations

from p2p.ai.c4_board import Geometry, Position, four_ends
from p2p.ai.connect4_solver import SearchLimit

WIN = 100_000
"""A win with move number ``m`` (0-based) scores ``WIN - m``; evaluations stay far below."""

INF = 10 * WIN
THREAT_GOOD = 40
THREAT_OTHER = 20


class Evaluator:
    """Static evaluation of one board size, from the side to move's point of view."""

    def __init__(self, geo: Geometry) -> None:
        self.geo = geo
        self.weights = tuple(geo.line_weights().items())
        self.odd_rows = geo.row_parity_mask(True)
        self.even_rows = geo.row_parity_mask(False)

    def evaluate(self, cur: int, mask: int, moves: int, mine: int, theirs: int) -> int:
        """``mine``/``theirs``: each side's empty winning cells (already computed)."""
        opp = cur ^ mask
        score = 0
        for w, m in self.weights:
            score += w * ((cur & m).bit_count() - (opp & m).bit_count())
        # The side that moved first profits from threats on odd rows, the other on even rows.
        first_to_move = moves % 2 == 0
        my_rows = self.odd_rows if first_to_move else self.even_rows
        their_rows = self.even_rows if first_to_move else self.odd_rows
        score += THREAT_GOOD * ((mine & my_rows).bit_count() - (theirs & their_rows).bit_count())
        score += THREAT_OTHER * ((mine & ~my_rows).bit_count() - (theirs & ~their_rows).bit_count())
        return score


class HeuristicSearch:
    """Alpha-beta to a fixed depth with a node budget; one instance per decision."""

    def __init__(self, geo: Geometry, node_limit: int) -> None:
        self.geo = geo
        self.eval = Evaluator(geo)
        self.node_limit = node_limit
        self.nodes = 0
        self.table: dict[int, tuple[int, int, int, int]] = {}
        """key -> (depth, kind, value, best move bit); kind 0 exact, 1 lower, 2 upper."""

    def root_scores(self, pos: Position, max_depth: int, exact_all: bool = False) -> dict[int, int]:
        """Score per candidate column after iterative deepening up to ``max_depth``.

        Candidates are the playable columns that do not lose at once (all playable columns
        if every move loses).  With ``exact_all`` every candidate gets an exact score
        (full window); otherwise only the best ones are exact and the rest are upper
        bounds below the best.  The last fully searched depth counts; if not even depth 1
        fits the node budget the static order (centre first) scores the columns.
        """
        geo = self.geo
        possible = pos.possible()
        wins = pos.winning_cells() & possible
        if wins:
            return {geo.column_of(wins & -wins): WIN - pos.moves}
        cands = pos.non_losing_moves() or possible
        cols = [c for c in geo.order if cands & geo.columns[c]]
        result = {c: -i for i, c in enumerate(cols)}
        for depth in range(1, max_depth + 1):
            try:
                scores = self._root(pos, cols, depth, exact_all)
            except SearchLimit:
                break
            result = scores
            best = max(scores.values())
            if abs(best) > WIN // 2 and not exact_all:
                break  # proven win or loss: deeper search cannot change it
            # Search the best move first at the next depth.
            cols.sort(key=lambda c: -scores[c])
        return result

    def _root(self, pos: Position, cols: list[int], depth: int, exact_all: bool) -> dict[int, int]:
        scores: dict[int, int] = {}
        best = -INF
        for c in cols:
            child = pos.copy()
            child.play_column(c)
            alpha = -INF if exact_all or best == -INF else best - 1
            v = -self._search(child.current, child.mask, child.moves, depth - 1, -INF, -alpha)
            scores[c] = v
            best = max(best, v)
        return scores

    def _search(self, cur: int, mask: int, moves: int, depth: int, alpha: int, beta: int) -> int:
        self.nodes += 1
        if self.nodes >= self.node_limit:
            raise SearchLimit("node limit reached")
        geo = self.geo
        size = geo.size
        if moves == size:
            return 0
        board = geo.board
        possible = (mask + geo.bottom) & board
        mine = geo.winning_cells(cur, mask)
        if mine & possible:
            return WIN - moves
        theirs = geo.winning_cells(cur ^ mask, mask)
        forced = possible & theirs
        if forced:
            if forced & (forced - 1):
                return -(WIN - moves - 1)
            possible = forced
        possible &= ~(theirs >> 1)
        if not possible:
            return -(WIN - moves - 1)
        if depth <= 0:
            return self.eval.evaluate(cur, mask, moves, mine, theirs)

        key = cur + mask
        entry = self.table.get(key)
        tt_move = 0
        if entry is not None:
            e_depth, kind, value, tt_move = entry
            if e_depth >= depth:
                if kind == 0:
                    return value
                if kind == 1 and value >= beta:
                    return value
                if kind == 2 and value <= alpha:
                    return value

        free = board ^ mask
        candidates = []
        lines = geo.lines
        for rank, move in geo.centre_first(possible):
            if move == tt_move:
                candidates.append((1000, geo.width, move))
            elif depth == 1:
                candidates.append((0, rank, move))  # children are leaves: keep it cheap
            else:
                threats = four_ends(cur | move, lines) & free  # the threats it creates
                candidates.append((threats.bit_count(), rank, move))
        candidates.sort(reverse=True)

        alpha0 = alpha
        best = -INF
        best_move = 0
        opp = cur ^ mask
        for _, _, move in candidates:
            v = -self._search(opp, mask | move, moves + 1, depth - 1, -beta, -alpha)
            if v > best:
                best = v
                best_move = move
                if v > alpha:
                    alpha = v
                    if alpha >= beta:
                        break
        kind = 1 if best >= beta else (2 if best <= alpha0 else 0)
        self.table[key] = (depth, kind, best, best_move)
        return best
