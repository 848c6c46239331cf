"""Paranoid alpha-beta search for four-player chess, bounded by depth and node count.

Four-player free-for-all is not a two-player zero-sum game, so plain negamax does not
apply.  We use the *paranoid* reduction (Sturtevant & Korf 2000): the seat to move at
the root (the "root seat") maximises one number, the evaluation from its point of view,
and every other seat is assumed to minimise that same number.  That turns the tree into
a two-sided one on which alpha-beta is sound, at the price of pessimism (the three
opponents are treated as a coalition).  Plies follow the real turn order of the game
(Red, Blue, Yellow, Green, skipping eliminated seats), so every node is a position that
can really occur and the engine's own make/unmake keeps scores and eliminations exact.

Limits are *counted*, never timed: a maximum depth in plies and a node budget.  Each
iteration of iterative deepening either completes, or runs out of nodes and is thrown
away; the answer is the best move of the deepest completed iteration.  Given the same
position, limits and root order, the search visits the same nodes in the same order on
every machine, so the chosen move is a pure function of its inputs.

The search sees the position only through the small ``SearchBoard`` protocol below;
``p2p.ai.chess4_board`` adapts the rules engine to it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

M = TypeVar("M")

INFINITY = 1 << 40
"""Larger than any evaluation; alpha-beta window bounds."""


class SearchBoard(Protocol[M]):
    """What the search needs from a position: moves, make/unmake, and a static value."""

    def side(self) -> int | None:
        """Seat to move, or ``None`` once the game is over."""

    def moves(self) -> list[M]:
        """Legal moves of the seat to move, in a fixed deterministic order."""

    def captures(self) -> list[M]:
        """The legal moves that capture something (quiescence search)."""

    def checks(self, seat: int) -> list[M]:
        """Quiet moves of the seat to move that check ``seat``'s king (horizon threats)."""

    def gain(self, move: M) -> int:
        """Points the mover scores by the capture alone (0 for a quiet move): move ordering."""

    def mover_value(self, move: M) -> int:
        """Value of the moving piece (cheaper attackers are tried first)."""

    def make(self, move: M) -> None:
        """Play ``move`` with the full rules (scores, eliminations, game end)."""

    def unmake(self) -> None:
        """Take back the last ``make``."""

    def evaluate(self, root: int) -> int:
        """Static value of the position for seat ``root`` (higher is better for it)."""


class OutOfNodes(Exception):
    """Raised inside the tree when the node budget is spent; the iteration is discarded."""


@dataclass(frozen=True)
class Limits:
    """Counted limits of one search (no clock anywhere)."""

    depth: int
    """Maximum nominal depth in plies (iterative deepening runs 1..depth)."""

    nodes: int
    """Node budget; an iteration that would exceed it is abandoned."""

    quiescence: int = 4
    """Maximum number of capture plies searched beyond the nominal depth."""


@dataclass
class Result(Generic[M]):
    """Outcome of a search: the chosen move, its value, and what it cost."""

    move: M
    value: int
    depth: int
    nodes: int
    complete: bool = True
    """False when ``depth`` was only partly searched (see ``ParanoidSearch.run``)."""


