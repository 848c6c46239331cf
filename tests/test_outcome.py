"""Typed endings (issue 27, item 2, the engine side): every engine returns an ``Outcome``
(termination kind, winners, points), and the old string forms come from it."""

from __future__ import annotations

import pytest

from p2p.games import NULL_MOVE, Outcome, Termination, create_game
from p2p.games.base import Game


def play(game: Game, moves: str | list[str]) -> Game:
    for move in moves:
        game.push(move)
    return game


def test_a_running_game_has_no_outcome() -> None:
    for name, options in (("connect4", {}), ("cube", {}), ("chess4", {}), ("reversi", {"size": 6})):
        game = create_game(name, options)
        assert game.outcome() is None and game.end_reason() == "", name


def test_connect4_endings() -> None:
    line = play(create_game("connect4"), "1212121")
    assert line.outcome() == Outcome(Termination.LINE, (0,), (1, 0))
    assert line.end_reason() == "line"
    full = create_game("connect4", {"width": 4, "height": 4})
    play(full, "1113233214423442")  # no four anywhere: a drawn full board
    assert full.outcome() == Outcome(Termination.FULL_BOARD, (), (0, 0))
    assert full.outcome().is_draw  # type: ignore[union-attr]
    gave_up = play(create_game("connect4"), "44")
    gave_up.resign(1)
    outcome = gave_up.outcome()
    assert outcome == Outcome(Termination.RESIGNATION, (0,), (1, 0), resigned=(1,))
    assert outcome.reason == gave_up.history()[-1] == "resign:1"  # the old string form


def test_cube_reversi_and_chess4_endings() -> None:
    cube = create_game("cube")
    while not cube.is_over():
        cube.push(cube.legal_moves()[0])
    assert cube.outcome() == Outcome(Termination.FULL_BOARD, cube.winners(), cube.scores())

    reversi = create_game("reversi", {"size": 6})
    while not reversi.is_over():
        legal = reversi.legal_moves()
        reversi.push(legal[0] if reversi.to_move() == 0 else legal[-1])  # passes on the way
    outcome = reversi.outcome()
    assert NULL_MOVE in reversi.history() and outcome is not None
    assert outcome.termination in (Termination.FULL_BOARD, Termination.NO_MOVES)
    assert outcome.points == reversi.scores() and outcome.winners == reversi.winners()

    chess = create_game("chess4", {"move_limit": 4})
    while not chess.is_over():
        chess.push(chess.legal_moves()[0])
    outcome = chess.outcome()
    assert outcome is not None and outcome.termination is Termination.MOVE_LIMIT
    assert chess.end_reason() == "move limit"  # the string it always gave


@pytest.mark.parametrize("kind", list(Termination))
def test_every_termination_has_a_distinct_string(kind: Termination) -> None:
    assert Termination(kind.value) is kind and str(kind) == kind.value
