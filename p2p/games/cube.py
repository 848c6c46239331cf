"""Viergewinnt 3D: a 4x4x4 cube with gravity for 2 or 3 players, played for points.

The 16 pillars are named ``a1``..``d4`` (file a-d, row 1-4); a stone drops to the lowest
free level of its pillar.  All 76 lines of four count: 16 each along files, rows and
pillars (48), the 2 diagonals of each of the 12 axis-parallel planes (24), and the 4
space diagonals.  A four does not end the game: each own line
a move completes scores one point, one move can complete several.  The game ends when all
64 cells are full; the most points win, a shared top score is shared.

Seats move in fixed order starting from the ``first`` option; with 3 players the
starting seat places 22 stones and the others 21.

>>> g = Cube.create({"players": 2})
>>> for pillar in ("a1", "b1", "a1", "b1"): g.push(pillar)
>>> g.height("a1"), g.to_move()
(2, 0)
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product
from typing import ClassVar

from p2p.games.base import (
    Game,
    IllegalMove,
    MalformedMove,
    Options,
    OptionValue,
    check_known,
    option_int,
)

SIZE = 4
CELLS = SIZE**3
FILES = "abcd"
SEAT_NAMES = ("Red", "Yellow", "Blue")
STONES = ("X", "O", "+")
EMPTY = -1


def cell_index(x: int, y: int, z: int) -> int:
    """Cell number of file x, row y, level z (all 0-based, level 0 at the bottom)."""
    return x + SIZE * y + SIZE * SIZE * z


def pillar_name(pillar: int) -> str:
    """``a1``..``d4`` for pillar numbers 0..15 (pillar = x + 4*y)."""
    return f"{FILES[pillar % SIZE]}{pillar // SIZE + 1}"


def _all_lines() -> tuple[tuple[int, ...], ...]:
    """The 76 lines of four, each as a sorted tuple of cell numbers, in a fixed order."""
    lines: set[tuple[int, ...]] = set()
    directions = [d for d in product((-1, 0, 1), repeat=3) if d > (0, 0, 0)]
    for x, y, z in product(range(SIZE), repeat=3):
        for dx, dy, dz in directions:
            end = (x + 3 * dx, y + 3 * dy, z + 3 * dz)
            if all(0 <= v < SIZE for v in end):
                lines.add(tuple(sorted(cell_index(x + i * dx, y + i * dy, z + i * dz) for i in range(4))))
    return tuple(sorted(lines))


LINES: tuple[tuple[int, ...], ...] = _all_lines()
LINES_THROUGH: tuple[tuple[int, ...], ...] = tuple(
    tuple(i for i, line in enumerate(LINES) if cell in line) for cell in range(CELLS)
)
"""For every cell, the indices (into ``LINES``) of the lines through it."""

assert len(LINES) == 76


@dataclass(frozen=True)
class _Ply:
    text: str
    seat: int
    cell: int
    completed: tuple[int, ...]


class Cube(Game):
    """A game of Viergewinnt 3D."""

    name: ClassVar[str] = "cube"
    title: ClassVar[str] = "Viergewinnt 3D"
    SEAT_NAMES: ClassVar[tuple[str, ...]] = SEAT_NAMES

    def __init__(self, players: int = 2, first: int = 0):
        self._players = players
        self.first = first
        self.board: list[int] = [EMPTY] * CELLS
        self.heights: list[int] = [0] * (SIZE * SIZE)
        self.points: list[int] = [0] * players
        self.lines_of: list[list[int]] = [[] for _ in range(players)]
        """Indices into ``LINES`` completed by each seat, in the order they were made."""
        self._plies: list[_Ply] = []

    @classmethod
    def create(cls, options: Options | None = None) -> Cube:
        """A new game; options ``players`` (2 or 3, default 2) and ``first`` (starting seat)."""
        options = options or {}
        check_known(options, {"players", "first"})
        players = option_int(options, "players", 2, 2, 3)
        return cls(players=players, first=option_int(options, "first", 0, 0, players - 1))

    def options(self) -> dict[str, OptionValue]:
        return {"players": self._players, "first": self.first}

    def copy(self) -> Cube:
        other = Cube(self._players, self.first)
        other.board = list(self.board)
        other.heights = list(self.heights)
        other.points = list(self.points)
        other.lines_of = [list(lines) for lines in self.lines_of]
        other._plies = list(self._plies)
        return other

    # -- state -----------------------------------------------------------------------

    @property
    def players(self) -> int:
        return self._players

    def is_over(self) -> bool:
        return len(self._plies) == CELLS

    def to_move(self) -> int | None:
        return None if self.is_over() else (self.first + len(self._plies)) % self._players

    def scores(self) -> tuple[int, ...]:
        return tuple(self.points)

    def winners(self) -> tuple[int, ...]:
        if not self.is_over():
            return ()
        top = max(self.points)
        return tuple(seat for seat, points in enumerate(self.points) if points == top)

    def history(self) -> list[str]:
        return [ply.text for ply in self._plies]

    def height(self, pillar: str) -> int:
        """How many stones stand in a pillar."""
        return self.heights[self.parse(pillar)]

    def last_cell(self) -> int | None:
        """Cell number of the last stone, for highlighting."""
        return self._plies[-1].cell if self._plies else None

    def last_completed(self) -> tuple[tuple[int, ...], ...]:
        """The lines (as cell tuples) the last move completed."""
        return tuple(LINES[i] for i in self._plies[-1].completed) if self._plies else ()

    # -- moves -----------------------------------------------------------------------

    def legal_moves(self) -> list[str]:
        return [pillar_name(p) for p in range(SIZE * SIZE) if self.heights[p] < SIZE]

    def parse(self, text: str) -> int:
        """Pillar number 0..15 for a pillar name; raises ``MalformedMove``."""
        raw = text.strip().lower()
        if len(raw) != 2 or raw[0] not in FILES or raw[1] not in "1234":
            raise MalformedMove(f"{text.strip()!r} is not a pillar (a1-d4)", "not_pillar", text=text.strip())
        return FILES.index(raw[0]) + SIZE * (int(raw[1]) - 1)

    def normalize(self, text: str) -> str:
        return pillar_name(self.parse(text))

    def push(self, move: str) -> None:
        pillar = self.parse(move)
        if self.is_over():
            raise IllegalMove("the game is over", "over")
        if self.heights[pillar] >= SIZE:
            raise IllegalMove(f"pillar {pillar_name(pillar)} is full", "pillar_full", pillar=pillar_name(pillar))
        self.drop(pillar)

    def drop(self, pillar: int) -> tuple[int, ...]:
        """Fast path for searches: drop a stone without parsing; returns completed lines."""
        seat = (self.first + len(self._plies)) % self._players
        cell = pillar + SIZE * SIZE * self.heights[pillar]
        self.heights[pillar] += 1
        self.board[cell] = seat
        board = self.board
        completed = tuple(
            i for i in LINES_THROUGH[cell] if all(board[c] == seat for c in LINES[i])
        )
        self.points[seat] += len(completed)
        self.lines_of[seat].extend(completed)
        self._plies.append(_Ply(pillar_name(pillar), seat, cell, completed))
        return completed

    def pop(self) -> str:
        if not self._plies:
            raise IndexError("no move to take back")
        ply = self._plies.pop()
        self.board[ply.cell] = EMPTY
        self.heights[ply.cell % (SIZE * SIZE)] -= 1
        self.points[ply.seat] -= len(ply.completed)
        if ply.completed:
            del self.lines_of[ply.seat][-len(ply.completed) :]
        return ply.text

    # -- encodings ---------------------------------------------------------------------

    def encode(self) -> bytes:
        head = bytes([self._players, self.first, len(self._plies)])
        cells = bytes(255 if v == EMPTY else v for v in self.board)
        return head + cells + bytes(self.points)

    def render(self) -> str:
        """The four levels side by side, level 1 (bottom) on the left, row 4 on top."""
        header = "   ".join(f"level {z + 1}".ljust(9) for z in range(SIZE))
        rows = [header]
        for y in range(SIZE - 1, -1, -1):
            parts = []
            for z in range(SIZE):
                stones = []
                for x in range(SIZE):
                    seat = self.board[cell_index(x, y, z)]
                    stones.append("." if seat == EMPTY else STONES[seat])
                parts.append(f"{y + 1} " + " ".join(stones))
            rows.append("   ".join(part.ljust(9) for part in parts))
        rows.append("   ".join("  a b c d".ljust(9) for _ in range(SIZE)))
        return "\n".join(rows)
