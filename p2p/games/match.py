"""A match: several rounds of one game between the same seats.

The starting seat rotates with every round (Connect Four: rounds 1, 3, 5 Red, rounds
2, 4, 6 Yellow), the score runs on, and a decided round gives its winner exactly one
point: the score is derived from the rounds themselves, never counted up by hand.
Best-of-N ends the match once a seat cannot be caught any more.

>>> m = Match("connect4", best_of=3)
>>> for col in "1212121": m.play(col)
>>> m.wins(), m.round_number, m.current.is_over()
((1, 0), 1, True)
>>> m.next_round().to_move()
1
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from p2p.games import create_game
from p2p.games.base import Game, Options, OptionValue


class MatchError(ValueError):
    """An action the match does not allow now (undo after the round is decided, ...)."""


@dataclass(frozen=True)
class RoundRecord:
    """A finished round: its starting seat, moves and winners."""

    first: int
    moves: tuple[str, ...]
    winners: tuple[int, ...]


class Match:
    """Rounds of ``game_name`` with rotating start and a running score."""

    def __init__(
        self,
        game_name: str,
        options: Options | None = None,
        *,
        best_of: int | None = None,
        first: int = 0,
        rotate: bool = True,
    ):
        if best_of is not None and best_of < 1:
            raise MatchError("best of must be at least 1")
        self.game_name = game_name
        self.base_options: dict[str, OptionValue] = dict(options or {})
        self.base_options.pop("first", None)
        self.best_of = best_of
        self.first = first
        self.rotate = rotate
        """False: ``first`` starts every round (e.g. "I always start" against a computer)."""
        self.rounds: list[RoundRecord] = []
        self.current: Game = self._new_round()

    @property
    def round_number(self) -> int:
        """1-based number of the current round."""
        return len(self.rounds) + 1

    @property
    def players(self) -> int:
        return self.current.players

    def starting_seat(self, round_index: int) -> int:
        """The seat that starts round ``round_index`` (0-based)."""
        probe = create_game(self.game_name, self.base_options)
        return (self.first + (round_index if self.rotate else 0)) % probe.players

    def _new_round(self) -> Game:
        options = dict(self.base_options)
        options["first"] = self.starting_seat(len(self.rounds))
        return create_game(self.game_name, options)

    def wins(self) -> tuple[int, ...]:
        """Points per seat: one for each decided round won alone."""
        points = [0] * self.current.players
        outcomes = [r.winners for r in self.rounds]
        if self.current.is_over():
            outcomes.append(self.current.winners())
        for winners in outcomes:
            if len(winners) == 1:
                points[winners[0]] += 1
        return tuple(points)

    def is_decided(self) -> bool:
        """True when best-of-N is settled: nobody can catch the leader any more."""
        if self.best_of is None:
            return False
        points = sorted(self.wins(), reverse=True)
        played = len(self.rounds) + (1 if self.current.is_over() else 0)
        left = self.best_of - played
        return left <= 0 or points[0] > points[1] + left

    def play(self, move: str) -> None:
        """Play a move in the current round (``MoveError`` if illegal)."""
        self.current.push(move)

    def undo(self, count: int = 1) -> list[str]:
        """Take back ``count`` moves (2 against a computer); never after the round is decided."""
        if self.current.is_over():
            raise MatchError("the round is decided; no undo")
        if count > len(self.current.history()):
            raise MatchError("nothing to take back")
        return [self.current.pop() for _ in range(count)]

    def next_round(self) -> Game:
        """Close the finished round and start the next one with the other side starting."""
        if not self.current.is_over():
            raise MatchError("the round is still running")
        if self.is_decided():
            raise MatchError("the match is decided")
        self.rounds.append(
            RoundRecord(
                first=self.current.options()["first"],  # type: ignore[arg-type]
                moves=tuple(self.current.history()),
                winners=self.current.winners(),
            )
        )
        self.current = self._new_round()
        return self.current

    def abandon_round(self) -> Game:
        """Close a round that is still running without a winner; the next seat starts the next."""
        self.rounds.append(
            RoundRecord(
                first=self.current.options()["first"],  # type: ignore[arg-type]
                moves=tuple(self.current.history()),
                winners=(),
            )
        )
        self.current = self._new_round()
        return self.current

    def replay(self, round_index: int) -> Iterator[Game]:
        """The positions of a finished round, one per move, starting before the first move."""
        try:
            record = self.rounds[round_index]
        except IndexError:
            raise MatchError(f"there is no finished round {round_index + 1}") from None
        options = dict(self.base_options)
        options["first"] = record.first
        game = create_game(self.game_name, options)
        yield game.copy()
        for entry in record.moves:
            game.apply(entry)
            yield game.copy()
