"""Fault injection for the live tests: per-peer clocks, a TCP proxy in front of Mosquitto.

``Clock``: a wall clock for one in-process ``Peer`` (``Peer(..., clock=Clock(+600_000))``),
the real one shifted by a number of milliseconds that a test may change while it runs (a
clock bump).  Other nemeses of the fault model (docs/protocol.md, "Time and faults") live
beside it: ``LinkProxy`` (latency with jitter, resets, a blackholed or cut link) and the
restartable broker of ``tests/conftest.py``.
"""

from __future__ import annotations

import time


class Clock:
    """The real wall clock in integer ms plus ``offset_ms`` (an injectable ``Peer`` clock)."""

    def __init__(self, offset_ms: int = 0) -> None:
        self.offset_ms = offset_ms

    def __call__(self) -> int:
        return time.time_ns() // 1_000_000 + self.offset_ms

    def shift(self, delta_ms: int) -> None:
        """Jump the clock by ``delta_ms`` (negative: back), as an NTP step would."""
        self.offset_ms += delta_ms
