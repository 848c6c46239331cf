"""Computer players for Vier in einer Reihe, from Neuling to Meister.

Every level is a deterministic function of the position, the level and the seed (the
seed feeds a ``random.Random`` through SHA-256; no clock, no unseeded randomness), and
every search is bounded by depth and node counts, so an online peer can recompute the
computer's move.  The levels, weakest first (how known apps weaken play:
``docs/ai.md``):

- ``neuling``: takes an immediate win, blocks an immediate threat only half of the time,
  otherwise plays a random column weighted towards the centre.
- ``normal``: takes a win, blocks threats, but overlooks a purely diagonal threat about
  one time in three; a 4-ply search with noise on the move scores.
- ``stark``: never misses a one-move tactic; iterative-deepening alpha-beta up to 9
  plies with threat analysis (``c4_search``), and the exact solver once few cells are
  left.
- ``meister``: from 43% of the board filled the exact solver (``connect4_solver``) when it
  answers within its node budget, else (and always before) a deeper heuristic search;
  with a small seeded chance it plays the second-best move (never one that loses at
  once), so it can be beaten.  No opening book: the opening is searched heuristically.

Pop Out rounds are searched through the game interface (``push``/``pop``) with a
shallow alpha-beta whose leaves use the same threat evaluation; deeper for stronger
levels.  It plays legal, tactically sensible moves but is not a Pop Out expert.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from hashlib import sha256

from p2p.ai.c4_board import Position, geometry
from p2p.ai.c4_search import INF, WIN, Evaluator, HeuristicSearch
from p2p.ai.connect4_solver import SearchLimit, Solver
from p2p.games.base import Game
from p2p.games.connect4 import Connect4

LEVELS: tuple[str, ...] = ("neuling", "normal", "stark", "meister")

NEULING_BLOCK_CHANCE = 0.5
NORMAL_OVERLOOK_DIAGONAL = 0.35
NORMAL_DEPTH = 4
NORMAL_NOISE = 60
STARK_DEPTH = 9
STARK_NODES = 16_000
STARK_SOLVE_CELLS = 16
"""Stark asks the exact solver once at most this many cells are empty."""
STARK_SOLVER_NODES = 20_000
MEISTER_SOLVER_NODES = 36_000
MEISTER_SOLVE_FROM = 0.43
"""Meister tries the solver once this share of the board is filled (before: hopeless)."""
MEISTER_DEPTH = 16
MEISTER_NODES = 36_000
"""Heuristic budget before the solver phase."""
MEISTER_FALLBACK_NODES = 8_000
"""Heuristic budget when the solver ran out of nodes (the two together stay under ~1 s)."""
MEISTER_SECOND_BEST = 0.06
HINT_SOLVER_NODES = 100_000
ANALYSIS_NODES = 100_000
ANALYSIS_FROM = 0.25
ESTIMATE_NODES = 8_000
"""Node budget of the heuristic search that judges a position the solver cannot (yet)."""
ESTIMATE_MARGIN = 100
"""An estimated move that scores this much below the best (in evaluation units, far
below ``WIN``) counts as a probable mistake."""
"""Round analysis does not even try positions with less of the board filled (hopeless)."""
POPOUT_DEPTH = {"neuling": 1, "normal": 2, "stark": 3, "meister": 4}
POPOUT_NODES = 6_000


def _scaled(nodes: int, width: int) -> int:
    """Node budgets are set for 7 columns; wider boards cost more per node."""
    return nodes * 7 // max(width, 7)


def _rng(game: Game, level: str, seed: bytes) -> random.Random:
    digest = sha256(b"connect4-ai\x00" + level.encode() + b"\x00" + seed + b"\x00" + game.encode())
    return random.Random(int.from_bytes(digest.digest(), "big"))


def _connect4(game: Game) -> Connect4:
    """The Connect Four engine behind ``game`` (this module plays nothing else)."""
    if not isinstance(game, Connect4):
        raise TypeError(f"not a Connect Four game: {game.name}")
    return game


def _position(game: Game) -> Position:
    """The solver's bitboard of a Connect Four game that is not over."""
    board = _connect4(game)
    side = board.to_move()
    assert side is not None
    return Position.from_columns(board.columns, side, board.height)


def choose_move(game: Game, level: str, seed: bytes = b"") -> str:
    """The move of the computer at ``level`` for the side to move (canonical text)."""
    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r} (known: {', '.join(LEVELS)})")
    if game.is_over():
        raise ValueError("the game is over")
    rng = _rng(game, level, seed)
    if game.options().get("popout"):
        return _popout_move(game, level, rng)
    pos = _position(game)
    col = _CHOOSERS[level](pos, rng)
    return str(col + 1)


# -- the levels ----------------------------------------------------------------------------


