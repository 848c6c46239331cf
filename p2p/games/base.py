"""The one interface every rule engine implements.

A game is a mutable position plus its move history, in the style of python-chess's
``Board``: ``push`` a move, ``pop`` it back, ask whose turn it is and who won.
Engines are pure and deterministic: no I/O, no clock, no randomness, no ``hash()``.

Moves cross the interface as canonical text (``"4"`` for a Connect Four column,
``"b3"`` for a cube pillar, ``"h2-h4"`` for four-player chess).  Inside, each engine
uses whatever compact move type it likes; ``legal_moves()`` always answers in
canonical text so the protocol, the shell and the AI never special-case a game.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import ClassVar

OptionValue = int | bool | str
Options = Mapping[str, OptionValue]


RESIGN_PREFIX = "resign:"
"""History entries that record a resignation look like ``resign:2``."""

NULL_MOVE = "pass"
"""The text of a turn that is not a board move: a pass (python-chess's ``chess.Move.null()``).

An engine whose rules let or make a seat pass (no disc can be placed, say) lists
``NULL_MOVE`` in ``legal_moves()`` exactly when passing is legal and accepts it in
``push``; it is recorded in ``history()`` and replayed like any move, and the protocol
signs it as the seat's move.  Engines without passes never list it, so ``push("pass")``
is a ``MoveError`` there.  ``Game.passes`` says whether a game has them.
"""


class TurnKind(StrEnum):
    """What one history entry is (``Turn.kind``)."""

    MOVE = "move"
    """A board move."""
    PASS = "pass"
    """A pass (``NULL_MOVE``): the seat's turn, no board move."""
    RESIGNATION = "resignation"
    """A seat gave up (online also: left or was forfeited); not a ply of the board."""


@dataclass(frozen=True)
class Turn:
    """One entry of a game's history, typed: a board move, a pass or a resignation
    (python-chess keeps ``chess.Move.null()`` beside its moves).  ``text`` is the entry exactly
    as ``history()`` holds it, which replay, logs and ``p2p position`` keep; the faces
    read ``kind`` and ``seat`` instead of parsing it.

    >>> Turn.of("resign:2")
    Turn(kind=<TurnKind.RESIGNATION: 'resignation'>, text='resign:2', seat=2)
    >>> Turn.of("pass").kind, Turn.of("h2-h4").kind, Turn.resignation(1).text
    (<TurnKind.PASS: 'pass'>, <TurnKind.MOVE: 'move'>, 'resign:1')
    """

    kind: TurnKind
    text: str
    seat: int | None = None
    """The seat that resigned (a resignation only; a history entry names no other mover)."""

    @classmethod
    def of(cls, entry: str) -> Turn:
        """The typed form of one ``history()`` entry (the one place its text is read)."""
        seat = entry[len(RESIGN_PREFIX) :]
        if entry.startswith(RESIGN_PREFIX) and seat.isascii() and seat.isdigit():
            return cls(TurnKind.RESIGNATION, entry, int(seat))
        return cls(TurnKind.PASS if entry == NULL_MOVE else TurnKind.MOVE, entry)

    @classmethod
    def resignation(cls, seat: int) -> Turn:
        """Seat ``seat`` gives up: its history entry is ``resign:<seat>``."""
        return cls(TurnKind.RESIGNATION, f"{RESIGN_PREFIX}{seat}", seat)

    @property
    def is_resignation(self) -> bool:
        return self.kind is TurnKind.RESIGNATION


class Termination(StrEnum):
    """Why a game ended (python-chess's ``chess.Termination``); the value is the old
    string form (four-player chess's ``end_reason()``)."""

    LINE = "line"
    """A line was completed (Connect Four, tic-tac-toe)."""
    FULL_BOARD = "full board"
    """The board filled up (the cube's points; a drawn Connect Four)."""
    NO_MOVES = "no moves"
    """No seat can move (both seats out of squares; a stuck seat in Pop Out)."""
    REPETITION = "repetition"
    RESIGNATION = "resignation"
    LAST_PLAYER = "last player"
    """Only one seat is left (four-player chess)."""
    POINTS = "points"
    """Decided by points with the others out (four-player chess)."""
    FIFTY_MOVES = "50 moves"
    MOVE_LIMIT = "move limit"
    GAME_OVER = "game over"
    """An ending the engine does not name."""


@dataclass(frozen=True)
class Outcome:
    """How a finished game ended: the termination kind, the winning seats (ascending;
    empty for a draw) and the points per seat (python-chess's ``chess.Outcome``).

    >>> o = Outcome(Termination.RESIGNATION, (1,), (0, 1), resigned=(0,))
    >>> o.reason, o.is_draw
    ('resign:0', False)
    >>> Outcome(Termination.FULL_BOARD, (), (0, 0)).reason
    'full board'
    """

    termination: Termination
    winners: tuple[int, ...]
    points: tuple[int, ...]
    resigned: tuple[int, ...] = ()
    """Seats that resigned (or left), in the order they did."""

    @property
    def is_draw(self) -> bool:
        return not self.winners

    @property
    def reason(self) -> str:
        """The old string form: ``resign:<seat>`` for a resignation (the history's entry),
        else the termination's value."""
        if self.termination is Termination.RESIGNATION and self.resigned:
            return Turn.resignation(self.resigned[-1]).text
        return self.termination.value


class CodedError(ValueError):
    """A one-line reason (``str(err)``, English, for logs) plus a stable ``code`` and its
    ``params``, so a user interface can say it in its own language (the shell's
    catalogue has a ``reason.<code>`` text for each code)."""

    def __init__(self, message: str = "", code: str = "", /, **params: object) -> None:
        super().__init__(message)
        self.code = code
        self.params = params


class MoveError(CodedError):
    """A move that cannot be played."""


class MalformedMove(MoveError):
    """The text is not a move of this game at all (``"x9"`` in Connect Four)."""


class IllegalMove(MoveError):
    """A well-formed move that the rules forbid here (a full column, not your turn)."""


class OptionError(CodedError):
    """A game option that is unknown or out of range."""


class Game(ABC):
    """A position of one game and the moves that led to it.

    Subclasses set ``name`` (the registry key) and implement the abstract methods.
    ``options()`` returns the exact options the game was created with, so that
    ``type(g).create(g.options())`` rebuilds the start position on any peer.
    """

    name: ClassVar[str]
    """Registry key (``p2p/games/registry.py``): ``"connect4"``, ``"cube"``, ``"chess4"``."""

    title: ClassVar[str]
    """The game's name as people call it (German product name)."""

    SEAT_NAMES: ClassVar[tuple[str, ...]] = ()
    """English seat names in seat order (the shell translates ``seat.<Name>``); with
    ``players`` left alone, the number of seats is their count."""

    passes: ClassVar[bool] = False
    """True if a turn may be ``NULL_MOVE`` (a pass) in this game."""

    resignable: ClassVar[bool] = False
    """True if ``resign(seat)`` ends the game for a two-seat game through the shared
    bookkeeping below (``resigned``, ``resignation_entries``, ``pop_resignation``);
    engines with their own rules for it (four-player chess) override ``resign``."""

    resigned: int | None = None
    """The seat that resigned, or ``None`` (the shared resignation's state)."""

    # -- construction ---------------------------------------------------------------

    @classmethod
    @abstractmethod
    def create(cls, options: Options | None = None) -> Game:
        """A new game at its start position; raises ``OptionError`` on bad options."""

    @abstractmethod
    def options(self) -> dict[str, OptionValue]:
        """The options this game was created with (canonical: every key present)."""

    @abstractmethod
    def copy(self) -> Game:
        """An independent copy, history included."""

    # -- state -----------------------------------------------------------------------

    @property
    def players(self) -> int:
        """Number of seats (default: the count of ``SEAT_NAMES``)."""
        if not self.SEAT_NAMES:
            raise NotImplementedError(f"{type(self).__name__} names no seats: set SEAT_NAMES or players")
        return len(self.SEAT_NAMES)

    @abstractmethod
    def to_move(self) -> int | None:
        """Seat index (0-based) whose turn it is, or ``None`` when the game is over."""

    @abstractmethod
    def is_over(self) -> bool:
        """True once the game has ended."""

    @abstractmethod
    def scores(self) -> tuple[int, ...]:
        """Points per seat (Connect Four: 1 for the winner, else 0)."""

    @abstractmethod
    def winners(self) -> tuple[int, ...]:
        """Seats that won, ascending; empty for a drawn Connect Four round or a running game."""

    def termination(self) -> Termination:
        """Why the finished game ended.  Default: a resignation if the history ends with
        one, else ``GAME_OVER``; engines name their own endings."""
        turns = self.turns()
        if turns and turns[-1].is_resignation:
            return Termination.RESIGNATION
        return Termination.GAME_OVER

    def outcome(self) -> Outcome | None:
        """The typed result once the game is over (``None`` while it runs)."""
        if not self.is_over():
            return None
        return Outcome(self.termination(), self.winners(), self.scores(), self.resignations())

    def end_reason(self) -> str:
        """The outcome's old string form (``Outcome.reason``); empty while the game runs."""
        outcome = self.outcome()
        return "" if outcome is None else outcome.reason

    def eliminated(self) -> tuple[int, ...]:
        """Seats that are out of the game (only four-player chess has any)."""
        return ()

    @abstractmethod
    def history(self) -> list[str]:
        """The moves played so far as canonical texts, in order; replayable with ``apply``.

        A resignation appears as ``resign:<seat>``; ``turns()`` is the typed form.
        """

    def turns(self) -> list[Turn]:
        """The history typed: each entry a board move, a pass or a resignation."""
        return [Turn.of(entry) for entry in self.history()]

    def board_moves(self) -> list[str]:
        """The history without resignations: the plies of the board (moves and passes),
        as canonical texts."""
        return [turn.text for turn in self.turns() if not turn.is_resignation]

    def resignations(self) -> tuple[int, ...]:
        """The seats that resigned (online also: left or were forfeited), in order."""
        return tuple(turn.seat for turn in self.turns() if turn.seat is not None)

    # -- moves -----------------------------------------------------------------------

    @abstractmethod
    def legal_moves(self) -> list[str]:
        """Canonical texts of every legal move, in a fixed deterministic order."""

    @abstractmethod
    def normalize(self, text: str) -> str:
        """Canonical text for a move written by a person; raises ``MalformedMove``.

        Only the syntax is checked here, not legality in this position.
        """

    @abstractmethod
    def push(self, move: str) -> None:
        """Play a move given as text; raises ``MoveError`` and leaves the state unchanged."""

    def split_moves(self, chunk: str) -> list[str]:
        """The moves written in one word of a move list (``p2p position``); default: one."""
        return [chunk]

    def resign(self, seat: int) -> None:
        """Seat ``seat`` gives up (or leaves).  Default: with ``resignable`` set, the
        shared bookkeeping (``resigned``: the other seat of two wins, the game is over);
        else this game has no resignation.

        Engines that support it record it so that ``encode()`` and replay see it.
        """
        if not self.resignable:
            raise IllegalMove("this game has no resignation", "no_resign")
        if self.is_over():
            raise IllegalMove("the round is over", "over")
        if not 0 <= seat < self.players:
            raise IllegalMove(f"there is no seat {seat}", "no_seat", seat=seat)
        self.resigned = seat

    def resignation_entries(self) -> list[str]:
        """The history's tail for the shared resignation: ``["resign:<seat>"]`` or ``[]``."""
        return [] if self.resigned is None else [Turn.resignation(self.resigned).text]

    def pop_resignation(self) -> str | None:
        """Take back the shared resignation, if there is one, and return its entry
        (``pop`` calls this first)."""
        if self.resigned is None:
            return None
        seat, self.resigned = self.resigned, None
        return Turn.resignation(seat).text

    @abstractmethod
    def pop(self) -> str:
        """Take back the last move and return its canonical text; ``IndexError`` if none."""

    # -- encodings ---------------------------------------------------------------------

    @abstractmethod
    def encode(self) -> bytes:
        """A canonical byte encoding of the position (not the history)."""

    def state_hash(self) -> str:
        """SHA-256 hex digest of ``name`` and ``encode()``: equal on every machine."""
        return hashlib.sha256(self.name.encode() + b"\x00" + self.encode()).hexdigest()

    @abstractmethod
    def render(self) -> str:
        """A plain-text picture of the position for terminals and logs."""

    def seat_names(self) -> tuple[str, ...]:
        """Names of the seats in seat order (English; the shell translates): the first
        ``players`` of ``SEAT_NAMES``, else ``Player 1`` ..."""
        if self.SEAT_NAMES:
            return self.SEAT_NAMES[: self.players]
        return tuple(f"Player {i + 1}" for i in range(self.players))

    # -- helpers shared by all engines ------------------------------------------------

    def apply(self, entry: str) -> None:
        """Replay one ``history()`` entry: a move text, or ``resign:<seat>``."""
        turn = Turn.of(entry)
        if turn.seat is not None:
            self.resign(turn.seat)
        elif entry.startswith(RESIGN_PREFIX):
            raise MalformedMove(f"{entry!r} is not a resignation", "not_move", text=entry)
        else:
            self.push(entry)

    def is_legal(self, move: str) -> bool:
        """True if ``move`` parses and is legal right now."""
        try:
            text = self.normalize(move)
        except MoveError:
            return False
        return text in self.legal_moves()


def option_int(options: Options, key: str, default: int, lo: int, hi: int) -> int:
    """Read an integer option, checking its type and range."""
    value = options.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise OptionError(f"option {key} must be a whole number", "option_int", key=key)
    if not lo <= value <= hi:
        raise OptionError(f"option {key} must be between {lo} and {hi}", "option_range", key=key, lo=lo, hi=hi)
    return value


def option_bool(options: Options, key: str, default: bool) -> bool:
    """Read a yes/no option, checking its type."""
    value = options.get(key, default)
    if not isinstance(value, bool):
        raise OptionError(f"option {key} must be true or false", "option_bool", key=key)
    return value


def check_known(options: Options, known: set[str]) -> None:
    """Reject options this game does not know, so typos never pass silently."""
    unknown = sorted(set(options) - known)
    if unknown:
        raise OptionError(f"unknown option: {', '.join(unknown)}", "option_unknown", keys=", ".join(unknown))
