"""The four-player chess computer player (``p2p.ai.chess4_ai``) and its search.

Positions are built from FEN4 (``Chess4.from_fen4``) with only the pieces that matter.
Every Red king below has an escape square (i2 is empty or h2 is free) unless a test
says otherwise, so that no back-rank mate hides behind the point of the test.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from chess4_fen import fen

from p2p import ai
from p2p.ai import chess4_ai
from p2p.ai.chess4_board import SearchAdapter
from p2p.ai.chess4_eval import POINTS, cheapest_attacker
from p2p.ai.chess4_search import INFINITY, Limits, ParanoidSearch
from p2p.games import create_game
from p2p.games.chess4 import Chess4
from p2p.games.chess4.board import DQUEEN, KING, QUEEN, RED
from p2p.games.chess4.movegen import CASTLE, EP, PROMO, attacked, attackers

KINGS_AND_SHELTER = {
    "h1": "rK", "g2": "rP", "h2": "rP", "i3": "rP",
    "a7": "bK", "b6": "bP", "b7": "bP", "b8": "bP",
    "g14": "yK", "f13": "yP", "g13": "yP", "h13": "yP",
    "n8": "gK", "m7": "gP", "m8": "gP", "m9": "gP",
}  # fmt: skip


def position(**extra: str) -> Chess4:
    """Red to move: the four kings with shelter, plus ``extra`` pieces (square=piece)."""
    return Chess4.from_fen4(fen({**KINGS_AND_SHELTER, **extra}))


SEEDS = [b"", b"1", b"seed-2", b"\x00\xff"]


# -- Normal: the three promises ------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_normal_takes_a_free_piece(seed: bytes) -> None:
    # Blue's bishop on d7 is attacked by Red's knight and rook and defended by nobody;
    # Green's rook on k4 is also attackable but a Green pawn defends it.
    game = position(e5="rN", d4="rR", d7="bB", k4="gR", l5="gP")
    move = ai.choose_move(game, "normal", seed)
    assert move in ("d4-d7", "e5-d7")
    before = game.scores()[RED]
    game.push(move)
    assert game.scores()[RED] == before + 5


@pytest.mark.parametrize("seed", SEEDS)
def test_normal_moves_its_attacked_queen_to_safety(seed: bytes) -> None:
    # Green's knight on g7 attacks Red's queen on e6; Green moves last in the round, so
    # the threat is three plies away.  A free Blue pawn on j4 is the distraction.
    game = position(e6="rQ", g7="gN", d4="rR", j4="bP")
    game.push(ai.choose_move(game, "normal", seed))
    pos = game.position
    queen = next(sq for sq in pos.plist[RED] if pos.board[sq] == (RED << 3) | QUEEN)
    assert not attacked(pos.board, queen, pos.live & ~(1 << RED))


@pytest.mark.parametrize("seed", SEEDS)
def test_normal_does_not_take_a_poisoned_pawn(seed: bytes) -> None:
    # Qe6xe11 wins a pawn and loses the queen to Yellow's f12 pawn.
    game = position(e6="rQ", e11="yP", f12="yP")
    assert ai.choose_move(game, "normal", seed) != "e6-e11"


@pytest.mark.parametrize("level", ["normal", "stark"])
@pytest.mark.parametrize("seed", SEEDS[:2])
def test_searching_levels_mate_in_one(level: str, seed: bytes) -> None:
    # "stark" is experimental (not in LEVELS): it is reached through the module itself.
    # Rd4-a4 mates Blue (king a7 walled in by its own queen and pawns): +20 and Blue is out.
    # Taking Yellow's loose rook on d7 (+5) is the lesser alternative.
    game = position(a8="bQ", d4="rR", e5="rN", d7="yR")
    move = chess4_ai.choose_move(game, level, seed)
    assert move == "d4-a4"
    game.push(move)
    assert game.scores()[RED] == 20
    assert game.eliminated() == (1,)


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_normal_captures_an_exposed_king(seed: bytes) -> None:
    # Yellow's king stands in the line of Red's bishop (d11-e12-f13-g14): taking it is +20
    # and puts Yellow out at once (design decision 1).
    pieces = {**KINGS_AND_SHELTER, "d11": "rB", "d7": "bR", "e5": "rN"}
    del pieces["f13"]
    game = Chess4.from_fen4(fen(pieces))
    move = ai.choose_move(game, "normal", seed)
    assert move == "d11-g14"
    game.push(move)
    assert game.scores()[RED] == 20 and game.eliminated() == (2,)


@pytest.mark.parametrize("level", ["normal", "stark"])
def test_searching_levels_see_the_last_opponents_mate_threat_einfach_does_not(level: str) -> None:
    # Red's king has no escape square here.  Taking the free bishop with the rook lets
    # Green's rook reach k1 with mate after Blue's and Yellow's moves (ply 4).  Stark
    # searches the full round; Normal searches three plies and then lets the opponent on
    # move try quiet checks against it.  Both remove the Green rook instead (Rd4xk4,
    # pawn takes back); Einfach grabs the bishop.
    shelter = dict(KINGS_AND_SHELTER)
    del shelter["i3"]
    shelter["i2"] = "rP"
    game = Chess4.from_fen4(fen({**shelter, "e5": "rN", "d4": "rR", "d7": "bB", "k4": "gR", "l5": "gP"}))
    assert chess4_ai.choose_move(game, level, b"") == "d4-k4"
    assert ai.choose_move(game, "einfach", b"") in ("d4-d7", "e5-d7")


def test_cheapest_attacker_agrees_with_the_engine() -> None:
    # The evaluation's own attack scan (value of the cheapest attacker) against the
    # engine's list of attackers, for every piece and every "all seats but one" mask.
    game = create_game("chess4", {})
    cases = 0
    for ply in range(140):
        if game.is_over():
            break
        if ply % 7 == 0:
            pos = game.position
            for sq in sorted(sq for seat in range(4) for sq in pos.plist[seat]):
                for me in range(4):
                    mask = pos.live & ~(1 << me)
                    kinds = [pos.board[a] & 7 for a in attackers(pos.board, sq, mask)]
                    values = [9 if k == DQUEEN else POINTS[k] for k in kinds]
                    assert cheapest_attacker(pos.board, sq, mask) == min(values, default=0)
                    cases += 1
        game.push(ai.choose_move(game, "einfach", bytes([ply, 1])))
    assert cases > 1000


def test_horizon_checks_are_exactly_the_direct_quiet_checks() -> None:
    # SearchAdapter.checks() (geometry) against the engine's own attack test, on every
    # position of a seeded game: quiet, non-special moves after which the moved piece
    # attacks the king.
    game = create_game("chess4", {})
    found = 0
    for ply in range(120):
        if game.is_over():
            break
        adapter = SearchAdapter(game)
        pos = adapter.pos
        for seat in range(4):
            if seat == pos.turn or not pos.live >> seat & 1:
                continue
            want = set()
            for m in pos.gen_moves():
                fr, to = m & 511, (m >> 9) & 511
                piece = pos.board[fr]
                if pos.board[to] or m >> 18 & (CASTLE | EP | PROMO) or piece & 7 == KING:
                    continue
                after = pos.board[:]
                after[fr], after[to] = 0, piece
                if to in attackers(after, pos.kings[seat], 1 << pos.turn):
                    want.add(m)
            assert set(adapter.checks(seat)) == want
            found += len(want)
        game.push(ai.choose_move(game, "einfach", bytes([ply])))
    assert found > 20


# -- determinism -----------------------------------------------------------------------------


def _opening(plies: int, seed: bytes = b"opening") -> Chess4:
    game = create_game("chess4", {})
    for i in range(plies):
        game.push(ai.choose_move(game, "einfach", seed + bytes([i])))
    assert isinstance(game, Chess4)
    return game


ALL_LEVELS = chess4_ai.LEVELS + chess4_ai.EXPERIMENTAL_LEVELS


@pytest.mark.parametrize("level", ALL_LEVELS)
def test_same_position_and_seed_give_the_same_move(level: str) -> None:
    # Stark is slow in a full opening position; its determinism is checked on a sparse one.
    game = _opening(12) if level != "stark" else position(e6="rQ", g7="gN", d4="rR", j4="bP")
    before = (game.state_hash(), game.history(), game.scores())
    first = chess4_ai.choose_move(game, level, b"round-7")
    assert (game.state_hash(), game.history(), game.scores()) == before  # game untouched
    assert chess4_ai.choose_move(game.copy(), level, b"round-7") == first
    replay = Chess4.create(game.options())
    for entry in game.history():
        replay.apply(entry)
    assert chess4_ai.choose_move(replay, level, b"round-7") == first
    assert first in game.legal_moves()


_SUBPROCESS = """
import sys
from p2p import ai
from p2p.games import create_game
game = create_game("chess4", {})
for entry in sys.argv[1].split():
    game.apply(entry)
