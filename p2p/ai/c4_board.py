"""Connect Four bitboards: the geometry of a W x H board and a position on it.

The layout is Pascal Pons' (his solver blog, part 6; ``docs/ai.md``): column
``c`` owns bits ``c*(H+1)`` .. ``c*(H+1)+H-1`` (bottom to top) plus one spare bit on top, so
four-in-a-row tests are plain shifts.  A position is two integers: ``current`` (the stones
of the side to move) and ``mask`` (all stones).  Python integers are unbounded, so every
board size works (9 x 7 needs 72 bits); only the position *notation* (one digit per
move) limits the width to 9.

>>> p = Position.parse("4455")
>>> p.moves, p.can_win_next()
(4, False)
>>> Position.parse("445566").can_win_next()  # three in a row, both ends open
True
"""

from __future__ import annotations

MAX_WIDTH = 16
MAX_HEIGHT = 16
NOTATION_WIDTH = 9
"""Widest board the one-digit-per-move position notation can write (columns 1-9)."""


def four_ends(stones: int, shifts: tuple[int, ...], vertical: bool = True) -> int:
    """Every cell that completes a four of ``stones``: on top of a vertical three (when
    ``vertical``), and at either end or in the gap of three along each shift of ``shifts``
    (``Geometry.lines``: a row and both diagonals).  Not masked: callers keep the free cells.

    The one copy of this bit trick, used by ``Geometry.winning_cells`` and the inner
    loops of both searches (``connect4_solver``, ``c4_search``).
    """
    r = (stones << 1) & (stones << 2) & (stones << 3) if vertical else 0
    for s in shifts:
        p = (stones << s) & (stones << 2 * s)
        r |= p & (stones << 3 * s)
        r |= p & (stones >> s)
        p = (stones >> s) & (stones >> 2 * s)
        r |= p & (stones << s)
        r |= p & (stones >> 3 * s)
    return r


