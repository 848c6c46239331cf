"""A position as the page draws it: the game's web view from the registry, or the fallback.

Each game may name a view module in its registry entry (``GameSpec.web``, e.g.
``p2p.web.views.connect4``) whose ``VIEW`` has ``script`` (a module under
``static/boards/`` exporting ``mount(element, api)``) and ``state(game)`` (a JSON-safe
dict of the position).  A game without one is drawn by ``fallback.js``: the engine's text
picture and its legal moves as buttons, so every registered game can be played.

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

import importlib
import logging
from typing import Any

from p2p.games import Game, create_game, spec

log = logging.getLogger("p2p.web")
FALLBACK_SCRIPT = "fallback.js"


def web_view(game_name: str) -> Any:
    """The game's ``VIEW`` from ``GameSpec.web`` (``None``: none, or it fails to load)."""
    try:
        path = getattr(spec(game_name), "web", "")
    except KeyError:
        return None
    if not path:
        return None
    try:
        return getattr(importlib.import_module(path.partition(":")[0]), "VIEW", None)
    except Exception:  # noqa: BLE001 - a broken view must not take the page down: fallback
        log.exception("cannot load the web view %s", path)
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
    return {"script": str(view.script), "state": state}


def replay_states(game: Game) -> list[dict[str, Any]]:
    """The state after each ply of ``game``'s history (the start first), replayed on a copy."""
    shown = create_game(game.name, game.options())
    states = [board(shown)["state"]]
    for entry in game.history():
        shown.apply(entry)
        states.append(board(shown)["state"])
    return states


def analysis(game: Game) -> Any:
    """The view's evaluation of a finished round (Connect Four's solver chart), else ``None``."""
    view = web_view(game.name)
    analyse = getattr(view, "analysis", None)
    if analyse is None:
        return None
    return analyse(game)
