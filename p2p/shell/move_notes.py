"""What a move did, as catalogue keys with parameters.

Four-player chess: who is in check, who was mated, stalemated or lost the king, which
pawn became a (one-point) queen, and the points each seat earned with why.  The cube:
the lines of four a move completed and the new score.  Connect Four: a double four.
Pure: computed from the position after the move and the one before it (``pop``), so it
works the same for local and online rounds.  Each game's notes are its view's
(``p2p/shell/game_view.py``).
"""

from __future__ import annotations

from collections.abc import Callable

from p2p.games import Game
from p2p.shell.game_view import Note, view_for


def move_notes(game: Game) -> list[Note]:
    """The notes for ``game``'s last move (``[]`` after a resignation)."""
    turns = game.turns()
    if not turns or turns[-1].is_resignation:
        return []
    notes = view_for(game.name).notes
    return notes(game) if notes is not None else []


def say_notes(game: Game, t: Callable[..., str], label: Callable[[int], str]) -> list[str]:
    """The notes as lines: ``t`` is the translator's ``t``, ``label`` names a seat."""
    lines = []
    for key, fields in move_notes(game):
        values = dict(fields)
        for name in ("seat", "by"):
            seat = values.get(name)
            if isinstance(seat, int):
                values[name] = label(seat)
        if key == "chess.points":
            why = values.pop("why")
            reasons = list(why) if isinstance(why, list) else []
            values["why"] = ", ".join(t(f"chess.why.{w}") for w in reasons) if reasons else "-"
            delta = values["delta"]
            values["delta"] = f"{delta:+d}" if isinstance(delta, int) else str(delta)
        lines.append(t(key, **values))
    return lines
