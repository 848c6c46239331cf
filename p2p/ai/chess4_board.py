"""The rules engine's fast core seen through the search's ``SearchBoard`` protocol.

``SearchAdapter`` wraps a private copy of a ``Chess4`` game's ``movegen.Position``:
moves are the engine's move ints, ``make``/``unmake`` apply every rule (points, mates,
check bonus, eliminations, draws, the move limit), so the search never approximates
the rules.  Only the evaluation (``chess4_eval``) is ours.
"""

from __future__ import annotations

from p2p.ai.chess4_eval import evaluate, final_value
from p2p.games.base import Game
from p2p.games.chess4.movegen import VALUE, Position, attacked, move_text
from p2p.games.chess4.rules import winners


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
