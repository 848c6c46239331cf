"""The fast core of four-player chess: ``Position`` with legal move generation and make/unmake.

This is the layer a search works on.  ``Chess4`` (the ``Game``) wraps one ``Position``
and adds move text, history, FEN4/PGN4 and rendering.

Quick tour for engine authors::

    pos = Position.start()           # modern array, Red to move (or Position.start(first=2))
    moves = pos.gen_moves()          # legal moves of pos.turn, as ints (a fresh list)
    pos.make(moves[0])               # plays it and applies every rule (points, mates, ...)
    pos.unmake()                     # takes it back exactly (also undoes resign())
    move_text(moves[0])              # 'd2-d3'

State (read it, change it only through make/unmake/resign):

* ``board``: list of ``SIZE`` ints (see ``board.py``): ``EMPTY``, ``OFF`` or a piece
  ``(owner << 3) | kind``; ``plist[seat]`` is the set of squares of that seat's pieces
  (grey ones included; seat 4 = colourless grey pieces from FEN4).
* ``turn``: seat to move; ``live``: bit mask of seats still in the game (a piece is
  grey iff its owner's bit is clear); ``scores``: list of 4 ints; ``over``: game ended;
  ``end_reason``: why (``""`` while running); ``kings[seat]``: king square.
* ``castling``: bits ``1 << (2 * seat + side)``; ``ep[seat]``: ``(skipped, landing)``
  of that seat's last double step or ``None`` (valid while the landing pawn is there
  and the seat is live); ``halfmove``: plies since the last capture or pawn move;
  ``ply``: plies played.
* ``rules``: ``True`` applies the full game rules (check bonus, end by points, draws,
  ``move_limit``, repetition).  ``False`` is perft mode (decision 5): eliminations only.
  A search may switch ``repetition`` off for speed (``track_repetition(False)``).

A move is an int: ``from | to << 9 | flags << 18 | aux << 22`` with ``flags`` a
combination of ``DOUBLE``, ``EP``, ``CASTLE``, ``PROMO`` and ``aux`` the landing square
of the pawn taken en passant, or the castling side.  ``move_from``, ``move_to`` and
``move_flags`` take it apart.  ``gen_moves()`` orders moves by from-square (mailbox
index), then piece pattern: the order depends only on the position, never on history.

``make`` trusts its move: pass only moves from ``gen_moves()``.

Helpers for evaluation: ``in_check(seat)``, ``legal_moves_of(seat)``, the module
function ``attacked(board, sq, seat_mask)``, ``is_capture(move)``,
``captured_points(move)``, ``last_eliminations()``, ``usable_ep()``, ``copy()``.
``make`` only tests whether the next player has a legal move (the stalemate rule),
stopping at the first one; ``gen_moves()`` generates the list when first asked and
keeps it until the next ``make`` (``unmake`` restores the list of the position it
returns to).  So a search pays for move generation only at nodes that expand.
"""

from __future__ import annotations

from typing import Any

from p2p.games.chess4 import rules
from p2p.games.chess4.board import (
    ALL_LIVE,
    BISHOP,
    CASTLE_KEEP,
    CASTLES,
    DIAG,
    DQUEEN,
    EMPTY,
    KING,
    KING_STEPS,
    KNIGHT,
    KNIGHT_STEPS,
    NEUTRAL,
    OFF,
    ORTHO,
    PAWN,
    PAWN_CAPTURES,
    PAWN_PUSH,
    PAWN_START,
    PROMOTION,
    QUEEN,
    ROOK,
    SEATS,
    SIZE,
    SLIDES,
    SQUARE_INDEX,
    SQUARES,
    WIDTH,
    empty_board,
    name,
    start_pieces,
)

DOUBLE, EP, CASTLE, PROMO = 1, 2, 4, 8

_VALUE = [0] * 8
for _kind, _pts in rules.PIECE_POINTS.items():
    _VALUE[_kind] = _pts
VALUE: tuple[int, ...] = tuple(_VALUE)
"""Capture points by piece kind (index 0 unused)."""

_NO_ELIM = (0, 0, 0)
POPCOUNT = tuple(i.bit_count() for i in range(32))


def move_from(m: int) -> int:
    return m & 511


def move_to(m: int) -> int:
    return (m >> 9) & 511


def move_flags(m: int) -> int:
    return (m >> 18) & 15


def move_text(m: int) -> str:
    """Canonical text ``from-to`` of a move int (castling = the king's move)."""
    return name(m & 511) + "-" + name((m >> 9) & 511)


# -- attack tables: one per set of attacking seats ---------------------------------------


