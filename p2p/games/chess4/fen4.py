"""FEN4: reading and writing four-player chess positions.

Grammar (chess.com / the ``fen4`` crate)::

    turn - dead - castleKingside - castleQueenside - points - halfmoveClock [- {extras}] - board

* ``turn``: R, B, Y or G; ``dead``, the castling fields and ``points``: four comma-separated
  values in R, B, Y, G order.  "Kingside" is the short side (rook three squares away).
* ``board``: 14 ranks from rank 14 down to rank 1, ``/``-separated; cells are
  comma-separated: a piece ``rP``, ``bK`` ..., a count of empty cells, or ``x`` for a
  cut-off corner cell (both corner dialects are read; we write counts).
* Grey pieces: ``dP`` (colour unknown) or ``drP`` (Red's, grey); a player marked dead
  has all pieces grey anyway.  Our extension: letter ``D`` is a promoted (1-point) queen,
  which standard FEN4 cannot express.
* Extras we read and write: ``{'enPassant':('e3:e4','','','')}``, one ``skipped:landing``
  entry per seat (a single square is read as the skipped square).  Others are ignored.

Every error is a ``ValueError`` with a one-line message.
"""

from __future__ import annotations

import ast

from p2p.games.chess4.board import (
    EMPTY,
    FILES,
    KING,
    NEUTRAL,
    OFF,
    PAWN,
    PAWN_PUSH,
    PIECE_LETTERS,
    PROMOTION,
    SEAT_LETTERS,
    SEAT_NAMES,
    SEATS,
    maybe_square,
    name,
    on_board,
    sq_of,
)
from p2p.games.chess4.movegen import Position

TURN_LETTERS = "RBYG"

START_FEN4 = (
    "R-0,0,0,0-1,1,1,1-1,1,1,1-0,0,0,0-0-"
    "3,yR,yN,yB,yK,yQ,yB,yN,yR,3/3,yP,yP,yP,yP,yP,yP,yP,yP,3/14/"
    "bR,bP,10,gP,gR/bN,bP,10,gP,gN/bB,bP,10,gP,gB/bQ,bP,10,gP,gK/"
    "bK,bP,10,gP,gQ/bB,bP,10,gP,gB/bN,bP,10,gP,gN/bR,bP,10,gP,gR/14/"
    "3,rP,rP,rP,rP,rP,rP,rP,rP,3/3,rR,rN,rB,rQ,rK,rB,rN,rR,3"
)
"""The modern starting array, Red to move (numeric-corner dialect)."""


def _four(field: str, what: str, allowed: tuple[str, ...] | None = None) -> list[str]:
    parts = [p.strip() for p in field.split(",")]
    if len(parts) != 4:
        raise ValueError(
            f"bad FEN4: {what} needs 4 comma-separated values, got {field!r}"
        )
    if allowed is not None:
        for p in parts:
            if p not in allowed:
                raise ValueError(
                    f"bad FEN4: {what} value {p!r} is not one of {', '.join(allowed)}"
                )
    return parts


def _flags(field: str, what: str) -> list[bool]:
    return [p in ("1", "true") for p in _four(field, what, ("0", "1", "true", "false"))]


def _split(text: str) -> tuple[list[str], str]:
    """The six header fields and the board; extras (``{...}``) returned separately."""
    extras = ""
    if "{" in text:
        i = text.index("{")
        j = text.rfind("}")
        if j < i:
            raise ValueError("bad FEN4: unbalanced '{' in the extras")
        extras = text[i : j + 1]
        text = text[:i].rstrip().rstrip("-") + "-" + text[j + 1 :].lstrip().lstrip("-")
    fields = text.split("-")
    if len(fields) != 7:
        raise ValueError(
            f"bad FEN4: expected 7 '-'-separated fields (turn-dead-castleK-castleQ-points-clock-board), got {len(fields)}"
        )
    return [f.strip() for f in fields], extras


