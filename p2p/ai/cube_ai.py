"""Computer players for Viergewinnt 3D (4x4x4 cube with gravity, 2 or 3 players, points).

The game is played until all 64 cells are full and every line of four scores for its
owner, so a position is judged by **score plus open lines**: for each player, 120 per
completed line (the points themselves) plus 25 / 5 / 1 for each line that still holds
only that player's stones, three / two / one of them.  Lines shared by two players are
dead.  The sums are updated incrementally on every drop (only the 4 or 7 lines through
the cell change).

**Two players: alpha-beta minimax** (the paranoid search of Sturtevant & Korf is exactly
minimax when there is one opponent): the side to move maximises its value minus the
opponent's.  **Three players: max^n** (Luckhardt & Irani; ``docs/ai.md``
section 4): every player picks the move best for its own utility (own value minus the
best other value).  Paranoid alpha-beta for three players (all opponents minimising the
root player; prunes well, so it searches deeper) was tried first and measured worse
here: the stronger paranoid levels played too defensively and lost to ``normal``
(``docs/ai.md``).  Best-Reply Search, the usual winner in the published comparisons, lets
the root player move twice in a row, which in a gravity game changes which cells are
playable; it was not tried.  Max^n cannot prune, so it stays shallow (1-3 plies), and
Meister searches to the end of the game once at most 9 cells are empty.

Levels differ in depth, node budget and noise: ``neuling`` (one ply, big noise, about a
third of its moves random), ``normal`` (two plies with two players, one with three;
noise), ``stark`` (four / two plies), ``meister`` (iterative deepening to six plies within
a node budget / three plies and the exact endgame).  Every choice is a deterministic
function of position, level and seed; budgets are node counts, never time.
"""

from __future__ import annotations

import random
from hashlib import sha256

from p2p.games.base import Game
from p2p.games.cube import CELLS, LINES, LINES_THROUGH, SIZE, pillar_name

LEVELS: tuple[str, ...] = ("neuling", "normal", "stark", "meister")

POINT = 120
OPEN_WEIGHTS = (0, 1, 5, 25, POINT)
"""Value of a line holding 0..4 stones of only one player (4 = a completed line)."""

PILLARS = SIZE * SIZE
LEVEL_SETTINGS: dict[str, tuple[int, int, int, float]] = {
    # level: (max depth, node budget, noise, chance of a random move)
    "neuling": (1, 1_000, 60, 0.35),
    "normal": (2, 4_000, 12, 0.0),
    "stark": (4, 20_000, 0, 0.0),
    "meister": (6, 50_000, 0, 0.0),
}
INF = 1 << 40
SEARCH_3P = "maxn"
"""Three-player search: ``"maxn"`` or ``"paranoid"`` (see the module docstring)."""
MAXN_DEPTH = {"neuling": 1, "normal": 1, "stark": 2, "meister": 3}
MAXN_ENDGAME = 9
"""Meister (three players) searches to the end once at most this many cells are empty."""

_CELL_WEIGHT = tuple(len(LINES_THROUGH[c]) for c in range(CELLS))


class _Budget(Exception):
    """The node budget ran out (the last finished depth is used)."""


