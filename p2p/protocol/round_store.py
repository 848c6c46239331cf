"""The retained store of a slow round: what one member keeps on the broker for the others.

Pure (no I/O): which signed events a member's retained store holds, how they are written
and read (docs/protocol.md §9.1).  In a slow round (§6.7) members are rarely online at
the same time, so a move must wait for its readers somewhere: each member keeps, as one
retained, sealed message on ``round/<key>/store/<its peer id>``, the chain events the
others may lack (everything after the lowest position every other human seat is known
to hold, by its own signed events in the chain) and, once the round is over, the closing
``ack``s it holds.  A member that connects reads every store (retained), verifies each
event like any other (signature, membership, position, rules) and so catches up without
anyone else online.  The container is not signed: every event in it is, so a member
that writes junk, drops events or replays old ones changes nobody's chain.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence

from p2p.protocol.events import Event
from p2p.protocol.round import RoundState

STORE_BYTES = 7_680
"""At most this many plaintext bytes in one store (sealed: + 28; under the 8192-byte cap)."""
MAX_STORE_LINES = 24
"""A reader looks at no more lines than this in one store (a member's junk is bounded)."""
REPAIR_INTERVAL_MS = 10_000
"""A member repairs its overwritten store at most once per this interval."""
REPAIR_BACKOFF_MS = 2_000
"""... after a random back-off of up to this (the driver draws it)."""


def held_by(state: RoundState, public_key: bytes) -> int:
    """The highest chain position ``public_key`` has shown it holds: the position of its
    own newest chain event, or of the chain event its newest sealed side event answers
    (an accept answers the genesis); 0 if none (every member holds the genesis)."""
    return held_by_all(state).get(public_key.hex(), 0)


def held_by_all(state: RoundState) -> dict[str, int]:
    """``held_by`` for every key at once (hex), in one pass over the chain: a store is
    worked out after every change of the round, for every other member."""
    by_id = {event.id: event.seq or 0 for event in state.chain}
    held: dict[str, int] = {}
    for event in state.chain:
        signer = event.pk.hex()
        held[signer] = max(held.get(signer, 0), event.seq or 0)
        for inner in event.body.get("sealed", ()) if isinstance(event.body, dict) else ():
            if isinstance(inner, dict) and isinstance(inner.get("pk"), str):
                answered = by_id.get(str(inner.get("prev")), 0)
                held[inner["pk"]] = max(held.get(inner["pk"], 0), answered)
    return held


def store_events(state: RoundState, me: bytes, acks: Iterable[Event] = ()) -> list[Event]:
    """What our store holds: the chain events after the lowest position every other
    human member is known to hold, then the closing ``acks`` (once the round is over);
    bounded by ``STORE_BYTES`` -- the newest chain events are kept, the acks always fit."""
    others = [s.pk for s in state.seats if s.pk is not None and s.pk != me]
    held = held_by_all(state)
    low = min((held.get(pk.hex(), 0) for pk in others), default=len(state.chain) - 1)
    tail = list(state.chain[low + 1 :])
    extra = sorted(acks, key=lambda e: e.pk)
    budget = STORE_BYTES - sum(len(e.raw) + 1 for e in extra)
    kept: list[Event] = []
    for event in reversed(tail):
        if budget - (len(event.raw) + 1) < 0 or len(kept) + len(extra) >= MAX_STORE_LINES:
            break
        budget -= len(event.raw) + 1
        kept.append(event)
    return list(reversed(kept)) + extra


def encode(items: Sequence[Event]) -> bytes:
    """The store's plaintext: one canonical event per line (as in a round log)."""
    return b"\n".join(e.raw for e in items)


def decode(plaintext: bytes) -> list[bytes]:
    """The event lines of a store's plaintext, at most ``MAX_STORE_LINES`` (the rest of a
    larger one is ignored: only a member can seal a store, and it gains nothing)."""
    if not plaintext or len(plaintext) > STORE_BYTES + 512:
        return []
    return [line for line in plaintext.split(b"\n")[:MAX_STORE_LINES] if line]


class StoreRepair:
    """When a member publishes its own store again because someone overwrote it.

    Anyone on the broker may write a retained store (§9.1), so what comes back on our
    own store topic is our echo or an overwrite.  ``published`` records each store we
    send; ``seen`` judges what the broker now holds and, if it is not ours, asks for one
    repair: ``(not_before_ms, jitter_ms)``, the driver then calls ``due`` after
    ``not_before_ms`` plus a random delay of at most ``jitter_ms`` (the randomness lives
    in the driver).  So a repair happens at most once per ``REPAIR_INTERVAL_MS`` however
    much junk arrives, never while one is pending, and not at all when our own bytes
    come back meanwhile (the echo of the latest store, or of an earlier one while the
    latest is still on its way).

    >>> r = StoreRepair()
    >>> r.published(b"mine", 0)
    >>> r.seen(b"mine", 10) is None  # our echo
    True
    >>> r.seen(b"junk", 20)
    (0, 2000)
    >>> r.seen(b"more junk", 30) is None  # a repair is pending already
    True
    >>> r.due(1_000)
    True
    >>> r.published(b"mine", 1_000)
    >>> r.seen(b"junk", 1_100)  # the next one waits for the interval
    (9900, 2000)
    >>> r.seen(b"mine", 1_200) is None and r.due(11_000)  # ours came back: no repair
    False
    """

    def __init__(self) -> None:
        self._sent: deque[bytes] = deque(maxlen=8)
        self._echoed = False
        """The latest store we sent came back since (the broker holds it)."""
        self._pending = False
        self._next = 0
        """Our clock: no repair before this."""

    def published(self, payload: bytes, now: int) -> None:
        """We published ``payload`` (a change, a reconnect, or a repair)."""
        if not self._sent or self._sent[-1] != payload:
            self._sent.append(payload)
        self._echoed = False

    def seen(self, payload: bytes, now: int) -> tuple[int, int] | None:
        """What arrived live on our store topic; a repair to schedule, or ``None``."""
        if not self._sent:
            return None  # nothing of ours yet (a (re)connect publishes it anyway)
        if payload == self._sent[-1]:
            self._echoed = True
            return None
        if payload in self._sent and not self._echoed:
            return None  # an earlier store of ours: the latest is on its way
        self._echoed = False
        if self._pending:
            return None
        self._pending = True
        return max(0, self._next - now), REPAIR_BACKOFF_MS

    def due(self, now: int) -> bool:
        """The back-off is over: publish our latest store again?"""
        self._pending = False
        if self._echoed or not self._sent:
            return False
        self._next = now + REPAIR_INTERVAL_MS
        return True

    def ours(self, payload: bytes) -> bool:
        """``payload`` is one of the last stores we published."""
        return payload in self._sent

    @property
    def latest(self) -> bytes | None:
        """The store we published last (as sealed)."""
        return self._sent[-1] if self._sent else None
