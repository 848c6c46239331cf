"""A local match: rounds of one game at this keyboard, people and computer players mixed.

Pure bookkeeping, no screen and no asyncio: which seat is a person and which a computer
player (with its level), the round series (``p2p.games.match.Match``: score and rotating
starter), the input lock after each move (against a double key press playing for the
other side), undo and a replay cursor.  Time comes in
as an argument (``now``, monotonic seconds) so tests need no sleeping.
"""

from __future__ import annotations

from dataclasses import dataclass

from p2p.games import Game, create_game
from p2p.games.base import MoveError, OptionValue
from p2p.games.match import Match, MatchError

INPUT_LOCK_SECONDS = 0.25
"""After each move, moves typed within this time are ignored (double key press)."""


class LockedError(Exception):
    """A move arrived during the input lock."""


class NotHumanTurn(Exception):
    """A person tried to move while a computer seat (or nobody) is to move."""


@dataclass(frozen=True)
class Seat:
    """One seat of a local match: a person, or a computer player at ``level``."""

    level: str | None = None

    @property
    def is_computer(self) -> bool:
        return self.level is not None


def replay_step(current: int | None, step: str, total: int) -> int:
    """The replay cursor after ``step`` (``start``/``prev``/``next``/``end``).

    Entering the replay (``current`` is ``None``) with ``next`` shows the start position,
    with ``prev`` the position before the last move.
    """
    if current is None:
        current = -1 if step == "next" else total
    target = {"start": 0, "prev": current - 1, "next": current + 1, "end": total}.get(step)
    if target is None:
        raise ValueError(step)
    return max(0, min(total, target))


def position_after(game: Game, plies: int) -> Game:
    """A fresh copy of ``game``'s start position with its first ``plies`` history entries."""
    shown = create_game(game.name, game.options())
    for entry in game.history()[:plies]:
        shown.apply(entry)
    return shown


class LocalMatch:
    """Rounds of one game played on this machine (a ``p2p.games.match.Match`` plus seats)."""

    def __init__(
        self, game_name: str, options: dict[str, OptionValue], seats: tuple[Seat, ...], start: str = "alternate"
    ) -> None:
        first = options.get("first", 0)
        first = first if isinstance(first, int) else 0
        if start == "computer":
            first = next((i for i, s in enumerate(seats) if s.is_computer), first)
        elif start == "me":
            first = next((i for i, s in enumerate(seats) if not s.is_computer), first)
        self.start_rule = start
        """``alternate`` (the starting seat rotates), ``me`` or ``computer`` (fixed)."""
        self.series = Match(game_name, options, first=first, rotate=start == "alternate")
        self.game_name = game_name
        self.seats = seats
        self.locked_until = 0.0
        self.replay_ply: int | None = None
        """While replaying a finished round: how many moves are shown."""
        if len(seats) != self.game.players:
            raise ValueError("one seat per player is needed")

    # -- questions -------------------------------------------------------------------

    @property
    def game(self) -> Game:
        """The current round's position."""
        return self.series.current

    @property
    def round_no(self) -> int:
        """The current round's number, 1-based (``/again`` starts the next one; who
        starts it follows ``start_rule``)."""
        return self.series.round_number

    @property
    def score(self) -> tuple[int, ...]:
        """Rounds won per seat, this round included once it is decided."""
        return self.series.wins()

    @property
    def starter(self) -> int:
        """The seat that started this round."""
        return self.series.starting_seat(self.round_no - 1)

    def seat_to_move(self) -> int | None:
        """Seat whose turn it is, or ``None`` once the round is over."""
        return self.game.to_move()

    def computer_to_move(self) -> bool:
        """True when a computer seat must move now."""
        seat = self.game.to_move()
        return seat is not None and self.seats[seat].is_computer

    def human_seats(self) -> tuple[int, ...]:
        """Seats played by people at this keyboard."""
        return tuple(i for i, s in enumerate(self.seats) if not s.is_computer)

    def shown_game(self) -> Game:
        """The position to draw: the live game, or the replay position."""
        if self.replay_ply is None:
            return self.game
        return position_after(self.game, self.replay_ply)

    # -- moves -----------------------------------------------------------------------

    def play_human(self, text: str, now: float) -> str:
        """A person's move; returns its canonical text.

        Raises ``LockedError`` inside the input lock, ``NotHumanTurn`` when a computer or
        nobody is to move, ``MoveError`` for a bad move (state unchanged in every case).
        """
        if now < self.locked_until:
            raise LockedError()
        seat = self.game.to_move()
        if seat is None:
            raise MoveError("the round is over")
        if self.seats[seat].is_computer:
            raise NotHumanTurn()
        move = self.game.normalize(text)
        self.series.play(move)
        self.locked_until = now + INPUT_LOCK_SECONDS
        return move

    def play_computer(self, move: str) -> None:
        """Apply a computer seat's move (computed elsewhere, off the UI thread)."""
        self.series.play(move)

    def resign(self, seat: int) -> None:
        """A person gives up the round for ``seat``."""
        self.game.resign(seat)

    def undo(self) -> list[str]:
        """Take back the last person's move and the computer moves after it.

        Returns the moves taken back (latest first); empty if there is nothing to undo.
        Raises ``MatchError`` once the round is decided (the match rule: no undo then).
        """
        if self.game.is_over():
            raise MatchError("the round is decided")
        taken: list[str] = []
        humans = self.human_seats()
        while self.game.history():
            taken += self.series.undo(1)
            if self.game.to_move() in humans:
                break
        self.replay_ply = None
        return taken

    def another_round(self) -> None:
        """Start the next round: the next seat begins (unless a fixed start rule), the score runs on.

        A round that is still running is abandoned (no point for anyone) and counts as a
        round, so the starting seat rotates all the same.
        """
        if self.game.is_over():
            self.series.next_round()
        else:
            self.series.abandon_round()
        self.locked_until = 0.0
        self.replay_ply = None

    # -- replay ------------------------------------------------------------------------

    def replay(self, step: str) -> int:
        """Move the replay cursor: ``start``, ``prev``, ``next``, ``end``; returns the ply shown."""
        self.replay_ply = replay_step(self.replay_ply, step, len(self.game.history()))
        return self.replay_ply

    def stop_replay(self) -> None:
        """Back to the live position."""
        self.replay_ply = None
