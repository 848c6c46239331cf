"""Rules of Vier in einer Reihe (Connect Four), including Pop Out and larger boards."""

from __future__ import annotations

import pytest

from p2p.games import create_game
from p2p.games.base import IllegalMove, MalformedMove, OptionError
from p2p.games.connect4 import RED, YELLOW, Connect4


def play(moves: str, **options: object) -> Connect4:
    game = Connect4.create(options)  # type: ignore[arg-type]
    for move in moves.split():
        game.push(move)
    return game


def test_published_example_red_wins_on_the_diagonal_with_the_11th_move() -> None:
    game = play("4 5 5 6 6 7 6 7 7 1")
    assert not game.is_over() and game.to_move() == RED
    game.push("7")
    assert game.is_over() and game.winners() == (RED,) and game.to_move() is None
    assert len(game.history()) == 11
    assert [line.cells for line in game.winning_lines] == [((3, 0), (4, 1), (5, 2), (6, 3))]
    assert game.scores() == (1, 0)


def test_published_example_yellow_starts_and_wins_with_five_in_the_bottom_row() -> None:
    game = play("1 1 2 2 4 4 5 7 3", first=YELLOW)
    assert game.winners() == (YELLOW,)
    (line,) = game.winning_lines
    assert line.cells == tuple((c, 0) for c in range(5)) and len(line.cells) == 5


def test_a_double_four_reports_both_lines() -> None:
    # Red's stone at column 4, row 4 completes a vertical and a horizontal four at once.
    game = Connect4.create()
    game.columns = [
        [YELLOW, RED, YELLOW, RED],
        [YELLOW, RED, YELLOW, RED],
        [RED, YELLOW, YELLOW, RED],
        [RED, RED, RED],
        [], [], [],
    ]
    assert game.to_move() == RED
    game.push("4")
    cells = {line.cells for line in game.winning_lines}
    assert cells == {
        ((3, 0), (3, 1), (3, 2), (3, 3)),
        ((0, 3), (1, 3), (2, 3), (3, 3)),
    }
    assert game.winners() == (RED,)


def test_vertical_four() -> None:
    game = play("1 2 1 2 1 2 1")
    assert game.winners() == (RED,)
    assert game.winning_lines[0].cells == ((0, 0), (0, 1), (0, 2), (0, 3))


def test_a_full_column_is_rejected_and_the_turn_stays() -> None:
    game = play("3 3 3 3 3 3")
    before = (game.encode(), game.history(), game.to_move())
    with pytest.raises(IllegalMove, match="column 3 is full"):
        game.push("3")
    assert (game.encode(), game.history(), game.to_move()) == before


@pytest.mark.parametrize("text", ["0", "8", "x", "", "4.0", "p3", "٣"])
def test_malformed_moves_are_rejected_without_change(text: str) -> None:
    game = play("4 4")
    before = game.encode()
    with pytest.raises(MalformedMove):
        game.push(text)
    assert game.encode() == before


def test_full_board_without_four_is_a_draw() -> None:
    # A known drawn filling: columns in the order 1..7 repeated with a shift per pair of rows.
    order = "1 2 3 4 5 6 7 1 2 3 4 5 6 7 2 1 4 3 6 5 7 2 1 4 3 6 5 7 1 2 3 4 5 6 7 1 2 3 4 5 6 7"
    game = play(order)
    assert game.is_over() and game.winners() == () and game.scores() == (0, 0)
    assert game.legal_moves() == []


def test_no_moves_after_the_round_is_decided() -> None:
    game = play("1 2 1 2 1 2 1")
    with pytest.raises(IllegalMove):
        game.push("5")


def test_pop_restores_the_previous_state_exactly() -> None:
    game = play("4 4 5")
    snapshot = game.encode()
    game.push("5")
    assert game.pop() == "5"
    assert game.encode() == snapshot


def test_larger_boards() -> None:
    game = create_game("connect4", {"width": 9, "height": 7})
    assert game.legal_moves() == [str(c) for c in range(1, 10)]
    for _ in range(7):
        game.push("9")
    with pytest.raises(IllegalMove, match="column 9 is full"):
        game.push("9")
    with pytest.raises(OptionError):
        Connect4.create({"width": 3})
    with pytest.raises(OptionError):
        Connect4.create({"colour": "red"})


def test_popout_pops_own_bottom_stone_and_everything_slides_down() -> None:
    game = play("4 4 4", popout=True)  # column 4: Red, Yellow, Red; Yellow to move
    assert "p4" not in game.legal_moves()  # the bottom stone is Red's
    with pytest.raises(IllegalMove):
        game.push("p4")
    game.push("1")
    game.push("p4")  # Red pops its own bottom stone
    assert game.columns[3] == [YELLOW, RED]
    assert game.pop() == "p4" and game.columns[3] == [RED, YELLOW, RED]


def test_popout_pop_that_makes_lines_for_both_wins_for_the_popper() -> None:
    # Before the pop: row 1 is R Y Y Y, row 2 is Y R R R. Red pops column 1, its stones
    # slide down: row 1 becomes Y Y Y Y and row 2 R R R R at the same time.
    game = Connect4.create({"popout": True})
    game.columns = [[RED, YELLOW, RED], [YELLOW, RED], [YELLOW, RED], [YELLOW, RED], [], [], []]
    assert game.to_move() == RED and not game.winning_lines
    game.push("p1")
    assert {line.seat for line in game.winning_lines} == {RED}
    assert game.winning_lines[0].cells == ((0, 1), (1, 1), (2, 1), (3, 1))
    assert game.winners() == (RED,)
    # A Yellow four was made too; it does not count for the popper's opponent.
    assert game.columns[0] == [YELLOW, RED]


def test_popout_threefold_repetition_is_a_draw() -> None:
    game = play("1 2", popout=True)
    # Red pops and replays column 1, Yellow the same in column 2: the start repeats.
    # The empty board with Red to move occurs at the start, then after each "p2".
    for move in ("p1", "p2", "1", "2", "p1"):
        game.push(move)
        assert not game.is_over()
    game.push("p2")
    assert game.is_over() and game.winners() == () and game.legal_moves() == []
    with pytest.raises(IllegalMove):
        game.push("1")


def test_resignation_gives_the_round_to_the_other_side() -> None:
    game = play("4")
    game.resign(YELLOW)
    assert game.winners() == (RED,) and game.history()[-1] == "resign:1"
    copy = Connect4.create()
    for entry in game.history():
        copy.apply(entry)
    assert copy.state_hash() == game.state_hash()
