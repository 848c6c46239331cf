"""What a typed line means as a move: shape first, then a clear error or a move.

The input line must never turn a move into chat (``9`` on a 7-column board, ``Nj3`` in
four-player chess), so the shell asks ``looks_like_move`` about the *shape* of a line
before it asks the engine.  A move-shaped line is then either a move (``Resolved``) or
one catalogue line explaining why not (``Refused``).  In four-player chess a lone square
selects one's own piece and, with a piece selected, names its target; ``Nj3`` finds the
one knight that can go to j3.  Pure: no screen, no network.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from p2p.games import Game

_CONNECT4 = re.compile(r"^[pP]?\d{1,3}$")
_CUBE = re.compile(r"^[a-zA-Z]\d{1,2}$")
_LETTERS = "KQRBNPDSLTU"  # English and German piece letters (p2p.shell.i18n "piece.letters")
_CHESS4 = re.compile(
    rf"^(?:[{_LETTERS}]?[a-nA-N]\d{{1,2}}(?:\s*[-x:]?\s*[{_LETTERS}]?[a-nA-N]\d{{1,2}})?(?:=[A-Z])?[+#]*"
    r"|[O0]-[O0](?:-[O0])?[+#]*)$"
)
_CHESS4_SHORT = re.compile(rf"^(?P<piece>[{_LETTERS}])?(?P<square>[a-nA-N]\d{{1,2}})[+#]*$")
ENGLISH_LETTERS = " PNBRQKD"
"""Piece letters by kind (1 pawn .. 6 king, 7 promoted queen), as the engine writes them."""
GERMAN_LETTERS = " BSLTDKU"
"""The same in German (the catalogue's "piece.letters"): in the English shell its S, L, T
and U still name a piece (they clash with no English letter)."""
_SHAPES = {"connect4": _CONNECT4, "cube": _CUBE, "chess4": _CHESS4}


@dataclass(frozen=True)
class Resolved:
    """Play ``move`` (canonical text or what the engine parses)."""

    move: str


@dataclass(frozen=True)
class Select:
    """Select the piece on ``square`` (four-player chess, typed instead of clicked)."""

    square: str
    piece: int
    """Its kind: 1 pawn, 2 knight, 3 bishop, 4 rook, 5 queen, 6 king, 7 promoted queen."""


@dataclass(frozen=True)
class Refused:
    """Not a move here: a catalogue key and its fields, for one line."""

    key: str
    fields: dict[str, object] = field(default_factory=dict)


Outcome = Resolved | Select | Refused


def looks_like_move(game_name: str, text: str) -> bool:
    """True when ``text`` has the shape of a move of ``game_name`` (legal or not)."""
    shape = _SHAPES.get(game_name)
    return shape is not None and shape.match(text.strip()) is not None


def resolve(game: Game, text: str, selected: str | None = None, letters: str = ENGLISH_LETTERS) -> Outcome:
    """Turn a move-shaped line into a move, a selection or a refusal (game not over).

    ``letters``: the piece letters by kind in the user's language (``Si3`` in German is
    ``Ni3``); English letters are understood too where they do not clash.
    """
    raw = text.strip()
    if game.name == "connect4":
        return _connect4(game, raw)
    if game.name == "cube":
        return _cube(game, raw)
    if game.name == "chess4":
        return _chess4(game, raw, selected, letters)
    return Resolved(raw)


def off_board(game: Game, text: str) -> Refused | None:
    """Why ``text`` cannot be a move on this board at all (``None``: it fits the board).

    Asked before the turn: ``9`` on a 7-column board is "no column 9" whoever is to move.
    """
    raw = text.strip()
    if game.name == "connect4":
        outcome = _connect4(game, raw)
    elif game.name == "cube":
        outcome = _cube(game, raw)
    elif game.name == "chess4":
        from p2p.games.chess4.board import maybe_square

        squares = re.findall(r"[a-nA-N]\d{1,2}", raw)
        outcome = next((Refused("move.no_square", {"square": s.lower()})
                        for s in squares if maybe_square(s.lower()) is None), None)
    else:
        return None
    return outcome if isinstance(outcome, Refused) else None


def _kind(letter: str, letters: str) -> int:
    """The piece kind a typed letter names (the user's letters first, then English)."""
    for table in (letters, ENGLISH_LETTERS, GERMAN_LETTERS):
        found = table.find(letter, 1)
        if found > 0:
            return 5 if found == 7 else found  # a promoted queen moves as a queen
    return 0


def _connect4(game: Game, raw: str) -> Outcome:
    width = int(game.options().get("width", 7))  # type: ignore[arg-type]
    digits = raw[1:] if raw[:1] in "pP" else raw
    if digits.isdigit() and not 1 <= int(digits) <= width:
        return Refused("move.no_column", {"column": int(digits), "width": width})
    return Resolved(raw)


def _cube(game: Game, raw: str) -> Outcome:
    low = raw.lower()
    if len(low) != 2 or low[0] not in "abcd" or low[1] not in "1234":
        return Refused("move.no_pillar", {"pillar": low})
    return Resolved(low)


def _chess4(game: Game, raw: str, selected: str | None, letters: str) -> Outcome:
    short = _CHESS4_SHORT.match(raw)
    if short is None:
        return Resolved(raw)  # from-to or castling: the engine's own parser decides
    from p2p.games.chess4.board import maybe_square

    target = short["square"].lower()
    sq = maybe_square(target)
    if sq is None:
        return Refused("move.no_square", {"square": target})
    board = game.position.board  # type: ignore[attr-defined]
    seat = game.to_move()
    piece = board[sq]
    own = bool(piece) and seat is not None and piece >> 3 == seat
    letter = short["piece"]
    wanted = _kind(letter, letters) if letter is not None else None
    if letter is None and own:
        return Select(target, piece & 7)
    if letter is None and selected is not None:
        return Resolved(f"{selected}-{target}")
    movers = []
    for move in game.legal_moves():
        parts = move.split("-")
        if len(parts) != 2 or parts[1] != target:
            continue
        origin = maybe_square(parts[0])
        kind = board[origin] & 7 if origin is not None else 0
        if wanted is None or kind == wanted or (wanted == 5 and kind == 7):
            movers.append(move)
    if len(movers) == 1:
        return Resolved(movers[0])
    if movers:
        return Refused("move.ambiguous", {"square": target, "moves": ", ".join(sorted(movers))})
    if wanted is not None:
        return Refused("move.no_piece_to", {"piece": wanted, "square": target})
    return Refused("move.select_first", {"square": target})
