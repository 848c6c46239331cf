"""``Chess4``: four-player chess (free-for-all) behind the common ``Game`` interface.

>>> g = Chess4.create()
>>> g.push("h2-h4"); g.to_move(), g.history()
(1, ['h2-h4'])
>>> g.normalize("Nj1xi3+")
'j1-i3'

Move text is ``<from>-<to>`` (castling = the king's two-square move, promotion is
automatic).  ``normalize`` also reads PGN4-style input: ``h2h4``, ``Nj1-i3``,
``Qg1xd4``, ``Qg1xQn8+``, ``O-O`` / ``O-O-O`` (for the side to move), ``=D`` / ``=Q``.

Resignation is part of the history as the entry ``resign:<seat>``.  A replay feeds
every history entry back through ``push`` (which accepts ``resign:<seat>`` and calls
``resign``), so ``for e in g.history(): h.push(e)`` rebuilds ``g`` exactly; ``pop``
takes a resignation back like a move.  The protocol should still turn a resign event
into ``resign(seat)`` after checking who sent it.

Search code should use the fast core: ``game.position`` is the ``movegen.Position``
(``gen_moves``, ``make``, ``unmake``; see ``movegen``).  Changing it directly bypasses
the history: work on ``game.position.copy()``.
"""

from __future__ import annotations

import re
import struct

from p2p.games.base import (
    RESIGN_PREFIX,
    Game,
    IllegalMove,
    MalformedMove,
    OptionError,
    Options,
    OptionValue,
    Termination,
    Turn,
    check_known,
    option_bool,
    option_int,
)
from p2p.games.chess4 import fen4 as fen4_mod
from p2p.games.chess4 import pgn4 as pgn4_mod
from p2p.games.chess4 import rules
from p2p.games.chess4.board import (
    BISHOP,
    CASTLES,
    DQUEEN,
    FILES,
    KING,
    KING_STEPS,
    KNIGHT,
    KNIGHT_STEPS,
    NEUTRAL,
    OFF,
    PAWN,
    PAWN_CAPTURES,
    PAWN_PUSH,
    PAWN_START,
    PIECE_LETTERS,
    QUEEN,
    ROOK,
    SEAT_LETTERS,
    SEAT_NAMES,
    SEATS,
    SLIDES,
    SQUARE_INDEX,
    SQUARES,
    maybe_square,
    name,
    on_board,
    sq_of,
    square,
)
from p2p.games.chess4.movegen import Position, move_text

OPTION_DEFAULTS: dict[str, OptionValue] = {
    "first": 0,
    "move_limit": 0,
    "show_legal": True,
    "rotate_start": True,
}
"""The options of a chess4 round (``fen4`` may be added: a start position in FEN4)."""

MAX_MOVE_LIMIT = 100_000
ENCODING_VERSION = 1

PIECE_NAMES = {
    PAWN: "pawn",
    KNIGHT: "knight",
    BISHOP: "bishop",
    ROOK: "rook",
    QUEEN: "queen",
    KING: "king",
    DQUEEN: "promoted queen",
}

_MOVE_RE = re.compile(
    r"^(?P<p1>[KQRBNPD])?(?P<f1>[a-n])(?P<r1>\d{1,2})\s*(?P<sep>[-x:]?)\s*"
    r"(?P<p2>[KQRBNPD])?(?P<f2>[a-n])(?P<r2>\d{1,2})(?P<promo>=[A-Z])?(?P<suffix>[+#]*)$"
)
_RESIGN_RE = re.compile("^" + re.escape(RESIGN_PREFIX) + "([0-3])$")


def next_first(options: Options | None = None) -> int:
    """The starting seat of the next game: ``first + 1`` if ``rotate_start``, else ``first``."""
    options = options or {}
    first = option_int(options, "first", 0, 0, 3)
    if option_bool(options, "rotate_start", True):
        return (first + 1) % 4
    return first


