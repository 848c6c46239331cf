"""The paranoid alpha-beta search against brute force, on small synthetic game trees.

These tests need no chess: a ``TreeBoard`` is a seeded random tree with seats that move
in rotation, some moves marked as captures.  Alpha-beta must return exactly the value of
plain paranoid minimax (with the same quiescence rule), whatever the move order.
"""

from __future__ import annotations

import random

import pytest

from p2p.ai.chess4_search import INFINITY, Limits, ParanoidSearch


class TreeBoard:
    """A random game tree: node ids are paths, values are seeded from the path."""

    def __init__(self, seed: int, seats: int = 4, width: int = 4, height: int = 7) -> None:
        self.seed = seed
        self.seats = seats
        self.width = width
        self.height = height
        self.path: list[int] = []

    def _rng(self, path: tuple[int, ...]) -> random.Random:
        return random.Random(f"{self.seed}:{path}")

    def side(self) -> int | None:
        if len(self.path) >= self.height:
            return None
        return len(self.path) % self.seats

    def moves(self) -> list[int]:
        n = 1 + self._rng(tuple(self.path)).randrange(self.width)
        return list(range(n))

    def captures(self) -> list[int]:
        return [m for m in self.moves() if self.gain(m)]

    def gain(self, move: int) -> int:
        return (self._rng((*self.path, move, -1)).randrange(3) == 0) * (move + 1)

    def mover_value(self, move: int) -> int:
        return move % 3

    def make(self, move: int) -> None:
        self.path.append(move)

    def unmake(self) -> None:
        self.path.pop()

    def evaluate(self, root: int) -> int:
        return self._rng((*self.path, -2)).randrange(-50, 51) + root


def brute(board: TreeBoard, root: int, depth: int, qdepth: int) -> int:
    """Plain paranoid minimax with the same stand-pat quiescence, no pruning."""
    side = board.side()
    if side is None:
        return board.evaluate(root)
    if depth <= 0:
        return brute_q(board, root, qdepth)
    values = []
    for m in board.moves():
        board.make(m)
        values.append(brute(board, root, depth - 1, qdepth))
        board.unmake()
    return max(values) if side == root else min(values)


def brute_q(board: TreeBoard, root: int, qdepth: int) -> int:
    stand = board.evaluate(root)
    side = board.side()
    if side is None or qdepth <= 0:
        return stand
    values = [stand]
    for m in board.captures():
        board.make(m)
        values.append(brute_q(board, root, qdepth - 1))
        board.unmake()
    return max(values) if side == root else min(values)


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("depth", [1, 2, 3, 4])
def test_alphabeta_equals_brute_force(seed: int, depth: int) -> None:
    board = TreeBoard(seed)
    search = ParanoidSearch(board, 0, Limits(depth=depth, nodes=10**9, quiescence=2))
    result = search.run(board.moves())
    expected = max(
        _child(board, m, lambda: brute(board, 0, depth - 1, 2)) for m in board.moves()
    )
    assert result.value == expected
    assert result.depth == depth
    assert board.path == []  # make/unmake balanced
    # The chosen move really has the best value.
    assert _child(board, result.move, lambda: brute(board, 0, depth - 1, 2)) == expected


def _child(board: TreeBoard, move: int, f) -> int:
    board.make(move)
    try:
        return f()
    finally:
        board.unmake()


def test_ties_go_to_the_earliest_root_move() -> None:
    board = TreeBoard(3, width=1, height=1)  # one move per node, then the tree ends

    class Flat(TreeBoard):
        def moves(self) -> list[int]:
            return [0, 1, 2] if not self.path else []

        def evaluate(self, root: int) -> int:
            return 7

    flat = Flat(0, height=1)
    for order in ([0, 1, 2], [2, 0, 1], [1, 2, 0]):
        assert ParanoidSearch(flat, 0, Limits(depth=2, nodes=100)).run(order).move == order[0]
    assert board.side() == 0


def test_node_budget_keeps_the_last_completed_depth() -> None:
    board = TreeBoard(5, width=5, height=9)
    full = ParanoidSearch(board, 0, Limits(depth=5, nodes=10**9, quiescence=0)).run(board.moves())
    small = ParanoidSearch(board, 0, Limits(depth=5, nodes=60, quiescence=0)).run(board.moves())
    assert full.depth == 5
    assert 1 <= small.depth < 5
    d = small.depth
    again = ParanoidSearch(board, 0, Limits(depth=d, nodes=10**9, quiescence=0)).run(board.moves())
    assert (small.move, small.value) == (again.move, again.value)
    assert board.path == []
    assert -INFINITY < small.value < INFINITY
