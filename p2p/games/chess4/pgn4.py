"""PGN4 export of a four-player chess game (chess.com style, free-for-all).

Tags: ``Variant "FFA"``, ``RuleVariants "EnPassant PromoteTo=D"``, ``StartFen4`` (``"4PC"``
for the modern start with Red first, else the full FEN4), ``Result`` ("Red: 25 - Blue: 10
..." in score order, ``*`` while running) and ``Termination``; callers may add more
(``Red``, ``Date`` ...).  Movetext is one line per round, plies separated by ``..``::

    1. h2-h4 .. b9-d9 .. Nj14-i12 .. m8-l8
    2. Qg1xQn8+ .. R .. ...

Each ply is long algebraic with the piece letter (none for pawns, ``D`` for a promoted
queen), ``x`` plus the captured piece's letter for captures, ``O-O`` / ``O-O-O``, ``=D``
for a promotion, ``+`` for a check given to a live king, ``#`` for a mate.  A resignation
is written ``R`` in the resigning seat's place; a stalemated seat's ``S`` follows the move
that passed the turn to it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from p2p.games.chess4.board import PAWN, PIECE_LETTERS, SEAT_NAMES, SEATS, name
from p2p.games.chess4.movegen import CASTLE, EP, PROMO, Position, attacked


class Chess4(Protocol):
    """What the export reads of a game (``p2p.games.chess4.game.Chess4``): its options,
    its position and the movetext token of each history entry."""

    _tokens: list[str]

    def options(self) -> Mapping[str, object]: ...

    @property
    def position(self) -> Position: ...

_TAG_ESCAPES = str.maketrans({"\\": "\\\\", '"': '\\"'})


def _letter(p: int) -> str:
    k = p & 7
    return "" if k == PAWN else PIECE_LETTERS[k]


def move_token(pos: Position, m: int) -> str:
    """The PGN4 text of legal move ``m`` before it is played (without check marks)."""
    b = pos.board
    fr = m & 511
    to = (m >> 9) & 511
    fl = (m >> 18) & 15
    if fl & CASTLE:
        return "O-O" if (m >> 22) == 0 else "O-O-O"
    cap = b[to]
    text = _letter(b[fr]) + name(fr)
    if cap or fl & EP:
        text += "x" + (_letter(cap) if cap else "") + name(to)
    else:
        text += "-" + name(to)
    if fl & PROMO:
        text += "=D"
    return text


def suffix(pos: Position) -> str:
    """Check/mate marks for the move just made, plus ``S`` tokens for stalemated seats."""
    _kingcap, mated, stalemated = pos.last_eliminations()
    mover = pos._stack[-1][8]
    check = any(
        attacked(pos.board, pos.kings[s], 1 << mover)
        for s in SEATS
        if s != mover and pos.live >> s & 1
    )
    out = ("+" if check else "") + ("#" if mated else "")
    for s in SEATS:
        if stalemated >> s & 1:
            out += f" S:{s}"
    return out


def export(game: Chess4, tags: dict[str, str] | None = None) -> str:
    """The whole game as PGN4 text."""
    pos = game.position
    start = game.options().get("fen4")
    first = game.options()["first"]
    head: dict[str, str] = {
        "Variant": "FFA",
        "RuleVariants": "EnPassant PromoteTo=D",
        "StartFen4": "4PC" if start is None and first == 0 else _start_fen(game),
    }
    if pos.over:
        order = sorted(SEATS, key=lambda s: (-pos.scores[s], s))
        head["Result"] = " - ".join(f"{SEAT_NAMES[s]}: {pos.scores[s]}" for s in order)
        head["Termination"] = pos.end_reason
    else:
        head["Result"] = "*"
    head.update(tags or {})
    lines = [f'[{k} "{str(v).translate(_TAG_ESCAPES)}"]' for k, v in head.items()]
    lines.append("")
    lines.extend(_movetext(game))
    return "\n".join(lines).rstrip() + "\n"


def _start_fen(game: Chess4) -> str:
    start = game.options().get("fen4")
    if isinstance(start, str):
        return start
    from p2p.games.chess4.fen4 import START_FEN4, TURN_LETTERS

    first = game.options()["first"]
    assert isinstance(first, int)  # validated by Chess4.create
    return TURN_LETTERS[first] + START_FEN4[1:]


def _movetext(game: Chess4) -> list[str]:
    """Rounds: a new line whenever the seat of a ply is not after the previous one."""
    seats = _entry_seats(game)
    tokens = game._tokens
    lines: list[str] = []
    current: list[str] = []
    last = 99
    rnd = 0
    for seat, token in zip(seats, tokens):
        extra = []
        if " S:" in token:
            token, *marks = token.split(" S:")
            extra = [int(x) for x in marks]
        for s, tok in [(seat, token)] + [(x, "S") for x in extra]:
            if s <= last:
                if current:
                    lines.append(f"{rnd}. " + " .. ".join(current))
                rnd += 1
                current = []
            current.append(tok)
            last = s
    if current:
        lines.append(f"{rnd}. " + " .. ".join(current))
    return lines


def _entry_seats(game: Chess4) -> list[int]:
    """The seat of each history entry: the mover of a move, the resigner of a resignation."""
    seats = []
    for rec in game.position._stack:
        m = rec[0]
        seats.append(-1 - m if m < 0 else rec[8])
    return seats
