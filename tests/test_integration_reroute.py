"""Live on Mosquitto: a stranger on ``#`` tries to re-route a member's round onto topics
and a key of its own (issue "Fair play II", item 1).

The stranger reads a public round's id from the topic names, signs a *private* genesis
for that id with its own key, names a topic key and a round key of its own, seals it to
a member and drops it into the member's inbox -- after 70 junk invitations from fresh
keys, to push the member's own round out of any bounded invitation memory.  Before the
fix the member remembered the stranger's keys and from then on published its moves,
chat and syncs on the stranger's topics, sealed with the stranger's key: the stranger
read everything and the real opponent heard nothing.  A held round's routing is now
fixed when the round is created or accepted, so the member's traffic stays on its round.
"""

from __future__ import annotations

import asyncio
import os
import time

import aiomqtt
from conftest import eventually, meet, run, start_round

from p2p.peer import Peer
from p2p.protocol import events as ev
from p2p.protocol import sealing
from p2p.protocol.identity import Identity

NS = "reroute"


def _invitation(stranger: Identity, to: bytes, rid: str, now: int, *, private: bool,
                round_key: bytes, topic_key: bytes) -> bytes:
    """A validly signed genesis of round ``rid`` by ``stranger``, sealed to ``to``."""
    body = {
        "game": "connect4",
        "options": {},
        "seats": [{"pk": stranger.pk_hex, "level": None}, {"pk": to.hex(), "level": None}],
        "start": None,
        "expires": now + 60_000,
        "private": private,
    }
    genesis = ev.make(stranger, "genesis", now, body, round=rid, seq=0)
    return sealing.seal_invitation(
        os.urandom(32), stranger.seed(), stranger.public_key, to, rid,
        round_key, topic_key, genesis.raw,
    )


def test_a_strangers_invitation_for_a_held_round_does_not_reroute_it(
    broker_url: str, mosquitto
) -> None:
    async def body() -> None:
        mallory = Identity.from_seed(os.urandom(32))
        evil_key, evil_topic = os.urandom(32), os.urandom(16)
        async with (
            Peer(broker_url, nick="alice", namespace=NS) as alice,
            Peer(broker_url, nick="bob", namespace=NS) as bob,
            aiomqtt.Client("127.0.0.1", mosquitto.port, identifier="mallory-reroute") as spy,
        ):
            root = alice.topics.root
            await spy.subscribe(f"{root}/round/#")
            await meet(alice, bob)
            a_rnd, b_rnd = await start_round(alice, [bob], "connect4", start=0)
            # the stranger learns the round id from the topic names on '#'
            seen_ids: set[str] = set()
            stolen: list[str] = []

            async def listen() -> None:
                async for message in spy.messages:
                    parts = str(message.topic).split("/")
                    key = parts[parts.index("round") + 1]
                    if key == evil_topic.hex():
                        stolen.append(str(message.topic))
                    else:
                        seen_ids.add(key)

            listener = asyncio.create_task(listen())
            await a_rnd.play("4")  # alice (seat 0) moves: traffic on the round's topics
            await eventually(lambda: a_rnd.id in seen_ids, 10, "the stranger to see the id")
            inbox = bob.topics.inbox(bob.peer_id).topic
            now = int(time.time() * 1000)
            for _ in range(70):  # junk invitations from fresh keys, usable ones
                junk = Identity.from_seed(os.urandom(32))
                rid = os.urandom(16).hex()
                await spy.publish(inbox, _invitation(
                    junk, bob.public_key, rid, now, private=False,
                    round_key=os.urandom(32), topic_key=bytes.fromhex(rid)), qos=1)
            await spy.publish(inbox, _invitation(
                mallory, bob.public_key, a_rnd.id, now, private=True,
                round_key=evil_key, topic_key=evil_topic), qos=1)
            await spy.subscribe(f"{root}/round/{evil_topic.hex()}/#")
            await asyncio.sleep(1.0)  # bob has processed the inbox
            await b_rnd.wait_turn(10)
            await b_rnd.play("3")
            await b_rnd.say("hello alice")
            await eventually(lambda: len(a_rnd.game.history()) >= 2, 10, "alice to get bob's move")
            assert a_rnd.game.history()[-1] == "3"
            await b_rnd.request_sync()
            await asyncio.sleep(1.0)
            listener.cancel()
            assert stolen == [], f"bob published on the stranger's topics: {stolen[:3]}"
            assert b_rnd.sealing_key == a_rnd.sealing_key

    run(body(), timeout=60)
