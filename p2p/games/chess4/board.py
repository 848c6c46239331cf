"""Board geometry of four-player chess: squares, pieces, seats and fixed tables.

The 14x14 board minus its four 3x3 corners (160 squares) lives in a padded mailbox
of 18 rows of 16 cells.  A square is an ``int`` index into that list::

    sq = (rank + 2) * 16 + file          # file 0..13 = a..n, rank 0..13 = 1..14

Two padding columns (14, 15) on the right act as the left padding of the next row,
and two padding rows lie above and below, so a knight's jump from any square lands
on a padding cell (or a cut-off corner) instead of wrapping onto the board.  Padding
and corner cells hold ``OFF``; empty squares hold ``EMPTY`` (0).

A piece is one small int: ``(owner << 3) | kind`` with ``kind`` in ``PAWN`` ..
``DQUEEN`` and ``owner`` a seat 0..3, or ``NEUTRAL`` (4) for a grey piece of unknown
colour read from a FEN4 ``dP``.  ``DQUEEN`` is a promoted queen: it moves like a queen
but is worth 1 point when captured.  Whether a piece is grey is not stored in the
piece: a piece is grey exactly when its owner is out (see ``Position.live``).

>>> square("h1"), name(square("h1"))
(39, 'h1')
"""

from __future__ import annotations

FILES = "abcdefghijklmn"
WIDTH = 16
SIZE = 18 * WIDTH
OFF = 64
EMPTY = 0

PAWN, KNIGHT, BISHOP, ROOK, QUEEN, KING, DQUEEN = 1, 2, 3, 4, 5, 6, 7
PIECE_LETTERS = " PNBRQKD"  # index = kind; D = promoted (1-point) queen

RED, BLUE, YELLOW, GREEN = 0, 1, 2, 3
NEUTRAL = 4
SEATS = (RED, BLUE, YELLOW, GREEN)
SEAT_NAMES = ("Red", "Blue", "Yellow", "Green")
SEAT_LETTERS = "rbyg"
ALL_LIVE = 0b1111

N_, S_, E_, W_ = WIDTH, -WIDTH, 1, -1
ORTHO = (N_, S_, E_, W_)
DIAG = (N_ + E_, N_ + W_, S_ + E_, S_ + W_)
KING_STEPS = ORTHO + DIAG
KNIGHT_STEPS = (
    2 * N_ + E_,
    2 * N_ + W_,
    2 * S_ + E_,
    2 * S_ + W_,
    2 * E_ + N_,
    2 * E_ + S_,
    2 * W_ + N_,
    2 * W_ + S_,
)
SLIDES = {BISHOP: DIAG, ROOK: ORTHO, QUEEN: KING_STEPS, DQUEEN: KING_STEPS}


def piece(owner: int, kind: int) -> int:
    """The piece code of ``kind`` owned by ``owner``."""
    return (owner << 3) | kind


def on_board(file: int, rank: int) -> bool:
    """True for the 160 playing squares (0-based file and rank)."""
    if not (0 <= file < 14 and 0 <= rank < 14):
        return False
    return not ((file < 3 or file > 10) and (rank < 3 or rank > 10))


def sq_of(file: int, rank: int) -> int:
    """Mailbox index of a 0-based file and rank (no check)."""
    return (rank + 2) * WIDTH + file


def file_of(sq: int) -> int:
    return sq % WIDTH


def rank_of(sq: int) -> int:
    return sq // WIDTH - 2


SQUARES: tuple[int, ...] = tuple(
    sq_of(f, r) for r in range(14) for f in range(14) if on_board(f, r)
)
"""The 160 playing squares, a1..n1, a2..n2, ... (rank by rank, file by file)."""

SQUARE_INDEX: dict[int, int] = {sq: i for i, sq in enumerate(SQUARES)}
"""Position of a square in ``SQUARES`` (0..159), used by the byte encoding."""

_NAMES: dict[int, str] = {
    sq: FILES[file_of(sq)] + str(rank_of(sq) + 1) for sq in SQUARES
}
_BY_NAME: dict[str, int] = {n: sq for sq, n in _NAMES.items()}


def name(sq: int) -> str:
    """``"h1"`` for the square index of h1."""
    return _NAMES[sq]


def square(text: str) -> int:
    """The square index of a name like ``"h1"``; ``KeyError`` if it is no playing square."""
    return _BY_NAME[text]


def maybe_square(text: str) -> int | None:
    """The square index of ``text``, or ``None`` if it names no playing square."""
    return _BY_NAME.get(text)


