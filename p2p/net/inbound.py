"""Inbound traffic in lanes: our rounds first, strangers last, nobody can crowd out a move.

Every message from the broker(s) passes ``InboundQueues.offer`` in the network read path,
before anything expensive happens to it.  The checks run cheapest first:

1. **size** -- the transport already dropped payloads over its cap;
2. **duplicate** -- the same bytes on the same topic seen within ``DEDUPE_WINDOW_S``
   (a copy from a second broker, a replayed message) cost one hash;
3. **classify** -- a callback of the peer says which ``Lane`` the message belongs to and
   which key signed it, or drops the message.  *Authenticate, then charge*: a sender's
   own budget is charged only for what that sender really signed (and, in an inbox,
   sealed) and what is not a replay, so a third party replaying someone's bytes never
   uses up that someone's budget.  Where checking costs more than the lane may spend on
   strangers, the verdict carries a ``confirm`` step instead: it runs only after the
   lane-wide budget let the message pass (so a replay is charged to the lane it arrived
   on), and names the sender whose budget is charged next.  It runs when the message is
   taken from its lane, not in the network read path (a retained message excepted): a
   stranger's signature check never sits in front of a move still in the socket, and
   the reader takes the checks one per turn of the event loop;
4. **budgets** -- a token bucket per (lane, sender) and, for lanes strangers reach, one
   per lane for all senders together (fresh keys cost nothing to make, so a per-sender
   budget alone would be rotated around); retained messages, which a broker sends only
   when we subscribe, are exempt from the lane-wide one;
5. **lane cap** -- each lane is a bounded FIFO; a full lane refuses the newcomer.

The reader (``get``) always takes from the most important non-empty lane, so a move of
our own round never waits behind lobby chatter or a stranger's flood, and a flood can
never push an accepted message out.  Counters in ``stats`` say what was dropped and why.
"""

from __future__ import annotations

import asyncio
import enum
import hashlib
import time
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "DEFAULT_BUDGETS",
    "Budget",
    "Inbound",
    "InboundQueues",
    "Lane",
    "Verdict",
]

DEDUPE_WINDOW_S = 3.0
"""Identical bytes on one topic within this window are one message (copies from several
brokers arrive within milliseconds of each other; a sync answer asked for again later is
processed again)."""
DEDUPE_ENTRIES = 8192
"""Most digests remembered for duplicate detection (bounded memory under a flood)."""
SENDER_ENTRIES = 4096
"""Most per-sender budgets remembered; a forgotten sender starts with a full bucket."""


@dataclass(frozen=True)
class Inbound:
    """A message as it arrived: raw bytes, untrusted (``parsed``: what a check made of it)."""

    topic: str
    payload: bytes
    retain: bool = False
    broker: str = ""
    parsed: Any = field(default=None, compare=False, repr=False)
    expiry: int | None = field(default=None, compare=False)
    """MQTT v5: the seconds the broker would still have kept it (a retained presence's
    age is its ``ttl`` minus this), or ``None``."""


class _Unconfirmed:
    """A message queued with its ``Verdict.confirm`` still to run (when it is taken)."""

    __slots__ = ("confirm", "digest", "message")

    def __init__(self, message: Inbound, confirm: Callable[[], Verdict], digest: bytes) -> None:
        self.message = message
        self.confirm = confirm
        self.digest = digest


class Lane(enum.IntEnum):
    """Where a message waits; lower values are served first."""

    ROUND = 0  # our rounds' topics, signed by a member of that round
    INBOX = 1  # our inbox (invitations)
    ROUND_OTHER = 2  # our rounds' topics from a non-member (a code joiner, a stranger)
    KNOWN = 3  # lobby traffic from a key we already know
    STRANGER = 4  # lobby traffic from a key we do not know


