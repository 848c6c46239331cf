"""A match of several Connect Four rounds: alternating start, score, best-of-N, undo, replay."""

from __future__ import annotations

import pytest

from p2p.games.match import Match, MatchError

RED_WINS = "1212121"  # whoever starts wins in column 1


def test_starting_side_alternates_and_each_decided_round_scores_once() -> None:
    match = Match("connect4")
    starters = []
    for _ in range(4):
        starters.append(match.current.to_move())
        for col in RED_WINS:
            match.play(col)
        assert match.wins() == match.wins()  # derived, stable on repeated reads
        match.next_round()
    assert starters == [0, 1, 0, 1]
    assert match.wins() == (2, 2)
    assert match.round_number == 5


def test_a_drawn_round_gives_no_point() -> None:
    match = Match("connect4")
    order = "1 2 3 4 5 6 7 1 2 3 4 5 6 7 2 1 4 3 6 5 7 2 1 4 3 6 5 7 1 2 3 4 5 6 7 1 2 3 4 5 6 7"
    for col in order.split():
        match.play(col)
    assert match.current.is_over() and match.wins() == (0, 0)


def test_best_of_three_ends_when_the_leader_cannot_be_caught() -> None:
    match = Match("connect4", best_of=3)
    for col in RED_WINS:
        match.play(col)  # round 1: Red starts and wins
    match.next_round()
    for col in "1213141":  # round 2: Yellow starts; Yellow wins in column 1
        match.play(col)
    assert match.wins() == (1, 1) and not match.is_decided()
    match.next_round()
    for col in RED_WINS:  # round 3: Red starts and wins
        match.play(col)
    assert match.is_decided()
    with pytest.raises(MatchError):
        match.next_round()


def test_undo_of_one_move_and_of_a_pair_but_not_after_the_round_is_decided() -> None:
    match = Match("connect4")
    for col in "44":
        match.play(col)
    assert match.undo() == ["4"]
    match.play("5")
    assert match.undo(2) == ["5", "4"]
    assert match.current.history() == []
    with pytest.raises(MatchError):
        match.undo()
    for col in RED_WINS:
        match.play(col)
    with pytest.raises(MatchError, match="decided"):
        match.undo()


def test_step_by_step_replay_of_a_finished_round() -> None:
    match = Match("connect4")
    for col in RED_WINS:
        match.play(col)
    match.next_round()
    positions = list(match.replay(0))
    assert len(positions) == len(RED_WINS) + 1
    assert positions[0].history() == [] and positions[-1].winners() == (0,)
    assert [len(p.history()) for p in positions] == list(range(8))
    with pytest.raises(MatchError):
        list(match.replay(5))


def test_next_round_needs_a_finished_round() -> None:
    match = Match("cube", {"players": 3})
    with pytest.raises(MatchError):
        match.next_round()
    assert match.starting_seat(1) == 1 and match.starting_seat(3) == 0
