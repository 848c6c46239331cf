"""Live on Mosquitto: a stranger replays a listed peer's own presence bytes to use up
that peer's budget at the edge (tests/test_net_edge_attacks.py, pure): the replays are
dropped before any budget and the peer's next real presence still gets through."""

from __future__ import annotations

import asyncio
import os

import aiomqtt
from conftest import eventually, meet, run, start_round

from p2p.peer import Peer
from p2p.protocol import events as ev
from p2p.protocol.identity import peer_id


def test_live_replayed_presences_do_not_silence_a_listed_peer(broker_url: str, mosquitto) -> None:
    async def body() -> None:
        async with (
            Peer(broker_url, nick="alice", namespace="edge-replay") as alice,
            Peer(broker_url, nick="bob", namespace="edge-replay") as bob,
            aiomqtt.Client("127.0.0.1", mosquitto.port, identifier="mallory-edge") as mallory,
        ):
            topics = alice.topics
            await mallory.subscribe(topics.presence(bob.peer_id).topic)
            await meet(alice, bob)
            captured = None
            async with asyncio.timeout(5):
                async for message in mallory.messages:  # bob's retained presence
                    event = ev.parse(bytes(message.payload))
                    if event.pk == bob.public_key and event.body["status"] == "online":
                        captured = event.raw
                        break
            assert captured is not None
            over = "dropped: known sender over budget"
            for _ in range(300):  # bob's presence on other peers' topics
                topic = topics.presence(peer_id(os.urandom(32))).topic
                await mallory.publish(topic, captured, qos=0)
            for _ in range(3):  # and on its own, after the duplicate window
                await mallory.publish(topics.presence(bob.peer_id).topic, captured, qos=0)
                await asyncio.sleep(0.2)
            await eventually(
                lambda: alice.stats.dropped.get("presence on another peer's topic", 0)
                + alice.inbound.stats.get(over, 0)
                >= 300,
                10,
                "alice to drop the replays",
            )
            assert alice.inbound.stats.get(over, 0) == 0, alice.inbound.stats
            # bob's next real presence (busy: in a round) still arrives
            await start_round(alice, [bob], "connect4", start=0)
            await eventually(
                lambda: bob.public_key in alice.lobby.peers and alice.lobby.peers[bob.public_key].busy,
                10,
                "alice to see bob busy",
            )
            assert alice.inbound.stats.get(over, 0) == 0, alice.inbound.stats

    run(body(), timeout=60)
