"""Live on Mosquitto (issue 16, items 2 and 5): a real stranger client ("mallory", a raw
MQTT client with a key of its own) and, for the memory flush, a member's own client.

* Authenticate, then charge: mallory copies bob's retained presence (public, validly
  signed by bob) and seals it to alice -- anyone can seal anything to anyone -- into
  alice's inbox, a fresh envelope every 0.2 s. Before the fix alice's edge charged each
  to *bob's* inbox budget before the key-auth check, and bob's real invitation, sent
  while the flood went on, was dropped "inbox sender over budget".
* Seen once, whatever the memory: a member's client makes alice process 4,100 validly
  signed, useless events (her memory of processed ids holds 4,096); then mallory replays
  bob's accept and bob's round chat line, bytes it copied off the round's topics. Before
  the fix alice reported "equivocation" by bob (the same accept twice) and showed the
  old chat line again.
"""

from __future__ import annotations

import asyncio
import os
import time

import aiomqtt
import pytest
from conftest import eventually, invitation, meet, run, start_round

from p2p.peer import ChatMessage, Equivocated, Peer
from p2p.protocol import events as ev
from p2p.protocol import sealing
from p2p.protocol.conflicts import MAX_SEEN
from p2p.protocol.identity import Identity


def test_live_a_friends_presence_sealed_to_our_inbox_does_not_starve_its_invitation(
    broker_url: str, mosquitto
) -> None:
    async def body() -> None:
        async with (
            Peer(broker_url, nick="alice", namespace="auth-charge") as alice,
            Peer(broker_url, nick="bob", namespace="auth-charge") as bob,
            aiomqtt.Client("127.0.0.1", mosquitto.port, identifier="mallory-inbox") as mallory,
        ):
            stranger = Identity.from_seed(os.urandom(32))
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
            inbox = topics.inbox(alice.peer_id).topic

            async def flood() -> None:
                while True:  # 5 per s: bob's inbox budget is burst 8, then 1 per s
                    sealed = sealing.seal_invitation(
                        os.urandom(32), stranger.seed(), stranger.public_key,
                        alice.public_key, "ab" * 16, os.urandom(32), os.urandom(16), captured,
                    )
                    await mallory.publish(inbox, sealed, qos=0)
                    await asyncio.sleep(0.2)

            flooding = asyncio.create_task(flood())
            try:
                await eventually(
                    lambda: alice.inbound.stats.get("dropped: not an invitation or cancel", 0)
                    + alice.inbound.stats.get("dropped: inbox sender over budget", 0) >= 15,
                    15, "alice to drop 15 sealed replays",
                )
                rnd = await bob.invite([alice.peer_id], "connect4", start=0)
                pending = await invitation(alice, rnd.id, timeout=10)
                assert pending is not None
            finally:
                flooding.cancel()
            assert alice.inbound.stats.get("dropped: inbox sender over budget", 0) == 0, alice.inbound.stats

    run(body(), timeout=60)


@pytest.mark.slow
def test_live_a_flushed_memory_lets_no_old_accept_or_chat_line_count_again(
    broker_url: str, mosquitto
) -> None:
    async def body() -> None:
        async with (
            Peer(broker_url, nick="alice", namespace="seen-once") as alice,
            Peer(broker_url, nick="bob", namespace="seen-once") as bob,
            aiomqtt.Client("127.0.0.1", mosquitto.port, identifier="mallory-seen") as mallory,
            aiomqtt.Client("127.0.0.1", mosquitto.port, identifier="bob-tool") as tool,
        ):
            await mallory.subscribe(f"{alice.topics.root}/round/#")
            await meet(alice, bob)
            ours, theirs = await start_round(alice, [bob], "connect4", start=0)
            await theirs.say("good luck")
            await eventually(lambda: alice.stats.received > 0, 20, "traffic")
            copies: dict[str, tuple[str, bytes]] = {}  # kind -> sealed bytes of bob's, as on the wire
            async with asyncio.timeout(10):
                async for message in mallory.messages:
                    topic = str(message.topic)
                    channel = topic.rsplit("/", 1)[1]
                    try:
                        inner = sealing.open_round(ours.sealing_key, channel, bytes(message.payload))
                        event = ev.parse(inner)
                    except Exception:  # noqa: BLE001 - not ours to read
                        continue
                    if event.pk == bob.public_key and event.kind in ("accept", "chat"):
                        copies[event.kind] = (topic, bytes(message.payload))
                    if len(copies) == 2:
                        break
            with alice.events() as notes:
                # bob's own client (a member, with its key and the round key) makes alice
                # process MAX_SEEN + 4 useless, validly signed events: take-back requests
                # of no move of his (dropped, each remembered as processed)
                genesis = ours.log()[0]
                for i in range(MAX_SEEN + 4):
                    junk = ev.make(bob.identity, "takeback", int(time.time() * 1000), {"ply": i},
                                   round=ours.id, prev=genesis.id)
                    await tool.publish(ours.topic("events"), theirs.sealed(junk.raw), qos=0)
                    if i % 150 == 149:
                        await asyncio.sleep(0.75)  # within bob's round budget (200 per s)
                await eventually(
                    lambda: alice.stats.dropped.get("takeback of no move of its sender", 0) >= MAX_SEEN,
                    30, "alice to process the take-back junk",
                )
                accept_id = next(e.id for e in ours.log()[1].sealed() if e.pk == bob.public_key)
                assert accept_id not in ours.machine.seen  # the memory was flushed
                for kind in ("accept", "chat"):  # mallory replays bob's bytes
                    topic, payload = copies[kind]
                    await mallory.publish(topic, payload, qos=0)
                await asyncio.sleep(1.5)
                shown = []
                while True:
                    try:
                        note = await notes.next(0.1)
                    except TimeoutError:
                        break
                    if isinstance(note, (Equivocated, ChatMessage)):
                        shown.append(note)
                assert not shown, shown
            assert ours.phase is theirs.phase
            assert not ours.is_over

    run(body(), timeout=120)
