"""Connect Four in the browser: the state ``boards/connect4.js`` draws, and the solver's
review of a finished round for ``boards/chart.js``.

State (``common_state`` plus): ``width``, ``height``, ``popout``; ``columns`` (per column,
bottom first, the seats of its discs); ``last_move`` (``{"column", "row", "pop", "seat"}``,
0-based, ``row`` where the disc landed or, for a pop, 0; ``None`` before the first move);
``lines`` (the winning lines: ``{"seat", "cells": [[column, row], ...]}``). Moves are the
shell's: ``"4"`` drops into column 4, ``"p4"`` pops your own bottom disc (Pop Out).

>>> from p2p.games.connect4 import Connect4
>>> g = Connect4.create()
>>> for col in "1212121": g.push(col)
>>> s = state(g)
>>> s["over"], s["winners"], s["lines"]
(True, [0], [{'seat': 0, 'cells': [[0, 0], [0, 1], [0, 2], [0, 3]]}])
>>> s["last_move"]
{'column': 0, 'row': 3, 'pop': False, 'seat': 0}
"""

from __future__ import annotations

from typing import cast

from p2p.games import Game
from p2p.games.connect4 import Connect4
from p2p.web.web_view import State, WebView, common_state

ANALYSIS_NODES = 30_000
"""The solver's node budget per position in the browser's review (the shell's ``/analyze``
uses 100 000): a few seconds for a 7x6 round on a slow machine, never unbounded."""
ESTIMATE_NODES = 2_000
"""The heuristic search's budget per early position, where the solver cannot answer."""
ESTIMATE_SCALE = 100
"""Search units that fill half of the chart's estimate band (an estimate's bar stays
below an exact result's)."""


def _moves(game: Game) -> list[str]:
    return game.board_moves()


def state(game: Game) -> State:
    """The position as ``boards/connect4.js`` draws it (see the module docstring)."""
    c4 = cast(Connect4, game)
    moves = _moves(c4)
    last_move: dict[str, object] | None = None
    if moves:
        column, popped = c4.parse(moves[-1])
        seat = (c4.first + len(moves) - 1) % 2
        row = 0 if popped else len(c4.columns[column]) - 1
        last_move = {"column": column, "row": row, "pop": popped, "seat": seat}
    return {
        **common_state(c4),
        "width": c4.width,
        "height": c4.height,
        "popout": c4.popout,
        "columns": [list(stones) for stones in c4.columns],
        "last_move": last_move,
        "lines": [
            {"seat": line.seat, "cells": [[c, r] for c, r in line.cells]} for line in c4.winning_lines
        ],
    }


def _sign(value: int) -> int:
    return (value > 0) - (value < 0)


