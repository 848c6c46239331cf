"""Chat lines: cleaning what we send and rate-limiting what we receive.

A line is at most ``MAX_CHAT`` characters with control and format characters removed
(tabs and newlines become spaces).  Receivers keep one token bucket per sender, driven by
the caller's clock ``now`` (integer milliseconds): ``BURST`` lines at once, then one line
per ``REFILL_MS``; lines beyond that are dropped with a reason.  A ``TokenBucket`` with
other figures is also the lobby's global budget per topic (``p2p.protocol.lobby``), which
10,000 fresh keys cannot rotate around.

>>> clean_line("  hi\\x1b[31m there\\n")
'hi[31m there'
>>> bucket = TokenBucket()
>>> [bucket.take(0) for _ in range(6)]
[True, True, True, True, True, False]
>>> bucket.take(2000)
True
"""

from __future__ import annotations

from p2p.protocol.events import MAX_CHAT
from p2p.protocol.identity import strip_controls

BURST = 5
REFILL_MS = 2000
MAX_SENDERS = 1024


def clean_line(text: str) -> str:
    """A chat line ready to sign: controls stripped, trimmed, at most ``MAX_CHAT`` chars."""
    return strip_controls(text).strip()[:MAX_CHAT].strip()


class TokenBucket:
    """``burst`` tokens, one more every ``refill_ms`` of the caller's clock."""

    __slots__ = ("burst", "refill_ms", "stamp", "tokens")

    def __init__(self, burst: int = BURST, refill_ms: int = REFILL_MS) -> None:
        self.burst = burst
        self.refill_ms = refill_ms
        self.tokens = burst * refill_ms  # in millisecond-tokens: integers only
        self.stamp: int | None = None

    def take(self, now: int) -> bool:
        """Spend one token at time ``now``; ``False`` if the sender is over its rate."""
        if self.stamp is not None and now > self.stamp:
            self.tokens = min(
                self.burst * self.refill_ms, self.tokens + (now - self.stamp)
            )
        if self.stamp is None or now > self.stamp:
            self.stamp = now
        if self.tokens >= self.refill_ms:
            self.tokens -= self.refill_ms
            return True
        return False


class RateLimiter:
    """One bucket per sender key, at most ``MAX_SENDERS`` remembered (oldest forgotten).

    Forgetting a sender only hands it a fresh burst; the global budgets of the lobby are
    what bounds a crowd of fresh keys.
    """

    def __init__(self) -> None:
        self._buckets: dict[bytes, TokenBucket] = {}

    def allow(self, sender: bytes, now: int) -> bool:
        bucket = self._buckets.get(sender)
        if bucket is None:
            if len(self._buckets) >= MAX_SENDERS:
                self._buckets.pop(next(iter(self._buckets)))
            bucket = self._buckets[sender] = TokenBucket()
        return bucket.take(now)