def parse(text: str) -> Position:
    """A ``Position`` (full rules on, not yet settled) from FEN4 text; ``ValueError`` if bad."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("bad FEN4: empty text")
    fields, extras = _split(text.strip())
    turn_s, dead_s, ck_s, cq_s, pts_s, clock_s, board_s = fields
    if turn_s not in TURN_LETTERS or len(turn_s) != 1:
        raise ValueError(f"bad FEN4: side to move must be R, B, Y or G, got {turn_s!r}")
    dead = _flags(dead_s, "dead")
    short = _flags(ck_s, "castleKingside")
    long_ = _flags(cq_s, "castleQueenside")
    try:
        points = [int(p) for p in _four(pts_s, "points")]
        clock = int(clock_s)
    except ValueError:
        raise ValueError(
            "bad FEN4: points and the halfmove clock must be whole numbers"
        ) from None
    if clock < 0:
        raise ValueError("bad FEN4: the halfmove clock cannot be negative")

    pos = Position()
    pos.turn = TURN_LETTERS.index(turn_s)
    pos.live = sum(1 << s for s in SEATS if not dead[s])
    pos.scores = points
    pos.halfmove = clock
    pos.castling = sum((short[s] << (2 * s)) | (long_[s] << (2 * s + 1)) for s in SEATS)
    greys = _parse_board(pos, board_s)
    _parse_extras(pos, extras)
    _validate(pos, greys)
    return pos


def _parse_board(pos: Position, board_s: str) -> list[int]:
    """Fill the board; returns the squares of coloured grey pieces (``drP``)."""
    greys = []
    rows = board_s.split("/")
    if len(rows) != 14:
        raise ValueError(
            f"bad FEN4: the board needs 14 ranks separated by '/', got {len(rows)}"
        )
    for i, row in enumerate(rows):
        rank = 13 - i
        file = 0
        for cell in row.split(","):
            cell = cell.strip()
            if not cell:
                raise ValueError(f"bad FEN4: empty cell in rank {rank + 1}")
            if cell.isdigit():
                n = int(cell)
                if n < 1:
                    raise ValueError(f"bad FEN4: empty-cell count 0 in rank {rank + 1}")
                file += n
                continue
            if file >= 14:
                raise ValueError(f"bad FEN4: rank {rank + 1} has more than 14 cells")
            if cell == "x":
                if on_board(file, rank):
                    raise ValueError(
                        f"bad FEN4: 'x' on the playing square {FILES[file]}{rank + 1}"
                    )
                file += 1
                continue
            p, grey = _piece(cell, rank, file)
            if not on_board(file, rank):
                raise ValueError(
                    f"bad FEN4: piece {cell} on a cut-off corner cell (rank {rank + 1})"
                )
            pos.put(sq_of(file, rank), p)
            if grey:
                greys.append(sq_of(file, rank))
            file += 1
        if file != 14:
            raise ValueError(f"bad FEN4: rank {rank + 1} has {file} cells, not 14")
    return greys


def _piece(cell: str, rank: int, file: int) -> tuple[int, bool]:
    """The piece code of a cell and whether it is a coloured grey piece (``drP``)."""
    body = cell
    grey = False
    if (
        len(body) >= 2
        and body[0] == "d"
        and body[1] in SEAT_LETTERS + "".join(PIECE_LETTERS[1:])
    ):
        grey = True
        body = body[1:]
    if grey and len(body) == 1:
        owner = NEUTRAL
        letter = body
    elif len(body) == 2 and body[0] in SEAT_LETTERS:
        owner = SEAT_LETTERS.index(body[0])
        letter = body[1]
    else:
        raise ValueError(f"bad FEN4: unknown cell {cell!r} at {FILES[file]}{rank + 1}")
    kind = PIECE_LETTERS.find(letter)
    if kind < 1:
        raise ValueError(
            f"bad FEN4: unknown piece letter in {cell!r} at {FILES[file]}{rank + 1}"
        )
    return (owner << 3) | kind, grey and owner != NEUTRAL


def _parse_extras(pos: Position, extras: str) -> None:
    if not extras:
        return
    try:
        data = ast.literal_eval(extras)
    except (ValueError, SyntaxError):
        raise ValueError(
            "bad FEN4: the extras {...} are not a readable dictionary"
        ) from None
    if not isinstance(data, dict):
        raise ValueError("bad FEN4: the extras must be a {...} dictionary")  # noqa: TRY004 - bad text, not a bad type
    ep = data.get("enPassant")
    if ep is None:
        return
    if not isinstance(ep, (tuple, list)) or len(ep) != 4:
        raise ValueError("bad FEN4: enPassant needs four entries (R, B, Y, G)")
    for seat, entry in enumerate(ep):
        if not entry:
            continue
        if not isinstance(entry, str):
            raise ValueError("bad FEN4: enPassant entries are strings like 'e3:e4'")  # noqa: TRY004
        parts = entry.split(":")
        sk = maybe_square(parts[0])
        if sk is None or len(parts) > 2:
            raise ValueError(
                f"bad FEN4: enPassant entry {entry!r} is not 'skipped:landing'"
            )
        ld = maybe_square(parts[1]) if len(parts) == 2 else sk + PAWN_PUSH[seat]
        if ld is None or ld != sk + PAWN_PUSH[seat]:
            raise ValueError(
                f"bad FEN4: enPassant entry {entry!r} does not fit a {SEAT_NAMES[seat]} double step"
            )
        pos.ep[seat] = (sk, ld)


def _validate(pos: Position, greys: list[int]) -> None:
    b = pos.board
    for sq in greys:
        seat = b[sq] >> 3
        if pos.live >> seat & 1:
            raise ValueError(
                f"bad FEN4: grey piece on {name(sq)} belongs to {SEAT_NAMES[seat]}, who is not out"
            )
    kings = [0, 0, 0, 0]
    for owner in range(5):
        for sq in sorted(pos.plist[owner]):
            p = b[sq]
            if owner < 4 and p & 7 == KING:
                kings[owner] += 1
            if owner < 4 and p & 7 == PAWN and sq in PROMOTION[owner]:
                raise ValueError(
                    f"bad FEN4: {SEAT_NAMES[owner]} pawn on its promotion line at {name(sq)}"
                )
    for seat in SEATS:
        if pos.live >> seat & 1 and kings[seat] != 1:
            raise ValueError(
                f"bad FEN4: {SEAT_NAMES[seat]} is live but has {kings[seat]} kings"
            )
        if kings[seat] > 1:
            raise ValueError(f"bad FEN4: {SEAT_NAMES[seat]} has {kings[seat]} kings")
    if not pos.live >> pos.turn & 1:
        raise ValueError(f"bad FEN4: the side to move, {SEAT_NAMES[pos.turn]}, is out")
    for seat in SEATS:
        e = pos.ep[seat]
        if e is not None and (b[e[0]] == OFF or b[e[1]] != (seat << 3) | PAWN):
            pos.ep[seat] = (
                None  # stale entry: no pawn of that seat on the landing square
            )


def export(pos: Position) -> str:
    """FEN4 text of ``pos`` (numeric corners; grey pieces with a ``d`` prefix; ``D`` = promoted queen)."""
    b = pos.board
    live = pos.live
    head = [
        TURN_LETTERS[pos.turn],
        ",".join("0" if live >> s & 1 else "1" for s in SEATS),
        ",".join(str(pos.castling >> (2 * s) & 1) for s in SEATS),
        ",".join(str(pos.castling >> (2 * s + 1) & 1) for s in SEATS),
        ",".join(str(x) for x in pos.scores),
        str(pos.halfmove),
    ]
    entries = []
    for s in SEATS:
        e = pos.ep[s]
        if e is not None and live >> s & 1 and b[e[1]] == (s << 3) | PAWN:
            entries.append(f"'{name(e[0])}:{name(e[1])}'")
        else:
            entries.append("''")
    if any(e != "''" for e in entries):
        head.append("{'enPassant':(" + ",".join(entries) + ")}")
    rows = []
    for rank in range(13, -1, -1):
        cells: list[str] = []
        run = 0
        for file in range(14):
            p = b[sq_of(file, rank)] if on_board(file, rank) else EMPTY
            if not p:
                run += 1
                continue
            if run:
                cells.append(str(run))
                run = 0
            owner, kind = p >> 3, p & 7
            if owner == NEUTRAL:
                cells.append("d" + PIECE_LETTERS[kind])
            else:
                prefix = "" if live >> owner & 1 else "d"
                cells.append(prefix + SEAT_LETTERS[owner] + PIECE_LETTERS[kind])
        if run:
            cells.append(str(run))
        rows.append(",".join(cells))
    return "-".join(head) + "-" + "/".join(rows)
