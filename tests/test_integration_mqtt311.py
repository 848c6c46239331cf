"""Peers on a broker that speaks only MQTT 3.1.1 (issue 12, item 3).

The broker is amqtt (``tests/mqtt311_broker.py``; Mosquitto cannot be told to refuse v5).
It never answers a v5 CONNECT that carries properties, so the transport must fall back to
3.1.1 by itself.  Then nothing of v5 is there: no ``noLocal`` (every peer gets its own
messages back and must drop them), no message expiry (a retained presence stays until it
is overwritten, so the lobby must expire it by its signed ``ts`` and ``ttl``).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Iterator

import aiomqtt
import pytest
from conftest import autoplay, eventually, first_legal, meet, run, start_round

from p2p.peer import ChatMessage, Peer, Rejected, RoundUpdate
from p2p.protocol import events as ev
from p2p.protocol.identity import Identity


@pytest.fixture()
def mqtt311() -> Iterator[object]:
    try:
        import amqtt  # noqa: F401
    except ImportError:
        message = "amqtt is not installed (pip install -e '.[test]')"
        if os.environ.get("CI"):
            pytest.fail(message + " -- and CI is set, so this is an error", pytrace=False)
        pytest.skip(message)
    from mqtt311_broker import Mqtt311Broker

    broker = Mqtt311Broker()
    try:
        broker.start()
    except RuntimeError as err:
        pytest.fail(f"the 3.1.1 broker did not start: {err}", pytrace=False)
    yield broker
    broker.stop()


def test_lobby_invitation_and_a_full_round_on_a_3_1_1_only_broker(mqtt311) -> None:
    async def body() -> None:
        namespace = "mqtt311"
        stale = Identity.from_seed(bytes(range(7, 39)))
        async with aiomqtt.Client(
            "127.0.0.1", mqtt311.port, protocol=aiomqtt.ProtocolVersion.V311
        ) as stranger:
            # a retained "online" presence of a peer gone for 10 minutes: over 3.1.1
            # the broker keeps it forever (no message expiry); the lobby must not list it
            old = ev.make(
                stale,
                "presence",
                int(time.time() * 1000) - 600_000,
                {"nick": "ghost", "status": "online", "busy": False,
                 "session": "11" * 16, "ttl": 60},
            )
            topics = Peer(mqtt311.url, nick="probe", namespace=namespace).topics
            await stranger.publish(
                topics.presence(stale.peer_id).topic, old.raw, qos=0, retain=True
            )
        async with (
            Peer(mqtt311.url, nick="alice", namespace=namespace) as alice,
            Peer(mqtt311.url, nick="bob", namespace=namespace) as bob,
        ):
            assert alice.transport.protocol_version == "3.1.1"
            assert bob.transport.protocol_version == "3.1.1"
            await meet(alice, bob)
            notes_a = alice.events()
            # lobby chat: bob gets it; alice's own copy comes back (no noLocal) and is
            # dropped, so she sees her line exactly once
            with bob.events() as notes_b:
                await alice.say("hello over 3.1.1")
                while True:
                    note = await notes_b.next(10)
                    if isinstance(note, ChatMessage) and note.text == "hello over 3.1.1":
                        break
            # invitation, accept, a whole round
            ra, rb = await start_round(alice, [bob], "connect4", start=0)
            await asyncio.gather(autoplay(ra, first_legal), autoplay(rb, first_legal))
            await ra.wait_over(30)
            await rb.wait_over(30)
            assert [e.id for e in ra.log()] == [e.id for e in rb.log()]
            assert ra.state_hash == rb.state_hash and ra.winners
            await asyncio.sleep(0.5)  # the last echoes come back
            seen = []
            while True:
                try:
                    seen.append(notes_a._queue.get_nowait())
                except asyncio.QueueEmpty:
                    break
            own_lines = [
                n for n in seen if isinstance(n, ChatMessage) and n.text == "hello over 3.1.1"
            ]
            assert len(own_lines) == 1, "own echo shown again"
            moves = [n for n in seen if isinstance(n, RoundUpdate) and n.kind == "move"]
            assert len(moves) == len(ra.game.history()), "a move reported twice"
            assert not [n for n in seen if isinstance(n, Rejected)], "an echo was reported"
            assert alice.stats.dropped.get("duplicate", 0) > 0, "no echo came back?"
            notes_a.close()
            # the stale retained presence is not online; a newcomer sees alice and bob
            assert stale.public_key not in alice.lobby.peers
            async with Peer(mqtt311.url, nick="carol", namespace=namespace) as carol:
                await eventually(
                    lambda: {alice.public_key, bob.public_key} <= carol.lobby.peers.keys(),
                    10,
                    "carol to see alice and bob",
                )
                assert stale.public_key not in carol.lobby.peers
                # bob drops off without a goodbye: the broker publishes his Will (retained
                # offline presence), and carol, alice see him leave
                bob.interrupt_connection(hold=600)
                await eventually(
                    lambda: bob.public_key not in carol.lobby.peers
                    and bob.public_key not in alice.lobby.peers,
                    10,
                    "bob's Will to take him off the list",
                )

    run(body(), timeout=90)