def _weighted_centre(cols: list[int], width: int, rng: random.Random) -> int:
    """A random column, the centre about four times as likely as the edge."""
    mid = (width - 1) / 2
    weights = [1 + 3 * (1 - abs(c - mid) / max(mid, 1)) for c in cols]
    return rng.choices(cols, weights=weights)[0]


def _playable(pos: Position, cells: int) -> list[int]:
    geo = pos.geo
    return [c for c in range(geo.width) if cells & geo.columns[c]]


def _neuling(pos: Position, rng: random.Random) -> int:
    possible = pos.possible()
    wins = pos.winning_cells() & possible
    if wins:
        return rng.choice(_playable(pos, wins))
    threats = pos.opponent_winning_cells() & possible
    if threats and rng.random() < NEULING_BLOCK_CHANCE:
        return rng.choice(_playable(pos, threats))
    return _weighted_centre(_playable(pos, possible), pos.geo.width, rng)


def _normal(pos: Position, rng: random.Random) -> int:
    geo = pos.geo
    possible = pos.possible()
    wins = pos.winning_cells() & possible
    if wins:
        return rng.choice(_playable(pos, wins))
    opp = pos.current ^ pos.mask
    threats = pos.opponent_winning_cells() & possible
    if threats:
        diagonal_only = not (threats & geo.winning_cells(opp, pos.mask, "straight"))
        if diagonal_only and rng.random() < NORMAL_OVERLOOK_DIAGONAL:
            # It does not see the diagonal: play as if the threat were not there.
            others = _playable(pos, possible & ~threats) or _playable(pos, possible)
            return _pick_noisy(_static_scores(pos, others), rng, NORMAL_NOISE)
    search = HeuristicSearch(geo, node_limit=_scaled(20_000, geo.width))
    scores = search.root_scores(pos, NORMAL_DEPTH, exact_all=True)
    return _pick_noisy(scores, rng, NORMAL_NOISE)


def _static_scores(pos: Position, cols: list[int]) -> dict[int, int]:
    ev = Evaluator(pos.geo)
    out = {}
    for c in cols:
        child = pos.copy()
        child.play_column(c)
        mine = child.winning_cells()
        theirs = child.opponent_winning_cells()
        out[c] = -ev.evaluate(child.current, child.mask, child.moves, mine, theirs)
    return out


def _pick_noisy(scores: dict[int, int], rng: random.Random, noise: int) -> int:
    """The column with the best score after adding uniform noise to non-decided scores."""
    best_col, best_val = -1, -INF * 2
    for c in sorted(scores):
        v = scores[c]
        if abs(v) < WIN // 2:
            v += rng.randint(-noise, noise)
        if v > best_val:
            best_col, best_val = c, v
    return best_col


def _pick_best(scores: dict[int, int], rng: random.Random) -> int:
    """A random one of the best-scored columns."""
    top = max(scores.values())
    return rng.choice(sorted(c for c, v in scores.items() if v == top))


def _solver_scores(pos: Position, node_limit: int) -> dict[int, int] | None:
    """Exact scores of every column, or ``None`` if the solver needs more nodes."""
    solver = Solver(pos.geo.width, pos.geo.height, node_limit=node_limit)
    try:
        scores = solver.analyze(pos)
    except SearchLimit:
        return None
    return {c: s for c, s in enumerate(scores) if s is not None}


def _stark(pos: Position, rng: random.Random) -> int:
    geo = pos.geo
    if geo.size - pos.moves <= STARK_SOLVE_CELLS:
        exact = _solver_scores(pos, _scaled(STARK_SOLVER_NODES, geo.width))
        if exact is not None:
            return _pick_best(exact, rng)
    scores = HeuristicSearch(geo, _scaled(STARK_NODES, geo.width)).root_scores(pos, STARK_DEPTH)
    return _pick_best(scores, rng)


