"""Two signed events for one chain position: which one the round keeps (pure rules).

Every position has one owner (``RoundState.owner``), so honest members never race for a
position, with two exceptions this module decides:

* **a forfeit and the forfeited seat's own event** (a move or a seal). The seat's event
  wins if it was signed before the forfeit (``ts < forfeit.ts``) and either ends the game
  or was signed within the turn limit the forfeit claims (``ts - prev.ts < limit(reason)``,
  the seat's own signed timestamps); otherwise the forfeit wins.  Every member that holds
  both events computes the same winner, whatever the arrival order.  ``rival_wins`` is
  that rule.  A forfeit may replace only the pending turn: the chain head, applied less
  than ``RACE_MS`` ago (``RoundMachine``); anything older is settled.
* **two events of one author at one position** (same ``seq``, same ``prev``): equivocation.
  The two signed events are the proof; every member that holds both ends the round by a
  fixed rule (``RoundState.end_for_equivocation``): the equivocator is out and never wins.

Bounds every member applies before it replaces anything (``RoundMachine``): at most
``MAX_REWIND`` chain events are replaced, and a forfeit that was applied ``SETTLE_MS`` ago
by the member's own clock is final (a seat that returns with a backdated "timely" move
does not revive a round).  A chain event dated more than ``MAX_AHEAD_MS`` ahead of the
member's clock waits until the clock gets there, so a forfeit cannot claim lateness that
has not happened yet.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable

from p2p.protocol.events import Event
from p2p.protocol.round import TurnTimeouts

MAX_REWIND = 8
"""A conflict replaces at most this many chain events (checked before anything is done)."""
SETTLE_MS = 30_000
"""A forfeit is final once it has been applied this long (by the member's own clock)."""
RACE_MS = SETTLE_MS
"""A forfeit may replace the seat's own event at the head only this long after we applied
it (our clock): a forfeit races a move in flight, it does not undo an answered turn."""
MAX_AHEAD_MS = 10_000
"""A chain event dated further than this ahead of our clock waits for the clock."""
HELD_FINAL_MS = SETTLE_MS + MAX_AHEAD_MS
"""A member that signs an event built on a forfeit this long after the forfeit's date has
held the forfeit ``SETTLE_MS`` by its own clock (less the clock allowance): it is final
there, and so for every member, the forfeited seat included."""
MAX_CLOCK_WAITS = 256
"""Chain events waiting for our clock (dated ahead, or a forfeit too soon); oldest dropped."""
MAX_PENDING = 256
"""Events waiting for an earlier event we have not seen; the oldest are dropped beyond."""
MAX_VOUCHED = 64
"""Ids of our own chain events another member showed it holds (its sync request named
it as its head, or its ack answers it); oldest forgotten first."""
MAX_SEEN = 4096
"""Event ids a round machine remembers as processed (oldest forgotten first)."""


def rival_wins(
    rival: Event,
    forfeit: Event,
    prev: Event,
    rival_ends_game: bool,
    timeouts: TurnTimeouts,
) -> bool:
    """True if the forfeited seat's own event ``rival`` keeps the position, not ``forfeit``.

    ``prev`` is the chain event before the position.  A move signed before the forfeit
    that ends the game, or that was signed within the limit the forfeit claims, is never
    replaced by a forfeit; one signed at or after the forfeit never undoes it.
    """
    if rival.ts >= forfeit.ts:
        return False
    if rival_ends_game:
        return True
    return rival.ts - prev.ts < timeouts.limit(forfeit.body["reason"])


class SeenIds:
    """Ids processed once already: bounded (``MAX_SEEN``), the oldest forgotten first."""

    def __init__(self, ids: Iterable[str] = (), limit: int = MAX_SEEN) -> None:
        self._ids: OrderedDict[str, None] = OrderedDict()
        self.limit = limit
        self.update(ids)

    def add(self, eid: str) -> None:
        if eid in self._ids:
            return
        self._ids[eid] = None
        if len(self._ids) > self.limit:
            self._ids.popitem(last=False)

    def update(self, ids: Iterable[str]) -> None:
        for eid in ids:
            self.add(eid)

    def discard(self, eid: str) -> None:
        """Forget ``eid`` (e.g. an event that was orphaned and is adopted again)."""
        self._ids.pop(eid, None)

    def __contains__(self, eid: object) -> bool:
        return eid in self._ids

    def __len__(self) -> int:
        return len(self._ids)
