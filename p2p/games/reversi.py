"""Reversi (Othello rules) on an 8x8 or a 6x6 board, with passes.

Black (seat 0) and White (seat 1) place discs in turn; the seat given by the ``first``
option starts (Black by default).  A disc must outflank at least one line of the
opponent's discs (horizontally, vertically or diagonally, with no gap), and every
outflanked disc turns to the mover's colour.  A seat that cannot place a disc passes: its
only legal move is ``NULL_MOVE`` (``"pass"``), a turn that is not a board move
(``p2p.games.base``), recorded and replayed like any move.  When neither seat can place
a disc the game is over and the seat with more discs wins (equal counts: a draw).

Squares are written like chess squares, ``a1`` top left, columns ``a``..``h`` from the
left, rows ``1``..``8`` from the top (the usual Othello notation: Black's four openings
on 8x8 are ``d3``, ``c4``, ``f5`` and ``e6``).  ``scores()`` are the disc counts.

>>> g = Reversi.create({"size": 6})
>>> g.legal_moves()
['c2', 'b3', 'e4', 'd5']
>>> g.push("c2"); g.scores(), g.to_move()
((4, 1), 1)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import ClassVar

from p2p.games.base import (
    NULL_MOVE,
    Game,
    IllegalMove,
    MalformedMove,
    OptionError,
    Options,
    OptionValue,
    Termination,
    check_known,
    option_int,
)

BLACK, WHITE = 0, 1
EMPTY = -1
SIZES = (8, 6)
"""The board sizes (squares per side)."""
DIRECTIONS: tuple[tuple[int, int], ...] = ((-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1))
"""(drow, dcol) of the eight lines through a square."""


def start_cells(size: int) -> list[int]:
    """The start position: two discs of each colour crosswise in the centre."""
    cells = [EMPTY] * (size * size)
    mid = size // 2
    cells[(mid - 1) * size + mid - 1] = cells[mid * size + mid] = WHITE
    cells[(mid - 1) * size + mid] = cells[mid * size + mid - 1] = BLACK
    return cells


@cache
def rays(size: int) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """Per square, the lines of squares leading away from it in the eight directions
    (nearest first; lines shorter than two squares left out: they can outflank nothing)."""
    table = []
    for square in range(size * size):
        row, col = divmod(square, size)
        lines = []
        for dr, dc in DIRECTIONS:
            line = []
            r, c = row + dr, col + dc
            while 0 <= r < size and 0 <= c < size:
                line.append(r * size + c)
                r, c = r + dr, c + dc
            if len(line) >= 2:
                lines.append(tuple(line))
        table.append(tuple(lines))
    return tuple(table)


def flips(cells: list[int], size: int, square: int, seat: int) -> list[int]:
    """The opponent's discs that a disc of ``seat`` on the empty ``square`` turns, in a
    fixed order (direction by direction, nearest first); empty if the move is illegal.

    >>> flips(start_cells(8), 8, 19, BLACK)  # d3 turns d4
    [27]
    """
    if cells[square] != EMPTY:
        return []
    other = 1 - seat
    turned: list[int] = []
    for line in rays(size)[square]:
        if cells[line[0]] != other:
            continue
        for i in range(1, len(line)):
            owner = cells[line[i]]
            if owner == seat:
                turned.extend(line[:i])
                break
            if owner != other:
                break
    return turned


def can_place(cells: list[int], size: int, square: int, seat: int) -> bool:
    """True if a disc of ``seat`` on the empty ``square`` outflanks a line."""
    other = 1 - seat
    for line in rays(size)[square]:
        if cells[line[0]] != other:
            continue
        for i in range(1, len(line)):
            owner = cells[line[i]]
            if owner == seat:
                return True
            if owner != other:
                break
    return False


def board_moves(cells: list[int], size: int, seat: int) -> list[int]:
    """The squares where ``seat`` may place a disc, ascending (row by row)."""
    return [sq for sq in range(size * size) if cells[sq] == EMPTY and can_place(cells, size, sq, seat)]


def square_name(square: int, size: int) -> str:
    """``0`` -> ``"a1"`` (column letter, row number from the top)."""
    row, col = divmod(square, size)
    return f"{chr(ord('a') + col)}{row + 1}"


@dataclass(frozen=True)
class _Ply:
    """What ``pop()`` needs: the text, the mover, the square (``-1`` for a pass) and the
    discs it turned."""

    text: str
    seat: int
    square: int
    turned: tuple[int, ...]


class Reversi(Game):
    """A game of Reversi."""

    name: ClassVar[str] = "reversi"
    title: ClassVar[str] = "Reversi"
    SEAT_NAMES: ClassVar[tuple[str, ...]] = ("Black", "White")
    passes: ClassVar[bool] = True
    resignable: ClassVar[bool] = True

    def __init__(self, size: int = 8, first: int = BLACK) -> None:
        self.size = size
        self.first = first
        self.cells = start_cells(size)
        """The squares row by row from the top: ``BLACK``, ``WHITE`` or ``EMPTY``."""
        self._plies: list[_Ply] = []
        self.resigned: int | None = None

    # -- construction ---------------------------------------------------------------

    @classmethod
    def create(cls, options: Options | None = None) -> Reversi:
        """A new game; options ``size`` (8 or 6) and ``first`` (0: Black starts)."""
        options = options or {}
        check_known(options, {"size", "first"})
        size = option_int(options, "size", 8, 4, 10)
        if size not in SIZES:
            raise OptionError(f"option size must be 8 or 6, not {size}", "reversi_size", size=size)
        return cls(size, option_int(options, "first", BLACK, 0, 1))

    def options(self) -> dict[str, OptionValue]:
        return {"size": self.size, "first": self.first}

    def copy(self) -> Reversi:
        other = Reversi(self.size, self.first)
        other.cells = list(self.cells)
        other._plies = list(self._plies)
        other.resigned = self.resigned
        return other

    # -- state -----------------------------------------------------------------------

    def _side(self) -> int:
        return (self.first + len(self._plies)) % 2

    def is_over(self) -> bool:
        if self.resigned is not None:
            return True
        side = self._side()
        return not board_moves(self.cells, self.size, side) and not board_moves(self.cells, self.size, 1 - side)

    def to_move(self) -> int | None:
        return None if self.is_over() else self._side()

    def termination(self) -> Termination:
        if self.resigned is not None:
            return Termination.RESIGNATION
        return Termination.FULL_BOARD if EMPTY not in self.cells else Termination.NO_MOVES

    def scores(self) -> tuple[int, ...]:
        """The discs of each colour on the board."""
        return (self.cells.count(BLACK), self.cells.count(WHITE))

    def winners(self) -> tuple[int, ...]:
        if self.resigned is not None:
            return (1 - self.resigned,)
        if not self.is_over():
            return ()
        black, white = self.scores()
        return () if black == white else ((BLACK,) if black > white else (WHITE,))

    def history(self) -> list[str]:
        return [ply.text for ply in self._plies] + self.resignation_entries()

    def last_move(self) -> tuple[int, int, tuple[int, ...]] | None:
        """(seat, square or ``-1`` for a pass, turned discs) of the last move, or ``None``."""
        if not self._plies:
            return None
        ply = self._plies[-1]
        return ply.seat, ply.square, ply.turned

    # -- moves -----------------------------------------------------------------------

    def legal_moves(self) -> list[str]:
        if self.is_over():
            return []
        squares = board_moves(self.cells, self.size, self._side())
        return [square_name(sq, self.size) for sq in squares] if squares else [NULL_MOVE]

    def parse(self, text: str) -> int:
        """The square of a square's text (``-1`` for ``pass``); raises ``MalformedMove``."""
        raw = text.strip().lower()
        if raw == NULL_MOVE:
            return -1
        last = chr(ord("a") + self.size - 1)
        if len(raw) < 2 or not "a" <= raw[0] <= last or not raw[1:].isdigit() or not raw[1:].isascii():
            raise MalformedMove(f"{text.strip()!r} is not a square of the board", "not_square", square=text.strip())
        row = int(raw[1:])
        if not 1 <= row <= self.size:
            raise MalformedMove(f"{text.strip()!r} is not a square of the board", "not_square", square=text.strip())
        return (row - 1) * self.size + ord(raw[0]) - ord("a")

    def normalize(self, text: str) -> str:
        square = self.parse(text)
        return NULL_MOVE if square < 0 else square_name(square, self.size)

    def push(self, move: str) -> None:
        square = self.parse(move)
        seat = self.to_move()
        if seat is None:
            raise IllegalMove("the game is over", "over")
        own = board_moves(self.cells, self.size, seat)
        if square < 0:
            if own:
                raise IllegalMove("you may pass only when no disc can be placed", "reversi_no_pass")
            self._plies.append(_Ply(NULL_MOVE, seat, -1, ()))
            return
        name = square_name(square, self.size)
        if not own:
            raise IllegalMove(f"no disc can be placed: pass (not {name})", "reversi_must_pass", square=name)
        if self.cells[square] != EMPTY:
            raise IllegalMove(f"{name} is taken", "reversi_taken", square=name)
        turned = flips(self.cells, self.size, square, seat)
        if not turned:
            raise IllegalMove(f"a disc on {name} turns no disc", "reversi_no_flip", square=name)
        self.cells[square] = seat
        for sq in turned:
            self.cells[sq] = seat
        self._plies.append(_Ply(name, seat, square, tuple(turned)))

    def pop(self) -> str:
        resignation = self.pop_resignation()
        if resignation is not None:
            return resignation
        if not self._plies:
            raise IndexError("no move to take back")
        ply = self._plies.pop()
        if ply.square >= 0:
            self.cells[ply.square] = EMPTY
            for sq in ply.turned:
                self.cells[sq] = 1 - ply.seat
        return ply.text

    # -- encodings ---------------------------------------------------------------------

    def encode(self) -> bytes:
        """Size, first seat, side to move (255: over), resigner (255: none), the squares."""
        side = self.to_move()
        head = bytes([self.size, self.first, 255 if side is None else side])
        resigned = bytes([255 if self.resigned is None else self.resigned])
        return head + resigned + bytes(c + 1 for c in self.cells)

    def render(self) -> str:
        """Rows from the top, ``X`` Black, ``O`` White, ``.`` empty."""
        letters = " ".join(chr(ord("a") + c) for c in range(self.size))
        rows = [f"   {letters}"]
        for r in range(self.size):
            marks = " ".join(".XO"[self.cells[r * self.size + c] + 1] for c in range(self.size))
            rows.append(f"{r + 1:>2} {marks}")
        return "\n".join(rows) + "\n"