def _meister(pos: Position, rng: random.Random) -> int:
    geo = pos.geo
    exact = None
    if pos.moves >= MEISTER_SOLVE_FROM * geo.size:
        exact = _solver_scores(pos, _scaled(MEISTER_SOLVER_NODES, geo.width))
    if exact is None:
        budget = MEISTER_NODES if pos.moves < MEISTER_SOLVE_FROM * geo.size else MEISTER_FALLBACK_NODES
        scores = HeuristicSearch(geo, _scaled(budget, geo.width)).root_scores(pos, MEISTER_DEPTH)
        return _pick_best(scores, rng)
    if rng.random() < MEISTER_SECOND_BEST:
        values = sorted(set(exact.values()), reverse=True)
        losing_now = -((geo.size - pos.moves) // 2)  # the opponent wins with its next stone
        if len(values) > 1 and values[1] > losing_now:
            return rng.choice(sorted(c for c, v in exact.items() if v == values[1]))
    return _pick_best(exact, rng)


_CHOOSERS = {"neuling": _neuling, "normal": _normal, "stark": _stark, "meister": _meister}


# -- hints and analysis ---------------------------------------------------------------------


def hint(game: Game) -> str:
    """The best column for the side to move: exact when the solver can afford it.

    Deterministic and without randomness (ties go to the most central column).
    """
    if game.is_over():
        raise ValueError("the game is over")
    if game.options().get("popout"):
        return _popout_move(game, "meister", None)
    pos = _position(game)
    exact = None
    if pos.moves >= MEISTER_SOLVE_FROM * pos.geo.size:
        exact = _solver_scores(pos, HINT_SOLVER_NODES)
    scores = exact if exact is not None else HeuristicSearch(pos.geo, MEISTER_NODES).root_scores(
        pos, MEISTER_DEPTH
    )
    top = max(scores.values())
    col = next(c for c in pos.geo.order if scores.get(c) == top)
    return str(col + 1)


@dataclass(frozen=True)
class MoveReview:
    """One move of a finished round, judged by the exact solver.

    ``before``: the exact score (Pons' convention) the mover had before the move, i.e. with
    the best move; ``after``: the score the move actually kept, from the mover's side.
    ``None`` where the solver's node budget was not enough (early in the game).
    ``decisive``: this is the move after which the result of the round was fixed (the last
    move that changed the game-theoretic result).
    """

    ply: int
    move: str
    before: int | None
    after: int | None
    decisive: bool = False
    est_before: int | None = None
    """Where ``before`` is unknown: the heuristic search's score of the best move
    (evaluation units; ``>= WIN // 2`` a win it found, ``<= -WIN // 2`` a loss)."""
    est_after: int | None = None
    """Where ``after`` is unknown: the heuristic search's score of the move played."""

    @property
    def estimated(self) -> bool:
        """True if the verdict rests on the heuristic search, not only on the solver."""
        return (self.before is None and self.est_before is not None) or (
            self.after is None and self.est_after is not None
        )

    @property
    def mistake(self) -> bool | None:
        """True if the move lost value (a slower win, a faster loss, or a worse result).

        Exact when the solver knew both sides; otherwise estimated: the result class (win,
        open, loss) got worse, or the search scores it ``ESTIMATE_MARGIN`` below the best.
        """
        if self.before is not None and self.after is not None:
            return self.after < self.before
        b = _result_class(self.before, self.est_before)
        a = _result_class(self.after, self.est_after)
        if a is None or b is None:
            return None
        if a != b:
            return a < b
        return (
            a == 0
            and self.before is None
            and self.after is None
            and self.est_before is not None
            and self.est_after is not None
            and self.est_before - self.est_after >= ESTIMATE_MARGIN
        )


def _result_class(exact: int | None, estimate: int | None) -> int | None:
    """+1 won, -1 lost, 0 open: from the exact score, else from a search estimate."""
    if exact is not None:
        return _sign(exact)
    if estimate is None:
        return None
    if estimate >= WIN // 2:
        return 1
    if estimate <= -WIN // 2:
        return -1
    return 0


def _sign(v: int) -> int:
    return (v > 0) - (v < 0)


def analyze_round(moves: list[str], width: int = 7, height: int = 6,
                  node_limit: int = ANALYSIS_NODES,
                  solve_from: float = ANALYSIS_FROM,
                  estimate_nodes: int = ESTIMATE_NODES) -> list[MoveReview]:
    """Exact review of a (finished or running) round given as column texts ``"1"``..``"W"``.

    Raises ``ValueError`` for an invalid sequence.  Positions whose exact value needs more
    than ``node_limit`` nodes, or with less than ``solve_from`` of the board filled, get ``None``
(typically the first 10-16 moves on 7x6) and, instead, an estimate from the strongest
heuristic search (``est_before``/``est_after``, Meister's depth, ``estimate_nodes``).  The
    decisive move is the last one whose result (win/draw/loss) differs before and after;
    if no move changed the result and every value is known, the result was fixed from the
    start and no move is marked.  If the change may hide among unknown values, none is marked.
    """
    geo = geometry(width, height)
    columns = [str(c + 1) for c in range(width)]
    check = Position(geo)
    for i, text in enumerate(moves, start=1):  # validate everything before any search
        if text not in columns:
            raise ValueError(f"move {i}: {text!r} is not a column (1-{width})")
        if check.moves == geo.size or (i > 1 and geo.has_four(check.current ^ check.mask)):
            raise ValueError(f"move {i}: the round is already over")
        if not check.can_play(int(text) - 1):
            raise ValueError(f"move {i}: column {text} is full")
        check.play_column(int(text) - 1)

    pos = Position(geo)
    solver = Solver(width, height, node_limit=node_limit)
    rows: list[MoveReview] = []
    for i, text in enumerate(moves, start=1):
        col = int(text) - 1
        before: int | None = None
        after: int | None = None
        if pos.moves >= solve_from * geo.size:
            try:
                scores = solver.analyze(pos)
                before = max(v for v in scores if v is not None)
                after = scores[col]
            except SearchLimit:
                pass
        est_before: int | None = None
        est_after: int | None = None
        if before is None and estimate_nodes > 0:
            scores_h = HeuristicSearch(geo, estimate_nodes).root_scores(pos, MEISTER_DEPTH, exact_all=True)
            est_before = max(scores_h.values())
            est_after = scores_h.get(col)
            if est_after is None and not pos.is_winning_move(col):
                # the search left the column out (it loses at once, or a win was missed):
                # judge the position after it from the opponent's side
                child = pos.copy()
                child.play_column(col)
                if child.moves < geo.size:
                    reply = HeuristicSearch(geo, estimate_nodes).root_scores(child, MEISTER_DEPTH)
                    est_after = -max(reply.values())
        wins = pos.is_winning_move(col)
        pos.play_column(col)
        over = wins or pos.moves == geo.size
        if over:
            after = (geo.size + 2 - pos.moves) // 2 if wins else 0
        elif after is None and pos.moves >= solve_from * geo.size:
            try:
                after = -solver.solve(pos)
            except SearchLimit:
                pass
        if after is not None:
            est_after = None
        rows.append(MoveReview(i, text, before, after, False, est_before, est_after))
    return _mark_decisive(rows)


def _mark_decisive(rows: list[MoveReview]) -> list[MoveReview]:
    """Mark the last move whose before/after results differ (see ``analyze_round``)."""
    for k in range(len(rows) - 1, -1, -1):
        r = rows[k]
        if r.before is None or r.after is None:
            return rows  # the change, if any, may hide among the unknown values
        if _sign(r.before) != _sign(r.after):
            return rows[:k] + [MoveReview(r.ply, r.move, r.before, r.after, True, r.est_before, r.est_after)] + rows[k + 1:]
    return rows


# -- Pop Out ---------------------------------------------------------------------------------

POPOUT_NOISE = {"neuling": 400, "normal": 60, "stark": 10, "meister": 0}


class _PopOutSearch:
    """Alpha-beta through the game interface (pops make bitboard tricks awkward)."""

    def __init__(self, game: Connect4, node_limit: int) -> None:
        self.game = game
        self.geo = geometry(game.width, game.height)
        self.eval = Evaluator(self.geo)
        self.node_limit = node_limit
        self.nodes = 0

    def leaf(self) -> int:
        g = self.game
        pos = _position(g)
        return self.eval.evaluate(pos.current, pos.mask, pos.moves, pos.winning_cells(),
                                  pos.opponent_winning_cells())

    def search(self, depth: int, ply: int, alpha: int, beta: int) -> int:
        self.nodes += 1
        if self.nodes >= self.node_limit:
            raise SearchLimit("node limit reached")
        g = self.game
        if g.is_over():
            won = g.winners()
            if not won:
                return 0
            # The player who just moved is not necessarily the winner in Pop Out.
            side = (g.first + len(g.history())) % 2
            return WIN - ply if won[0] == side else -(WIN - ply)
        if depth == 0:
            return self.leaf()
        best = -INF
        for move in g.legal_moves():
            g.push(move)
            try:
                v = -self.search(depth - 1, ply + 1, -beta, -alpha)
            finally:
                g.pop()
            if v > best:
                best = v
                if v > alpha:
                    alpha = v
                    if alpha >= beta:
                        break
        return best


def _popout_move(game: Game, level: str, rng: random.Random | None) -> str:
    search = _PopOutSearch(_connect4(game).copy(), POPOUT_NODES)
    g = search.game
    moves = g.legal_moves()
    scores = {m: 0 for m in moves}
    for depth in range(1, POPOUT_DEPTH[level] + 1):
        try:
            current: dict[str, int] = {}
            for m in moves:
                g.push(m)
                try:
                    current[m] = -search.search(depth - 1, 1, -INF, INF)
                finally:
                    g.pop()
        except SearchLimit:
            break
        scores = current
    if rng is None:
        top = max(scores.values())
        return next(m for m in moves if scores[m] == top)
    noise = POPOUT_NOISE[level]
    noisy = {m: v + (rng.randint(-noise, noise) if abs(v) < WIN // 2 else 0) for m, v in scores.items()}
    top = max(noisy.values())
    return rng.choice([m for m in moves if noisy[m] == top])
