"""Two Mosquittos bridged on the namespace's topics (issue 12, item 4).

Alice is on one broker, Bob on the other; the brokers forward ``p2p/#`` to each other
(``p2p.net.broker.bridge_config``, the configuration ``docs/brokers.md`` shows).  They
see each other in the lobby, chat, and play a full round with identical logs.
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
    meet,
    run,
    start_round,
)

from p2p.net.broker import LocalBroker, bridge_config
from p2p.peer import ChatMessage, Peer


@pytest.fixture()
def bridged() -> Iterator[tuple[LocalBroker, LocalBroker]]:
    _require_mosquitto()
    home = LocalBroker().start()
    away = LocalBroker(extra_config=bridge_config("to-home", f"127.0.0.1:{home.port}"))
    away.start()
    yield home, away
    away.close()
    home.close()


def test_peers_on_two_bridged_brokers_meet_and_play_a_round(
    bridged: tuple[LocalBroker, LocalBroker],
) -> None:
    home, away = bridged

    async def body() -> None:
        async with (
            Peer(home.url, nick="alice", namespace="bridged") as alice,
            Peer(away.url, nick="bob", namespace="bridged") as bob,
        ):
            await meet(alice, bob, timeout=15)
            with bob.events() as notes:
                await alice.say("hello across the bridge")
                while True:
                    note = await notes.next(10)
                    if isinstance(note, ChatMessage) and note.sender == alice.public_key:
                        assert note.text == "hello across the bridge"
                        break
            ra, rb = await start_round(alice, [bob], "connect4")  # the starter drawn
            await asyncio.gather(autoplay(ra, first_legal), autoplay(rb, first_legal))
            await ra.wait_over(30)
            await rb.wait_over(30)
            assert [e.id for e in ra.log()] == [e.id for e in rb.log()]
            assert ra.state_hash == rb.state_hash and ra.winners == rb.winners
            # a newcomer on the far side learns of alice from her retained presence,
            # which crossed the bridge
            async with Peer(away.url, nick="carol", namespace="bridged") as carol:
                await eventually(
                    lambda: alice.public_key in carol.lobby.peers, 10, "carol to see alice"
                )

    run(body(), timeout=90)