def _parse(text: str) -> tuple[int, int, str | None, str | None]:
    """(from, to, moving piece letter, captured piece letter); ``MalformedMove`` if not a move."""
    if not isinstance(text, str):
        raise MalformedMove("a move must be text like h2-h4", "not_move", text="?")
    t = text.strip()
    m = _MOVE_RE.match(t)
    if m is None:
        low = t.lower()
        if low != t and re.fullmatch(r"[a-n]\d{1,2}\s*[-x:]?\s*[a-n]\d{1,2}[+#]*", low):
            m = _MOVE_RE.match(low)
    if m is None:
        raise MalformedMove(f"{text.strip()!r} is not a move (write it like h2-h4)", "not_move", text=text.strip())
    squares = []
    for f, r in (("f1", "r1"), ("f2", "r2")):
        label = m.group(f) + m.group(r)
        sq = maybe_square(label)
        if sq is None:
            raise MalformedMove(f"{label} is not a square of the board", "not_square", square=label)
        squares.append(sq)
    if squares[0] == squares[1]:
        raise MalformedMove("a move needs two different squares", "same_square")
    promo = m.group("promo")
    if promo and promo not in ("=D", "=Q"):
        raise MalformedMove("pawns always promote to a queen (=D)", "promote_queen")
    return squares[0], squares[1], m.group("p1"), m.group("p2")


