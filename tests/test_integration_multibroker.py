"""Several brokers at once (issue 12, item 2), live on two local Mosquittos.

Peers given two brokers publish every event to both and keep one view: a copy from the
second broker is dropped at the edge.  One broker dies mid-round: the round goes on over
the other and ends identically; when it comes back, the peers pick it up again.  A peer
that reaches only one broker plays with a peer that reaches both.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from conftest import (
    _require_mosquitto,
    autoplay,
    eventually,
    first_legal,
    invitation,
    meet,
    run,
    start_round,
)

from p2p.net.broker import LocalBroker
from p2p.peer import ConnectionChanged, Peer, Rejected


@pytest.fixture()
def two_brokers() -> Iterator[tuple[LocalBroker, LocalBroker]]:
    _require_mosquitto()
    first, second = LocalBroker(), LocalBroker()
    first.start()
    second.start()
    yield first, second
    first.close()
    second.close()


def test_a_round_survives_one_of_two_brokers_dying(
    two_brokers: tuple[LocalBroker, LocalBroker],
) -> None:
    b1, b2 = two_brokers

    async def body() -> None:
        urls = [b1.url, b2.url]
        async with (
            Peer(urls, nick="alice") as alice,
            Peer(urls, nick="bob") as bob,
        ):
            await eventually(
                lambda: all(up for _, up in alice.brokers() + bob.brokers()),
                10,
                "both peers on both brokers",
            )
            await meet(alice, bob)
            notes = [alice.events(), bob.events()]
            ra, rb = await start_round(alice, [bob], "connect4", start=0)
            for _ in range(3):  # six plies with both brokers up
                await ra.play(first_legal(ra.game))
                await rb.wait_turn(10)
                await rb.play(first_legal(rb.game))
                await ra.wait_turn(10)
            await asyncio.to_thread(b1.stop)  # one broker dies mid-round
            await eventually(
                lambda: alice.brokers()[0][1] is False and bob.brokers()[0][1] is False,
                10,
                "the loss of the first broker to be noticed",
            )
            assert alice.connected and bob.connected  # still up through the second
            await asyncio.gather(autoplay(ra, first_legal), autoplay(rb, first_legal))
            await ra.wait_over(30)
            await rb.wait_over(30)
            assert [e.id for e in ra.log()] == [e.id for e in rb.log()]
            assert ra.state_hash == rb.state_hash and ra.winners == rb.winners
            # the broker comes back and is used again
            await asyncio.to_thread(b1.restart)
            await eventually(
                lambda: all(up for _, up in alice.brokers() + bob.brokers()),
                30,
                "both peers back on the first broker",
            )
            seen = []
            for queue in notes:
                while True:
                    try:
                        seen.append(queue._queue.get_nowait())
                    except asyncio.QueueEmpty:
                        break
                queue.close()
            # every copy from the second broker was dropped quietly, nothing reported
            assert not [n for n in seen if isinstance(n, Rejected)]
            assert alice.stats.dropped.get("duplicate", 0) > 0
            changes = [n.detail for n in seen if isinstance(n, ConnectionChanged)]
            assert any(b1.url in d and "lost" in d for d in changes)
            assert any(b1.url in d and " up " in d for d in changes)
            # ... and really carries the game again: the other broker dies, and a next
            # round is played over the first one alone
            await asyncio.to_thread(b2.stop)
            await eventually(
                lambda: alice.brokers()[1][1] is False and bob.brokers()[1][1] is False,
                10,
                "the loss of the second broker to be noticed",
            )
            ra2 = await alice.another_round(ra)
            pending = await invitation(bob, ra2.id)
            rb2 = await pending.accept()
            await ra2.wait_started(30)
            await rb2.wait_started(30)
            await asyncio.gather(autoplay(ra2, first_legal), autoplay(rb2, first_legal))
            await ra2.wait_over(30)
            await rb2.wait_over(30)
            assert [e.id for e in ra2.log()] == [e.id for e in rb2.log()]

    run(body(), timeout=90)


def test_a_peer_on_one_broker_plays_with_a_peer_on_both(
    two_brokers: tuple[LocalBroker, LocalBroker],
) -> None:
    b1, b2 = two_brokers

    async def body() -> None:
        async with (
            Peer([b1.url, b2.url], nick="dora") as dora,
            Peer(b2.url, nick="carl") as carl,
            Peer(b1.url, nick="finn") as finn,
        ):
            await meet(dora, carl)
            await meet(dora, finn)
            # carl and finn share no broker: they never see each other
            assert finn.public_key not in carl.lobby.peers
            rd, rc = await start_round(dora, [carl], "connect4", start=1)
            await asyncio.gather(autoplay(rd, first_legal), autoplay(rc, first_legal))
            await rd.wait_over(30)
            await rc.wait_over(30)
            assert [e.id for e in rd.log()] == [e.id for e in rc.log()]
            assert rd.winners == rc.winners

    run(body(), timeout=60)