class ParanoidSearch(Generic[M]):
    """One search from one position; create a new object for every move decision."""

    def __init__(self, board: SearchBoard[M], root: int, limits: Limits) -> None:
        self.board = board
        self.root = root
        self.limits = limits
        self.nodes = 0
        self._budget = limits.nodes
        self._killers: list[list[M]] = [[] for _ in range(limits.depth + 1)]
        self._history: dict[M, int] = {}

    # -- public ---------------------------------------------------------------------

    def run(self, root_moves: Sequence[M]) -> Result[M]:
        """Search ``root_moves`` (already in tie-break order) and return the best one.

        Among moves of equal value the earliest in ``root_moves`` wins, so the caller
        decides ties (a seeded shuffle, or the engine's canonical order).  Depth 1 is
        always completed, whatever the budget, so there is always an answer.  When the
        budget runs out during a deeper iteration after its first root move (the
        previous best) was fully searched, a root move that already proved better in
        that iteration is taken: its value is a true lower bound at the deeper depth.
        """
        if not root_moves:
            raise ValueError("no legal move to search")
        order = self._root_order(list(root_moves))
        best = Result(order[0], -INFINITY, 0, 0)
        for depth in range(1, self.limits.depth + 1):
            self._budget = self.limits.nodes if depth > 1 else INFINITY
            partial: list[tuple[M, int]] = []
            try:
                move, value = self._search_root(order, depth, partial)
            except OutOfNodes:
                if len(partial) > 1:  # something beat the previous best at this depth
                    move, value = partial[-1]
                    best = Result(move, value, depth, self.nodes, complete=False)
                break
            best = Result(move, value, depth, self.nodes)
            # Principal move first next time, the others keep their relative order.
            order.remove(move)
            order.insert(0, move)
        best.nodes = self.nodes
        return best

    # -- tree -----------------------------------------------------------------------

    def _root_order(self, moves: list[M]) -> list[M]:
        """Captures of the most points first (cheapest capturer first), then the rest."""
        board = self.board
        return sorted(moves, key=lambda m: (-board.gain(m), board.mover_value(m) if board.gain(m) else 0))

    def _search_root(self, order: list[M], depth: int, improved: list[tuple[M, int]]) -> tuple[M, int]:
        """One iteration; ``improved`` collects (move, value) each time the best improves."""
        board = self.board
        alpha = -INFINITY
        best_move = order[0]
        for move in order:
            board.make(move)
            try:
                value = self._alphabeta(depth - 1, alpha, INFINITY, 1)
            finally:
                board.unmake()
            if value > alpha:
                alpha = value
                best_move = move
                improved.append((move, value))
        return best_move, alpha

    def _count(self) -> None:
        self.nodes += 1
        if self.nodes > self._budget:
            raise OutOfNodes

    def _alphabeta(self, depth: int, alpha: int, beta: int, ply: int) -> int:
        """Paranoid value of the current position for the root seat, fail-hard in [alpha, beta]."""
        self._count()
        board = self.board
        side = board.side()
        if side is None:
            return board.evaluate(self.root)
        if depth <= 0:
            return self._quiesce(self.limits.quiescence, alpha, beta)
        moves = self._ordered(board.moves(), ply)
        if not moves:  # cannot happen with exact rules (no-move seats are out); be safe
            return board.evaluate(self.root)
        if side == self.root:
            for move in moves:
                board.make(move)
                try:
                    value = self._alphabeta(depth - 1, alpha, beta, ply + 1)
                finally:
                    board.unmake()
                if value > alpha:
                    alpha = value
                    if alpha >= beta:
                        self._cutoff(move, depth, ply)
                        return beta
            return alpha
        for move in moves:
            board.make(move)
            try:
                value = self._alphabeta(depth - 1, alpha, beta, ply + 1)
            finally:
                board.unmake()
            if value < beta:
                beta = value
                if beta <= alpha:
                    self._cutoff(move, depth, ply)
                    return alpha
        return beta

    def _cutoff(self, move: M, depth: int, ply: int) -> None:
        """Remember a quiet move that refuted a line: killer of its ply, history bonus."""
        if self.board.gain(move):
            return
        killers = self._killers[ply]
        if move not in killers:
            killers.insert(0, move)
            del killers[2:]
        self._history[move] = self._history.get(move, 0) + depth * depth

    def _quiesce(self, depth: int, alpha: int, beta: int) -> int:
        """Captures, with stand-pat: each seat may decline to capture.

        At the first quiescence ply an opponent may also give the root seat a quiet
        check: that is how a mate just beyond the horizon (a back-rank mate by the next
        opponent) becomes visible.  It is a real legal move, so paranoid values stay sound.
        """
        board = self.board
        stand = board.evaluate(self.root)
        side = board.side()
        if side is None or depth <= 0:
            return stand
        if side == self.root:
            if stand >= beta:
                return beta
            alpha = max(alpha, stand)
        else:
            if stand <= alpha:
                return alpha
            beta = min(beta, stand)
        moves = self._ordered(board.captures(), -1)
        if side != self.root and depth == self.limits.quiescence:
            moves += board.checks(self.root)
        for move in moves:
            self._count()
            board.make(move)
            try:
                value = self._quiesce(depth - 1, alpha, beta)
            finally:
                board.unmake()
            if side == self.root:
                if value > alpha:
                    alpha = value
                    if alpha >= beta:
                        return beta
            elif value < beta:
                beta = value
                if beta <= alpha:
                    return alpha
        return alpha if side == self.root else beta

    def _ordered(self, moves: list[M], ply: int) -> list[M]:
        """Captures by MVV-LVA (most points, cheapest capturer), then this ply's killer
        moves, then quiet moves by history score; ties keep the engine's order."""
        board = self.board
        caps = []
        quiet = []
        for move in moves:
            g = board.gain(move)
            if g:
                caps.append((-g, board.mover_value(move), move))
            else:
                quiet.append(move)
        if ply >= 0 and quiet:
            history = self._history
            if history:
                quiet.sort(key=lambda m: -history.get(m, 0))
            killers = [k for k in self._killers[ply] if k in quiet] if ply < len(self._killers) else []
            if killers:
                quiet = killers + [m for m in quiet if m not in killers]
        if not caps:
            return quiet
        caps.sort(key=lambda t: (t[0], t[1]))
        return [t[2] for t in caps] + quiet
