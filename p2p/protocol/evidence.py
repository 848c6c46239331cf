"""The evidence an ``offline`` forfeit carries (docs/protocol.md §6.6): which session a
seat last signed with, and whether a Will is evidence against it.  Functions of what they
read of a round's state (``ChainView``: its seats' keys and its chain); pure."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from p2p.protocol import events
from p2p.protocol.events import Event


class SeatKey(Protocol):
    @property
    def pk(self) -> bytes | None: ...


class ChainView(Protocol):
    """What the evidence rules read of ``p2p.protocol.round.RoundState``."""

    @property
    def seats(self) -> Sequence[SeatKey]: ...

    @property
    def chain(self) -> Sequence[Event]: ...


def seat_session(state: ChainView, seat: int) -> int | None:
    """The session (``since``) named by seat ``seat``'s newest event in the chain: its
    own chain events and its side events sealed into them, newest position first;
    ``None`` if that event names none (a log of an earlier release, or a seat that has
    signed nothing in the chain)."""
    pk = state.seats[seat].pk
    for event in reversed(state.chain):
        for mine in (event, *event.sealed()):
            if mine.pk == pk:
                since = mine.body.get(events.SINCE)
                return since if isinstance(since, int) else None
    return None


def evidence_error(state: ChainView, seat: int, will: Event, forfeit_ts: int) -> str | None:
    """Why ``will`` is no evidence for an ``offline`` forfeit of ``seat`` dated
    ``forfeit_ts`` at the head of ``state``, or ``None`` if it is (docs/protocol.md §6.6).

    It must be the seat's own signed offline presence, dated no later than the forfeit,
    and name the session (``since``) of the seat's newest event in the chain: a Will of
    an earlier session of the seat (it came back since, and moved) is never evidence.  A
    seat whose newest event names no session (a log of an earlier release) is judged as
    before, by key and date alone."""
    if will.pk != state.seats[seat].pk:
        return f"the evidence is not signed by seat {seat}"
    if will.ts > forfeit_ts:
        return "the evidence is dated after the forfeit"
    moved = seat_session(state, seat)
    if moved is not None and will.body.get("since", will.ts) != moved:
        return f"the evidence is a Will of another session of seat {seat} than its last event's"
    return None