"""Rules of Viergewinnt 3D: 76 lines, points per completed line, 2 or 3 players."""

from __future__ import annotations

import random

import pytest

from p2p.games.base import IllegalMove, MalformedMove, OptionError
from p2p.games.cube import LINES, LINES_THROUGH, Cube, cell_index


def play(moves: str, **options: object) -> Cube:
    game = Cube.create(options)  # type: ignore[arg-type]
    for move in moves.split():
        game.push(move)
    return game


def test_there_are_76_distinct_lines_of_four_cells() -> None:
    assert len(LINES) == 76 == len(set(LINES))
    assert all(len(set(line)) == 4 for line in LINES)
    # Corner and centre cells lie on 7 lines, the others on 4.
    counts = sorted({len(lines) for lines in LINES_THROUGH})
    assert counts == [4, 7]
    assert len(LINES_THROUGH[cell_index(0, 0, 0)]) == 7
    assert len(LINES_THROUGH[cell_index(1, 1, 1)]) == 7
    assert len(LINES_THROUGH[cell_index(1, 0, 0)]) == 4


def test_a_stone_drops_to_the_lowest_free_level_and_a_full_pillar_is_rejected() -> None:
    game = play("b3 b3 b3 b3")
    assert game.height("b3") == 4
    before = game.encode()
    with pytest.raises(IllegalMove, match="pillar b3 is full"):
        game.push("b3")
    assert game.encode() == before and game.to_move() == 0


@pytest.mark.parametrize("text", ["e1", "a5", "a", "a10", "", "11"])
def test_malformed_pillars(text: str) -> None:
    game = Cube.create()
    with pytest.raises(MalformedMove):
        game.push(text)


def test_a_four_scores_a_point_and_play_goes_on() -> None:
    # Red fills the bottom row a1..d1, Yellow plays on top of it elsewhere.
    game = play("a1 a2 b1 b2 c1 c2 d1")
    assert game.scores() == (1, 0)
    assert not game.is_over() and game.to_move() == 1
    assert game.last_completed() == (tuple(cell_index(x, 0, 0) for x in range(4)),)


def test_one_move_completes_several_lines_at_once() -> None:
    # Red owns a1,b1,c1 (row) and d2,d3,d4 (column of file d) on level 1; d1 completes both.
    game = play("a1 a2 b1 b2 c1 c2 d2 a3 d3 b3 d4 c3 d1")
    completed = game.last_completed()
    assert len(completed) == 2
    assert game.scores()[0] == 2


def test_the_game_ends_when_all_64_cells_are_full_and_a_shared_top_score_is_shared() -> None:
    rng = random.Random(7)
    game = Cube.create({"players": 2})
    while not game.is_over():
        game.push(rng.choice(game.legal_moves()))
    assert game.legal_moves() == [] and game.to_move() is None
    top = max(game.scores())
    assert game.winners() == tuple(s for s in range(2) if game.scores()[s] == top)
    with pytest.raises(IllegalMove):
        game.push("a1")


def test_three_players_in_fixed_order_from_the_starting_seat() -> None:
    game = Cube.create({"players": 3, "first": 2})
    seats = []
    for _ in range(64):
        seats.append(game.to_move())
        game.push(game.legal_moves()[0])
    assert seats[:4] == [2, 0, 1, 2]
    assert seats.count(2) == 22 and seats.count(0) == 21 and seats.count(1) == 21


def test_options_are_checked() -> None:
    with pytest.raises(OptionError):
        Cube.create({"players": 4})
    with pytest.raises(OptionError):
        Cube.create({"players": 2, "first": 2})


def test_pop_takes_back_points_and_lines() -> None:
    game = play("a1 a2 b1 b2 c1 c2")
    snapshot = (game.encode(), game.scores())
    game.push("d1")
    assert game.scores() == (1, 0)
    assert game.pop() == "d1"
    assert (game.encode(), game.scores()) == snapshot