def _attack_table(
    mask: int,
) -> tuple[tuple[tuple[int, frozenset[int], frozenset[int]], ...], frozenset[int]]:
    """(rays, knights) for attackers in ``mask``: rays = ((step, near, far), ...)."""
    seats = [s for s in SEATS if mask >> s & 1]
    kings = {(s << 3) | KING for s in seats}
    rq = {(s << 3) | k for s in seats for k in (ROOK, QUEEN, DQUEEN)}
    bq = {(s << 3) | k for s in seats for k in (BISHOP, QUEEN, DQUEEN)}
    rays = []
    for d in ORTHO:
        rays.append((d, frozenset(rq | kings), frozenset(rq)))
    for d in DIAG:
        # A pawn of seat s on sq + d attacks sq iff -d is one of its capture steps.
        pawns = {(s << 3) | PAWN for s in seats if -d in PAWN_CAPTURES[s]}
        rays.append((d, frozenset(bq | kings | pawns), frozenset(bq)))
    knights = frozenset((s << 3) | KNIGHT for s in seats)
    return tuple(rays), knights


ATTACK = tuple(_attack_table(mask) for mask in range(16))
"""``ATTACK[mask]``: attack-test tables for the attackers in seat bit mask ``mask``."""

_LAND = tuple(
    frozenset(
        [EMPTY] + [(o << 3) | k for o in range(5) if o != me for k in range(1, 8)]
    )
    for me in SEATS
)
_ENEMY = tuple(s - {EMPTY} for s in _LAND)

_NEXT = tuple(
    tuple(
        next((s for s in ((seat + i) % 4 for i in range(1, 5)) if live >> s & 1), -1)
        for live in range(16)
    )
    for seat in SEATS
)
"""``_NEXT[seat][live]``: the next live seat after ``seat`` clockwise (``seat`` itself last)."""


def _move_table(steps: tuple[int, ...], slide: bool) -> list[tuple[Any, ...]]:
    """Per square: for each step, the (target, move int) pairs along it while on the board."""
    table: list[tuple[Any, ...]] = [()] * SIZE
    for fr in SQUARES:
        rays = []
        for d in steps:
            ray = []
            to = fr + d
            while 0 <= to < SIZE and to in _ON_BOARD:
                ray.append((to, fr | to << 9))
                if not slide:
                    break
                to += d
            if ray:
                rays.append(tuple(ray))
        table[fr] = tuple(rays)
    return table


_ON_BOARD = frozenset(SQUARES)
KNIGHT_MOVES = [tuple(r[0] for r in rays) for rays in _move_table(KNIGHT_STEPS, False)]
"""``KNIGHT_MOVES[sq]``: (target, move int) of every knight jump from ``sq`` that stays on the board."""
SLIDE_MOVES = {
    kind: _move_table(SLIDES[kind], True) for kind in (BISHOP, ROOK, QUEEN, DQUEEN)
}
"""``SLIDE_MOVES[kind][sq]``: rays of (target, move int) pairs from ``sq``, nearest first."""


def attacked(board: list[int], sq: int, mask: int) -> bool:
    """True if a piece of a seat in ``mask`` attacks ``sq`` (grey pieces: leave them out of mask)."""
    rays, knights = ATTACK[mask]
    for d, near, far in rays:
        s = sq + d
        p = board[s]
        if p:
            if p in near:
                return True
            continue
        s += d
        p = board[s]
        while p == 0:
            s += d
            p = board[s]
        if p in far:
            return True
    if knights:
        for o in KNIGHT_STEPS:
            if board[sq + o] in knights:
                return True
    return False


def attackers(board: list[int], sq: int, mask: int) -> list[int]:
    """Squares of all pieces of seats in ``mask`` that attack ``sq`` (slow; for rare cases)."""
    rays, knights = ATTACK[mask]
    out = []
    for d, near, far in rays:
        s = sq + d
        p = board[s]
        if p:
            if p in near:
                out.append(s)
            continue
        s += d
        p = board[s]
        while p == 0:
            s += d
            p = board[s]
        if p in far:
            out.append(s)
    for o in KNIGHT_STEPS:
        if board[sq + o] in knights:
            out.append(sq + o)
    return out