@dataclass(frozen=True)
class Verdict:
    """What the classifier made of a message: its lane and claimed sender, or a drop."""

    lane: Lane | None  # None: drop
    sender: bytes | None = None
    reason: str = ""
    parsed: Any = None
    checked: bool = False
    """The sender's signature was checked here (a key we know): only its own budget
    applies, not the lane-wide one that strangers' fresh keys share (so a flood of
    those cannot crowd out a known sender, e.g. an invitation from a peer we list)."""
    confirm: Callable[[], Verdict] | None = field(default=None, compare=False, repr=False)
    """Authentication still to do (signature, seal, replay), run only once the lane-wide
    budget let the message pass; its verdict (same lane, or a drop) names the sender
    whose own budget is then charged.  Until then no sender budget is touched."""


@dataclass(frozen=True)
class Budget:
    """A token bucket: ``burst`` messages at once, refilled at ``rate`` per second
    (one per lane for all senders together, one per sender in it)."""

    rate: float
    """Tokens (messages) added per second."""
    burst: float
    """The bucket's size: how many messages may come at once after a quiet spell."""


@dataclass(frozen=True)
class LaneLimits:
    """Cap of a lane's queue, the budget of each sender in it, and of all of them."""

    cap: int
    per_sender: Budget | None
    whole: Budget | None = None


DEFAULT_BUDGETS: dict[Lane, LaneLimits] = {
    # A member's sync answer re-sends the whole chain at once: a large burst.
    Lane.ROUND: LaneLimits(4000, Budget(200.0, 1500.0)),
    Lane.INBOX: LaneLimits(200, Budget(1.0, 8.0), Budget(50.0, 100.0)),
    Lane.ROUND_OTHER: LaneLimits(200, Budget(2.0, 10.0), Budget(50.0, 100.0)),
    Lane.KNOWN: LaneLimits(1000, Budget(5.0, 30.0)),
    # Retained presences arrive all at once when we subscribe: the lane is deep, and
    # retained messages are exempt from the lane budget (not from the sender's).
    Lane.STRANGER: LaneLimits(2500, Budget(2.0, 10.0), Budget(100.0, 200.0)),
}
"""The budgets documented in ``docs/protocol.md`` (§13, "The network edge")."""

Classifier = Callable[[str, bytes], Verdict]


class Bucket:
    """The tokens left of one ``Budget`` and when they were last counted (the budget is
    passed to ``take``, not kept: the many sender buckets of a lane share theirs)."""

    __slots__ = ("last", "tokens")

    def __init__(self, budget: Budget, now: float) -> None:
        self.tokens = budget.burst
        self.last = now

    def take(self, budget: Budget, now: float) -> bool:
        self.tokens = min(budget.burst, self.tokens + (now - self.last) * budget.rate)
        self.last = now
        if self.tokens < 1.0:
            return False
        self.tokens -= 1.0
        return True


def _with_parsed(message: Inbound, parsed: Any) -> Inbound:
    """``message`` carrying what its check parsed (``None``: as it is)."""
    if parsed is None:
        return message
    return Inbound(message.topic, message.payload, message.retain, message.broker, parsed, message.expiry)


_REFUSED = Inbound("", b"")
"""What ``InboundQueues._next`` returns for a message its confirm step refused."""


