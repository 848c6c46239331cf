"""Computer players for four-player chess (free-for-all).

Levels, weakest first:

* ``einfach`` - one ply, greedy: every legal move is played on a scratch board and
  judged by the static evaluation (points, material, pieces left hanging), plus seeded
  noise of up to about a pawn and a half.  It grabs loose material and usually sees
  that a move leaves a piece hanging, but it never looks at an answer.
* ``normal`` - paranoid alpha-beta (``p2p.ai.chess4_search``) three plies deep (its
  own move and the next two opponents' replies), then quiescence: captures, plus quiet
  checks against it by the opponent on move at the horizon.  With the evaluation's
  hanging-piece term that also covers the third opponent's captures and direct mates.
  It takes undefended pieces, does not leave its queen hanging and plays a mate in one.

Experimental, not offered to players (``EXPERIMENTAL_LEVELS``; ``analyse`` and
``choose_move`` of this module accept it, ``p2p.ai.choose_move`` does not):

* ``stark`` - the same search a full round deep (four plies: every opponent answers
  once) when its node budget allows, else three plies plus whatever part of the fourth
  it finished.  About seven times Normal's time; in eight match games against Normal it
  scored slightly more points but did not finish first more often, so it is not shown
  to be clearly stronger (``docs/chess4_ai.md``) and stays out of ``LEVELS``.

The move is a pure function of the position (with its history), the level and the
seed.  Chance enters only through SHA-256 of (level, seed, position, move text): it
orders the root moves (ties go to the earlier one) and makes Einfach's noise.  No
clock, no ``hash()``, not even the ``random`` module (whose algorithms may change
between Python versions): every peer of an online round recomputes the admin's
computer move bit for bit and can check it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from p2p.ai.chess4_board import SearchAdapter
from p2p.ai.chess4_search import Limits, ParanoidSearch
from p2p.games.base import Game

LEVELS: tuple[str, ...] = ("einfach", "normal")
"""The levels players can choose, weakest first."""

HINT_LEVEL = "einfach"
"""The level ``/hint`` asks (the fastest: a hint must come at once)."""

EXPERIMENTAL_LEVELS: tuple[str, ...] = ("stark",)
"""Levels for benchmarks and tests only (not clearly stronger yet; see the module docstring)."""

SEARCH_LIMITS: dict[str, Limits] = {
    "normal": Limits(depth=3, nodes=15_000, quiescence=3),
    "stark": Limits(depth=4, nodes=40_000, quiescence=3),
}
"""Counted limits of the searching levels (plies, nodes, capture plies)."""

EINFACH_NOISE = 150
"""Einfach's seeded noise: uniform in [-EINFACH_NOISE, +EINFACH_NOISE] centipawns."""


@dataclass(frozen=True)
class Analysis:
    """A computer move and how it was found (for benchmarks and the curious)."""

    move: str
    value: int
    depth: int
    """Deepest iteration used (1 for Einfach)."""
    nodes: int
    complete: bool = True
    """False if that iteration was cut short by the node budget (see ``ParanoidSearch.run``)."""


def _decision_digest(game: Game, level: str, seed: bytes) -> bytes:
    """SHA-256 of everything one decision may depend on besides the moves themselves."""
    return hashlib.sha256(
        b"p2p/chess4-ai\x00" + level.encode() + b"\x00" + seed + b"\x00" + game.state_hash().encode()
    ).digest()


def _draw(digest: bytes, move_text: str) -> int:
    """A 64-bit number for one move of one decision, uniform and reproducible anywhere."""
    return int.from_bytes(hashlib.sha256(digest + move_text.encode()).digest()[:8], "big")


def analyse(game: Game, level: str, seed: bytes = b"") -> Analysis:
    """The computer's move for the seat to move, with value, depth and node count.

    ``game`` is not changed (the search works on a copy).
    """
    if level not in LEVELS + EXPERIMENTAL_LEVELS:
        raise ValueError(f"unknown level {level!r} (known: {', '.join(LEVELS)})")
    if game.is_over():
        raise ValueError("the game is over")
    root = game.to_move()
    assert root is not None
    board = SearchAdapter(game)  # works on its own copy of the position
    digest = _decision_digest(game, level, seed)
    moves = board.moves()
    if not moves:
        raise ValueError("no legal move")
    if len(moves) == 1:  # forced: nothing to think about
        return Analysis(board.text(moves[0]), 0, 0, 0)
    draws = {m: _draw(digest, board.text(m)) for m in moves}
    if level == "einfach":
        return _greedy(board, root, moves, draws)
    moves.sort(key=draws.__getitem__)
    result = ParanoidSearch(board, root, SEARCH_LIMITS[level]).run(moves)
    return Analysis(board.text(result.move), result.value, result.depth, result.nodes, result.complete)


def choose_move(game: Game, level: str, seed: bytes = b"") -> str:
    """The computer's move (canonical text) for the seat to move in ``game``."""
    return analyse(game, level, seed).move


def _greedy(board: SearchAdapter, root: int, moves: list[int], draws: dict[int, int]) -> Analysis:
    """One ply: the move whose resulting position evaluates best, plus seeded noise.

    Ties go to the earlier move in the engine's canonical order."""
    best_move = moves[0]
    best = None
    for move in moves:
        board.make(move)
        try:
            value = board.evaluate(root)
        finally:
            board.unmake()
        value += draws[move] % (2 * EINFACH_NOISE + 1) - EINFACH_NOISE
        if best is None or value > best:
            best, best_move = value, move
    assert best is not None
    return Analysis(board.text(best_move), best, 1, len(moves))
