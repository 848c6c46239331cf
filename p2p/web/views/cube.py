"""Viergewinnt 3D in the browser: the state ``boards/cube.js`` draws (a 3D view you can
turn and the four levels side by side).

State (``common_state`` plus): ``players``; ``cells`` (64 seats or -1, cell ``x + 4*y +
16*z``: file x a..d, row y 1..4, level z from the bottom); ``heights`` (16 stones per
pillar, pillar ``x + 4*y``); ``pillars`` (their names ``a1``..``d4``, the move texts);
``last_move`` (``{"pillar", "cell", "seat"}`` or ``None``); ``lines`` (every scored line:
``{"seat", "cells": [4 cells], "last": bool}``, ``last`` for the lines the last move made).

>>> from p2p.games.cube import Cube
>>> g = Cube.create({"players": 2})
>>> for p in ("a1", "a2", "b1", "b2", "c1", "c2", "d1"): g.push(p)
>>> s = state(g)
>>> s["scores"], s["lines"]
([1, 0], [{'seat': 0, 'cells': [0, 1, 2, 3], 'last': True}])
>>> s["last_move"], s["heights"][:4]
({'pillar': 'd1', 'cell': 3, 'seat': 0}, [1, 1, 1, 1])
"""

from __future__ import annotations

from typing import cast

from p2p.games import Game
from p2p.games.cube import LINES, SIZE, Cube, pillar_name
from p2p.web.web_view import State, WebView, common_state


def state(game: Game) -> State:
    """The position as ``boards/cube.js`` draws it (see the module docstring)."""
    cube = cast(Cube, game)
    last_cell = cube.last_cell()
    last_move = None
    if last_cell is not None:
        last_move = {
            "pillar": pillar_name(last_cell % (SIZE * SIZE)),
            "cell": last_cell,
            "seat": cube.board[last_cell],
        }
    last_lines = set(cube.last_completed())
    lines: list[dict[str, object]] = []
    for seat, made in enumerate(cube.lines_of):
        for index in made:
            cells = LINES[index]
            lines.append({"seat": seat, "cells": list(cells), "last": cells in last_lines})
    return {
        **common_state(cube),
        "players": cube.players,
        "cells": list(cube.board),
        "heights": list(cube.heights),
        "pillars": [pillar_name(p) for p in range(SIZE * SIZE)],
        "last_move": last_move,
        "lines": lines,
    }


RULES: tuple[str, str] = (  # one paragraph per line: the page wraps them
    """Viergewinnt 3D
Ein Würfel aus 4x4x4 Feldern, 16 Säulen a1-d4; ein Stein fällt auf die unterste freie Ebene.
Jede Viererreihe zählt einen Punkt: entlang Linien, Reihen, Säulen, Flächen- und Raumdiagonalen (76).
Eine Viererreihe beendet das Spiel nicht; es endet, wenn alle 64 Felder voll sind.
Die meisten Punkte gewinnen.  Zwei oder drei Spieler.
Zug: eine Säule anklicken, in einer der vier Ebenen oder im drehbaren Würfel (oder b3 ins Zugfeld).""",
    """3D Connect Four
A 4x4x4 cube, 16 pillars a1-d4; a stone drops to the lowest free level.
Every line of four scores one point: along files, rows, pillars, plane and space diagonals (76).
A four does not end the game; it ends when all 64 cells are full.
Most points win.  Two or three players.
Move: click a pillar, on any of the four levels or in the cube you can turn (or type b3).""",
)
"""The rules as the page shows them (``WebView.rules``)."""

VIEW = WebView(script="boards/cube.js", state=state, rules=RULES)