class InboundQueues:
    """Bounded, prioritised inbound lanes with duplicate detection and budgets.

    One instance may be shared by several transports (one per broker): a message that
    arrives from two brokers is queued once.  ``classify`` defaults to "everything in
    one lane, no budgets" (a bare transport in a test).
    """

    def __init__(
        self,
        classify: Classifier | None = None,
        limits: dict[Lane, LaneLimits] | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        dedupe_window: float = DEDUPE_WINDOW_S,
        on_drop: Callable[[str], None] | None = None,
    ) -> None:
        self._classify = classify
        self._on_drop = on_drop
        self._limits = dict(DEFAULT_BUDGETS if limits is None else limits)
        self._clock = clock
        self._dedupe_window = dedupe_window
        self._lanes: dict[Lane, deque[Inbound | _Unconfirmed]] = {lane: deque() for lane in Lane}
        self._seen: OrderedDict[bytes, float] = OrderedDict()
        self._senders: OrderedDict[tuple[Lane, bytes], Bucket] = OrderedDict()
        self._whole: dict[Lane, Bucket] = {}
        self._wakeup = asyncio.Event()
        self._closed = False
        self.stats: dict[str, int] = {"accepted": 0}
        self.last_lane: Lane | None = None
        """The lane the last message taken by ``offer`` went to (the reader holds every
        connection of its loop for a message of our rounds or our inbox)."""

    def set_classifier(self, classify: Classifier | None) -> None:
        self._classify = classify

    def _count(self, reason: str) -> None:
        key = f"dropped: {reason}"
        self.stats[key] = self.stats.get(key, 0) + 1
        if self._on_drop is not None:
            self._on_drop(reason)

    def __len__(self) -> int:
        return sum(len(q) for q in self._lanes.values())

    def size(self, lane: Lane) -> int:
        return len(self._lanes[lane])

    # -- the cheap checks ------------------------------------------------------------

    def _duplicate(self, message: Inbound, now: float) -> bytes | None:
        """The digest to remember, or ``None`` if this is a copy seen just now."""
        digest = hashlib.blake2b(
            message.payload, digest_size=16, key=message.topic.encode()[:64]
        ).digest()
        seen = self._seen.get(digest)
        if (
            self._dedupe_window > 0
            and seen is not None
            and now - seen < self._dedupe_window
        ):
            return None
        return digest

    def _remember(self, digest: bytes, now: float) -> None:
        if self._dedupe_window <= 0:
            return
        self._seen[digest] = now
        self._seen.move_to_end(digest)
        while len(self._seen) > DEDUPE_ENTRIES:
            self._seen.popitem(last=False)

    def _budget_ok(
        self, lane: Lane, sender: bytes | None, now: float, exempt: bool = False
    ) -> str:
        """'' if the budgets allow it; ``exempt``: not charged to the lane-wide one."""
        return self._sender_ok(lane, sender, now) or (
            "" if exempt else self._lane_ok(lane, now)
        )

    def _sender_ok(self, lane: Lane, sender: bytes | None, now: float) -> str:
        """'' if ``sender``'s own budget in ``lane`` allows one more message (charged)."""
        limits = self._limits.get(lane)
        if limits is None:
            return ""
        if limits.per_sender is not None and sender is not None:
            key = (lane, sender)
            bucket = self._senders.get(key)
            if bucket is None:
                bucket = self._senders[key] = Bucket(limits.per_sender, now)
                while len(self._senders) > SENDER_ENTRIES:
                    self._senders.popitem(last=False)
            else:
                self._senders.move_to_end(key)
            if not bucket.take(limits.per_sender, now):
                return "sender over budget"
        return ""

    def _lane_ok(self, lane: Lane, now: float) -> str:
        """'' if the lane-wide budget (all senders together) allows one more (charged)."""
        limits = self._limits.get(lane)
        if limits is None:
            return ""
        if limits.whole is not None:
            whole = self._whole.get(lane)
            if whole is None:
                whole = self._whole[lane] = Bucket(limits.whole, now)
            if not whole.take(limits.whole, now):
                return "lane over budget"
        return ""

    def _judge(self, classify: Callable[[], Verdict]) -> Verdict:
        """Run a classifier step; a refusal is counted by its reason here, and a classifier
        bug refuses the message instead of killing the reader."""
        try:
            verdict = classify()
        except Exception:  # noqa: BLE001 - a classifier bug must not kill the reader
            verdict = Verdict(None, reason="classifier error")
        if verdict.lane is None:
            self._count(verdict.reason or "refused")
        return verdict

    # -- in and out --------------------------------------------------------------------

    def offer(self, message: Inbound) -> bool:
        """Queue ``message`` if it passes the checks; ``False`` (and a count) if not."""
        if self._closed:
            return False
        now = self._clock()
        digest = self._duplicate(message, now)
        if digest is None:
            self._count("duplicate")
            return False
        classify = self._classify
        if classify is None:
            verdict = Verdict(Lane.ROUND)
        else:
            verdict = self._judge(lambda: classify(message.topic, message.payload))
        lane = verdict.lane
        if lane is None:
            return False
        if verdict.confirm is not None:
            # the lane pays for looking; the sender only for what it really signed
            refused = "" if message.retain else self._lane_ok(lane, now)
            if refused:
                self._count(f"{lane.name.lower()} {refused}")
                return False
            if not message.retain:  # checked when taken (``_confirmed``), not here
                return self._queue(lane, _Unconfirmed(message, verdict.confirm, digest), digest, now)
            verdict = self._judge(verdict.confirm)
            lane = verdict.lane
            if lane is None:
                return False
            refused = self._sender_ok(lane, verdict.sender, now)
        else:
            refused = self._budget_ok(
                lane, verdict.sender, now, message.retain or verdict.checked
            )
        if refused:
            self._count(f"{lane.name.lower()} {refused}")
            return False
        if not self._queue(lane, _with_parsed(message, verdict.parsed), digest, now):
            return False
        self.stats["accepted"] += 1
        return True

    def _queue(self, lane: Lane, item: Inbound | _Unconfirmed, digest: bytes, now: float) -> bool:
        queue = self._lanes[lane]
        limits = self._limits.get(lane)
        if limits is not None and len(queue) >= limits.cap:
            self._count(f"{lane.name.lower()} lane full")
            return False
        self._remember(digest, now)
        queue.append(item)
        self.last_lane = lane
        self._wakeup.set()
        return True

    def _confirmed(self, lane: Lane, item: _Unconfirmed) -> Inbound | None:
        """Run a queued message's confirm step and charge its sender (``offer`` charged
        the lane already); ``None``: refused (counted, and its bytes are not remembered
        as seen, as for a message refused on arrival)."""
        verdict = self._judge(item.confirm)
        refused = ""
        if verdict.lane is not None:
            lane = verdict.lane
            refused = self._sender_ok(lane, verdict.sender, self._clock())
            if refused:
                self._count(f"{lane.name.lower()} {refused}")
        if verdict.lane is None or refused:
            self._seen.pop(item.digest, None)
            return None
        self.stats["accepted"] += 1
        return _with_parsed(item.message, verdict.parsed)

    def _next(self) -> Inbound | None:
        """The next message from the most important non-empty lane, ``None`` if all are
        empty, ``_REFUSED`` if it was one its confirm step refused."""
        for lane, queue in self._lanes.items():
            if queue:
                item = queue.popleft()
                if isinstance(item, _Unconfirmed):
                    return self._confirmed(lane, item) or _REFUSED
                return item
        return None

    def get_nowait(self) -> Inbound | None:
        """The next message from the most important non-empty lane, or ``None``."""
        while (item := self._next()) is _REFUSED:
            pass
        return item

    async def get(self) -> Inbound | None:
        """Wait for the next message; ``None`` once closed.  Messages refused when taken
        (their confirm step) cost one turn of the event loop each, so a backlog of a
        stranger's forgeries is checked between the loop's other work, not in one go."""
        while True:
            item = self._next()
            if item is _REFUSED:
                await asyncio.sleep(0)
                continue
            if item is not None:
                return item
            if self._closed:
                return None
            self._wakeup.clear()
            await self._wakeup.wait()

    async def drain(self) -> AsyncIterator[Inbound]:
        """Every message, most important lane first, until ``close()``."""
        while (item := await self.get()) is not None:
            yield item

    def close(self) -> None:
        """No more messages are accepted, queued ones are dropped; ``get`` returns ``None``."""
        self._closed = True
        for queue in self._lanes.values():
            queue.clear()
        self._wakeup.set()