class CubeSearch:
    """An incremental board for search: stones, line counts and each player's value."""

    def __init__(self, game: Game) -> None:
        self.n: int = game.players
        board: list[int] = game.board  # type: ignore[attr-defined]
        self.owner = list(board)
        self.heights = list(game.heights)  # type: ignore[attr-defined]
        self.counts = [[0] * self.n for _ in LINES]
        self.value = [0] * self.n
        for cell, seat in enumerate(board):
            if seat >= 0:
                for li in LINES_THROUGH[cell]:
                    self.counts[li][seat] += 1
        for li in range(len(LINES)):
            owner, v = self._line(li)
            if owner >= 0:
                self.value[owner] += v
        self.filled = sum(self.heights)
        self.nodes = 0
        self.node_limit = 0
        self.table: dict[tuple[int, ...], tuple[int, int, int, int]] = {}

    def _line(self, li: int) -> tuple[int, int]:
        """(owner, value) of a line: owner -1 if empty or shared by several players."""
        owner = -1
        for p, c in enumerate(self.counts[li]):
            if c:
                if owner >= 0:
                    return -1, 0
                owner = p
        return (owner, OPEN_WEIGHTS[self.counts[li][owner]]) if owner >= 0 else (-1, 0)

    def _count(self, cell: int, seat: int, delta: int) -> None:
        """Add ``delta`` stones of ``seat`` to every line through ``cell``, keeping values."""
        value = self.value
        for li in LINES_THROUGH[cell]:
            owner, v = self._line(li)
            if owner >= 0:
                value[owner] -= v
            self.counts[li][seat] += delta
            owner, v = self._line(li)
            if owner >= 0:
                value[owner] += v

    def drop(self, pillar: int, seat: int) -> int:
        cell = pillar + PILLARS * self.heights[pillar]
        self.heights[pillar] += 1
        self.owner[cell] = seat
        self.filled += 1
        self._count(cell, seat, 1)
        return cell

    def undo(self, pillar: int, seat: int) -> None:
        self.heights[pillar] -= 1
        cell = pillar + PILLARS * self.heights[pillar]
        self.owner[cell] = -1
        self.filled -= 1
        self._count(cell, seat, -1)

    def utility(self, root: int) -> int:
        """Root's value minus the best opponent's value."""
        best_other = max(v for p, v in enumerate(self.value) if p != root)
        return self.value[root] - best_other

    def moves(self) -> list[int]:
        """Open pillars, the cell on more lines first (then pillar order)."""
        hs = self.heights
        cands = [p for p in range(PILLARS) if hs[p] < SIZE]
        cands.sort(key=lambda p: -_CELL_WEIGHT[p + PILLARS * hs[p]])
        return cands

    def key(self) -> tuple[int, ...]:
        return tuple(self.owner)

    # -- alpha-beta (paranoid; plain minimax with two players) ----------------------------

    def search(self, seat: int, root: int, depth: int, alpha: int, beta: int) -> int:
        self.nodes += 1
        if self.nodes >= self.node_limit:
            raise _Budget
        if depth == 0 or self.filled == CELLS:
            return self.utility(root)
        key = self.key()
        entry = self.table.get(key)
        first = -1
        if entry is not None:
            e_depth, kind, v, first = entry
            if e_depth >= depth and (kind == 0 or (kind == 1 and v >= beta) or (kind == 2 and v <= alpha)):
                return v
        moves = self.moves()
        if first in moves:
            moves.remove(first)
            moves.insert(0, first)
        nxt = (seat + 1) % self.n
        a0, b0 = alpha, beta
        maximise = seat == root
        best = -INF if maximise else INF
        best_move = moves[0]
        for p in moves:
            self.drop(p, seat)
            try:
                v = self.search(nxt, root, depth - 1, alpha, beta)
            finally:
                self.undo(p, seat)
            if maximise:
                if v > best:
                    best, best_move = v, p
                    alpha = max(alpha, v)
            elif v < best:
                best, best_move = v, p
                beta = min(beta, v)
            if alpha >= beta:
                break
        kind = 1 if best >= b0 else (2 if best <= a0 else 0)
        self.table[key] = (depth, kind, best, best_move)
        return best

    # -- max^n (three players) -------------------------------------------------------------

    def maxn(self, seat: int, depth: int) -> list[int]:
        """Each player's utility vector after max^n to ``depth`` plies.

        Every player picks the move best for its own utility (own value minus the best
        other value); ties go to the first move in ``moves()`` order.  No pruning.
        """
        self.nodes += 1
        if self.nodes >= self.node_limit:
            raise _Budget
        if depth == 0 or self.filled == CELLS:
            return list(self.value)
        nxt = (seat + 1) % self.n
        best: list[int] | None = None
        best_u = -INF
        for p in self.moves():
            self.drop(p, seat)
            try:
                vec = self.maxn(nxt, depth - 1)
            finally:
                self.undo(p, seat)
            u = vec[seat] - max(v for q, v in enumerate(vec) if q != seat)
            if u > best_u:
                best, best_u = vec, u
        assert best is not None
        return best

    def root_scores_maxn(self, seat: int, max_depth: int, node_limit: int,
                         complete: bool = False) -> dict[int, int]:
        """Max^n utility of every open pillar at the deepest depth that finished.

        With ``complete`` only ``max_depth`` itself is searched, and an empty dict comes
        back if it does not fit the node budget.
        """
        self.node_limit = node_limit
        self.nodes = 0
        moves = self.moves()
        scores: dict[int, int] = {} if complete else {p: 0 for p in moves}
        for depth in range(max_depth if complete else 1, max_depth + 1):
            current: dict[int, int] = {}
            try:
                for p in moves:
                    self.drop(p, seat)
                    try:
                        vec = self.maxn((seat + 1) % self.n, depth - 1)
                    finally:
                        self.undo(p, seat)
                    current[p] = vec[seat] - max(v for q, v in enumerate(vec) if q != seat)
            except _Budget:
                break
            scores = current
            if self.filled + depth >= CELLS:
                break
        return scores

    def root_scores(self, seat: int, max_depth: int, node_limit: int,
                    exact_all: bool = False) -> dict[int, int]:
        """Paranoid value of every open pillar at the deepest depth that finished.

        The best pillars' values are exact; the others are exact too with ``exact_all``,
        otherwise upper bounds below the best.
        """
        self.node_limit = node_limit
        self.nodes = 0
        moves = self.moves()
        scores = {p: 0 for p in moves}
        # Two players: even depths only, so the horizon always ends after the opponent's
        # reply (an odd horizon sees its own threats unanswered and plays too boldly).
        depths = range(2 if self.n == 2 and max_depth >= 2 else 1, max_depth + 1, 2 if self.n == 2 else 1)
        for depth in depths:
            current: dict[int, int] = {}
            best = -INF
            try:
                for p in moves:
                    alpha = -INF if exact_all or best == -INF else best - 1
                    self.drop(p, seat)
                    try:
                        v = self.search((seat + 1) % self.n, seat, depth - 1, alpha, INF)
                        current[p] = v
                        best = max(best, v)
                    finally:
                        self.undo(p, seat)
            except _Budget:
                break
            scores = current
            moves.sort(key=lambda p: -scores[p])
            if self.filled + depth >= CELLS:
                break  # the search already reaches the end of the game
        return scores