class Chess4(Game):
    """Four-player chess, free-for-all, chess.com rules with the design's decisions."""

    name = "chess4"
    title = "Vierschach (Einzel)"
    SEAT_NAMES = SEAT_NAMES

    def __init__(self, position: Position, options: dict[str, OptionValue]) -> None:
        self._pos = position
        self._options = options
        self._history: list[str] = []
        self._tokens: list[str] = []  # PGN4 movetext token per history entry

    # -- construction ---------------------------------------------------------------------

    @classmethod
    def create(cls, options: Options | None = None) -> Chess4:
        options = dict(options or {})
        check_known(options, set(OPTION_DEFAULTS) | {"fen4"})
        first = option_int(options, "first", 0, 0, 3)
        move_limit = option_int(options, "move_limit", 0, 0, MAX_MOVE_LIMIT)
        show_legal = option_bool(options, "show_legal", True)
        rotate_start = option_bool(options, "rotate_start", True)
        fen = options.get("fen4")
        if fen is not None:
            if not isinstance(fen, str):
                raise OptionError("option fen4 must be FEN4 text")
            try:
                pos = fen4_mod.parse(fen)
            except ValueError as err:
                raise OptionError(str(err)) from None
            if "first" in options and first != pos.turn:
                raise OptionError(
                    "option first disagrees with the side to move of fen4"
                )
            first = pos.turn
        else:
            pos = Position.start(first)
        pos.move_limit = move_limit
        if fen is not None:
            pos.setup_done()
        opts: dict[str, OptionValue] = {
            "first": first,
            "move_limit": move_limit,
            "show_legal": show_legal,
            "rotate_start": rotate_start,
        }
        if fen is not None:
            opts["fen4"] = fen
        return cls(pos, opts)

    @classmethod
    def from_fen4(cls, text: str, options: Options | None = None) -> Chess4:
        """A game starting at the FEN4 position ``text``; ``ValueError`` with a one-line reason."""
        opts = dict(options or {})
        opts["fen4"] = text
        opts.pop("first", None)
        return cls.create(opts)

    def options(self) -> dict[str, OptionValue]:
        return dict(self._options)

    def copy(self) -> Chess4:
        new = Chess4(self._pos.copy(), dict(self._options))
        new._history = self._history[:]
        new._tokens = self._tokens[:]
        return new

    # -- state --------------------------------------------------------------------------

    @property
    def position(self) -> Position:
        """The fast core (see ``movegen``); do not change it behind the game's back."""
        return self._pos

    def to_move(self) -> int | None:
        return None if self._pos.over else self._pos.turn

    def is_over(self) -> bool:
        return self._pos.over

    def termination(self) -> Termination:
        """Why the game ended: last player, points, repetition, 50 moves, move limit
        (resignations put seats out; the game ends by one of these)."""
        reason = self._pos.end_reason
        return Termination(reason) if reason else Termination.GAME_OVER

    def scores(self) -> tuple[int, ...]:
        return tuple(self._pos.scores)

    def winners(self) -> tuple[int, ...]:
        if not self._pos.over:
            return ()
        return rules.winners(self._pos.scores, self.resigned_seats())

    def resigned_seats(self) -> tuple[int, ...]:
        """The seats that resigned (online also: left or were forfeited), in order."""
        return self.resignations()

    def ranks(self) -> tuple[int, ...]:
        """Each seat's place by points, 1 = first (``rules.ranks``: at equal points a seat
        that resigned after those that did not; equal places shared)."""
        return rules.ranks(self._pos.scores, self.resigned_seats())

    def eliminated(self) -> tuple[int, ...]:
        return tuple(s for s in SEATS if not self._pos.live >> s & 1)

    def in_check(self, seat: int) -> bool:
        """True if live seat ``seat``'s king is attacked by a live opponent."""
        return bool(self._pos.live >> seat & 1) and self._pos.in_check(seat)

    def history(self) -> list[str]:
        return self._history[:]

    # -- moves ----------------------------------------------------------------------------

    def legal_moves(self) -> list[str]:
        return [move_text(m) for m in self._pos.gen_moves()]

    def normalize(self, text: str) -> str:
        if isinstance(text, str):
            t = text.strip()
            if _RESIGN_RE.match(t):
                return t
            castle = t.rstrip("+#")
            if castle in ("O-O", "O-O-O", "0-0", "0-0-0"):
                return self._castle_text(len(castle) > 3)
        fr, to, _p1, _p2 = _parse(text)
        return name(fr) + "-" + name(to)

    def _castle_text(self, long_side: bool) -> str:
        if self._pos.over:
            raise MalformedMove("O-O needs a side to move; the game is over", "over")
        kf, kt, *_ = CASTLES[self._pos.turn][1 if long_side else 0]
        return name(kf) + "-" + name(kt)

    def push(self, move: str) -> None:
        text = self.normalize(move)
        r = _RESIGN_RE.match(text)
        if r:
            self.resign(int(r.group(1)))
            return
        pos = self._pos
        if pos.over:
            raise IllegalMove("the game is over", "over")
        fr, to = self._squares(text)
        raw = _MOVE_RE.match(move.strip())
        letter = raw.group("p1") if raw else None
        m = self._find(fr, to, letter)
        token = pgn4_mod.move_token(pos, m)
        pos.make(m)
        self._history.append(text)
        self._tokens.append(token + pgn4_mod.suffix(pos))

    @staticmethod
    def _squares(text: str) -> tuple[int, int]:
        a, b = text.split("-")
        return square(a), square(b)

    def _find(self, fr: int, to: int, letter: str | None) -> int:
        """The legal move int from ``fr`` to ``to``, or ``IllegalMove`` saying why not."""
        pos = self._pos
        b = pos.board
        me = pos.turn
        p = b[fr]
        if not p:
            raise IllegalMove(f"there is no piece on {name(fr)}", "no_piece", square=name(fr))
        owner, kind = p >> 3, p & 7
        if owner == NEUTRAL or not pos.live >> owner & 1:
            raise IllegalMove(
                f"the piece on {name(fr)} is grey (its player is out) and cannot move",
                "grey_piece",
                square=name(fr),
            )
        if owner != me:
            raise IllegalMove(
                f"the piece on {name(fr)} is {SEAT_NAMES[owner]}'s; it is {SEAT_NAMES[me]}'s turn",
                "other_piece",
                square=name(fr),
                owner=SEAT_NAMES[owner],
                turn=SEAT_NAMES[me],
            )
        if (
            letter is not None
            and letter != "P"
            and PIECE_LETTERS.index(letter) != kind
            and not (
                letter == "Q" and kind == DQUEEN or letter == "D" and kind == QUEEN
            )
        ):
            raise IllegalMove(
                f"there is no {PIECE_NAMES[PIECE_LETTERS.index(letter)]} on {name(fr)}",
                "no_such_piece",
                piece=PIECE_LETTERS.index(letter),
                square=name(fr),
            )
        if letter == "P" and kind != PAWN:
            raise IllegalMove(f"there is no pawn on {name(fr)}", "no_such_piece", piece=PAWN, square=name(fr))
        for m in pos.gen_moves():
            if m & 511 == fr and (m >> 9) & 511 == to:
                return m
        what = f"the {PIECE_NAMES[kind]} on {name(fr)}"
        if _reachable(pos, fr, to):
            if kind == KING and any((c[0], c[1]) == (fr, to) for c in CASTLES[me]):
                if pos.in_check(me):
                    raise IllegalMove("you cannot castle out of check", "castle_check")
                raise IllegalMove(
                    "the king cannot castle through or onto an attacked square",
                    "castle_attacked",
                )
            raise IllegalMove(f"{name(fr)}-{name(to)} would leave your king in check", "self_check", move=f"{name(fr)}-{name(to)}")
        q = b[to]
        if q and q != OFF and q >> 3 == me:
            raise IllegalMove(f"{what} cannot move onto your own piece on {name(to)}", "own_piece", piece=kind, square=name(fr), target=name(to))
        raise IllegalMove(f"{what} cannot move to {name(to)}", "cannot_reach", piece=kind, square=name(fr), target=name(to))

    def resign(self, seat: int) -> None:
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < 4:
            raise IllegalMove(f"there is no seat {seat!r}", "no_seat", seat=seat)
        if self._pos.over:
            raise IllegalMove("the game is over", "over")
        if not self._pos.live >> seat & 1:
            raise IllegalMove(f"{SEAT_NAMES[seat]} is already out", "already_out", seat=SEAT_NAMES[seat])
        self._pos.resign(seat)
        self._history.append(Turn.resignation(seat).text)
        self._tokens.append("R")

    def pop(self) -> str:
        if not self._history:
            raise IndexError("no move to take back")
        self._pos.unmake()
        self._tokens.pop()
        return self._history.pop()

    # -- encodings ------------------------------------------------------------------------

    def encode(self) -> bytes:
        """Version, 160 squares (piece codes: owner << 3 | kind, 7 = promoted queen,
        owner 4 = colourless grey), side to move (255 when over), live mask, over flag,
        castling bits, usable en-passant entries, scores, halfmove clock and ply."""
        pos = self._pos
        b = pos.board
        out = bytearray([ENCODING_VERSION])
        out += bytes(b[sq] for sq in SQUARES)
        eps = pos.usable_ep()
        out += bytes(
            [
                255 if pos.over else pos.turn,
                pos.live,
                int(pos.over),
                pos.castling,
                len(eps),
            ]
        )
        for seat, sk, ld in eps:
            out += bytes([seat, SQUARE_INDEX[sk], SQUARE_INDEX[ld]])
        out += struct.pack(">4iII", *pos.scores, pos.halfmove, pos.ply)
        return bytes(out)

    def fen4(self) -> str:
        """The position as FEN4 (see ``fen4``)."""
        return fen4_mod.export(self._pos)

    def pgn4(self, tags: dict[str, str] | None = None) -> str:
        """The game so far as PGN4 (see ``pgn4``)."""
        return pgn4_mod.export(self, tags)

    def render(self) -> str:
        """14x14 text board: ``rK`` = Red king, ``xQ`` = grey queen, ``rD`` = promoted queen."""
        pos = self._pos
        b = pos.board
        lines = ["    " + "  ".join(FILES)]
        for rank in range(13, -1, -1):
            cells = []
            for file in range(14):
                if not on_board(file, rank):
                    cells.append("  ")
                    continue
                p = b[sq_of(file, rank)]
                if not p:
                    cells.append(" .")
                elif p >> 3 == NEUTRAL or not pos.live >> (p >> 3) & 1:
                    cells.append("x" + PIECE_LETTERS[p & 7])
                else:
                    cells.append(SEAT_LETTERS[p >> 3] + PIECE_LETTERS[p & 7])
            lines.append(f"{rank + 1:>2} " + " ".join(cells) + f"  {rank + 1}")
        lines.append("    " + "  ".join(FILES))
        return "\n".join(line.rstrip() for line in lines)


