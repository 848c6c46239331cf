"""What a typed line means as a move: shape first, then a clear error or a move.

The input line must never turn a move into chat (``9`` on a 7-column board, ``Nj3`` in
four-player chess), so the shell asks ``looks_like_move`` about the *shape* of a line
before it asks the engine.  A move-shaped line is then either a move (``Resolved``) or
one catalogue line explaining why not (``Refused``).  Each game's view
(``p2p/shell/game_view.py``) knows its shapes; in four-player chess a lone square
selects one's own piece and, with a piece selected, names its target; ``Nj3`` finds the
one knight that can go to j3.  Pure: no screen, no network.
"""

from __future__ import annotations

from p2p.games import Game
from p2p.shell.game_view import Outcome as Outcome
from p2p.shell.game_view import Refused as Refused
from p2p.shell.game_view import Resolved as Resolved
from p2p.shell.game_view import Select as Select
from p2p.shell.game_view import view_for

ENGLISH_LETTERS = " PNBRQKD"
"""Piece letters by kind (1 pawn .. 6 king, 7 promoted queen), as the engine writes them."""
GERMAN_LETTERS = " BSLTDKU"
"""The same in German (the catalogue's "piece.letters"): in the English shell its S, L, T
and U still name a piece (they clash with no English letter)."""



def looks_like_move(game_name: str, text: str) -> bool:
    """True when ``text`` has the shape of a move of ``game_name`` (legal or not)."""
    shape = view_for(game_name).shape
    return shape is not None and shape.match(text.strip()) is not None


def resolve(game: Game, text: str, selected: str | None = None, letters: str = ENGLISH_LETTERS) -> Outcome:
    """Turn a move-shaped line into a move, a selection or a refusal (game not over).

    ``letters``: the piece letters by kind in the user's language (``Si3`` in German is
    ``Ni3``); English letters are understood too where they do not clash.
    """
    raw = text.strip()
    own = view_for(game.name).resolve
    return own(game, raw, selected, letters) if own is not None else Resolved(raw)


def off_board(game: Game, text: str) -> Refused | None:
    """Why ``text`` cannot be a move on this board at all (``None``: it fits the board).

    Asked before the turn: ``9`` on a 7-column board is "no column 9" whoever is to move.
    """
    own = view_for(game.name).off_board
    return own(game, text) if own is not None else None
