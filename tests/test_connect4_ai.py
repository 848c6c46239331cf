"""Computer players of Vier in einer Reihe: tactics per level, determinism, hint, analysis."""

from __future__ import annotations

from pathlib import Path

import pytest

from p2p.ai import choose_move
from p2p.ai.connect4_ai import LEVELS, analyze_round, hint
from p2p.ai.connect4_solver import analyze
from p2p.games import create_game
from p2p.games.base import Game

DATA = Path(__file__).resolve().parent / "data" / "connect4_testsets"


def game_after(moves: str, **options: object) -> Game:
    game = create_game("connect4", options)
    for ch in moves:
        game.push(ch)
    return game


WIN_NOW = "273747"
"""Red (to move) has 2-3-4 on the bottom row (wins on 1 or 5); Yellow threatens 7 too."""
BLOCK_STRAIGHT = "17273"
"""Yellow to move; Red has 1-2-3 on the bottom row and wins on 4 unless Yellow blocks."""
BLOCK_VERTICAL = "41424"
"""Yellow to move; Red has three stacked in column 4."""
DIAGONAL_THREAT = "65617335663744"
"""The side to move faces exactly one threat, completing a diagonal only (found by a
random search for such positions; ``test_positions_are_what_the_tests_claim`` checks it)."""


def opponent_threats(moves: str) -> list[str]:
    """Columns where the side not to move would win if it moved again."""
    g = game_after(moves)
    out = []
    for col in g.legal_moves():
        for filler in g.legal_moves():
            if filler != col:
                probe = game_after(moves)
                probe.push(filler)
                if probe.is_over() or col not in probe.legal_moves():
                    continue
                probe.push(col)
                if probe.winners() == (1 - g.to_move(),):
                    out.append(col)
                break
    return out


def test_positions_are_what_the_tests_claim() -> None:
    assert game_after(WIN_NOW).to_move() == 0
    assert opponent_threats(BLOCK_STRAIGHT) == ["4"]
    assert opponent_threats(BLOCK_VERTICAL) == ["4"]
    assert len(opponent_threats(DIAGONAL_THREAT)) == 1


@pytest.mark.parametrize("level", LEVELS)
def test_every_level_takes_an_immediate_win(level: str) -> None:
    for seed in (b"a", b"b", b"c"):
        g = game_after(WIN_NOW)
        move = choose_move(g, level, seed)
        g.push(move)
        assert g.winners() == (0,), (level, seed, move)


@pytest.mark.parametrize("level", ["normal", "stark", "meister"])
@pytest.mark.parametrize("position", [BLOCK_STRAIGHT, BLOCK_VERTICAL])
def test_normal_and_up_block_straight_threats(level: str, position: str) -> None:
    for seed in (b"1", b"2", b"3", b"4"):
        assert choose_move(game_after(position), level, seed) == "4"


@pytest.mark.parametrize("level", ["stark", "meister"])
def test_stark_and_up_block_diagonal_threats(level: str) -> None:
    (threat,) = opponent_threats(DIAGONAL_THREAT)
    for seed in (b"1", b"2", b"3"):
        assert choose_move(game_after(DIAGONAL_THREAT), level, seed) == threat


def test_normal_sometimes_overlooks_a_diagonal() -> None:
    (threat,) = opponent_threats(DIAGONAL_THREAT)
    picks = [choose_move(game_after(DIAGONAL_THREAT), "normal", str(i).encode()) for i in range(40)]
    blocked = picks.count(threat)
    assert 20 <= blocked < 40


def test_neuling_blocks_only_sometimes() -> None:
    moves = [choose_move(game_after(BLOCK_STRAIGHT), "neuling", str(i).encode()) for i in range(40)]
    assert 0 < moves.count("4") < 40


@pytest.mark.parametrize("level", LEVELS)
def test_deterministic_per_seed_and_leaves_the_game_alone(level: str) -> None:
    g = game_after("4433")
    before = g.encode()
    first = [choose_move(g, level, s) for s in (b"s1", b"s2")]
    again = [choose_move(g, level, s) for s in (b"s1", b"s2")]
    assert first == again
    assert g.encode() == before
    assert all(m in g.legal_moves() for m in first)


