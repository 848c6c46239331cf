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
from typing import ClassVar

OptionValue = int | bool | str
Options = Mapping[str, OptionValue]


RESIGN_PREFIX = "resign:"
"""History entries that record a resignation look like ``resign:2``."""

NULL_MOVE = "pass"
"""The text of a turn that is not a board move: a pass (python-chess's ``Move.null()``).

An engine whose rules let or make a seat pass (Reversi: no disc can be placed) lists
``NULL_MOVE`` in ``legal_moves()`` exactly when passing is legal and accepts it in
``push``; it is recorded in ``history()`` and replayed like any move, and the protocol
signs it as the seat's move.  Engines without passes never list it, so ``push("pass")``
is a ``MoveError`` there.  ``Game.passes`` says whether a game has them.
"""


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

    def eliminated(self) -> tuple[int, ...]:
        """Seats that are out of the game (only four-player chess has any)."""
        return ()

    @abstractmethod
    def history(self) -> list[str]:
        """The moves played so far as canonical texts, in order; replayable with ``apply``.

        A resignation appears as ``resign:<seat>``.
        """

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
        return [] if self.resigned is None else [f"{RESIGN_PREFIX}{self.resigned}"]

    def pop_resignation(self) -> str | None:
        """Take back the shared resignation, if there is one, and return its entry
        (``pop`` calls this first)."""
        if self.resigned is None:
            return None
        seat, self.resigned = self.resigned, None
        return f"{RESIGN_PREFIX}{seat}"

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
        if entry.startswith(RESIGN_PREFIX):
            seat_text = entry[len(RESIGN_PREFIX) :]
            if not seat_text.isdigit():
                raise MalformedMove(f"{entry!r} is not a resignation", "not_move", text=entry)
            self.resign(int(seat_text))
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
