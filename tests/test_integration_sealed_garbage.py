"""Garbage sealed or half-sealed, live on Mosquitto: every payload a stranger (or a member
with the round key) can put on a member's inbox and round topics is a cheap drop -- never an
exception in a peer, never a change to the round.

Payloads: empty, random bytes of every short length, a low-order ephemeral key, invitations
that open but hold junk or events that do not belong in an inbox, round payloads cut at
every length, sealed junk, sealed non-events, events of another round, a payload sealed
for another channel, a channel that does not exist.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import time

import aiomqtt
import pytest
from conftest import Peers, run, start_round

from p2p.protocol import events as ev
from p2p.protocol import sealing
from p2p.protocol.identity import Identity


def test_live_garbage_on_inbox_and_round_topics_is_dropped_cheaply(
    peers: Peers, mosquitto, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="p2p")
    rng = random.Random(7)
    mallory = Identity.from_seed(bytes(range(40, 72)))

    async def body() -> None:
        async with (
            peers("alice", "bob") as (alice, bob),
            aiomqtt.Client("127.0.0.1", mosquitto.port, identifier="garbage") as tool,
        ):
            ra, rb = await start_round(alice, [bob], "connect4", start=0)
            await ra.play("4")
            await rb.wait_turn(10)
            real = rb.log()[-1].raw

            def invite(event: bytes, key: bytes = bytes(32), topic: bytes = bytes(16)) -> bytes:
                return sealing.seal_invitation(os.urandom(32), mallory.seed(), mallory.public_key,
                                               bob.public_key, "ab" * 16, key, topic, event)

            inbox = bob.topics.inbox(bob.peer_id).topic
            other = ev.make(mallory, "cancel", 1, {"reason": "x"}, round="ab" * 16, seq=1, prev="0" * 64)
            lobby_line = ev.make(mallory, "chat", 1, {"text": "hi", "ns": bob.topics.root})
            move_here = ev.make(mallory, "move", 1, {"ply": 1, "move": "4", "state": "00" * 32},
                                round=rb.id, seq=2, prev=rb.log()[-1].id)
            to_inbox = [b"", b"x", bytes(32) + os.urandom(100), b"\x01" + bytes(31) + os.urandom(200)]
            to_inbox += [os.urandom(n) for n in (1, 31, 32, 33, 80, 111, 112, 113, 500)]
            to_inbox += [invite(b""), invite(b"junk"), invite(b"{}"), invite(other.raw),
                         invite(lobby_line.raw), invite(move_here.raw), invite(real)]
            for payload in to_inbox:
                await tool.publish(inbox, payload, qos=1)

            sealed = rb.sealed(real)
            to_round: list[tuple[str, bytes]] = []
            for channel in ("events", "sync", "chat"):
                topic = rb.topic(channel)
                to_round += [(topic, sealed[:n]) for n in range(0, 40, 3)]
                to_round += [(topic, sealed[:-1]), (topic, os.urandom(rng.randrange(1, 300)))]
                to_round += [(topic, rb.sealed(x, channel)) for x in
                             (b"", b"junk", b"{}", b'{"pk":"' + b"zz" * 32 + b'"}', other.raw,
                              lobby_line.raw, move_here.raw, real[:-5], real + b" ")]
            to_round.append((rb.topic("events"), rb.sealed(real, "chat")))  # another channel
            to_round.append((rb.topic("events").rsplit("/", 1)[0] + "/nope", sealed))
            for topic, payload in to_round:
                await tool.publish(topic, payload, qos=1)

            # bob's reader gets through it all (the drop counters stop moving) ...
            last, still = -1, 0
            while still < 5:
                await asyncio.sleep(0.1)
                now = sum(bob.stats.dropped.values())
                still = still + 1 if now == last else 0
                last = now
            assert last >= len(to_inbox) + len(to_round) - 10  # all but edge duplicates
            # the round goes on as if nothing happened
            await rb.play("3")
            await ra.wait_turn(10)
            assert [e.id for e in ra.log()] == [e.id for e in rb.log()]
            assert ra.game.history() == rb.game.history() == ["4", "3"]
            assert bob.invitations == [] and not any(bob.rounds[r].is_over for r in bob.rounds)

    run(body(), 60)
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR or "internal error" in r.getMessage()]
    assert errors == [], [r.getMessage() for r in errors]


def test_live_an_invitation_naming_another_rounds_topics_is_refused(peers: Peers, mosquitto) -> None:
    """A stranger invites bob to a public round of its own but names the topics of bob's
    last round with alice (its id is visible to anyone on ``#``): accepting would put bob's
    new round on those topics, in the place of the old one (whose closing acks then no
    longer open).  A public round's topics are its id; anything else is refused."""
    from test_integration_hostile import expect_rejected

    mallory = Identity.from_seed(bytes(range(40, 72)))

    async def body() -> None:
        async with (
            peers("alice", "bob") as (alice, bob),
            aiomqtt.Client("127.0.0.1", mosquitto.port, identifier="inviter") as tool,
        ):
            ra, rb = await start_round(alice, [bob], "connect4", start=0)
            await ra.resign()
            await rb.wait_over(10)
            notes = bob.events()
            now = int(time.time() * 1000)

            def genesis(round_id: str) -> ev.Event:
                seats = [{"pk": mallory.pk_hex, "level": None}, {"pk": bob.identity.pk_hex, "level": None}]
                return ev.make(mallory, "genesis", now, {"game": "connect4", "options": {}, "seats": seats,
                               "start": 0, "expires": now + 60_000, "private": False}, round=round_id, seq=0)

            def sealed(event: ev.Event, topic_key: bytes) -> bytes:
                return sealing.seal_invitation(os.urandom(32), mallory.seed(), mallory.public_key,
                                               bob.public_key, event.round, os.urandom(32), topic_key, event.raw)

            inbox = bob.topics.inbox(bob.peer_id).topic
            hostile = genesis("ee" * 16)
            await tool.publish(inbox, sealed(hostile, bytes.fromhex(rb.id)), qos=1)
            await expect_rejected(notes, "a public round's topics are not its id")
            assert bob.invitation(hostile.round) is None
            fair = genesis("ef" * 16)  # the same stranger, its own topics: an invitation
            await tool.publish(inbox, sealed(fair, bytes.fromhex(fair.round)), qos=1)
            for _ in range(200):
                if bob.invitation(fair.round) is not None:
                    break
                await asyncio.sleep(0.025)
            assert bob.invitation(fair.round) is not None
            assert bob.links.by_key[rb.id].handle is rb

    run(body(), 60)
