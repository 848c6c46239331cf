"""Verify and replay a saved round log, offline.

A log is a text file of events, one per line, each line the event's canonical wire bytes
exactly as published (what ``Applied`` effects carry).  Blank lines are skipped.  Chain
events may appear in any order and more than once; side events, chat and sync requests may
be mixed in (their signatures are checked, then they are ignored: whatever counts was sealed
into the chain).  Replaying checks every signature, the hash chain from the genesis, every
sealed event, the draw, every move against the engine and its stated state hash, and every
computer move against ``p2p.ai.choose_move``.

``replay_log(lines)`` returns a ``Replay``; anything wrong raises ``LogError`` naming the
first bad line or chain position.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from p2p.protocol import events
from p2p.protocol.events import Event, EventError
from p2p.protocol.round import ChainError, RoundState, verify_chain

MAX_LOG_LINES = 100_000


class LogError(ValueError):
    """A log that does not verify; one line naming the first bad event."""


@dataclass
class Replay:
    """A verified round: its final state and the chain that led there."""

    state: RoundState
    chain: list[Event]
    ignored: int
    """Valid events in the log that are not part of the chain (side events, chat ...)."""


def parse_log(lines: Iterable[bytes]) -> tuple[list[Event], int]:
    """The chain events of a log in chain order, and the number of other valid events."""
    by_seq: dict[int, Event] = {}
    round_id: str | None = None
    ignored = 0
    for number, line in enumerate(lines, start=1):
        if number > MAX_LOG_LINES:
            raise LogError(f"more than {MAX_LOG_LINES} lines")
        line = line.rstrip(b"\r\n")
        if not line.strip():
            continue
        try:
            event = events.parse(line, legacy=True)  # old logs replay too
        except EventError as err:
            raise LogError(f"line {number}: {err}") from None
        if event.round is None:
            raise LogError(
                f"line {number}: a {event.kind} event does not belong in a round log"
            )
        if round_id is None:
            round_id = event.round
        elif event.round != round_id:
            raise LogError(
                f"line {number}: event of another round ({event.round[:12]})"
            )
        if event.seq is None:
            ignored += 1
            continue
        there = by_seq.get(event.seq)
        if there is None:
            by_seq[event.seq] = event
        elif there.id != event.id:
            raise LogError(
                f"line {number}: two different events at position {event.seq}"
                f" ({there.id[:12]} and {event.id[:12]}, by {there.pk.hex()[:8]} and {event.pk.hex()[:8]})"
            )
    if not by_seq:
        raise LogError("the log holds no round events")
    missing = [seq for seq in range(max(by_seq) + 1) if seq not in by_seq]
    if missing:
        raise LogError(f"position {missing[0]} of the chain is missing")
    return [by_seq[seq] for seq in range(len(by_seq))], ignored


def replay_log(lines: Iterable[bytes]) -> Replay:
    """Verify a whole log and return the final state; ``LogError`` on the first problem."""
    chain, ignored = parse_log(lines)
    try:
        state = verify_chain(chain)
    except ChainError as err:
        raise LogError(f"chain {err}") from None
    return Replay(state, chain, ignored)
