"""Tic-tac-toe, a toy game that lives in the tests only: the proof of
``docs/adding-a-game.md``.  One module per layer would be the product's way (an engine in
``p2p/games/``, a computer player in ``p2p/ai/``, a view in ``p2p/shell/views/``); here
the three small parts share one file, and ``SPEC`` is the one registry line.

>>> g = TicTacToe.create()
>>> for move in "15293": g.push(move)
>>> g.winners(), g.is_over()
((0,), True)
"""

from __future__ import annotations

import random
import re
from typing import ClassVar

from prompt_toolkit.formatted_text import StyleAndTextTuples

from p2p.games import GameSpec
from p2p.games.base import (
    Game,
    IllegalMove,
    MalformedMove,
    Options,
    OptionValue,
    check_known,
    option_int,
)
from p2p.games.registry import Demo
from p2p.shell.boards import BoardView, click, frag
from p2p.shell.game_view import GameView
from p2p.shell.i18n import Translator

LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))
"""The eight lines of three; cells are numbered 1-9 like a phone's keys, stored 0-8."""
MARKS = "XO"

# -- the engine (p2p/games/ layer) ----------------------------------------------------------


class TicTacToe(Game):
    """Two seats mark cells 1-9 in turn; three in a line wins, a full board is a draw."""

    name: ClassVar[str] = "ttt"
    title: ClassVar[str] = "Tic-Tac-Toe"
    SEAT_NAMES: ClassVar[tuple[str, ...]] = ("Red", "Yellow")
    resignable: ClassVar[bool] = True  # the shared resignation of p2p.games.base

    def __init__(self, first: int) -> None:
        self.first = first
        self.cells: list[int] = [-1] * 9
        self.moves: list[int] = []

    @classmethod
    def create(cls, options: Options | None = None) -> TicTacToe:
        options = options or {}
        check_known(options, {"first"})
        return cls(option_int(options, "first", 0, 0, 1))

    def options(self) -> dict[str, OptionValue]:
        return {"first": self.first}

    def copy(self) -> TicTacToe:
        other = TicTacToe(self.first)
        other.cells, other.moves, other.resigned = list(self.cells), list(self.moves), self.resigned
        return other

    def _line_owner(self) -> int | None:
        for a, b, c in LINES:
            if self.cells[a] >= 0 and self.cells[a] == self.cells[b] == self.cells[c]:
                return self.cells[a]
        return None

    def is_over(self) -> bool:
        return self.resigned is not None or self._line_owner() is not None or len(self.moves) == 9

    def to_move(self) -> int | None:
        return None if self.is_over() else (self.first + len(self.moves)) % 2

    def winners(self) -> tuple[int, ...]:
        if self.resigned is not None:
            return (1 - self.resigned,)
        owner = self._line_owner()
        return () if owner is None else (owner,)

    def scores(self) -> tuple[int, ...]:
        won = self.winners()
        return tuple(int(seat in won) for seat in range(2))

    def history(self) -> list[str]:
        return [str(cell + 1) for cell in self.moves] + self.resignation_entries()

    def legal_moves(self) -> list[str]:
        return [] if self.is_over() else [str(i + 1) for i in range(9) if self.cells[i] < 0]

    def normalize(self, text: str) -> str:
        raw = text.strip()
        if len(raw) != 1 or raw not in "123456789":
            raise MalformedMove(f"{text!r} is not a cell 1-9", "not_move", text=text)
        return raw

    def push(self, move: str) -> None:
        cell = int(self.normalize(move)) - 1
        seat = self.to_move()
        if seat is None:
            raise IllegalMove("the game is over", "over")
        if self.cells[cell] >= 0:
            raise IllegalMove(f"cell {cell + 1} is taken", "not_move", text=move)
        self.cells[cell] = seat
        self.moves.append(cell)

    def pop(self) -> str:
        resignation = self.pop_resignation()
        if resignation is not None:
            return resignation
        if not self.moves:
            raise IndexError("no move to take back")
        cell = self.moves.pop()
        self.cells[cell] = -1
        return str(cell + 1)

    def encode(self) -> bytes:
        side = self.to_move()
        resigned = 255 if self.resigned is None else self.resigned
        return bytes([self.first, 255 if side is None else side, resigned]) + bytes(c + 1 for c in self.cells)

    def render(self) -> str:
        marks = [MARKS[c] if c >= 0 else str(i + 1) for i, c in enumerate(self.cells)]
        return "\n".join(" ".join(marks[r * 3 : r * 3 + 3]) for r in (2, 1, 0)) + "\n"



# -- the computer player (p2p/ai/ layer) ------------------------------------------------------

LEVELS: tuple[str, ...] = ("neuling", "normal")
"""``neuling`` picks at random (seeded); ``normal`` wins or blocks a line when it can."""


def choose_move(game: Game, level: str, seed: bytes = b"") -> str:
    """Pure and deterministic: the position, the level and the seed decide."""
    moves = game.legal_moves()
    seat = game.to_move()
    if level == "normal" and seat is not None:
        cells: list[int] = game.cells  # type: ignore[attr-defined]
        for who in (seat, 1 - seat):  # win if we can, else block the opponent's line
            for move in moves:
                if _completes(cells, int(move) - 1, who):
                    return move
    return random.Random(seed + game.encode()).choice(moves)


def _completes(cells: list[int], cell: int, seat: int) -> bool:
    """Would ``seat`` marking ``cell`` complete a line?"""
    return any(cell in line and all(c == cell or cells[c] == seat for c in line) for line in LINES)


# -- the shell's view (p2p/shell/views/ layer) ------------------------------------------------


def render(game: Game, view: BoardView, t: Translator) -> StyleAndTextTuples:
    """Three rows, cells clickable, free cells showing their number."""
    out: StyleAndTextTuples = []
    cells: list[int] = game.cells  # type: ignore[attr-defined]
    for row in (2, 1, 0):
        for i in range(row * 3, row * 3 + 3):
            mark = MARKS[cells[i]] if cells[i] >= 0 else "·"
            out.append(frag("bold" if cells[i] >= 0 else "", f" {mark} ", click(view, str(i + 1))))
        out.append(frag("", f"   {row * 3 + 1} {row * 3 + 2} {row * 3 + 3}\n"))
    return out


VIEW = GameView(
    rules=(
        "Tic-Tac-Toe\nZwei Spieler setzen abwechselnd ein Zeichen auf ein Feld 1-9; drei in einer Reihe gewinnen.",
        "Tic-Tac-Toe\nTwo players take turns marking a cell 1-9; three in a line wins.",
    ),
    render=render,
    width=lambda game: 18,
    shape=re.compile(r"^\d$"),
)


# -- the one registry line --------------------------------------------------------------------

SPEC = GameSpec(
    "ttt", "toy_game:TicTacToe", ("Drei gewinnt", "Tic-tac-toe"),
    ai="toy_game", view="toy_game", aliases=("tictactoe",), demo=Demo(level="neuling"),
)
