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

from collections.abc import Iterable, Sequence

from p2p.protocol.events import Event
from p2p.protocol.round import RoundState

STORE_BYTES = 7_680
"""At most this many plaintext bytes in one store (sealed: + 28; under the 8192-byte cap)."""
MAX_STORE_LINES = 24
"""A reader looks at no more lines than this in one store (a member's junk is bounded)."""


def held_by(state: RoundState, public_key: bytes) -> int:
    """The highest chain position ``public_key`` has shown it holds: the position of its
    own newest chain event, or of the chain event its newest sealed side event answers
    (an accept answers the genesis); 0 if none (every member holds the genesis)."""
    by_id = {event.id: event.seq or 0 for event in state.chain}
    held = 0
    for event in state.chain:
        if event.pk == public_key:
            held = max(held, event.seq or 0)
        for inner in event.body.get("sealed", ()) if isinstance(event.body, dict) else ():
            if isinstance(inner, dict) and inner.get("pk") == public_key.hex():
                held = max(held, by_id.get(str(inner.get("prev")), 0))
    return held


def store_events(state: RoundState, me: bytes, acks: Iterable[Event] = ()) -> list[Event]:
    """What our store holds: the chain events after the lowest position every other
    human member is known to hold, then the closing ``acks`` (once the round is over);
    bounded by ``STORE_BYTES`` -- the newest chain events are kept, the acks always fit."""
    others = [s.pk for s in state.seats if s.pk is not None and s.pk != me]
    low = min((held_by(state, pk) for pk in others), default=len(state.chain) - 1)
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