class Geometry:
    """Masks and shifts of one board size; shared by every position of that size."""

    __slots__ = (
        "board", "bottom", "columns", "digit_columns", "h1", "height", "lines", "max_score",
        "min_score", "order", "size", "width",
    )

    def __init__(self, width: int = 7, height: int = 6) -> None:
        if not (1 <= width <= MAX_WIDTH and 1 <= height <= MAX_HEIGHT):
            raise ValueError(f"board size {width}x{height} not supported "
                             f"(width 1-{MAX_WIDTH}, height 1-{MAX_HEIGHT})")
        self.width = width
        self.height = height
        self.size = width * height
        self.h1 = height + 1
        self.lines = (self.h1, height, height + 2)
        """The shifts along a row, the rising and the falling diagonal (``four_ends``)."""
        self.bottom = sum(1 << (c * self.h1) for c in range(width))
        self.board = self.bottom * ((1 << height) - 1)
        self.columns = tuple(((1 << height) - 1) << (c * self.h1) for c in range(width))
        self.digit_columns = {str(c + 1): self.columns[c] for c in range(min(width, NOTATION_WIDTH))}
        """The cells of the column each digit of the position notation names."""
        # Centre first, then alternating outwards (Pons' columnOrder).
        self.order = tuple(width // 2 + (1 - 2 * (i % 2)) * (i + 1) // 2 for i in range(width))
        # Score range of Pons' convention (C integer division written for Python).
        self.min_score = -(self.size // 2) + 3
        self.max_score = (self.size + 1) // 2 - 3

    def centre_first(self, possible: int) -> list[tuple[int, int]]:
        """The moves in ``possible`` (one bit per playable column), centre columns first,
        each with its rank (higher: nearer the centre), for the searches to sort on."""
        width = self.width
        columns = self.columns
        return [
            (width - i, possible & columns[c])
            for i, c in enumerate(self.order)
            if possible & columns[c]
        ]

    def winning_cells(self, stones: int, mask: int, lines: str = "all") -> int:
        """Empty cells that would complete a line of four for ``stones``.

        ``lines``: ``"all"``, ``"diagonal"`` (the two diagonals only) or ``"straight"``
        (horizontal and vertical only).
        """
        h = self.height
        if lines == "diagonal":
            return four_ends(stones, (h, h + 2), vertical=False) & (self.board ^ mask)
        if lines == "straight":
            return four_ends(stones, (self.h1,)) & (self.board ^ mask)
        return four_ends(stones, self.lines) & (self.board ^ mask)

    def line_weights(self) -> dict[int, int]:
        """Cells grouped by how many lines of four pass through them: {weight: mask}."""
        groups: dict[int, int] = {}
        for c in range(self.width):
            for r in range(self.height):
                n = 0
                for dc, dr in ((1, 0), (0, 1), (1, 1), (1, -1)):
                    for k in range(4):  # the cell is the k-th of the line
                        c0, r0 = c - k * dc, r - k * dr
                        c3, r3 = c0 + 3 * dc, r0 + 3 * dr
                        if (0 <= c0 < self.width and 0 <= r0 < self.height
                                and 0 <= c3 < self.width and 0 <= r3 < self.height):
                            n += 1
                bit = 1 << (c * self.h1 + r)
                groups[n] = groups.get(n, 0) | bit
        return dict(sorted(groups.items()))

    def row_parity_mask(self, odd: bool) -> int:
        """Cells on odd rows (1st, 3rd, ... counted from the bottom) or on even rows."""
        rows = sum(1 << r for r in range(0 if odd else 1, self.height, 2))
        return sum(rows << (c * self.h1) for c in range(self.width))

    def has_four(self, stones: int) -> bool:
        """True if ``stones`` contain a line of four."""
        for s in (1, self.h1, self.height, self.height + 2):
            m = stones & (stones >> s)
            if m & (m >> 2 * s):
                return True
        return False

    def column_of(self, move_bit: int) -> int:
        """0-based column of a single-bit move."""
        return (move_bit.bit_length() - 1) // self.h1


_GEOMETRIES: dict[tuple[int, int], Geometry] = {}


def geometry(width: int = 7, height: int = 6) -> Geometry:
    """The shared ``Geometry`` of a board size (built once)."""
    key = (width, height)
    geo = _GEOMETRIES.get(key)
    if geo is None:
        geo = _GEOMETRIES[key] = Geometry(width, height)
    return geo


class Position:
    """A Connect Four position as bitboards, from the side to move's point of view.

    A plain class with slots (not a dataclass: ``p2p solve`` imports this module, and
    ``dataclasses`` alone costs it a few milliseconds of start-up); equal when the board
    size and the stones are.
    """

    __slots__ = ("current", "geo", "mask", "moves")

    def __init__(self, geo: Geometry, current: int = 0, mask: int = 0, moves: int = 0) -> None:
        self.geo = geo
        self.current = current
        self.mask = mask
        self.moves = moves

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Position)
        return (self.geo, self.current, self.mask, self.moves) == (other.geo, other.current, other.mask, other.moves)

    __hash__ = None  # type: ignore[assignment]  # mutable, like the dataclass it was

    def __repr__(self) -> str:
        return (f"Position(geo={self.geo!r}, current={self.current!r}, mask={self.mask!r}, "
                f"moves={self.moves!r})")

    @classmethod
    def parse(cls, text: str, width: int = 7, height: int = 6) -> Position:
        """The position after the moves in ``text`` (1-based column digits).

        Raises ``ValueError`` with a one-line reason for a bad character, a column out of
        range, a full column, or any move that ends the game (a winning move or the last
        cell): a solver position is always unfinished.
        """
        if width > NOTATION_WIDTH:
            raise ValueError(f"positions can be written for widths up to {NOTATION_WIDTH} only")
        geo = geometry(width, height)
        text = text.strip()
        pos = _played(geo, text)
        if pos is not None:
            return pos
        # Something is wrong: replay move by move to name the first bad one.
        pos = cls(geo)
        for i, ch in enumerate(text, start=1):
            if ch not in "123456789":
                raise ValueError(f"move {i}: {ch!r} is not a column (1-{width})")
            col = int(ch) - 1
            if col >= width:
                raise ValueError(f"move {i}: column {ch} is out of range (1-{width})")
            if not pos.can_play(col):
                raise ValueError(f"move {i}: column {ch} is full")
            if pos.is_winning_move(col):
                raise ValueError(f"move {i}: column {ch} wins, so the game is over")
            pos.play_column(col)
            if pos.moves == pos.geo.size:
                raise ValueError(f"move {i}: the board is full, so the game is over")
        return pos

    @classmethod
    def from_columns(cls, columns: list[list[int]], to_move: int, height: int) -> Position:
        """The position of a board given as stones per column (bottom first, seat numbers)."""
        geo = geometry(len(columns), height)
        pos = cls(geo)
        for c, stones in enumerate(columns):
            for r, seat in enumerate(stones):
                bit = 1 << (c * geo.h1 + r)
                pos.mask |= bit
                if seat == to_move:
                    pos.current |= bit
            pos.moves += len(stones)
        return pos

    def copy(self) -> Position:
        return Position(self.geo, self.current, self.mask, self.moves)

    def can_play(self, col: int) -> bool:
        """True if column ``col`` (0-based) has room."""
        return not self.mask & (1 << (col * self.geo.h1 + self.geo.height - 1))

    def move_bit(self, col: int) -> int:
        """The cell a stone dropped into ``col`` would take."""
        return (self.mask + self.geo.bottom) & self.geo.columns[col]

    def play(self, move_bit: int) -> None:
        """Drop a stone on cell ``move_bit`` (must be a playable cell)."""
        self.current ^= self.mask
        self.mask |= move_bit
        self.moves += 1

    def play_column(self, col: int) -> None:
        self.play(self.move_bit(col))

    def possible(self) -> int:
        """All playable cells (one per non-full column)."""
        return (self.mask + self.geo.bottom) & self.geo.board

    def winning_cells(self) -> int:
        """Cells where the side to move would complete four."""
        return self.geo.winning_cells(self.current, self.mask)

    def opponent_winning_cells(self) -> int:
        """Cells where the opponent would complete four."""
        return self.geo.winning_cells(self.current ^ self.mask, self.mask)

    def can_win_next(self) -> bool:
        return bool(self.winning_cells() & self.possible())

    def is_winning_move(self, col: int) -> bool:
        return bool(self.winning_cells() & self.move_bit(col))

    def non_losing_moves(self) -> int:
        """Playable cells that do not hand the opponent an immediate win (Pons part 9).

        Zero means every move loses at once.  Assumes the side to move cannot win now.
        """
        possible = self.possible()
        threat = self.opponent_winning_cells()
        forced = possible & threat
        if forced:
            if forced & (forced - 1):
                return 0
            possible = forced
        return possible & ~(threat >> 1)

    def key(self) -> int:
        """A unique integer for this position (Pons: ``current + mask``)."""
        return self.current + self.mask

    def win_score(self) -> int:
        """Score of winning with the next stone: (W*H + 1 - moves) // 2."""
        return (self.geo.size + 1 - self.moves) // 2


def _played(geo: Geometry, text: str) -> Position | None:
    """The position after ``text`` if every move is legal and none ends the game; else
    ``None`` (``Position.parse`` then finds and names the first bad move).

    The fast path of a batch of positions: a stone per move, and three tests at the end.
    A move into a full column places nothing (the carry leaves the column), so fewer
    stones than moves means a full column was played; stones are never removed, so a
    four made by any move is still on the board at the end: no four at the end means no
    move won.

    >>> _played(geometry(), "4455").moves, _played(geometry(), "4444444")
    (4, None)
    """
    digit_columns = geo.digit_columns
    bottom = geo.bottom
    current = mask = 0
    try:
        for ch in text:
            current ^= mask
            mask |= (mask + bottom) & digit_columns[ch]
    except KeyError:  # not a column digit of this board
        return None
    moves = len(text)
    if (mask.bit_count() != moves or moves == geo.size or geo.has_four(current ^ mask)
            or geo.has_four(current)):
        return None
    return Position(geo, current, mask, moves)