def test_neuling_varies_with_the_seed() -> None:
    g = create_game("connect4")
    assert len({choose_move(g, "neuling", str(i).encode()) for i in range(30)}) >= 3


def _testset(name: str, n: int) -> list[tuple[str, int]]:
    lines = (DATA / name).read_text().splitlines()[:n]
    return [(p, int(s)) for p, s in (ln.split() for ln in lines)]


def test_meister_plays_exactly_where_the_solver_answers() -> None:
    best = 0
    cases = _testset("Test_L3_R1", 30)
    for i, (pos, _) in enumerate(cases):
        scores = analyze(pos)
        move = choose_move(game_after(pos), "meister", f"m{i}".encode())
        chosen = scores[int(move) - 1]
        assert chosen is not None
        top = max(s for s in scores if s is not None)
        best += chosen == top
        # Never a move that lets the opponent win at once unless every move does.
        losing_now = -((42 - len(pos)) // 2)
        assert chosen > losing_now or top == losing_now
    assert best >= 24  # at most a few deliberate second-best moves


def test_hint_is_the_best_column_where_solvable() -> None:
    for pos, _ in _testset("Test_L2_R1", 5):
        scores = analyze(pos)
        assert scores[int(hint(game_after(pos))) - 1] == max(s for s in scores if s is not None)


def test_analyze_round_on_a_small_board() -> None:
    # 5 x 4: every position is solvable at once, so every value is known.
    g = create_game("connect4", {"width": 5, "height": 4})
    levels = ["neuling", "stark"]
    while not g.is_over():
        g.push(choose_move(g, levels[g.to_move()], b"round"))
    moves = g.history()
    review = analyze_round(moves, 5, 4, node_limit=300_000, solve_from=0.0)
    assert [r.move for r in review] == moves
    assert all(r.before is not None and r.after is not None for r in review)
    assert all(r.after <= r.before for r in review)
    decisive = [r for r in review if r.decisive]
    assert len(decisive) <= 1
    if decisive:
        d = decisive[0]
        assert (d.before > 0) != (d.after > 0) or (d.before == 0) != (d.after == 0)
        # After the decisive move no move changes the result any more.
        later = [r for r in review if r.ply > d.ply]
        assert all((r.before > 0) == (r.after > 0) and (r.before < 0) == (r.after < 0) for r in later)
    if g.winners():
        last = review[-1]
        assert last.after == (5 * 4 + 1 - (len(moves) - 1)) // 2


def test_analyze_round_rejects_bad_sequences() -> None:
    with pytest.raises(ValueError, match="move 2"):
        analyze_round(["4", "9"])
    with pytest.raises(ValueError, match="move 7: column 4 is full"):
        analyze_round(list("4444444"))
    with pytest.raises(ValueError, match="move 8: the round is already over"):
        analyze_round(list("12121212"))


@pytest.mark.parametrize("level", LEVELS)
def test_pop_out_plays_legal_moves_and_takes_a_win(level: str) -> None:
    g = create_game("connect4", {"popout": True})
    for col in ["1", "2", "1", "2", "1", "2"]:
        g.push(col)
    assert g.to_move() == 0
    move = choose_move(g, level, b"pop")
    g.push(move)
    assert g.winners() == (0,)
    # And a few more moves stay legal.
    for i in range(6):
        if g.is_over():
            break
        m = choose_move(g, level, str(i).encode())
        assert m in g.legal_moves()
        g.push(m)


def test_bigger_boards() -> None:
    for width, height in ((8, 7), (9, 7)):
        g = create_game("connect4", {"width": width, "height": height})
        for i in range(6):
            for level in LEVELS:
                assert choose_move(g, level, b"big") in g.legal_moves()
            g.push(choose_move(g, "normal", str(i).encode()))
