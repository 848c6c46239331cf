"""The fault-injection harness itself (``tests/faults.py``): each nemesis does what it says."""

from __future__ import annotations

import time

from conftest import eventually, meet, run
from faults import Clock

from p2p.peer import Peer, now_ms
from p2p.protocol.events import parse


def test_each_peer_signs_with_its_own_clock() -> None:
    """Two in-process peers, one clock shifted by 10 min: each one's signed timestamps come
    from its own clock, and the default is the real one -- no global is patched."""
    ahead = Peer("mqtt://127.0.0.1:1", nick="ahead", clock=Clock(600_000))
    plain = Peer("mqtt://127.0.0.1:1", nick="plain")
    before = now_ms()
    ahead_ts = parse(ahead._make_will().payload).ts
    plain_ts = parse(plain._make_will().payload).ts
    after = now_ms()
    assert before + 600_000 <= ahead_ts <= after + 600_000
    assert before <= plain_ts <= after
    clock = Clock(-5_000)
    clock.shift(-55_000)
    assert abs(clock() - (time.time_ns() // 1_000_000 - 60_000)) < 1_000


def test_a_shifted_peer_is_seen_with_its_shifted_timestamps(broker_url: str) -> None:
    """Live: bob's clock runs 20 s ahead; alice receives his presence dated by his clock."""

    async def body() -> None:
        async with Peer(broker_url, nick="alice") as alice, Peer(
            broker_url, nick="bob", clock=Clock(20_000)
        ) as bob:
            await meet(alice, bob)
            seen = alice.lobby.peers[bob.public_key]
            await eventually(lambda: seen.ts > 0, what="a timestamp")
            assert 15_000 < seen.ts - now_ms() < 25_000

    run(body())