def empty_board() -> list[int]:
    board = [OFF] * SIZE
    for sq in SQUARES:
        board[sq] = EMPTY
    return board


# -- pawns: direction, start line, promotion line, capture steps per seat ---------------

PAWN_PUSH = (N_, E_, S_, W_)
"""Forward step of each seat's pawns: Red up, Blue right, Yellow down, Green left."""

PAWN_CAPTURES = (
    (N_ + W_, N_ + E_),
    (E_ + N_, E_ + S_),
    (S_ + W_, S_ + E_),
    (W_ + N_, W_ + S_),
)


def _line(seat: int, index: int) -> frozenset[int]:
    """Squares of rank ``index`` (Red/Yellow) or file ``index`` (Blue/Green)."""
    if seat in (RED, YELLOW):
        return frozenset(sq for sq in SQUARES if rank_of(sq) == index)
    return frozenset(sq for sq in SQUARES if file_of(sq) == index)


PAWN_START = (_line(RED, 1), _line(BLUE, 1), _line(YELLOW, 12), _line(GREEN, 12))
"""Squares from which a seat's pawn may make its double step (2nd rank / b / 13th / m)."""

PROMOTION = (_line(RED, 7), _line(BLUE, 7), _line(YELLOW, 6), _line(GREEN, 6))
"""Each seat's 8th rank: Red rank 8, Blue file h, Yellow rank 7, Green file g."""

# -- the modern starting array (chess.com default since 2022) ---------------------------

_BACK = (ROOK, KNIGHT, BISHOP, None, None, BISHOP, KNIGHT, ROOK)


def start_pieces() -> dict[int, int]:
    """Square -> piece of the modern array: rK h1 rQ g1, bK a7 bQ a8, yK g14 yQ h14, gK n8 gQ n7."""
    out: dict[int, int] = {}
    kq = {
        RED: ({6: QUEEN, 7: KING}),
        YELLOW: ({6: KING, 7: QUEEN}),
        BLUE: ({6: KING, 7: QUEEN}),
        GREEN: ({6: QUEEN, 7: KING}),
    }
    for i in range(8):
        line = 3 + i
        for seat in SEATS:
            back_kind = _BACK[i]
            kind = back_kind if back_kind is not None else kq[seat][line]
            if seat == RED:
                back, pawn = sq_of(line, 0), sq_of(line, 1)
            elif seat == YELLOW:
                back, pawn = sq_of(line, 13), sq_of(line, 12)
            elif seat == BLUE:
                back, pawn = sq_of(0, line), sq_of(1, line)
            else:
                back, pawn = sq_of(13, line), sq_of(12, line)
            out[back] = piece(seat, kind)
            out[pawn] = piece(seat, PAWN)
    return out


# -- castling (modern array): per seat, short side first, then long side ---------------

SHORT, LONG = 0, 1


def _castle(
    king_from: str, king_to: str, rook_from: str, rook_to: str
) -> tuple[int, int, int, int, tuple[int, ...], int]:
    kf, kt, rf, rt = (square(s) for s in (king_from, king_to, rook_from, rook_to))
    step = 1 if rf > kf else -1
    # Every square strictly between king and rook must be empty.
    unit = WIDTH if abs(rf - kf) >= WIDTH else 1
    between = tuple(range(kf + step * unit, rf, step * unit))
    return (kf, kt, rf, rt, between, (kf + kt) // 2)


CASTLES = (
    (_castle("h1", "j1", "k1", "i1"), _castle("h1", "f1", "d1", "g1")),
    (_castle("a7", "a5", "a4", "a6"), _castle("a7", "a9", "a11", "a8")),
    (_castle("g14", "e14", "d14", "f14"), _castle("g14", "i14", "k14", "h14")),
    (_castle("n8", "n10", "n11", "n9"), _castle("n8", "n6", "n4", "n7")),
)
"""``CASTLES[seat][side] = (king_from, king_to, rook_from, rook_to, between, transit)``.

Castling rights are bits ``1 << (2 * seat + side)`` (``SHORT`` = 0, ``LONG`` = 1): the
short side is the rook three files away (FEN4 "kingside"), the long side four away.
"""

CASTLE_KEEP = [0xFF] * SIZE
"""Rights that survive a move touching a square (king or rook start squares clear bits)."""
for _seat, _sides in enumerate(CASTLES):
    for _side, (_kf, _kt, _rf, _rt, _bt, _tr) in enumerate(_sides):
        CASTLE_KEEP[_kf] &= ~(3 << (2 * _seat)) & 0xFF
        CASTLE_KEEP[_rf] &= ~(1 << (2 * _seat + _side)) & 0xFF
