"""The browser boards' Python half (``p2p/web/web_view.py``, ``p2p/web/views/*``): each
game's registry entry names its ``WebView``; ``state(game)`` is a pure, JSON-safe picture of
the position whose legal moves are exactly the texts the shell plays; ``all_states`` steps
through a round; Connect Four's ``analysis`` is the solver's review as chart rows."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from chess4_fen import fen

from p2p.games import create_game, game_names, spec
from p2p.games.chess4 import Chess4
from p2p.games.connect4 import Connect4
from p2p.games.cube import Cube
from p2p.web.views import chess4 as chess4_view
from p2p.web.views import connect4 as connect4_view
from p2p.web.views import cube as cube_view
from p2p.web.web_view import PLAIN, WebView, common_state, plain_state, web_view_for

DIAGONAL_WIN = "1223343643474"
"""A Connect Four round Red wins on the rising diagonal from column 1, in 13 moves."""


def _json_round_trip(value: object) -> object:
    return json.loads(json.dumps(value, allow_nan=False))


def _played(game_name: str, moves: list[str], options: dict[str, Any] | None = None) -> Any:
    game = create_game(game_name, options or {})
    for move in moves:
        game.push(move)
    return game


@pytest.mark.parametrize("name", ["connect4", "cube", "chess4"])
def test_every_product_game_names_its_board_in_the_registry(name: str) -> None:
    view = web_view_for(name)
    assert spec(name).web == f"p2p.web.views.{name}"
    assert isinstance(view, WebView) and view is not PLAIN
    assert view.script == f"boards/{name}.js"


def test_a_game_without_a_web_view_gets_the_plain_board() -> None:
    assert web_view_for("no-such-game") is PLAIN
    game = _played("connect4", ["4"])
    state = plain_state(game)
    assert state["text"] == game.render() and state["legal"] == game.legal_moves()


def test_the_games_layer_never_imports_the_web_layer() -> None:
    code = (
        "import sys, p2p.games\n"
        "from p2p.games import create_game, spec\n"
        "[create_game(n) for n in ('connect4', 'cube', 'chess4')]\n"
        "assert not [m for m in sys.modules if m.startswith('p2p.web')], 'p2p.web imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


@pytest.mark.parametrize(
    ("name", "moves", "options"),
    [
        ("connect4", list("4455"), {}),
        ("connect4", list("445566"), {"popout": True, "width": 8, "height": 7}),
        ("cube", ["a1", "b2", "c3", "a1"], {"players": 3}),
        ("chess4", ["h2-h4", "b7-c7"], {}),
    ],
)
def test_a_state_is_json_safe_pure_and_its_moves_are_the_shells(
    name: str, moves: list[str], options: dict[str, object]
) -> None:
    game = _played(name, moves, options)
    before = game.history()
    view = web_view_for(name)
    state = view.state(game)
    assert _json_round_trip(state) == state
    assert view.state(game.copy()) == state  # nothing but the position counts
    assert game.history() == before  # and the game is not changed
    assert state["legal"] == game.legal_moves() and state["legal"]
    assert state["history"] == before and state["ply"] == len(before) and state["last"] == before[-1]
    assert state["to_move"] == game.to_move() and state["seats"] == list(game.seat_names())
    for move in state["legal"]:
        assert game.normalize(move) == move  # exactly the text the shell sends
        trial = game.copy()
        trial.push(move)


def test_connect4_state_has_columns_last_move_and_the_winning_line() -> None:
    game = _played("connect4", list(DIAGONAL_WIN))
    state = connect4_view.state(game)
    assert (state["width"], state["height"], state["popout"]) == (7, 6, False)
    assert state["columns"] == [list(col) for col in game.columns]
    assert state["last_move"] == {"column": 3, "row": 3, "pop": False, "seat": 0}
    assert state["lines"] == [{"seat": 0, "cells": [[0, 0], [1, 1], [2, 2], [3, 3]]}]
    assert state["over"] and state["winners"] == [0] and state["scores"] == [1, 0]
    assert state["legal"] == [] and state["to_move"] is None


def test_connect4_pop_out_state_offers_pops_and_reports_the_pop() -> None:
    game = _played("connect4", list("445566"), {"popout": True})
    state = connect4_view.state(game)
    assert {"p4", "p5", "p6"} >= {m for m in state["legal"] if m.startswith("p")}
    assert "p4" in state["legal"]
    game.push("p4")
    state = connect4_view.state(game)
    assert state["last_move"] == {"column": 3, "row": 0, "pop": True, "seat": 0}
    assert state["columns"][3] == [1]
    assert state["last"] == "p4"


def test_connect4_resignation_is_over_with_the_last_drop_still_shown() -> None:
    game = _played("connect4", list("44"))
    game.resign(0)
    state = connect4_view.state(game)
    assert state["over"] and state["winners"] == [1] and state["resigned"] == [0]
    assert state["last"] == "resign:0"
    assert state["last_move"] == {"column": 3, "row": 1, "pop": False, "seat": 1}


def test_cube_state_has_cells_heights_and_every_scored_line() -> None:
    moves = ["a1", "a2", "b1", "b2", "c1", "c2", "d1", "a2", "a1", "a2"]
    game = _played("cube", moves, {"players": 2})
    state = cube_view.state(game)
    cube = game
    assert isinstance(cube, Cube)
    assert state["cells"] == cube.board and state["heights"] == cube.heights
    assert state["pillars"][:5] == ["a1", "b1", "c1", "d1", "a2"]
    assert state["lines"] == [{"seat": 0, "cells": [0, 1, 2, 3], "last": False}]
    assert state["last_move"] == {"pillar": "a2", "cell": 36, "seat": 1}
    assert state["scores"] == [1, 0]
    three = _played("cube", ["a1"], {"players": 3})
    assert cube_view.state(three)["seats"] == ["Red", "Yellow", "Blue"]


def test_chess4_state_has_pieces_grey_after_resigning_and_promotes() -> None:
    start = chess4_view.state(Chess4.create())
    assert len(start["pieces"]) == 64
    assert {"square": "h1", "seat": 0, "kind": "K", "grey": False} in start["pieces"]
    assert start["last_move"] is None and start["check"] == [] and start["end_reason"] == ""
    game = _played("chess4", ["h2-h4"])
    game.resign(1)
    state = chess4_view.state(game)
    blue = [p for p in state["pieces"] if p["seat"] == 1]
    assert len(blue) == 16 and all(p["grey"] for p in blue)
    assert state["eliminated"] == [1] and state["resigned"] == [1]
    assert state["last_move"] == {"from": "h2", "to": "h4"}
    promo = Chess4.from_fen4(fen({"e7": "rP", "h1": "rK", "a7": "bK", "g14": "yK", "n8": "gK"}))
    assert "e7-e8" in chess4_view.state(promo)["legal"]
    promo.push("e7-e8")
    assert {"square": "e8", "seat": 0, "kind": "D", "grey": False} in chess4_view.state(promo)["pieces"]


@pytest.mark.parametrize("name", ["connect4", "cube", "chess4"])
def test_all_states_replay_the_round_from_its_start(name: str) -> None:
    moves = {"connect4": list("4455"), "cube": ["a1", "b2", "a1"], "chess4": ["h2-h4", "b7-c7", "h13-h11"]}[name]
    game = _played(name, moves)
    view = web_view_for(name)
    states = view.all_states(game)
    assert [s["ply"] for s in states] == list(range(len(moves) + 1))
    assert states[0]["history"] == [] and all(s["legal"] == [] for s in states)
    assert states[-1] == {**view.state(game), "legal": []}
    assert states[1] == {**view.state(_played(name, moves[:1])), "legal": []}
    assert game.history() == moves


def test_all_states_of_a_chess4_round_from_fen4_start_there() -> None:
    text = fen({"e7": "rP", "h1": "rK", "a7": "bK", "g14": "yK", "n8": "gK"})
    game = Chess4.from_fen4(text)
    game.push("e7-e8")
    states = web_view_for("chess4").all_states(game)
    assert len(states) == 2
    assert {"square": "e7", "seat": 0, "kind": "P", "grey": False} in states[0]["pieces"]


def test_connect4_analysis_is_chart_rows_from_reds_side() -> None:
    game = _played("connect4", list(DIAGONAL_WIN))
    rows = connect4_view.analysis(game)
    assert _json_round_trip(rows) == rows
    assert [r["ply"] for r in rows] == list(range(1, 14))
    assert [r["move"] for r in rows] == list(DIAGONAL_WIN)
    assert [r["seat"] for r in rows] == [i % 2 for i in range(13)]
    for row in rows:
        assert row["value"] is None or -100 <= row["value"] <= 100
    assert rows[-1]["score"] is not None and rows[-1]["score"] > 0
    assert rows[-1]["value"] > 50  # Red's win, exact: beyond the half line
    assert connect4_view.analysis(game) == rows  # deterministic
    # the words of the text under the chart, from the mover's side: Red's winning move
    # keeps the win; a mistake says what the best move kept, and it was better
    assert rows[-1]["verdict"] == "win"
    order = ["loss", "est_loss", "est_behind", "est_even", "unknown", "est_ahead", "draw", "est_win", "win"]
    assert all(r["verdict"] in order and r["was"] in order for r in rows)
    exact = [r for r in rows if r["mistake"] and not r["estimated"]]
    assert all(order.index(r["was"]) >= order.index(r["verdict"]) for r in exact), exact


def test_connect4_analysis_is_empty_for_a_running_round_and_pop_out() -> None:
    assert connect4_view.analysis(_played("connect4", list("44"))) == []
    popout = Connect4.create({"popout": True})
    for move in "1212121":
        popout.push(move)
    assert popout.is_over() and connect4_view.analysis(popout) == []


def test_common_state_lists_the_keys_every_board_relies_on() -> None:
    for name in game_names():
        state = web_view_for(name).state(create_game(name))
        assert set(common_state(create_game(name))) <= set(state)
        assert state["game"] == name and state["ply"] == 0 and state["last"] is None


def test_a_registered_game_without_web_code_is_playable_on_the_plain_board() -> None:
    import toy_game

    from p2p.games import register_game, unregister_game

    register_game(toy_game.SPEC)
    try:
        view = web_view_for("ttt")
        assert view is PLAIN and view.script == "boards/plain.js"
        game = _played("ttt", ["5"])
        state = view.state(game)
        assert state["legal"] == game.legal_moves() and state["text"] == game.render()
        assert [s["ply"] for s in view.all_states(game)] == [0, 1]
    finally:
        unregister_game("ttt")


def test_chess4_state_gives_the_games_places_a_resigned_seat_below_at_equal_points() -> None:
    """The page ranks chess4 seats by the game's own places (``ranks``), not by points
    alone: when three seats resign at 0 points, the one that played on is first alone."""
    game = create_game("chess4")
    game.push(game.legal_moves()[0])
    for seat in (1, 2, 3):
        game.resign(seat)
    s = chess4_view.state(game)
    assert s["scores"] == [0, 0, 0, 0]
    assert s["ranks"] == [1, 2, 2, 2]
    assert s["winners"] == [0]
