"""What lobby presences say about their signers' clocks (docs/protocol.md, "Time"): a
presence's ``ts`` on our clock, the clock samples live presences give, and the notices
for a clock notably or too far off.  Functions of the lobby's ``ClockOffsets`` and the
presence at hand; pure."""

from __future__ import annotations

from collections import OrderedDict

from p2p.protocol.clocks import TOLERANCE_MS, ClockOffsets, about, describe
from p2p.protocol.effects import Effect, Notice
from p2p.protocol.events import Event
from p2p.protocol.identity import label

MAX_FAR = 64
"""Keys whose live presences were refused as too far off that we remember (to say so)."""


def presence_local(clocks: ClockOffsets, event: Event, now: int, age: int | None) -> int:
    """A presence's ``ts`` on our clock, in its signer's frame (docs/protocol.md, Time).

    A live presence was signed a moment ago: its own ``ts - now`` is its signer's
    offset, accepted up to ``TOLERANCE_MS`` (so any clock within an hour is seen, and
    a clock that was just corrected is seen at once).  A retained one may be old: it
    is judged by the offset estimated from the signer's live presences (or ours).
    """
    if age is None:
        return clocks.local(event.pk, event.ts)
    offset = max(-TOLERANCE_MS, min(TOLERANCE_MS, event.ts - (now - age)))
    return event.ts - offset


def clock_notices(clocks: ClockOffsets, event: Event, now: int, age: int) -> list[Effect]:
    """Record a live presence's clock sample; say once if its signer is far off."""
    clocks.observe(event.pk, event.ts, now - age)
    if not clocks.notable(event.pk):
        return []
    offset = clocks.offset(event.pk) or 0
    return [clock_notice(label(event.body["nick"], event.pk), offset, "clock_off")]


def clock_notice(name: str, offset: int, code: str) -> Notice:
    """``name``'s clock is ``offset`` ms off ours (``clock_off``), or too far to play
    (``clock_far``)."""
    amount, unit = about(offset)
    text = f"{name}'s clock is {describe(offset)} yours"
    if code == "clock_far":
        text += ": too far off to play (set the clock right)"
    params = {"nick": name, "amount": amount, "unit": unit, "ahead": offset > 0}
    return Notice(text, code, params)


class FarClocks:
    """Keys whose live presence was refused as too far off our clock: (signed ts, arrival),
    at most ``MAX_FAR``, least recent forgotten first."""

    def __init__(self) -> None:
        self._seen: OrderedDict[bytes, tuple[int, int]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._seen)

    def too_far(
        self, clocks: ClockOffsets, event: Event, now: int, age: int | None
    ) -> list[Effect]:
        """A live presence refused as too far off: say so once, after a second one agrees
        (one replayed presence says nothing about its signer's clock)."""
        if age is None or clocks.told(event.pk):
            return []
        offset = event.ts - (now - age)
        seen = self._seen.pop(event.pk, None)
        self._seen[event.pk] = (event.ts, now)
        while len(self._seen) > MAX_FAR:
            self._seen.popitem(last=False)
        if seen is None or seen[0] >= event.ts or abs((seen[0] - seen[1]) - offset) > 5_000:
            return []
        clocks.tell(event.pk)
        return [clock_notice(label(event.body["nick"], event.pk), offset, "clock_far")]