def _rng(game: Game, level: str, seed: bytes) -> random.Random:
    digest = sha256(b"cube-ai\x00" + level.encode() + b"\x00" + seed + b"\x00" + game.encode())
    return random.Random(int.from_bytes(digest.digest(), "big"))


def choose_move(game: Game, level: str, seed: bytes = b"") -> str:
    """The pillar (``a1``..``d4``) the computer at ``level`` plays for the side to move."""
    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r} (known: {', '.join(LEVELS)})")
    seat = game.to_move()
    if seat is None:
        raise ValueError("the game is over")
    rng = _rng(game, level, seed)
    depth, nodes, noise, random_chance = LEVEL_SETTINGS[level]
    search = CubeSearch(game)
    if random_chance and rng.random() < random_chance:
        return pillar_name(rng.choice(sorted(search.moves())))
    if game.players == 3 and SEARCH_3P == "maxn":
        scores = search.root_scores_maxn(seat, MAXN_DEPTH[level], nodes)
        empty = CELLS - search.filled
        if level == "meister" and empty <= MAXN_ENDGAME:
            to_end = CubeSearch(game).root_scores_maxn(seat, empty, nodes, complete=True)
            scores = to_end or scores
    else:
        scores = search.root_scores(seat, depth, nodes, exact_all=noise > 0)
    noisy = {p: v + (rng.randint(-noise, noise) if noise else 0) for p, v in scores.items()}
    top = max(noisy.values())
    return pillar_name(rng.choice(sorted(p for p, v in noisy.items() if v == top)))


def hint(game: Game) -> str:
    """The Meister's choice without randomness (ties to the lowest pillar number)."""
    seat = game.to_move()
    if seat is None:
        raise ValueError("the game is over")
    depth, nodes, _, _ = LEVEL_SETTINGS["meister"]
    scores = CubeSearch(game).root_scores(seat, depth, nodes)
    top = max(scores.values())
    return pillar_name(min(p for p, v in scores.items() if v == top))
