"""Replay protection for unchained lobby events (``hello``, lobby ``chat``): a window and a
bounded memory of what was seen.

An event counts once: it is refused when its ``ts`` lies outside ``now ± window_ms``
(stale, or stamped too far ahead) or its id was seen already.  Memory is bounded: at most
``capacity`` ids, pruned as they leave the window.  When the memory is full the entry
with the oldest ``ts`` is forgotten and ``floor`` rises to that ``ts``; from then on an
event stamped at or before ``floor`` is refused as well (we could no longer tell whether
we saw it), so a full memory never lets a replay through.  Callers add an id only after
the event passed their budgets, so a flood cannot fill the memory faster than the budgets
allow.

>>> guard = ReplayGuard(window_ms=1000, capacity=2)
>>> guard.check("a", 0, 0) is None
True
>>> guard.add("a", 0, 0); guard.check("a", 0, 10)
'duplicate'
>>> guard.check("b", 5000, 0)
'outside the replay window'
>>> guard.add("b", 1, 1); guard.add("c", 2, 2); guard.check("z", 0, 3)
'older than the replay memory'
"""

from __future__ import annotations

import heapq


class ReplayGuard:
    """Refuse events outside the window or seen before; O(log n) per event, bounded."""

    def __init__(self, window_ms: int, capacity: int) -> None:
        self.window_ms = window_ms
        self.capacity = capacity
        self.floor: int | None = None
        self._ids: set[str] = set()
        self._by_ts: list[tuple[int, str]] = []

    def __len__(self) -> int:
        return len(self._ids)

    def check(self, event_id: str, ts: int, now: int) -> str | None:
        """Why the event must be dropped, or ``None`` if it is fresh and new."""
        if not now - self.window_ms <= ts <= now + self.window_ms:
            return "outside the replay window"
        if self.floor is not None and ts <= self.floor:
            return "older than the replay memory"
        if event_id in self._ids:
            return "duplicate"
        return None

    def add(self, event_id: str, ts: int, now: int) -> None:
        """Remember an event that was accepted."""
        while self._by_ts and self._by_ts[0][0] < now - self.window_ms:
            self._ids.discard(
                heapq.heappop(self._by_ts)[1]
            )  # outside the window anyway
        while len(self._ids) >= self.capacity:
            old_ts, old_id = heapq.heappop(self._by_ts)
            self._ids.discard(old_id)
            self.floor = old_ts if self.floor is None else max(self.floor, old_ts)
        self._ids.add(event_id)
        heapq.heappush(self._by_ts, (ts, event_id))
