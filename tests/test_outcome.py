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


def test_turns_type_the_history_byte_for_byte() -> None:
    """Item 2's typed turns: ``turns()`` names each history entry a move, a pass or a
    resignation; its texts are ``history()`` exactly (logs and replay keep that form), and
    ``board_moves()``/``resignations()`` are what the faces read instead of the strings."""
    from p2p.games import Turn, TurnKind

    reversi = create_game("reversi", {"size": 6})
    while not reversi.is_over():
        legal = reversi.legal_moves()
        reversi.push(legal[0] if reversi.to_move() == 0 else legal[-1])
    turns = reversi.turns()
    assert [t.text for t in turns] == reversi.history()
    assert {t.kind for t in turns} == {TurnKind.MOVE, TurnKind.PASS}
    assert reversi.board_moves() == reversi.history() and reversi.resignations() == ()

    chess = play(create_game("chess4"), ["h2-h3", "b8-c8"])
    chess.resign(2)
    chess.push(chess.legal_moves()[0])
    chess.resign(0)
    assert [t.kind for t in chess.turns()] == [TurnKind.MOVE, TurnKind.MOVE, TurnKind.RESIGNATION,
                                               TurnKind.MOVE, TurnKind.RESIGNATION]
    assert chess.resignations() == (2, 0) == chess.resigned_seats()
    assert chess.board_moves() == [h for h in chess.history() if not h.startswith("resign:")]
    assert [t.text for t in chess.turns()] == chess.history()
    assert chess.turns()[2] == Turn.resignation(2) == Turn.of("resign:2")

    gave_up = play(create_game("connect4"), "44")
    gave_up.resign(0)
    assert gave_up.turns()[-1] == Turn(TurnKind.RESIGNATION, "resign:0", 0)
    assert gave_up.board_moves() == ["4", "4"]
    replayed = create_game("connect4")
    for turn in gave_up.turns():
        replayed.apply(turn.text)
    assert replayed.history() == gave_up.history() and replayed.outcome() == gave_up.outcome()


@pytest.mark.parametrize("entry", ["resign:", "resign:x", "resign:\u00b2", "resign:\u0663"])
def test_a_malformed_resignation_is_a_move_text_and_apply_refuses_it(entry: str) -> None:
    from p2p.games import TurnKind
    from p2p.games.base import MoveError, Turn

    assert Turn.of(entry).kind is TurnKind.MOVE and Turn.of(entry).seat is None
    with pytest.raises(MoveError):
        create_game("connect4").apply(entry)


def test_the_web_state_says_what_the_last_turn_was() -> None:
    from p2p.web.web_view import common_state

    game = play(create_game("connect4"), "44")
    assert common_state(game)["last_kind"] == "move"
    game.resign(1)
    state = common_state(game)
    assert state["last_kind"] == "resignation" and state["resigned"] == [1]
    assert state["history"] == ["4", "4", "resign:1"] and state["last"] == "resign:1"
    assert common_state(create_game("cube"))["last_kind"] is None