def chart_value(score: int | None, estimate: int | None, size: int) -> int | None:
    """One bar of the chart, -100..100 from Red's side: an exact result beyond +-50 (the
    faster the win, the taller), a search estimate within +-50 (a win the search found
    at +-50), ``None`` when nothing is known.

    >>> chart_value(0, None, 42), chart_value(18, None, 42), chart_value(-1, None, 42)
    (0, 100, -52)
    >>> chart_value(None, 50, 42), chart_value(None, -100_000, 42), chart_value(None, None, 42)
    (12, -50, None)
    """
    from p2p.ai.c4_search import WIN

    if score is not None:
        if score == 0:
            return 0
        top = max(1, (size - 5) // 2)
        return _sign(score) * (50 + min(50, 50 * abs(score) // top))
    if estimate is None:
        return None
    if abs(estimate) >= WIN // 2:
        return _sign(estimate) * 50
    return _sign(estimate) * min(49, abs(estimate) * 25 // ESTIMATE_SCALE)


ESTIMATE_CLEAR = 50
"""An estimate (search units) beyond which one side is called ahead (as the shell's text)."""


def verdict(score: int | None, estimate: int | None) -> str:
    """What a position is worth to the mover, as a word the page translates
    (``analysis.<word>``): the exact result, else the search's estimate, else unknown.

    >>> verdict(3, None), verdict(0, None), verdict(-2, None), verdict(None, None)
    ('win', 'draw', 'loss', 'unknown')
    >>> verdict(None, 80), verdict(None, -10), verdict(None, -100_000)
    ('est_ahead', 'est_even', 'est_loss')
    """
    from p2p.ai.c4_search import WIN

    if score is not None:
        return "win" if score > 0 else "loss" if score < 0 else "draw"
    if estimate is None:
        return "unknown"
    if abs(estimate) >= WIN // 2:
        return "est_win" if estimate > 0 else "est_loss"
    if abs(estimate) > ESTIMATE_CLEAR:
        return "est_ahead" if estimate > 0 else "est_behind"
    return "est_even"


def analysis(game: Game) -> list[State]:
    """The solver's review of a finished round, one row per move, for ``boards/chart.js``.

    Each row: ``ply`` (1-based), ``move``, ``seat`` (who moved), ``score`` (the exact
    Pons score after the move from Red's side: > 0 Red wins, 0 draw, < 0 Yellow wins;
    ``None`` unknown), ``estimate`` (where the solver could not answer: the search's
    estimate from Red's side, else ``None``), ``value`` (``chart_value``: the bar),
    ``mistake`` (``True``/``False``/``None`` unknown), ``decisive``; for the text under
    the chart, from the mover's side: ``verdict`` (``verdict`` of the move played), ``was``
    (of the best move) and ``estimated`` (an estimate took part). Empty for a running
    round and for Pop Out (the solver knows only drops). Bounded: ``ANALYSIS_NODES`` and
    ``ESTIMATE_NODES`` per position; it takes seconds, so call it off the event loop.
    """
    from p2p.ai.connect4_ai import analyze_round

    c4 = cast(Connect4, game)
    if not c4.is_over() or c4.popout:
        return []
    reviews = analyze_round(
        _moves(c4), c4.width, c4.height, node_limit=ANALYSIS_NODES, estimate_nodes=ESTIMATE_NODES
    )
    rows: list[State] = []
    for review in reviews:
        seat = (c4.first + review.ply - 1) % 2
        side = 1 if seat == 0 else -1
        score = None if review.after is None else side * review.after
        estimate = None if review.est_after is None else side * review.est_after
        rows.append({
            "ply": review.ply,
            "move": review.move,
            "seat": seat,
            "score": score,
            "estimate": estimate,
            "value": chart_value(score, estimate, c4.width * c4.height),
            "mistake": review.mistake,
            "decisive": review.decisive,
            "verdict": verdict(review.after, review.est_after),
            "was": verdict(review.before, review.est_before),
            "estimated": bool(review.estimated),
        })
    return rows


RULES: tuple[str, str] = (  # one paragraph per line: the page wraps them
    """Vier in einer Reihe
Zwei Spieler (Rot ✕, Gelb ○) werfen abwechselnd einen Stein in eine Spalte; er fällt nach unten.
Wer zuerst vier eigene Steine in einer Reihe hat (waagrecht, senkrecht, diagonal), gewinnt.
Volles Brett ohne Vierer: unentschieden.
Zug: auf die Spalte tippen oder klicken (oder ihre Nummer ins Zugfeld schreiben, 1-7).
Pop Out: statt einzuwerfen darfst du einen eigenen Stein unten herausziehen (der Knopf unter der Spalte, oder p3); wer dabei Vierer für beide erzeugt, gewinnt; dreimal dieselbe Stellung ist unentschieden.""",
    """Connect Four
Two players (Red ✕, Yellow ○) take turns dropping a stone into a column; it falls to the bottom.
The first with four own stones in a row (horizontal, vertical, diagonal) wins.
A full board without four is a draw.
Move: tap or click the column (or type its number into the move field, 1-7).
Pop Out: instead of dropping you may pull one of your stones out at the bottom (the button under the column, or p3); a pop that makes fours for both wins for the popper; the same position three times is a draw.""",
)
"""The rules as the page shows them (``WebView.rules``)."""

VIEW = WebView(script="boards/connect4.js", state=state, analysis=analysis, rules=RULES)
