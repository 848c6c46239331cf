"""Vier in einer Reihe: Connect Four with gravity, on 7x6 and larger boards, with Pop Out.

Columns are numbered ``1``..``W`` from the left; a move is the column's number as text
(``"4"``).  In the Pop Out variant a move may also pop one of your own stones from the
bottom row, written ``"p4"``: every stone above it slides down one row.

Red (seat 0) and Yellow (seat 1) take turns from the seat given by the ``first`` option.
Four or more in a row wins: horizontally, vertically or on either diagonal.  The winning
move reports every line it completes (two at once is a "double four").  A full board
without four is a draw.

Pop Out decisions (the published rules leave room; written down in ``POPOUT_RULES``):
- a pop may complete lines for both players at once: the player who popped wins, since
  it is their move that decides the round (lines of the opponent do not count then);
- when the board is full, the player to move must pop if they can; a player with no
  legal move (full board, no own stone at the bottom) draws the round;
- the third occurrence of the same position with the same player to move is a draw, so
  that a Pop Out round always ends.

>>> g = Connect4.create()
>>> for col in "4556": g.push(col)
>>> g.to_move(), g.history()
(0, ['4', '5', '5', '6'])
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import ClassVar

from p2p.games.base import (
    Game,
    IllegalMove,
    MalformedMove,
    Options,
    OptionValue,
    Termination,
    check_known,
    option_bool,
    option_int,
)

RED, YELLOW = 0, 1
SEAT_NAMES = ("Red", "Yellow")
STONES = ("X", "O")
EMPTY = -1

DIRECTIONS: tuple[tuple[int, int], ...] = ((1, 0), (0, 1), (1, 1), (1, -1))
"""(dcol, drow) for horizontal, vertical, rising and falling diagonal lines."""

POPOUT_RULES = (
    "A pop that completes lines for both players wins for the player who popped.",
    "On a full board the player to move must pop; with no legal move the round is drawn.",
    "The third occurrence of a position with the same player to move is a draw.",
)

SIZES = ((7, 6), (8, 7), (9, 7))
"""The board sizes people choose from (any width and height from 4 to 10 are accepted)."""


@dataclass(frozen=True)
class Line:
    """A completed line of four or more: its owner and its cells as (column, row), 0-based."""

    seat: int
    cells: tuple[tuple[int, int], ...]


@dataclass
class _Ply:
    """What ``pop()`` needs to take a move back."""

    text: str
    seat: int
    column: int
    popped: bool
    lines: tuple[Line, ...]
    repetition_key: bytes


class Connect4(Game):
    """A round of Vier in einer Reihe."""

    name: ClassVar[str] = "connect4"
    title: ClassVar[str] = "Vier in einer Reihe"
    SEAT_NAMES: ClassVar[tuple[str, ...]] = SEAT_NAMES
    resignable: ClassVar[bool] = True

    def __init__(self, width: int = 7, height: int = 6, popout: bool = False, first: int = RED):
        self.width = width
        self.height = height
        self.popout = popout
        self.first = first
        self.columns: list[list[int]] = [[] for _ in range(width)]
        """Stones per column, bottom first, as seat numbers."""
        self.winning_lines: tuple[Line, ...] = ()
        self._plies: list[_Ply] = []
        self.resigned: int | None = None
        self._seen: Counter[bytes] = Counter()
        if popout:
            self._seen[self._repetition_key()] += 1

    # -- construction ---------------------------------------------------------------

    @classmethod
    def create(cls, options: Options | None = None) -> Connect4:
        """A new round; options ``width`` (7), ``height`` (6), ``popout`` (False), ``first`` (0)."""
        options = options or {}
        check_known(options, {"width", "height", "popout", "first"})
        return cls(
            width=option_int(options, "width", 7, 4, 10),
            height=option_int(options, "height", 6, 4, 10),
            popout=option_bool(options, "popout", False),
            first=option_int(options, "first", RED, 0, 1),
        )

    def options(self) -> dict[str, OptionValue]:
        return {"width": self.width, "height": self.height, "popout": self.popout, "first": self.first}

    def copy(self) -> Connect4:
        other = Connect4(self.width, self.height, self.popout, self.first)
        other.columns = [list(col) for col in self.columns]
        other.winning_lines = self.winning_lines
        other._plies = list(self._plies)
        other.resigned = self.resigned
        other._seen = Counter(self._seen)
        return other

    # -- state -----------------------------------------------------------------------

    def cell(self, column: int, row: int) -> int:
        """Seat owning the cell at (column, row), 0-based from bottom left, or ``EMPTY``."""
        stones = self.columns[column]
        return stones[row] if row < len(stones) else EMPTY

    def _side(self) -> int:
        return (self.first + len(self._plies)) % 2

    def is_over(self) -> bool:
        if self.resigned is not None or self.winning_lines:
            return True
        if self.popout:
            return self._seen[self._repetition_key()] >= 3 or not self._legal_ints(self._side())
        return len(self._plies) == self.width * self.height

    def to_move(self) -> int | None:
        return None if self.is_over() else self._side()

    def termination(self) -> Termination:
        if self.resigned is not None:
            return Termination.RESIGNATION
        if self.winning_lines:
            return Termination.LINE
        if self.popout and self._seen[self._repetition_key()] >= 3:
            return Termination.REPETITION
        if self.popout and not self._legal_ints(self._side()):
            return Termination.NO_MOVES
        return Termination.FULL_BOARD

    def winners(self) -> tuple[int, ...]:
        if self.resigned is not None:
            return (1 - self.resigned,)
        if self.winning_lines:
            return (self.winning_lines[0].seat,)
        return ()

    def scores(self) -> tuple[int, ...]:
        won = self.winners()
        return tuple(1 if seat in won else 0 for seat in range(2))

    def history(self) -> list[str]:
        return [ply.text for ply in self._plies] + self.resignation_entries()

    def last_column(self) -> int | None:
        """0-based column of the last move, for highlighting."""
        return self._plies[-1].column if self._plies else None

    # -- moves -----------------------------------------------------------------------

    def _legal_ints(self, seat: int) -> list[tuple[int, bool]]:
        moves = [(c, False) for c in range(self.width) if len(self.columns[c]) < self.height]
        if self.popout:
            moves += [(c, True) for c in range(self.width) if self.columns[c] and self.columns[c][0] == seat]
        return moves

    def legal_moves(self) -> list[str]:
        if self.is_over():
            return []
        return [self._text(c, popped) for c, popped in self._legal_ints(self._side())]

    @staticmethod
    def _text(column: int, popped: bool) -> str:
        return f"p{column + 1}" if popped else str(column + 1)

    def parse(self, text: str) -> tuple[int, bool]:
        """(0-based column, is_pop) for a move text; raises ``MalformedMove``."""
        raw = text.strip().lower()
        popped = raw.startswith("p")
        digits = raw[1:] if popped else raw
        if not digits.isdigit() or not digits.isascii():
            shown = text.strip() or text  # a blank move is shown as itself (' ', '\r'), not as ''
            raise MalformedMove(f"{shown!r} is not a column (1-{self.width})", "not_column", text=shown, max=self.width)
        column = int(digits)
        if not 1 <= column <= self.width:
            raise MalformedMove(f"column {column} does not exist (1-{self.width})", "no_column", column=column, max=self.width)
        if popped and not self.popout:
            raise MalformedMove(f"{text.strip()!r}: popping is only allowed in Pop Out", "no_popout", text=text.strip())
        return column - 1, popped

    def split_moves(self, chunk: str) -> list[str]:
        """Moves may be run together (``4453``), as in the usual notation: only on boards
        of at most 9 columns, where every column is one character; a Pop Out move
        (``p3``) stays whole."""
        if len(chunk) > 1 and self.width <= 9 and not chunk.lower().startswith("p"):
            return list(chunk)
        return [chunk]

    def normalize(self, text: str) -> str:
        return self._text(*self.parse(text))

    def push(self, move: str) -> None:
        column, popped = self.parse(move)
        if self.is_over():
            raise IllegalMove("the round is over", "over")
        seat = self._side()
        stones = self.columns[column]
        if popped:
            if not stones or stones[0] != seat:
                raise IllegalMove(f"column {column + 1}: no stone of yours at the bottom to pop", "pop_none", column=column + 1)
            stones.pop(0)
            lines = self._lines_after_pop(seat, column)
        else:
            if len(stones) >= self.height:
                raise IllegalMove(f"column {column + 1} is full", "column_full", column=column + 1)
            stones.append(seat)
            lines = self._lines_through(column, len(stones) - 1)
        ply = _Ply(self._text(column, popped), seat, column, popped, lines, b"")
        self._plies.append(ply)
        self.winning_lines = lines
        if self.popout:
            ply.repetition_key = self._repetition_key()  # the position after the move
            self._seen[ply.repetition_key] += 1

    def pop(self) -> str:
        resignation = self.pop_resignation()
        if resignation is not None:
            return resignation
        if not self._plies:
            raise IndexError("no move to take back")
        ply = self._plies.pop()
        if self.popout:
            self._seen[ply.repetition_key] -= 1
            if not self._seen[ply.repetition_key]:
                del self._seen[ply.repetition_key]
        if ply.popped:
            self.columns[ply.column].insert(0, ply.seat)
        else:
            self.columns[ply.column].pop()
        self.winning_lines = self._plies[-1].lines if self._plies else ()
        return ply.text

    # -- lines -----------------------------------------------------------------------

    def _run(self, column: int, row: int, dc: int, dr: int) -> tuple[tuple[int, int], ...]:
        """The maximal run of the stone at (column, row) along direction (dc, dr)."""
        seat = self.cell(column, row)
        back: list[tuple[int, int]] = []
        c, r = column - dc, row - dr
        while 0 <= c < self.width and 0 <= r < self.height and self.cell(c, r) == seat:
            back.append((c, r))
            c, r = c - dc, r - dr
        cells = back[::-1] + [(column, row)]
        c, r = column + dc, row + dr
        while 0 <= c < self.width and 0 <= r < self.height and self.cell(c, r) == seat:
            cells.append((c, r))
            c, r = c + dc, r + dr
        return tuple(cells)

    def _lines_through(self, column: int, row: int) -> tuple[Line, ...]:
        seat = self.cell(column, row)
        lines = []
        for dc, dr in DIRECTIONS:
            cells = self._run(column, row, dc, dr)
            if len(cells) >= 4:
                lines.append(Line(seat, cells))
        return tuple(lines)

    def _lines_after_pop(self, seat: int, column: int) -> tuple[Line, ...]:
        """Lines after a pop: every stone of the column moved, so test the whole column.

        Lines of the popping seat win; the opponent's count only if the popper has none.
        """
        found: dict[tuple[tuple[int, int], ...], Line] = {}
        for row in range(len(self.columns[column])):
            for line in self._lines_through(column, row):
                found.setdefault(line.cells, line)
        lines = sorted(found.values(), key=lambda line: (line.seat != seat, line.cells))
        own = tuple(line for line in lines if line.seat == seat)
        return own if own else tuple(lines)

    # -- encodings ---------------------------------------------------------------------

    def _repetition_key(self) -> bytes:
        return bytes([self._side()]) + self._board_bytes()

    def _board_bytes(self) -> bytes:
        out = bytearray()
        for stones in self.columns:
            out.append(len(stones))
            out.extend(stones)
        return bytes(out)

    def encode(self) -> bytes:
        head = bytes([self.width, self.height, int(self.popout), self.first, self._side()])
        resigned = bytes([255 if self.resigned is None else self.resigned])
        # In Pop Out the repetition counts are part of the state (they decide draws).
        counts = b""
        if self.popout:
            counts = b"".join(key + bytes([n]) for key, n in sorted(self._seen.items()))
        return head + resigned + self._board_bytes() + counts

    def render(self) -> str:
        rows = []
        for row in range(self.height - 1, -1, -1):
            cells = []
            for column in range(self.width):
                seat = self.cell(column, row)
                cells.append("." if seat == EMPTY else STONES[seat])
            rows.append("|" + " ".join(cells) + "|")
        rows.append("+" + "-" * (2 * self.width - 1) + "+")
        rows.append(" " + " ".join(str(c + 1) for c in range(self.width)))
        return "\n".join(rows)
