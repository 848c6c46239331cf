"""The inbound lanes alone (``p2p.net.inbound``): order, budgets, duplicates, caps."""

from __future__ import annotations

import asyncio

from p2p.net.inbound import Budget, Inbound, InboundQueues, Lane, LaneLimits, Verdict


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def by_topic(topic: str, payload: bytes) -> Verdict:
    """Lane from the topic's first word, sender from the payload's first byte."""
    lane = {"round": Lane.ROUND, "lobby": Lane.STRANGER, "bad": None}[topic.split("/")[0]]
    return Verdict(lane, payload[:1], reason="bad topic")


def drain(queues: InboundQueues) -> list[bytes]:
    out = []
    while (item := queues.get_nowait()) is not None:
        out.append(item.payload)
    return out


def test_our_round_is_served_before_any_lobby_backlog() -> None:
    queues = InboundQueues(by_topic)
    for i in range(50):
        assert queues.offer(Inbound("lobby/chat", bytes([i % 5, i])))
    assert queues.offer(Inbound("round/x/events", b"\x09move"))
    assert drain(queues)[0] == b"\x09move"


def test_budgets_per_sender_and_per_lane_and_their_refill() -> None:
    clock = Clock()
    limits = {
        Lane.STRANGER: LaneLimits(100, Budget(1.0, 3.0), Budget(10.0, 5.0)),
        Lane.ROUND: LaneLimits(100, None),
    }
    queues = InboundQueues(by_topic, limits, clock=clock)
    accepted = [queues.offer(Inbound("lobby/chat", b"\x01" + bytes([i]))) for i in range(6)]
    assert accepted == [True, True, True, False, False, False]  # one sender: burst 3
    # fresh keys get past the sender budget but not the lane's: 2 more, then refused
    fresh = [queues.offer(Inbound("lobby/chat", bytes([10 + i, i]))) for i in range(5)]
    assert fresh == [True, True, False, False, False]
    assert queues.stats["dropped: stranger sender over budget"] == 3
    assert queues.stats["dropped: stranger lane over budget"] == 3
    # retained messages (sent once, when we subscribe) skip the lane-wide budget
    assert queues.offer(Inbound("lobby/presence/a", b"\x30p", retain=True))
    clock.now += 1.0  # the lane refills 10, the first sender 1
    assert queues.offer(Inbound("lobby/chat", b"\x01late"))
    assert not queues.offer(Inbound("lobby/chat", b"\x01later"))
    # nothing on the round lane was ever refused
    assert all(queues.offer(Inbound("round/x/events", bytes([1, i]))) for i in range(20))


def test_duplicates_within_the_window_and_after_it() -> None:
    clock = Clock()
    queues = InboundQueues(by_topic, clock=clock)
    assert queues.offer(Inbound("round/x/events", b"\x01same", broker="a"))
    assert not queues.offer(Inbound("round/x/events", b"\x01same", broker="b"))
    assert queues.offer(Inbound("round/x/sync", b"\x01same"))  # another topic
    clock.now += 10.0
    assert queues.offer(Inbound("round/x/events", b"\x01same"))  # asked for again later
    assert queues.stats["dropped: duplicate"] == 1


def test_a_full_lane_refuses_the_newcomer_and_keeps_what_it_accepted() -> None:
    queues = InboundQueues(by_topic, {Lane.STRANGER: LaneLimits(3, None)})
    for i in range(5):
        queues.offer(Inbound("lobby/chat", bytes([i, i])))
    assert drain(queues) == [bytes([i, i]) for i in range(3)]
    assert queues.stats["dropped: stranger lane full"] == 2


def test_refused_topics_are_counted_and_get_wakes_on_offer() -> None:
    reasons: list[str] = []
    queues = InboundQueues(by_topic, on_drop=reasons.append)
    assert not queues.offer(Inbound("bad/x", b"\x01"))
    assert reasons == ["bad topic"]

    async def body() -> bytes | None:
        waiter = asyncio.create_task(queues.get())
        await asyncio.sleep(0)
        queues.offer(Inbound("round/x/events", b"\x01late"))
        item = await asyncio.wait_for(waiter, 1)
        queues.close()
        assert await queues.get() is None
        return item.payload if item else None

    assert asyncio.run(body()) == b"\x01late"
