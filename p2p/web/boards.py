"""A position as the page draws it: the game's web view from the registry, or the fallback.

Each game's ``WebView`` (``p2p.web.web_view``, named by ``GameSpec.web``) has ``script``
(an ES module under ``static/`` exporting ``mount(element, api)``) and ``state(game)`` (a
JSON-safe dict of the position).  The page adds the engine's own facts (``base_state``:
the text picture, legal moves, winning cells ...) under the view's dict, and draws with
``boards/fallback.js`` (the text picture and the legal moves as buttons) when a view's
script cannot be loaded, so every registered game can always be played.

>>> from p2p.games import create_game
>>> g = create_game("connect4")
>>> g.push("4")
>>> b = board(g)
>>> b["state"]["history"], b["state"]["to_move"]
(['4'], 1)
>>> [len(s["history"]) for s in replay_states(g)]
[0, 1]
"""

from __future__ import annotations

import logging
from typing import Any

from p2p.games import Game, create_game

log = logging.getLogger("p2p.web")
FALLBACK_SCRIPT = "boards/fallback.js"
"""The page's own board when a view's script fails to load (path under ``static/``)."""


def web_view(game_name: str) -> Any:
    """The game's ``WebView`` (``p2p.web.web_view``; ``None`` when it fails to load)."""
    try:
        from p2p.web.web_view import web_view_for

        return web_view_for(game_name)
    except Exception:  # noqa: BLE001 - a broken view must not take the page down: fallback
        log.exception("cannot load the web view of %s", game_name)
        return None


def base_state(game: Game) -> dict[str, Any]:
    """What every board gets, whatever the view adds: the engine's own facts."""
    over = game.is_over()
    history = game.history()
    return {
        "game": game.name,
        "options": dict(game.options()),
        "text": game.render(),
        "to_move": game.to_move(),
        "legal": [] if over else game.legal_moves(),
        "history": history,
        "last": history[-1] if history else None,
        "scores": list(game.scores()),
        "over": over,
        "winners": list(game.winners()) if over else [],
        "eliminated": list(game.eliminated()),
        "winning": [list(cell) for line in getattr(game, "winning_lines", ()) for cell in line.cells],
        "seat_names": list(game.seat_names()),
        "players": game.players,
    }


def board(game: Game) -> dict[str, Any]:
    """``{"script": ..., "state": ...}`` for the page: the view's state over the base."""
    state = base_state(game)
    view = web_view(game.name)
    if view is None:
        return {"script": FALLBACK_SCRIPT, "state": state}
    try:
        state.update(view.state(game))
    except Exception:  # noqa: BLE001 - one broken position must not end the page
        log.exception("web view state failed for %s", game.name)
        return {"script": FALLBACK_SCRIPT, "state": base_state(game)}
    return {"script": str(view.script), "state": state, "style": str(getattr(view, "style", "")),
            "analysis": getattr(view, "analysis", None) is not None}


def replay_states(game: Game) -> list[dict[str, Any]]:
    """The state after each ply of ``game``'s history (the start first), replayed on a copy
    (a view's own ``states`` when it has one), for looking only (no legal moves)."""
    view = web_view(game.name)
    if view is not None and getattr(view, "states", None) is not None:
        return [{**base_state(game), **s, "legal": []} for s in view.all_states(game)]
    shown = create_game(game.name, game.options())
    states = [board(shown)["state"]]
    for entry in game.history():
        shown.apply(entry)
        states.append(board(shown)["state"])
    for state in states:
        state["legal"] = []
    return states


def analysis(game: Game) -> Any:
    """The view's evaluation of a finished round (Connect Four's solver chart), else ``None``."""
    view = web_view(game.name)
    analyse = getattr(view, "analysis", None)
    if analyse is None:
        return None
    return analyse(game)
