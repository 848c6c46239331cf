"""The rules engine's fast core seen through the search's ``SearchBoard`` protocol.

``SearchAdapter`` wraps a private copy of a ``Chess4`` game's ``movegen.Position``:
moves are the engine's move ints, ``make``/``unmake`` apply every rule (points, mates,
check bonus, eliminations, draws, the move limit), so the search never approximates
the rules.  Only the evaluation (``chess4_eval``) is ours.
"""

from __future__ import annotations

from p2p.ai.chess4_eval import evaluate, final_value
from p2p.games.base import Game
from p2p.games.chess4.board import (
    BISHOP,
    DQUEEN,
    KNIGHT,
    KNIGHT_STEPS,
    PAWN,
    PAWN_CAPTURES,
    QUEEN,
    ROOK,
    WIDTH,
)
from p2p.games.chess4.movegen import (
    CASTLE,
    EP,
    PROMO,
    VALUE,
    Position,
    attacked,
    move_text,
)
from p2p.games.chess4.rules import winners

_SPECIAL = (CASTLE | EP | PROMO) << 18
_KNIGHT_OFFSETS = frozenset(KNIGHT_STEPS)
_ORTHO_SLIDERS = frozenset((ROOK, QUEEN, DQUEEN))
_DIAG_SLIDERS = frozenset((BISHOP, QUEEN, DQUEEN))

assert WIDTH == 16  # checks() splits squares into file (low 4 bits) and row


class SearchAdapter:
    """A scratch position for one move decision (the game itself is never touched)."""

    __slots__ = ("pos",)

    def __init__(self, game: Game) -> None:
        position = getattr(game, "position", None)
        if not isinstance(position, Position):
            raise TypeError("the chess4 computer player needs a chess4 game")
        self.pos = position.copy()

    def side(self) -> int | None:
        pos = self.pos
        return None if pos.over else pos.turn

    def moves(self) -> list[int]:
        return self.pos.gen_moves()

    def captures(self) -> list[int]:
        """Captures worth a look in quiescence: of a live player's piece (grey pieces score
        nothing), and either not losing material on the spot (the victim is worth at least
        the capturer) or of a piece nobody else could take back.  Four players make far
        more captures than two; without this filter quiescence is most of the tree."""
        pos = self.pos
        b = pos.board
        cp = pos.captured_points
        others = pos.live & ~(1 << pos.turn)
        out = []
        for m in pos.gen_moves():
            g = cp(m)
            if g and (g >= VALUE[b[m & 511] & 7] or not attacked(b, (m >> 9) & 511, others)):
                out.append(m)
        return out

    def checks(self, seat: int) -> list[int]:
        """Quiet moves of the side to move that put ``seat``'s king in direct check.

        Used at the search horizon so that a mate the next opponent could give with a
        quiet move (a back-rank mate, say) is not invisible.  Discovered checks are not
        looked for."""
        pos = self.pos
        b = pos.board
        king = pos.kings[seat]
        if king < 0 or not pos.live >> seat & 1:
            return []
        kf, kr = king & 15, king >> 4
        out = []
        for m in pos.gen_moves():
            to = (m >> 9) & 511
            if b[to] or m & _SPECIAL:
                continue
            fr = m & 511
            kind = b[fr] & 7
            if kind == KNIGHT:
                if king - to in _KNIGHT_OFFSETS:
                    out.append(m)
                continue
            if kind == PAWN:
                if king - to in PAWN_CAPTURES[pos.turn]:
                    out.append(m)
                continue
            df, dr = kf - (to & 15), kr - (to >> 4)
            if df == 0 or dr == 0:
                if kind not in _ORTHO_SLIDERS:
                    continue
            elif abs(df) == abs(dr):
                if kind not in _DIAG_SLIDERS:
                    continue
            else:
                continue
            step = (dr > 0) - (dr < 0)
            step = step * 16 + (df > 0) - (df < 0)
            sq = to + step
            while sq != king and (b[sq] == 0 or sq == fr):
                sq += step
            if sq == king:
                out.append(m)
        return out

    def gain(self, move: int) -> int:
        return self.pos.captured_points(move)

    def mover_value(self, move: int) -> int:
        return VALUE[self.pos.board[move & 511] & 7]

    def make(self, move: int) -> None:
        self.pos.make(move)

    def unmake(self) -> None:
        self.pos.unmake()

    def evaluate(self, root: int) -> int:
        pos = self.pos
        if pos.over:
            return final_value(pos.scores, winners(pos.scores), root)
        return evaluate(pos.board, pos.plist, pos.kings, pos.live, pos.scores, root, pos.turn)

    @staticmethod
    def text(move: int) -> str:
        return move_text(move)