class Position:
    """A four-player chess position with make/unmake; see the module docstring."""

    __slots__ = (
        "_moves",
        "_rep",
        "_stack",
        "board",
        "castling",
        "end_reason",
        "ep",
        "halfmove",
        "kings",
        "live",
        "move_limit",
        "over",
        "plist",
        "ply",
        "rules",
        "scores",
        "turn",
    )

    def __init__(self) -> None:
        self.board: list[int] = empty_board()
        self.plist: list[set[int]] = [set() for _ in range(5)]
        self.turn = 0
        self.live = ALL_LIVE
        self.scores = [0, 0, 0, 0]
        self.over = False
        self.end_reason = ""
        self.kings = [-1, -1, -1, -1]
        self.castling = 0
        self.ep: list[tuple[int, int] | None] = [None, None, None, None]
        self.halfmove = 0
        self.ply = 0
        self.rules = True
        self.move_limit = 0
        self._stack: list[list[Any]] = []
        self._moves: list[int] | None = None
        self._rep: dict[bytes, int] | None = None

    # -- construction --------------------------------------------------------------------

    @classmethod
    def start(cls, first: int = 0) -> Position:
        """The modern starting array with seat ``first`` to move."""
        pos = cls()
        for sq, p in start_pieces().items():
            pos.put(sq, p)
        pos.castling = 0xFF
        pos.turn = first
        pos.setup_done()
        return pos

    def put(self, sq: int, p: int) -> None:
        """Setup only: place piece ``p`` on ``sq`` (or clear it with ``EMPTY``)."""
        old = self.board[sq]
        if old:
            self.plist[old >> 3].discard(sq)
        self.board[sq] = p
        if p:
            self.plist[p >> 3].add(sq)
            if p & 7 == KING and p >> 3 < 4:
                self.kings[p >> 3] = sq

    def setup_done(self) -> None:
        """Finish a setup: drop castling rights without king and rook at home, start the
        repetition count, and settle the side to move (stalemate test of rule 2f)."""
        b = self.board
        for seat in SEATS:
            for side, (kf, _kt, rf, _rt, _bt, _tr) in enumerate(CASTLES[seat]):
                if b[kf] != (seat << 3) | KING or b[rf] != (seat << 3) | ROOK:
                    self.castling &= ~(1 << (2 * seat + side))
        self._stack.clear()
        self._moves = None
        if self.rules:
            self._rep = {}
        if not self.over and not self.live >> self.turn & 1:
            self.turn = _NEXT[self.turn][self.live]
        if not self.over:
            self._pass_turn(self.turn, start=True)
        if self._rep is not None and not self.over:
            self._rep[self.key()] = 1

    def copy(self) -> Position:
        """An independent copy (undo stack included, so ``unmake`` works on it too)."""
        new = Position.__new__(Position)
        new.board = self.board[:]
        new.plist = [set(s) for s in self.plist]
        new.turn = self.turn
        new.live = self.live
        new.scores = self.scores[:]
        new.over = self.over
        new.end_reason = self.end_reason
        new.kings = self.kings[:]
        new.castling = self.castling
        new.ep = self.ep[:]
        new.halfmove = self.halfmove
        new.ply = self.ply
        new.rules = self.rules
        new.move_limit = self.move_limit
        new._stack = self._stack[:]
        new._moves = self._moves
        new._rep = None if self._rep is None else dict(self._rep)
        return new

    def track_repetition(self, on: bool) -> None:
        """Switch repetition counting (draw rule 2g) on or off; off forgets the counts."""
        if not on:
            self._rep = None
        elif self._rep is None:
            self._rep = {self.key(): 1}

    # -- queries ---------------------------------------------------------------------------

    def in_check(self, seat: int) -> bool:
        """True if ``seat``'s king is attacked by a piece of another live seat."""
        return attacked(self.board, self.kings[seat], self.live & ~(1 << seat))

    def is_capture(self, m: int) -> bool:
        return bool(self.board[(m >> 9) & 511]) or bool(m & (EP << 18))

    def captured_points(self, m: int) -> int:
        """Points the capture part of ``m`` would score for the side to move."""
        b = self.board
        live = self.live
        pts = 0
        cap = b[(m >> 9) & 511]
        if cap and live >> (cap >> 3) & 1:
            pts += VALUE[cap & 7]
        if m & (EP << 18):
            cap = b[m >> 22]
            if live >> (cap >> 3) & 1:
                pts += VALUE[cap & 7]
        return pts

    def last_eliminations(self) -> tuple[int, int, int]:
        """Seat masks (king captured, mated, stalemated) by the last make; after a
        ``resign`` the resigner is in the "mated" mask (out as if mated)."""
        if not self._stack:
            return (0, 0, 0)
        masks: tuple[int, int, int] = self._stack[-1][-1]
        return masks

    def usable_ep(self) -> tuple[tuple[int, int, int], ...]:
        """(seat, skipped, landing) of en-passant entries some other live pawn could take."""
        b = self.board
        live = self.live
        out = []
        for s in SEATS:
            e = self.ep[s]
            if e is None or not live >> s & 1 or b[e[1]] != (s << 3) | PAWN:
                continue
            sk = e[0]
            target = b[sk]
            for t in SEATS:
                if t == s or not live >> t & 1 or (target and target >> 3 == t):
                    continue
                pawn = (t << 3) | PAWN
                c1, c2 = PAWN_CAPTURES[t]
                if b[sk - c1] == pawn or b[sk - c2] == pawn:
                    out.append((s, sk, e[1]))
                    break
        return tuple(out)

    def key(self) -> bytes:
        """Repetition key: board (promoted flags included), side to move, castling,
        live set and usable en-passant entries (decision 2g)."""
        extra = [self.turn, self.castling, self.live]
        for s, sk, ld in self.usable_ep():
            extra += (s, SQUARE_INDEX[sk], SQUARE_INDEX[ld])
        return bytes(self.board) + bytes(extra)

    # -- move generation -------------------------------------------------------------------

    def gen_moves(self) -> list[int]:
        """Legal moves of the side to move (a fresh list; empty once the game is over)."""
        moves = self._moves
        if moves is None:
            moves = self._moves = [] if self.over else self.legal_moves_of(self.turn)
        return list(moves)

    def legal_moves_of(self, me: int) -> list[int]:
        """Legal moves ``me`` would have if it were ``me``'s turn now."""
        b = self.board
        live = self.live
        emask = live & ~(1 << me)
        ksq = self.kings[me]
        land = _LAND[me]
        enemy = _ENEMY[me]
        # One scan of the king's eight rays finds checks by line pieces, pawns and kings
        # (adjacent) and pins: an own piece between the king and a live enemy slider.
        rays, knights = ATTACK[emask]
        check = False
        pins: dict[int, range] | None = None
        for d, near, far in rays:
            s = ksq + d
            p = b[s]
            if p:
                if p in near:
                    check = True
                    break
            else:
                s += d
                p = b[s]
                while p == 0:
                    s += d
                    p = b[s]
                if p in far:
                    check = True
                    break
            if p >> 3 == me:
                s2 = s + d
                q = b[s2]
                while q == 0:
                    s2 += d
                    q = b[s2]
                if q in far:
                    if pins is None:
                        pins = {}
                    pins[s] = range(ksq + d, s2 + d, d)
        if not check and knights:
            for o in KNIGHT_STEPS:
                if b[ksq + o] in knights:
                    check = True
                    break
        if check:
            pins = None

        # Usable en-passant targets of the other live seats: skipped -> landing.
        ept = None
        for s in SEATS:
            e = self.ep[s]
            if (
                e is not None
                and s != me
                and live >> s & 1
                and b[e[1]] == (s << 3) | PAWN
            ):
                if ept is None:
                    ept = {}
                ept[e[0]] = e[1]

        moves: list[int] = []
        app = moves.append
        push = PAWN_PUSH[me]
        caps = PAWN_CAPTURES[me]
        start = PAWN_START[me]
        promo = PROMOTION[me]
        for fr in sorted(self.plist[me]):
            p = b[fr]
            k = p & 7
            if pins is not None and fr in pins:
                first = len(moves)
                self._gen_piece(fr, me, moves, ept)
                ray = pins[fr]
                moves[first:] = [
                    m
                    for m in moves[first:]
                    if (m >> 9) & 511 in ray or self._takes_king_safely(m, me)
                ]
                continue
            if k == PAWN:
                to = fr + push
                if b[to] == 0:
                    if to in promo:
                        app(fr | to << 9 | PROMO << 18)
                    else:
                        app(fr | to << 9)
                        if fr in start and b[to + push] == 0:
                            app(fr | (to + push) << 9 | DOUBLE << 18)
                for c in caps:
                    to = fr + c
                    q = b[to]
                    if q:
                        if q in enemy:
                            fl = PROMO if to in promo else 0
                            if ept is not None and to in ept:
                                m = fr | to << 9 | (fl | EP) << 18 | ept[to] << 22
                                if self._safe(m, me):
                                    app(m)
                            else:
                                app(fr | to << 9 | fl << 18)
                    elif ept is not None and to in ept:
                        fl = (PROMO | EP) if to in promo else EP
                        m = fr | to << 9 | fl << 18 | ept[to] << 22
                        if self._safe(m, me):
                            app(m)
            elif k == KNIGHT:
                for to, mv in KNIGHT_MOVES[fr]:
                    if b[to] in land:
                        app(mv)
            elif k == KING:
                continue
            else:
                for ray in SLIDE_MOVES[k][fr]:
                    for to, mv in ray:
                        q = b[to]
                        if q:
                            if q in enemy:
                                app(mv)
                            break
                        app(mv)

        if check:
            # Only a move that lands on a checking line (captures a checker or blocks
            # it), takes a king (decision 1 removes that seat's attackers) or captures en
            # passant (which also empties the landing square) can end the check: a piece
            # leaving its square only opens lines.  Those few get the full test.
            lines = _check_lines(b, ksq, emask)
            safe = self._safe
            moves = [
                m
                for m in moves
                if ((m >> 9) & 511 in lines or m & (EP << 18) or b[(m >> 9) & 511] & 7 == KING)
                and safe(m, me)
            ]

        # King moves (the king is generated last so the filters above skip it).
        if ksq >= 0 and b[ksq] == (me << 3) | KING:
            kmoves = []
            for o in KING_STEPS:
                to = ksq + o
                q = b[to]
                if q in land:
                    m = ksq | to << 9
                    if check or (q & 7 == KING and live >> (q >> 3) & 1):
                        if self._safe(m, me):
                            kmoves.append(m)
                    elif not attacked(b, to, emask):
                        kmoves.append(m)
            rights = (self.castling >> (2 * me)) & 3
            if rights and not check:
                for side in (0, 1):
                    if rights >> side & 1:
                        kf, kt, rf, _rt, between, transit = CASTLES[me][side]
                        if (
                            kf == ksq
                            and b[rf] == (me << 3) | ROOK
                            and all(b[x] == 0 for x in between)
                            and not attacked(b, transit, emask)
                            and not attacked(b, kt, emask)
                        ):
                            kmoves.append(kf | kt << 9 | CASTLE << 18 | side << 22)
            if kmoves:
                # Keep the whole list ordered by from-square like the rest.
                moves = _merge_king(moves, kmoves, ksq)
        return moves

    def _has_move(self, me: int) -> bool:
        """``bool(self.legal_moves_of(me))``, cheaper: stops at the first move that passes
        the full legality test ``_safe`` (castling is tried last, as in the generator)."""
        b = self.board
        safe = self._safe
        land = _LAND[me]
        enemy = _ENEMY[me]
        ept = None
        live = self.live
        for s in SEATS:
            e = self.ep[s]
            if e is not None and s != me and live >> s & 1 and b[e[1]] == (s << 3) | PAWN:
                if ept is None:
                    ept = {}
                ept[e[0]] = e[1]
        ksq = self.kings[me]
        king = (me << 3) | KING
        if ksq < 0 or b[ksq] != king:
            return bool(self.legal_moves_of(me))  # no king (a FEN4 setup): no shortcut
        for fr in self.plist[me]:
            p = b[fr]
            k = p & 7
            if k == PAWN:
                push = PAWN_PUSH[me]
                to = fr + push
                if b[to] == 0:
                    if safe(fr | to << 9, me):
                        return True
                    if (
                        to not in PROMOTION[me]
                        and fr in PAWN_START[me]
                        and b[to + push] == 0
                        and safe(fr | (to + push) << 9, me)
                    ):
                        return True
                for c in PAWN_CAPTURES[me]:
                    to = fr + c
                    q = b[to]
                    if ept is not None and to in ept and (q == 0 or q in enemy):
                        if safe(fr | to << 9 | EP << 18 | ept[to] << 22, me):
                            return True
                    elif q and q in enemy and safe(fr | to << 9, me):
                        return True
            elif k == KNIGHT:
                for to, mv in KNIGHT_MOVES[fr]:
                    if b[to] in land and safe(mv, me):
                        return True
            elif k == KING:
                if fr != ksq or p != king:
                    continue  # cannot happen: one king per live seat
                for o in KING_STEPS:
                    to = fr + o
                    if b[to] in land and safe(fr | to << 9, me):
                        return True
            else:
                for ray in SLIDE_MOVES[k][fr]:
                    for to, mv in ray:
                        q = b[to]
                        if q and q not in enemy:
                            break
                        if safe(mv, me):
                            return True
                        if q:
                            break
        # Castling: only when nothing else moves (a legal castling implies a legal king
        # step to the transit square, so this never decides; kept for exactness).
        return bool(self.castling >> (2 * me) & 3) and bool(self.legal_moves_of(me))

    def _takes_king_safely(self, m: int, me: int) -> bool:
        """A pinned piece leaving its ray is legal only if it takes a live king and
        the victim's pieces, gone at once (decision 1), were all that attacked."""
        q = self.board[(m >> 9) & 511]
        return (
            q & 7 == KING
            and q >> 3 < 4
            and bool(self.live >> (q >> 3) & 1)
            and self._safe(m, me)
        )

    def _gen_piece(self, fr: int, me: int, moves: list[int], ept: dict[int, int]) -> None:
        """Pseudo-legal moves of the (non-king) piece on ``fr`` (used for pinned pieces)."""
        b = self.board
        app = moves.append
        k = b[fr] & 7
        if k == PAWN:
            push = PAWN_PUSH[me]
            promo = PROMOTION[me]
            to = fr + push
            if b[to] == 0:
                app(fr | to << 9 | (PROMO << 18 if to in promo else 0))
                if to not in promo and fr in PAWN_START[me] and b[to + push] == 0:
                    app(fr | (to + push) << 9 | DOUBLE << 18)
            for c in PAWN_CAPTURES[me]:
                to = fr + c
                q = b[to]
                fl = PROMO if to in promo else 0
                if ept is not None and to in ept and (q == 0 or q in _ENEMY[me]):
                    m = fr | to << 9 | (fl | EP) << 18 | ept[to] << 22
                    if self._safe(m, me):
                        app(m)
                elif q and q in _ENEMY[me]:
                    app(fr | to << 9 | fl << 18)
        elif k == KNIGHT:
            land = _LAND[me]
            for o in KNIGHT_STEPS:
                if b[fr + o] in land:
                    app(fr | (fr + o) << 9)
        else:
            enemy = _ENEMY[me]
            for d in SLIDES[k]:
                to = fr + d
                q = b[to]
                while q == 0:
                    app(fr | to << 9)
                    to += d
                    q = b[to]
                if q in enemy:
                    app(fr | to << 9)

    def _safe(self, m: int, me: int) -> bool:
        """Full legality test: play ``m`` on the board, test the king, take it back."""
        b = self.board
        fr = m & 511
        to = (m >> 9) & 511
        p = b[fr]
        cap = b[to]
        live = self.live
        if cap & 7 == KING and cap >> 3 < 4:
            live &= ~(1 << (cap >> 3))  # decision 1
        b[fr] = 0
        b[to] = p
        ld = -1
        epc = 0
        if m & (EP << 18):
            ld = m >> 22
            epc = b[ld]
            b[ld] = 0
        ksq = to if p & 7 == KING else self.kings[me]
        ok = not attacked(b, ksq, live & ~(1 << me))
        b[fr] = p
        b[to] = cap
        if ld >= 0:
            b[ld] = epc
        return ok

    # -- make / unmake ---------------------------------------------------------------------

    def make(self, m: int) -> None:
        """Play legal move ``m`` of the side to move and apply every rule.  No checks."""
        b = self.board
        me = self.turn
        fr = m & 511
        to = (m >> 9) & 511
        fl = (m >> 18) & 15
        p = b[fr]
        cap = b[to]
        scores = self.scores
        live = self.live
        plist = self.plist
        rec: list[Any] = [
            m,
            cap,
            0,
            self.castling,
            self.ep[me],
            self.halfmove,
            tuple(scores),
            live,
            me,
            self.over,
            self.end_reason,
            self._moves,
            None,
            _NO_ELIM,
        ]
        self._stack.append(rec)
        mine = plist[me]
        mine.discard(fr)
        mine.add(to)
        b[fr] = 0
        quiet = p & 7 != PAWN
        if fl & PROMO:
            p = (me << 3) | DQUEEN
        b[to] = p
        gained = 0
        kingcap = 0
        if cap:
            quiet = False
            o = cap >> 3
            plist[o].discard(to)
            if live >> o & 1:
                k = cap & 7
                gained = VALUE[k]
                if k == KING:
                    kingcap = 1 << o
                    live &= ~kingcap
        newep = None
        if fl:
            if fl & EP:
                quiet = False
                ld = m >> 22
                epc = b[ld]
                b[ld] = 0
                o = epc >> 3
                plist[o].discard(ld)
                if live >> o & 1:
                    gained += VALUE[epc & 7]
                rec[2] = epc
            if fl & CASTLE:
                _kf, _kt, rf, rt, _bt, _tr = CASTLES[me][m >> 22]
                rook = b[rf]
                b[rf] = 0
                b[rt] = rook
                mine.discard(rf)
                mine.add(rt)
            if fl & DOUBLE:
                newep = ((fr + to) >> 1, to)
        self.ep[me] = newep
        if p & 7 == KING:
            self.kings[me] = to
        self.castling &= CASTLE_KEEP[fr] & CASTLE_KEEP[to]
        self.halfmove = self.halfmove + 1 if quiet else 0
        self.ply += 1
        if gained:
            scores[me] += gained
        self.live = live
        self._after_move(me, kingcap, rec)

    # ======================================================================================
    # THE POST-MOVE PROCEDURE (decision 2 of the design; constants in rules.py).
    # Steps (a) capture points and king-capture elimination happen in make() above.
    # ======================================================================================
    def _after_move(self, me: int, kingcap: int, rec: list[Any]) -> None:
        b = self.board
        live = self.live
        kings = self.kings
        scores = self.scores
        full = self.rules
        # (b) every other live player in check with no legal move is mated, all tested on
        # the same position; (c) count the kings attacked by the mover's own pieces.
        mated = 0
        checked_by_me = []
        known = None  # legal moves computed for checked players, reusable by (f)
        others = live & ~(1 << me)
        for x in SEATS:
            if not others >> x & 1:
                continue
            ksq = kings[x]
            if attacked(b, ksq, live & ~(1 << x)):
                if full and attacked(b, ksq, 1 << me):
                    checked_by_me.append(ksq)
                moves = self.legal_moves_of(x)
                if moves:
                    if known is None:
                        known = {}
                    known[x] = moves
                else:
                    mated |= 1 << x
        if mated:
            scores[me] += rules.MATE_POINTS * POPCOUNT[mated]
        if full and len(checked_by_me) >= 2:
            scores[me] += self._check_bonus(me, checked_by_me)
        # (d) mated players are out.
        live &= ~mated
        self.live = live
        stalemated = self._pass_turn(me, start=False, known=None if mated else known)
        if kingcap or mated or stalemated:
            rec[13] = (kingcap, mated, stalemated)
        if self.over or not full:
            return
        # (g) draw test: quiet plies, then repetition.
        live = self.live
        if self.halfmove >= rules.FIFTY_MOVE_PLIES_PER_PLAYER * POPCOUNT[live]:
            self._draw("50 moves")
            return
        if self._rep is not None:
            key = self.key()
            n = self._rep.get(key, 0) + 1
            self._rep[key] = n
            rec[12] = key
            if n >= rules.REPETITION_COUNT:
                self._draw("repetition")
                return
        if self.move_limit and self.ply >= self.move_limit:
            self._end("move limit")

    def _check_bonus(self, me: int, kings: list[int]) -> int:
        """Decision 2c: +5/+20 for two/three kings, +1/+5 if every checking piece is a queen."""
        b = self.board
        queens_only = all(
            b[s] & 7 in (QUEEN, DQUEEN)
            for ksq in kings
            for s in attackers(b, ksq, 1 << me)
        )
        plain, with_queens = rules.CHECK_BONUS[min(len(kings), 3)]
        return with_queens if queens_only else plain

    def _pass_turn(self, after: int, start: bool, known: dict[int, list[int]] | None = None) -> int:
        """(e) end test, then (f): give the turn to the next live player after ``after``
        (``start``: test ``after`` itself first); stalemated players get +20 and are out.
        Returns the mask of stalemated seats.  The new side's legal moves are generated
        only when somebody asks (``gen_moves``): here it is enough to know that there is
        one.  ``known``: legal moves step (b) already computed on this very position
        (valid while nobody else has left the game)."""
        stalemated = 0
        seat = after
        first = start
        live0 = self.live
        while True:
            if self._end_test():
                self._moves = []
                return stalemated
            if not first:
                seat = _NEXT[seat][self.live]
            first = False
            if known is not None and seat in known and self.live == live0:
                self.turn = seat
                self._moves = known[seat]
                return stalemated
            if self._has_move(seat):
                self.turn = seat
                self._moves = None
                return stalemated
            if not self.in_check(seat):
                self.scores[seat] += rules.STALEMATE_POINTS
                stalemated |= 1 << seat
            # else: in check without a legal move on its own turn.  After a move this
            # cannot happen (step b mated such a player), only in a FEN4 setup; that
            # player is out and nobody scores.
            self.live &= ~(1 << seat)

    def _end_test(self) -> bool:
        """(e): one live player left; with full rules also two left CLAIM_MARGIN apart."""
        live = self.live
        n = POPCOUNT[live]
        if n <= 1:
            self._end("last player")
            return True
        if n == 2 and self.rules:
            a, c = (s for s in SEATS if live >> s & 1)
            if abs(self.scores[a] - self.scores[c]) >= rules.CLAIM_MARGIN:
                self._end("points")
                return True
        return False

    def _draw(self, reason: str) -> None:
        for s in SEATS:
            if self.live >> s & 1:
                self.scores[s] += rules.DRAW_POINTS
        self._end(reason)

    def _end(self, reason: str) -> None:
        self.over = True
        self.end_reason = reason
        self._moves = []

    def unmake(self) -> None:
        """Take back the last ``make`` or ``resign``."""
        (
            m,
            cap,
            epc,
            castling,
            ep_me,
            halfmove,
            scores,
            live,
            me,
            over,
            reason,
            moves,
            key,
            _elim,
        ) = self._stack.pop()
        rep = self._rep
        if key is not None and rep is not None:
            n = rep.get(key, 0) - 1
            if n > 0:
                rep[key] = n
            else:
                rep.pop(key, None)
        self.castling = castling
        self.halfmove = halfmove
        self.scores[:] = scores
        self.live = live
        self.turn = me
        self.over = over
        self.end_reason = reason
        self._moves = moves
        if m < 0:  # a resignation
            return
        self.ep[me] = ep_me
        self.ply -= 1
        b = self.board
        plist = self.plist
        fr = m & 511
        to = (m >> 9) & 511
        fl = (m >> 18) & 15
        p = b[to]
        mine = plist[me]
        mine.discard(to)
        mine.add(fr)
        if fl & PROMO:
            p = (me << 3) | PAWN
        b[fr] = p
        b[to] = cap
        if cap:
            plist[cap >> 3].add(to)
        if p & 7 == KING:
            self.kings[me] = fr
        if fl:
            if fl & EP:
                ld = m >> 22
                b[ld] = epc
                plist[epc >> 3].add(ld)
            if fl & CASTLE:
                _kf, _kt, rf, rt, _bt, _tr = CASTLES[me][m >> 22]
                b[rf] = b[rt]
                b[rt] = 0
                mine.discard(rt)
                mine.add(rf)

    # -- resignation -------------------------------------------------------------------

    def resign(self, seat: int) -> None:
        """House rule: ``seat`` is out as if mated, nobody scores; undone by ``unmake``."""
        rec: list[Any] = [
            -1 - seat,
            0,
            0,
            self.castling,
            None,
            self.halfmove,
            tuple(self.scores),
            self.live,
            self.turn,
            self.over,
            self.end_reason,
            self._moves,
            None,
            _NO_ELIM,
        ]
        self._stack.append(rec)
        self.live &= ~(1 << seat)
        if seat == self.turn:
            stalemated = self._pass_turn(seat, start=False)
        else:
            stalemated = 0
            self._end_test()
            if not self.over:
                self._moves = None
        rec[13] = (0, 1 << seat, stalemated)
        if not self.over and self._rep is not None:
            key = self.key()
            self._rep[key] = self._rep.get(key, 0) + 1
            rec[12] = key