def _reachable(pos: Position, fr: int, to: int) -> bool:
    """Could the piece on ``fr`` move to ``to`` if its own king's safety did not count?"""
    b = pos.board
    p = b[fr]
    me, kind = p >> 3, p & 7
    q = b[to]
    if q == OFF or (q and q >> 3 == me):
        return False
    diff = to - fr
    if kind == KNIGHT:
        return diff in KNIGHT_STEPS
    if kind == KING:
        if diff in KING_STEPS:
            return True
        for side, (kf, kt, rf, _rt, between, _tr) in enumerate(CASTLES[me]):
            if (kf, kt) == (fr, to):
                return (
                    bool(pos.castling >> (2 * me + side) & 1)
                    and all(b[x] == 0 for x in between)
                    and b[rf] == (me << 3) | ROOK
                )
        return False
    if kind == PAWN:
        push = PAWN_PUSH[me]
        if diff == push:
            return q == 0
        if diff == 2 * push:
            return q == 0 and b[fr + push] == 0 and fr in PAWN_START[me]
        if diff in PAWN_CAPTURES[me]:
            if q:
                return True
            return any(
                e is not None
                and e[0] == to
                and s != me
                and pos.live >> s & 1
                and b[e[1]] == (s << 3) | PAWN
                for s, e in enumerate(pos.ep)
            )
        return False
    for d in SLIDES[kind]:
        s = fr + d
        while b[s] == 0:
            if s == to:
                return True
            s += d
        if s == to:
            return True
    return False


__all__ = ["OPTION_DEFAULTS", "Chess4", "next_first"]
