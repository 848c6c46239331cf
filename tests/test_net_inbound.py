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


def test_the_peer_classifies_by_topic_round_key_and_checked_member_key() -> None:
    """``Edge.classify``: the cheap checks of the edge, on real events of a real round."""
    import time

    from p2p.net.inbound import Lane
    from p2p.peer import Peer
    from p2p.protocol import canonical
    from p2p.protocol import events as ev
    from p2p.protocol.identity import Identity
    from p2p.protocol.lobby import PeerInfo

    async def body() -> None:
        alice = Peer("mqtt://127.0.0.1:1", nick="alice")  # never started: no network
        bob = Identity.from_seed(bytes(range(40, 72)))
        stranger = Identity.from_seed(bytes(range(80, 112)))
        rnd = await alice.invite([bob.public_key], "connect4", start=0)
        genesis = rnd.log()[0]
        now = int(time.time() * 1000)
        body_ = {"ply": 0, "move": "4", "state": "0" * 64}
        move = ev.make(bob, "move", now, body_, round=rnd.id, seq=1, prev=genesis.id)
        events = rnd.topic("events")
        classify = alice.edge.classify
        # a member's event, sealed with the round key: the round lane, handed on opened
        verdict = classify(events, rnd.sealed(move.raw))
        assert (verdict.lane, verdict.sender, verdict.parsed.raw) == (Lane.ROUND, bob.public_key, move.raw)
        # the same, forged in the member's name by a key holder: dropped before any queue
        forged = canonical.decode(ev.make(stranger, "move", now, body_, round=rnd.id, seq=1, prev=genesis.id).raw)
        forged["pk"] = bob.pk_hex
        assert classify(events, rnd.sealed(canonical.encode(forged))).reason == "forged"
        # a replay of an event the round holds: a duplicate
        assert classify(events, rnd.sealed(genesis.raw)).reason == "duplicate"
        # a non-member's event: the small lane; junk that does not open: dropped unread
        # (its signer's budget is charged only after the lane's and its signature check)
        other = ev.make(stranger, "move", now, body_, round=rnd.id, seq=1, prev=genesis.id)
        verdict = classify(events, rnd.sealed(other.raw))
        assert (verdict.lane, verdict.sender) == (Lane.ROUND_OTHER, None)
        assert verdict.confirm is not None
        assert (verdict.confirm().lane, verdict.confirm().sender) == (Lane.ROUND_OTHER, stranger.public_key)
        assert classify(events, move.raw).reason == "not sealed with the round key"
        assert classify(alice.topics.round_events("ab" * 16).topic, b"x").reason == "not our round"
        assert classify("elsewhere/topic", b"x").reason == "foreign topic"
        # the lobby: a known key is checked, a spoofed one dropped, an unknown one a stranger
        alice.lobby.peers[bob.public_key] = PeerInfo(bob.public_key, "bob", False, "00" * 16, now, now)
        chat = alice.topics.lobby_chat().topic
        line = {"text": "hi", "ns": alice.topics.root}
        bob_chat = ev.make(bob, "chat", now, line)
        assert classify(chat, bob_chat.raw).lane is Lane.KNOWN
        spoof = canonical.decode(ev.make(stranger, "chat", now, line).raw)
        spoof["pk"] = bob.pk_hex
        assert classify(chat, canonical.encode(spoof)).reason == "forged"
        verdict = classify(chat, ev.make(stranger, "chat", now, line).raw)
        assert (verdict.lane, verdict.sender) == (Lane.STRANGER, None)
        assert verdict.confirm is not None and verdict.confirm().sender == stranger.public_key
        junk = classify(chat, b"\x00junk")  # names no key: the lane pays, the parse reports
        assert (junk.lane, junk.sender, junk.confirm) == (Lane.STRANGER, None, None)
        await alice.close()

    asyncio.run(body())


def test_a_strangers_check_runs_when_taken_never_in_the_read_path() -> None:
    """A verdict with a ``confirm`` step (a stranger's signature to check) is queued once
    the lane-wide budget let it pass, and checked when it is taken: a move offered behind
    a backlog of them is served first, with none of them checked yet; a refusal is counted
    then (its bytes not remembered as seen), the sender's budget charged only for what the
    check passed; a retained message is still checked on arrival; ``get`` takes one
    refusal per turn of the event loop."""
    checked: list[bytes] = []

    def classify(topic: str, payload: bytes) -> Verdict:
        if topic.startswith("round"):
            return Verdict(Lane.ROUND, b"m")

        def confirm() -> Verdict:
            checked.append(payload)
            if payload.startswith(b"forged"):
                return Verdict(None, reason="forged")
            return Verdict(Lane.STRANGER, topic.encode(), parsed=("event", payload))

        return Verdict(Lane.STRANGER, None, confirm=confirm)

    queues = InboundQueues(classify, clock=Clock())
    for i in range(24):
        assert queues.offer(Inbound("lobby/p", b"fine %d" % i if i % 2 else b"forged %d" % i))
    assert queues.offer(Inbound("round/x/events", b"move"))
    assert checked == [] and queues.stats["accepted"] == 1
    first = queues.get_nowait()
    assert first is not None and first.payload == b"move" and checked == []
    taken = drain(queues)
    assert taken == [b"fine %d" % i for i in range(1, 20, 2)]  # the sender's burst of 10,
    assert len(checked) == 24 and queues.stats["dropped: forged"] == 12  # charged for
    assert queues.stats["dropped: stranger sender over budget"] == 2  # its own 12 only
    # a forgery refused when taken is not remembered: offered again, it is checked again
    assert queues.offer(Inbound("lobby/p", b"forged 0")) and drain(queues) == []
    assert queues.stats["dropped: forged"] == 13 and "dropped: duplicate" not in queues.stats
    retained = Inbound("lobby/p", b"forged r", retain=True)
    assert not queues.offer(retained) and checked[-1] == b"forged r"  # checked on arrival

    async def turns() -> None:
        for i in range(3):
            queues.offer(Inbound("lobby/q", b"forged q%d" % i))
        queues.offer(Inbound("lobby/q", b"fine q"))
        ticks = 0

        async def tick() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0)

        ticker = asyncio.create_task(tick())
        await asyncio.sleep(0)
        before = ticks
        got = await queues.get()
        ticker.cancel()
        assert got is not None and got.parsed == ("event", b"fine q")
        assert ticks - before >= 3  # one turn of the loop per refusal

    asyncio.run(turns())