def _check_lines(board: list[int], ksq: int, mask: int) -> set[int]:
    """Squares of the pieces of seats in ``mask`` that attack ``ksq``, plus the squares
    between each attacking line piece and ``ksq``."""
    out = set()
    for s in attackers(board, ksq, mask):
        out.add(s)
        df = (s & 15) - (ksq & 15)
        dr = (s >> 4) - (ksq >> 4)
        if df == 0 or dr == 0 or df == dr or df == -dr:  # a line piece (or adjacent)
            step = ((dr > 0) - (dr < 0)) * WIDTH + (df > 0) - (df < 0)
            x = ksq + step
            while x != s:
                out.add(x)
                x += step
    return out


def _merge_king(moves: list[int], kmoves: list[int], ksq: int) -> list[int]:
    """Insert the king's moves where its square falls in the from-square order."""
    for i, m in enumerate(moves):
        if m & 511 > ksq:
            return moves[:i] + kmoves + moves[i:]
    return moves + kmoves


def perft(pos: Position, depth: int) -> int:
    """Number of legal move sequences of length ``depth`` (decision 5: eliminations only)."""
    if depth <= 0:
        return 1
    saved = pos.rules, pos._rep
    pos.rules = False
    pos._rep = None
    try:
        return _perft(pos, depth)
    finally:
        pos.rules, pos._rep = saved


def _perft(pos: Position, depth: int) -> int:
    moves = pos._moves
    if moves is None:
        moves = pos._moves = [] if pos.over else pos.legal_moves_of(pos.turn)
    if depth == 1:
        return len(moves)
    n = 0
    make = pos.make
    unmake = pos.unmake
    for m in moves:
        make(m)
        n += _perft(pos, depth - 1)
        unmake()
    return n


def divide(pos: Position, depth: int) -> list[tuple[int, int]]:
    """(move, perft(depth - 1) below it) for every legal move, in move order."""
    saved = pos.rules, pos._rep
    pos.rules = False
    pos._rep = None
    try:
        out = []
        for m in pos.gen_moves():
            pos.make(m)
            out.append((m, _perft(pos, depth - 1) if depth > 1 else 1))
            pos.unmake()
        return out
    finally:
        pos.rules, pos._rep = saved


__all__ = [
    "CASTLE",
    "DOUBLE",
    "EP",
    "NEUTRAL",
    "OFF",
    "PROMO",
    "VALUE",
    "Position",
    "attacked",
    "attackers",
    "divide",
    "move_flags",
    "move_from",
    "move_text",
    "move_to",
    "perft",
]