print(ai.choose_move(game, "normal", b"peer-check"), ai.choose_move(game, "einfach", b"peer-check"))
"""


def test_moves_do_not_depend_on_the_interpreter_hash_seed() -> None:
    # Another peer is another process: string hashing, set layout and dict order may differ.
    game = _opening(16)
    here = f"{ai.choose_move(game, 'normal', b'peer-check')} {ai.choose_move(game, 'einfach', b'peer-check')}"
    root = Path(__file__).resolve().parent.parent
    for hash_seed in ("1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(root)}
        out = subprocess.run(
            [sys.executable, "-c", _SUBPROCESS, " ".join(game.history())],
            capture_output=True, text=True, env=env, check=True, cwd=root,
        )
        assert out.stdout.strip() == here


@pytest.mark.parametrize("level", ALL_LEVELS)
def test_a_forced_move_is_played_at_once(level: str) -> None:
    # Yellow's rook on d1 checks Red's king on h1 along the first rank; g1 and i1 are on
    # the rook's line, g2 and h2 hold Red's own pawns, nothing can block: only Kh1-i2.
    game = position(d1="yR")
    assert game.legal_moves() == ["h1-i2"]
    info = chess4_ai.analyse(game, level, b"")
    assert (info.move, info.nodes) == ("h1-i2", 0)


def test_einfach_depends_on_the_seed() -> None:
    game = create_game("chess4", {})
    moves = {ai.choose_move(game, "einfach", bytes([i])) for i in range(12)}
    assert len(moves) >= 3
    assert moves <= set(game.legal_moves())


def test_bad_level_and_finished_game_are_clear_errors() -> None:
    game = create_game("chess4", {})
    with pytest.raises(ValueError, match="unknown level"):
        ai.choose_move(game, "grandmaster", b"")
    with pytest.raises(ValueError, match="unknown level"):
        chess4_ai.choose_move(game, "grandmaster", b"")
    finished = create_game("chess4", {"move_limit": 1})
    finished.push(finished.legal_moves()[0])
    assert finished.is_over()
    with pytest.raises(ValueError, match="over"):
        ai.choose_move(finished, "normal", b"")
    assert ai.levels("chess4") == chess4_ai.LEVELS == ("einfach", "normal")
    with pytest.raises(ValueError, match="unknown level"):
        ai.choose_move(game, "stark", b"")  # experimental: not offered through the entry point


# -- whole games -----------------------------------------------------------------------------


def test_four_einfach_players_play_a_game_to_its_natural_end() -> None:
    game = create_game("chess4", {})
    while not game.is_over():
        game.push(ai.choose_move(game, "einfach", b"full-game"))
    assert game.is_over() and game.winners()
    assert len(game.history()) > 20
    # The record replays to the same final position.
    replay = create_game("chess4", {})
    for entry in game.history():
        replay.apply(entry)
    assert replay.state_hash() == game.state_hash() and replay.scores() == game.scores()


def test_mixed_levels_play_within_a_move_limit() -> None:
    game = create_game("chess4", {"move_limit": 24})
    levels = ("normal", "einfach", "normal", "einfach")
    while not game.is_over():
        seat = game.to_move()
        assert seat is not None
        move = ai.choose_move(game, levels[seat], b"mixed")
        assert move in game.legal_moves()
        game.push(move)
    assert len(game.history()) <= 24



# -- the search itself, on synthetic trees (brute force as the oracle) ----------------------


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

    def checks(self, seat: int) -> list[int]:
        return [m for m in self.moves() if not self.gain(m) and (m + seat) % 2]

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


def brute_q(board: TreeBoard, root: int, qdepth: int, first: bool = True) -> int:
    stand = board.evaluate(root)
    side = board.side()
    if side is None or qdepth <= 0:
        return stand
    values = [stand]
    moves = board.captures()
    if first and side != root:
        moves += board.checks(root)
    for m in moves:
        board.make(m)
        values.append(brute_q(board, root, qdepth - 1, False))
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
    cut = partial = 0
    for seed, budget in [(s, b) for s in range(30) for b in (40, 90, 200)]:
        board = TreeBoard(seed, width=5, height=9)
        full = ParanoidSearch(board, 0, Limits(depth=5, nodes=10**9, quiescence=0)).run(board.moves())
        assert full.depth == 5 and full.complete
        small = ParanoidSearch(board, 0, Limits(depth=5, nodes=budget, quiescence=0)).run(board.moves())
        cut += small.depth < 5 or not small.complete
        partial += not small.complete
        assert board.path == []
        assert -INFINITY < small.value < INFINITY
        d = small.depth
        exact = _child(board, small.move, lambda b=board, d=d: brute(b, 0, d - 1, 0))
        if small.complete:
            again = ParanoidSearch(board, 0, Limits(depth=d, nodes=10**9, quiescence=0)).run(board.moves())
            assert (small.move, small.value) == (again.move, again.value)
        else:
            # A move taken from an unfinished iteration beat the previous best at that depth.
            before = ParanoidSearch(board, 0, Limits(depth=d - 1, nodes=10**9, quiescence=0)).run(board.moves())
            assert exact >= small.value
            assert exact > _child(board, before.move, lambda b=board, d=d: brute(b, 0, d - 1, 0))
    assert cut >= 60 and partial >= 3  # the budget really bit, and partial iterations occurred
