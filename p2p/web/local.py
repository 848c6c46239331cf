"""Play on this machine in the browser: hot-seat and against the computer.

A ``LocalPlay`` is a ``p2p.games.match.Match`` (rounds of one game, rotating starter,
score) plus which seat is a computer player and at which level, and the 0.25 s input lock
after each move (a double tap must not move for the other player).  Pure bookkeeping:
the session (``p2p.web.session``) runs the computer's moves in a worker thread; time
comes in as an argument.

>>> p = LocalPlay("connect4", {}, (None, "neuling"))
>>> p.human_to_move(), p.computer_to_move()
(True, False)
>>> p.play("4", now=10.0)
>>> p.computer_to_move()
True
>>> p.play("4", now=10.1)
Traceback (most recent call last):
...
p2p.web.local.LocalError: not your turn
"""

from __future__ import annotations

from p2p.games import Game
from p2p.games.base import OptionValue
from p2p.games.match import Match, MatchError

INPUT_LOCK_S = 0.25
"""After a move, another move within this time is ignored (a double tap)."""


class LocalError(ValueError):
    """A local action that is not possible now: ``code`` for the page's catalogue."""

    def __init__(self, message: str, code: str = "") -> None:
        super().__init__(message)
        self.code = code or message.replace(" ", "_")


class LocalPlay:
    """Rounds of one game at this screen; ``levels[seat]`` is ``None`` for a person."""

    def __init__(
        self, game_name: str, options: dict[str, OptionValue], levels: tuple[str | None, ...],
        first: int = 0,
    ) -> None:
        self.series = Match(game_name, options, first=first)
        if len(levels) != self.series.players:
            raise LocalError("wrong number of seats", "seats")
        self.levels = levels
        self.locked_until = 0.0

    @property
    def game(self) -> Game:
        return self.series.current

    @property
    def round_no(self) -> int:
        return self.series.round_number

    def score(self) -> tuple[int, ...]:
        return self.series.wins()

    def human_to_move(self) -> bool:
        seat = self.game.to_move()
        return seat is not None and self.levels[seat] is None

    def computer_to_move(self) -> bool:
        seat = self.game.to_move()
        return seat is not None and self.levels[seat] is not None

    def outcome(self) -> str | None:
        """How a finished round went for the one person against computer seats (won,
        lost, drawn; a shared first place is drawn); ``None`` while it runs, for hot-seat
        and for computers only.

        >>> p = LocalPlay("connect4", {}, (None, "neuling"))
        >>> for col in "1212121": p.game.push(col)
        >>> p.outcome()
        'won'
        """
        people = [i for i, level in enumerate(self.levels) if level is None]
        if not self.game.is_over() or len(people) != 1 or len(people) == len(self.levels):
            return None
        winners = list(self.game.winners())
        if not winners:
            return "drawn"
        if people[0] not in winners:
            return "lost"
        return "won" if len(winners) == 1 else "drawn"

    def play(self, move: str, now: float) -> None:
        """A person's move (``MoveError`` for a bad one; ``LocalError`` when not theirs)."""
        if self.game.is_over():
            raise LocalError("the round is over", "over")
        if not self.human_to_move():
            raise LocalError("not your turn", "not_your_turn")
        if now < self.locked_until:
            raise LocalError("too fast", "locked")
        self.game.push(move)
        self.locked_until = now + INPUT_LOCK_S

    def computer_move(self, move: str) -> None:
        """The computer seat's chosen move."""
        if self.computer_to_move():
            self.game.push(move)

    def undo(self) -> None:
        """Take back the last person's move (and the computer's answers after it)."""
        game = self.game
        if game.is_over():
            raise LocalError("the round is decided; no take-back", "undo_over")
        history = game.history()
        if not any(True for _ in history):
            raise LocalError("nothing to take back", "undo_none")
        count = 1
        if any(level is not None for level in self.levels):
            probe = game.copy()
            count = 0
            while probe.history():
                probe.pop()
                count += 1
                seat = probe.to_move()
                if seat is not None and self.levels[seat] is None:
                    break
        try:
            self.series.undo(count)
        except MatchError as err:
            raise LocalError(str(err), "undo_none") from None

    def resign(self) -> None:
        """The person to move gives up (hot-seat) or we give up against the computer."""
        game = self.game
        seat = game.to_move()
        if seat is None:
            raise LocalError("the round is over", "over")
        if self.levels[seat] is not None:
            seat = next(i for i, level in enumerate(self.levels) if level is None)
        try:
            game.resign(seat)
        except ValueError:
            self.series.abandon_round()

    def again(self) -> None:
        """The next round, the next seat starting."""
        try:
            if self.game.is_over():
                self.series.next_round()
            else:
                self.series.abandon_round()
        except MatchError as err:
            raise LocalError(str(err), "again") from None
