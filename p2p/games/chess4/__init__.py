"""Four-player chess, free-for-all ("Vierschach (Einzel)").

* ``Chess4`` - the ``Game`` (text moves, history, FEN4/PGN4, rendering): ``game.py``
* ``perft(game, depth)`` - legal move-path count (design decision 5)
* ``Position`` - the fast core for searches (``gen_moves``/``make``/``unmake``): ``movegen.py``
* ``rules`` - points, decisions and the readable rules text (``RULES_TEXT``)
* ``board`` - squares, pieces and fixed tables; ``fen4``, ``pgn4`` - notations
"""

from __future__ import annotations

from p2p.games.chess4 import rules
from p2p.games.chess4.game import OPTION_DEFAULTS, Chess4, next_first
from p2p.games.chess4.movegen import Position
from p2p.games.chess4.movegen import divide as _divide
from p2p.games.chess4.movegen import perft as _perft
from p2p.games.chess4.rules import RULES_TEXT


def _perft_position(game: Chess4) -> Position:
    """A copy of the game's position for counting: decision 5, no end by points or draws."""
    pos = game.position.copy()
    if pos.over and pos.live.bit_count() >= 2:
        pos.over = False
        pos.end_reason = ""
        pos._moves = None
    return pos


def perft(game: Chess4, depth: int) -> int:
    """Legal move sequences of length ``depth`` from ``game``'s position.

    Decision 5: eliminations (king capture, mate, stalemate) happen, but the count never
    stops for points, draws or the move limit, only when fewer than two players are live.

    >>> perft(Chess4.create(), 2)
    395
    """
    return _perft(_perft_position(game), depth)


def divide(game: Chess4, depth: int) -> list[tuple[str, int]]:
    """``(move text, perft(depth - 1) below it)`` for every legal move."""
    from p2p.games.chess4.movegen import move_text

    return [(move_text(m), n) for m, n in _divide(_perft_position(game), depth)]


__all__ = [
    "OPTION_DEFAULTS",
    "RULES_TEXT",
    "Chess4",
    "Position",
    "divide",
    "next_first",
    "perft",
    "rules",
]
