"""How long a seat to move may stay silent before it can be forfeited: a chain rule
(``p2p.protocol.round``); a slow round's genesis names its own limit (docs/protocol.md §6.7)."""

from __future__ import annotations

from dataclasses import dataclass

from p2p.protocol import events
from p2p.protocol.events import Event


@dataclass(frozen=True)
class TurnTimeouts:
    """How long a human seat to move may stay silent before it can be forfeited (ms).

    Part of the chain rules: every member of a round must use the same values (the
    protocol's are the defaults; tests pass shorter ones).
    """

    silent_ms: int = 900_000
    """The seat has simply not moved."""
    offline_ms: int = 180_000
    """The forfeit carries the seat's own signed offline presence (its Last Will or
    goodbye) as evidence, which the forfeiter's lobby held unrevoked this long: the grace
    period, long enough that a Wi-Fi change never costs a round (docs/protocol.md §6.6)."""

    def limit(self, reason: str) -> int:
        return self.offline_ms if reason == "offline" else self.silent_ms


DEFAULT_TIMEOUTS = TurnTimeouts()

MIN_TURN_S = events.MIN_TURN_S
MAX_TURN_S = events.MAX_TURN_S


def timeouts_for(genesis: Event, fallback: TurnTimeouts = DEFAULT_TIMEOUTS) -> TurnTimeouts:
    """The turn timeouts of the round ``genesis`` opens: a chain rule.

    A genesis that names ``turn`` (seconds; a slow round, docs/protocol.md §6.7) has that
    limit for every turn, whether the seat is online or not (being offline is normal in
    a round played over days, so its signed goodbye does not shorten the turn).  A genesis
    without it has ``fallback``: the protocol's defaults, so every older log replays as
    before (tests pass shorter ones).
    """
    turn = genesis.body.get("turn") if genesis.kind == "genesis" else None
    if not isinstance(turn, int) or isinstance(turn, bool):
        return fallback
    return TurnTimeouts(silent_ms=turn * 1000, offline_ms=turn * 1000)
