"""Other peers' clock offsets, estimated from what they sign (pure; docs/protocol.md "Time").

Every signed event carries its signer's wall-clock time ``ts``.  An event that arrives live
(not retained by the broker, not a sync answer) gives one *sample* of the signer's offset:
``ts - arrival``, its clock minus ours, less the one-way delay (tens of milliseconds, small
against the minutes this is about).  ``ClockOffsets`` keeps the last ``SAMPLES`` samples per
key (``MAX_KEYS`` keys, least recently heard forgotten first; samples older than
``MAX_AGE_MS`` age out, clocks get corrected) and estimates the offset as the second
largest of them: a delay only ever makes a sample smaller (an event queued by the broker,
a replay of an old one), so the estimate leans on the largest samples, and the second one
makes a single sample from the future (a signer that lies once, a clock stepped back)
change nothing either.

Rules that compare a peer's signed time with our clock judge it in the signer's own frame:
``local(pk, ts)`` is ``ts`` minus the signer's offset, clamped to ``TOLERANCE_MS`` (one hour:
what a signer can gain by lying about its clock is bounded).  A key we have no sample of
has offset 0: the rule falls back to our own clock.  Nothing here enters a chain rule:
``p2p replay`` and every member judge the chain from signed data alone.

>>> clocks = ClockOffsets()
>>> bob = b"b" * 32
>>> clocks.offset(bob) is None, clocks.local(bob, 5_000)
(True, 5000)
>>> for arrival in (0, 20_000, 40_000):
...     clocks.observe(bob, arrival + 840_000, arrival + 50)  # 14 min ahead, 50 ms delay
>>> clocks.offset(bob)
839950
>>> clocks.observe(bob, 0, 60_000)  # a replayed old event: changes nothing
>>> clocks.observe(bob, 9_999_999, 60_000)  # one sample far ahead: changes nothing
>>> clocks.offset(bob)
839950
>>> clocks.local(bob, 900_000)  # bob's 900 s is our 60.05 s
60050
>>> about(839_950)
(14, 'min')
>>> clocks.notable(bob), clocks.notable(bob)  # said once
(True, False)
"""

from __future__ import annotations

from collections import OrderedDict

SAMPLES = 5
"""Samples kept per key; the estimate is the second largest."""
MAX_KEYS = 4_096 + 64
"""Keys with samples at most (least recently heard forgotten first): as many as the lobby
lists (``p2p.protocol.lobby.MAX_PEERS`` strangers plus ``MAX_KEPT`` people we play with).
A partner is heard every heartbeat (20 s); only a flood of more fresh keys than this
within one heartbeat forgets its samples, and then its next presences restore them."""
MAX_AGE_MS = 600_000
"""A sample older than this (by its arrival on our clock) no longer counts."""
TOLERANCE_MS = 3_600_000
"""The largest offset a rule corrects for; presences further off are refused."""
ROUND_TOLERANCE_MS = 600_000
"""Rounds are built (and tested) to complete with clocks this far off; past it we say so."""
NOTABLE_MS = ROUND_TOLERANCE_MS + 10_000
"""Past this offset we say so: the round tolerance plus the 10 s any chain event may be
dated ahead (``p2p.protocol.conflicts.MAX_AHEAD_MS``) and the network's delay."""
SHOWN_MS = 3_000
"""Offsets smaller than this are the network's delay, not worth showing (``/who``)."""


def about(offset_ms: int) -> tuple[int, str]:
    """An offset for people: (amount, unit) rounded, unit ``s``, ``min`` or ``h``.

    >>> about(-45_400), about(90_000), about(5_400_000)
    ((45, 's'), (2, 'min'), (2, 'h'))
    """
    ms = abs(offset_ms)
    if ms < 60_000:
        return (ms + 500) // 1000, "s"
    if ms < 3_600_000 - 30_000:
        return (ms + 30_000) // 60_000, "min"
    return (ms + 1_800_000) // 3_600_000, "h"


def describe(offset_ms: int) -> str:
    """``about 14 min ahead of`` / ``about 45 s behind`` (English, for logs and notices)."""
    amount, unit = about(offset_ms)
    return f"about {amount} {unit} {'ahead of' if offset_ms > 0 else 'behind'}"


class ClockOffsets:
    """Per-key clock offsets from (signed ``ts``, arrival) samples: bounded, robust to one
sample from the future and to any number of late ones among the last ``SAMPLES``."""

    def __init__(self) -> None:
        self._samples: OrderedDict[bytes, tuple[tuple[int, int], ...]] = OrderedDict()
        """Per key its last ``SAMPLES`` samples ``(arrival, offset)``, oldest first (a
        tuple, not a deque: a few hundred bytes less per key, and thousands of keys)."""
        self._told: OrderedDict[bytes, None] = OrderedDict()

    def __len__(self) -> int:
        return len(self._samples)

    def observe(self, pk: bytes, ts: int, arrival: int) -> None:
        """One live event of ``pk``, signed at ``ts``, arrived at ``arrival`` (our clock)."""
        queue = self._samples.pop(pk, ()) + ((arrival, ts - arrival),)
        self._samples[pk] = tuple(
            s for s in queue[-SAMPLES:] if s[0] >= arrival - MAX_AGE_MS
        )
        while len(self._samples) > MAX_KEYS:
            self._samples.popitem(last=False)

    def offset(self, pk: bytes) -> int | None:
        """``pk``'s clock minus ours in ms (the second largest of its samples, the only
        one if there is one), or ``None``."""
        queue = self._samples.get(pk)
        if not queue:
            return None
        values = sorted((sample for _, sample in queue), reverse=True)
        return values[1] if len(values) > 1 else values[0]

    def correction(self, pk: bytes) -> int:
        """What to subtract from ``pk``'s timestamps: its offset within ±``TOLERANCE_MS``."""
        found = self.offset(pk)
        if found is None:
            return 0
        return max(-TOLERANCE_MS, min(TOLERANCE_MS, found))

    def local(self, pk: bytes, ts: int, limit: int = TOLERANCE_MS) -> int:
        """``pk``'s signed time ``ts`` on our clock (its own frame, corrected by at most
        ``limit``)."""
        return ts - max(-limit, min(limit, self.correction(pk)))

    def notable(self, pk: bytes) -> bool:
        """True once (per key) when ``pk``'s clock is off by more than ``NOTABLE_MS`` (two
        samples at least): the moment to tell the user whose clock it is and by how much."""
        found = self.offset(pk)
        if found is None or abs(found) <= NOTABLE_MS or len(self._samples[pk]) < 2:
            return False
        return self.tell(pk)

    def told(self, pk: bytes) -> bool:
        """Whether the user was told about ``pk``'s clock (``notable`` or ``tell``)."""
        return pk in self._told

    def tell(self, pk: bytes) -> bool:
        """Mark ``pk`` as told; ``False`` if it was already (say it once)."""
        if pk in self._told:
            return False
        self._told[pk] = None
        while len(self._told) > MAX_KEYS:
            self._told.popitem(last=False)
        return True
