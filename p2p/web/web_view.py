"""How the browser face draws one game: its ``WebView``, found through the registry.

Each game's web view module (``GameSpec.web`` in ``p2p/games/registry.py``, for the
product's games ``p2p/web/views/*.py``) defines ``VIEW = WebView(...)``:

- ``script``: the board's ES module, a path under ``p2p/web/static`` (``boards/cube.js``).
  It exports ``mount(element, api)`` returning ``{update(state, opts), destroy()}``;
  ``api.play(moveText)`` plays a move exactly as the shell would type it, and
  ``opts = {mySeats: number[], interactive: bool, lang: 'de' | 'en'}``.
- ``state(game)``: the position as a JSON-safe dict (ints, strings, bools, ``None``, lists,
  dicts) that the script draws. Pure and deterministic. Every game's dict has the keys of
  ``common_state``; a view adds its own board fields.
- ``states(game)``: one state per position of the round, from the start to now, for
  stepping back and forth through a finished round (default ``replay_states``: the
  history replayed on a fresh game; the states carry no legal moves).
- ``rules``: the game's rules as the page shows them (German, English), how to play it
  on this board included; a view without them shows the engine's own description.
- ``analysis(game)``: optional, a finished round's review as JSON-safe rows for
  ``boards/chart.js`` (today Connect Four's solver review). It may take seconds: call it
  off the event loop (``asyncio.to_thread``).

A game whose entry names no web view gets ``PLAIN``: the engine's text picture and a
button per legal move (``boards/plain.js``), so a new game is playable in the browser
with no web code at all.

>>> from p2p.games import create_game
>>> view = web_view_for("connect4")
>>> view.script
'boards/connect4.js'
>>> view.state(create_game("connect4"))["legal"][:3]
['1', '2', '3']
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from p2p.games import Game, create_game, spec
from p2p.games.registry import resolve

State = dict[str, object]
"""A JSON-safe picture of one position (see ``common_state`` and each view)."""


def common_state(game: Game) -> State:
    """The keys every game's state has.

    ``game`` (registry name), ``options`` (as created), ``seats`` (engine seat names in
    English, ``"Red"``...; the page translates), ``to_move`` (seat or ``None``), ``legal``
    (every legal move as the exact text the shell accepts), ``history`` (move texts,
    resignations as ``resign:<seat>``), ``ply`` (``len(history)``), ``last`` (the last
    history entry or ``None``), ``last_kind`` (what it is, ``p2p.games.base.TurnKind``:
    ``move``, ``pass``, ``resignation``, or ``None``), ``over``, ``winners``, ``scores``,
    ``eliminated`` and ``resigned`` (seats that gave up, in order).

    >>> from p2p.games import create_game
    >>> g = create_game("cube", {"players": 3}); g.push("b2")
    >>> s = common_state(g)
    >>> s["seats"], s["to_move"], s["last"], s["scores"]
    (['Red', 'Yellow', 'Blue'], 1, 'b2', [0, 0, 0])
    """
    turns = game.turns()
    history = [turn.text for turn in turns]
    return {
        "game": game.name,
        "options": {key: value for key, value in sorted(game.options().items())},
        "seats": list(game.seat_names()),
        "to_move": game.to_move(),
        "legal": list(game.legal_moves()) if not game.is_over() else [],
        "history": history,
        "ply": len(history),
        "last": history[-1] if history else None,
        "last_kind": turns[-1].kind.value if turns else None,
        "over": game.is_over(),
        "winners": list(game.winners()),
        "scores": list(game.scores()),
        "eliminated": list(game.eliminated()),
        "resigned": [turn.seat for turn in turns if turn.seat is not None],
    }


def plain_state(game: Game) -> State:
    """``common_state`` plus ``text``, the engine's ``render()`` (the ``PLAIN`` view)."""
    return {**common_state(game), "text": game.render()}


def replay_states(game: Game, state: Callable[[Game], State]) -> list[State]:
    """``state`` of every position of ``game``'s round, start first, ``game`` itself last.

    The history is replayed on a fresh game built from ``game.options()``; ``game`` is not
    changed. The states carry ``legal: []``: they are for looking, not for playing.

    >>> from p2p.games import create_game
    >>> g = create_game("connect4")
    >>> for col in "44": g.push(col)
    >>> [s["ply"] for s in replay_states(g, common_state)]
    [0, 1, 2]
    """
    replay = type(game).create(game.options())
    out = [{**state(replay), "legal": []}]
    for entry in game.history():
        replay.apply(entry)
        out.append({**state(replay), "legal": []})
    return out


@dataclass(frozen=True)
class WebView:
    """Everything the browser face does differently for one game."""

    script: str
    """The board's ES module under ``p2p/web/static`` (``boards/connect4.js``)."""
    state: Callable[[Game], State]
    """The position as a JSON-safe dict for the script (``common_state`` plus the board)."""
    analysis: Callable[[Game], list[State]] | None = None
    """A finished round's review as chart rows (``boards/chart.js``), or ``None``."""
    states: Callable[[Game], list[State]] | None = None
    """Every position of the round for stepping through it (``None``: ``replay_states``)."""
    style: str = "boards/boards.css"
    """The boards' style sheet under ``p2p/web/static``."""
    rules: tuple[str, str] = ("", "")
    """The rules as lines of text (German, English); empty: ``rules_text`` falls back to
    the engine's own description."""

    def all_states(self, game: Game) -> list[State]:
        """``states(game)``, or the history replayed through ``state``."""
        if self.states is not None:
            return self.states(game)
        return replay_states(game, self.state)


PLAIN = WebView(script="boards/plain.js", state=plain_state)
"""The view of a game whose entry names none: the text picture and its legal moves."""

_CACHE: dict[str, WebView] = {}


def rules_text(game_name: str, lang: str) -> list[str]:
    """The rules of ``game_name`` as lines in ``lang`` (``de``/``en``): its view's text, else
    the first paragraph of the engine's module description (English; a game that brings
    no text for the page is still explained).

    >>> rules_text("connect4", "en")[0]
    'Connect Four'
    >>> rules_text("cube", "de")[0]
    'Viergewinnt 3D'
    """
    import sys

    de, en = web_view_for(game_name).rules
    text = de if lang == "de" else en
    if text:
        return text.splitlines()
    engine = type(create_game(game_name))
    doc = sys.modules[engine.__module__].__doc__ or engine.__doc__ or ""
    first = doc.strip().split("\n\n")[0]
    return [spec(game_name).title[0 if lang == "de" else 1], " ".join(first.split())]


def web_view_for(game_name: str) -> WebView:
    """The web view of ``game_name`` (``PLAIN`` for a game without one or unknown here)."""
    try:
        path = spec(game_name).web
    except KeyError:
        return PLAIN
    if not path:
        return PLAIN
    cached = _CACHE.get(path)
    if cached is None:
        found = resolve(path if ":" in path else path + ":VIEW")
        if not isinstance(found, WebView):
            raise TypeError(f"{path}: VIEW is not a WebView")
        cached = _CACHE[path] = found
    return cached
