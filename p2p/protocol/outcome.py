"""How a round ended, typed (python-chess's ``Outcome(termination, winner)`` for a round):
``RoundEnd`` names the kind of end, ``RoundOutcome`` adds the winners, the points per seat
and the game's own ``Outcome``.  ``RoundState.outcome()`` gives the chain's,
``RoundMachine.outcome`` our view (a local end included), so no one parses a reason text.

>>> o = RoundOutcome(RoundEnd.CANCELLED, detail="seat 1 declined")
>>> o.reason, o.is_cancelled, o.winners
('cancelled: seat 1 declined', True, ())
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from p2p.games.base import Outcome


class RoundEnd(StrEnum):
    """What ended a round; the value is how its reason text starts."""

    GAME_OVER = "game over"
    """The game ended by its own rules (``RoundOutcome.game`` says how)."""
    RESIGNATION = "resignation"
    """A sealed resignation or leave left the game decided."""
    FORFEIT = "forfeit"
    """A seat was forfeited for its turn timeout and the game was decided by it."""
    EQUIVOCATION = "equivocation"
    """A seat signed two events for one position (§15.4); it is out and never wins."""
    VOID = "void"
    """The admin signed two events for one position before play: nothing counts."""
    CANCELLED = "cancelled"
    """The admin called the round off before play (``detail``: the signed reason)."""
    EXPIRED = "expired"
    """Local: the round did not get into play in time (no chain event says so)."""
    ABANDONED = "abandoned"
    """Local: the player to move and whoever may forfeit it are gone."""


LOCAL_ENDS = (RoundEnd.EXPIRED, RoundEnd.ABANDONED)
"""The ends that are a member's verdict beside the chain, not a fact of the chain."""


@dataclass(frozen=True)
class RoundOutcome:
    """How a round ended: its kind, the winning seats (ascending; empty when nobody won),
    the points per seat (the game's scores; empty before play) and the game's own typed
    ``Outcome`` (``None`` before play or when the game itself did not end)."""

    end: RoundEnd
    winners: tuple[int, ...] = ()
    points: tuple[int, ...] = ()
    game: Outcome | None = None
    detail: str = ""
    """The rest of the reason: the admin's signed cancel text, which seat equivocated, why
    a local end came."""

    @property
    def reason(self) -> str:
        """The one-line English reason (``end`` and ``detail``)."""
        return f"{self.end.value}: {self.detail}" if self.detail else self.end.value

    @property
    def is_cancelled(self) -> bool:
        """Nothing counts: cancelled, void, or a local end."""
        return self.end in (RoundEnd.CANCELLED, RoundEnd.VOID, *LOCAL_ENDS)

    @property
    def is_local(self) -> bool:
        return self.end in LOCAL_ENDS
