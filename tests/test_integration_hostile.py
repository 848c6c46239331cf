"""Hostile input injected through the real broker while a round is being played.

A raw aiomqtt client ("mallory") publishes each attack on the round's real topics; every
attack must be refused by every peer with a reason, change nothing, and the round must
still be played to an identical end.  Attacks that need a member's key (a move for the
wrong seat, equivocation) are signed with that member's identity, as a malicious member
or a buggy client would, and sealed with the round key (``Round.sealed``) as a member
sends them; a stranger without the round key is dropped before its bytes are parsed.
"""

from __future__ import annotations

import asyncio
import logging
import time

import aiomqtt
import pytest
from conftest import Peers, eventually, run, start_round

from p2p.peer import Equivocated, Notifications, Peer, Rejected
from p2p.protocol import canonical, sealing
from p2p.protocol import events as ev
from p2p.protocol.identity import Identity


async def expect_rejected(
    notes: Notifications, reason: str, timeout: float = 5.0
) -> Rejected:
    """The next ``Rejected`` notification whose reason contains ``reason``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        note = await notes.next(max(0.01, deadline - loop.time()))
        if isinstance(note, Rejected) and reason in note.reason:
            return note


def _refusals(peer: Peer, reasons: tuple[str, ...]) -> int:
    """How many inbound messages ``peer`` dropped for any of ``reasons``."""
    return sum(
        count
        for key, count in peer.stats.dropped.items()
        if any(reason in key for reason in reasons)
    )


def move_event(
    identity: Identity,
    rnd,
    move: str,
    *,
    state: str | None = None,
    ply: int | None = None,
) -> ev.Event:
    """A move event signed by ``identity`` at the head of ``rnd``'s chain."""
    head = rnd.log()[-1]
    if state is None:
        trial = rnd.game.copy()
        trial.push(move)
        state = trial.state_hash()
    body = {
        "ply": rnd.chain_state.ply if ply is None else ply,
        "move": move,
        "state": state,
    }
    return ev.make(
        identity,
        "move",
        head.ts,  # v2: not before the head, not ahead of the receivers' clocks
        body,
        round=rnd.id,
        seq=head.seq + 1,
        prev=head.id,
    )


def test_hostile_events_are_refused_while_the_round_goes_on(
    peers: Peers, mosquitto, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="p2p")

    async def body() -> None:
        async with (
            peers("alice", "bob") as (alice, bob),
            aiomqtt.Client(
                "127.0.0.1", mosquitto.port, identifier="mallory"
            ) as mallory,
        ):
            topics = alice.topics
            await mallory.subscribe(topics.presence_filter())

            # Round 1: two moves, then alice resigns; its events are replayed later.
            r1a, r1b = await start_round(alice, [bob], "connect4", start=0)
            await r1a.play("1")
            await r1b.wait_turn(10)
            await r1b.play("1")
            await r1a.wait_turn(10)
            old_move = r1a.log()[-1]
            await r1a.resign()
            await r1b.wait_over(10)

            # Round 2: fill column 1, then attack.
            ra, rb = await start_round(alice, [bob], "connect4", start=0)
            for _ in range(3):
                await ra.play("1")
                await rb.wait_turn(10)
                await rb.play("1")
                await ra.wait_turn(10)
            assert rb.game.history() == ["1"] * 6
            events_topic = rb.topic()
            assert events_topic == topics.round_events(rb.machine.key).topic
            notes_b, notes_a = bob.events(), alice.events()
            length = len(rb.log())

            # a stranger without the round key: even a validly signed move of the seat
            # to move is dropped unread (not parsed, no signature check)
            unsealed = "not sealed with the round key"
            before = [p.stats.dropped.get(unsealed, 0) for p in (alice, bob)]
            for payload in (move_event(alice.identity, rb, "2").raw, b"x" * 200):
                await mallory.publish(events_topic, payload, qos=1)
            await eventually(
                lambda: [p.stats.dropped.get(unsealed, 0) for p in (alice, bob)]
                == [n + 2 for n in before],
                5,
                "the stranger's payloads to be dropped",
            )
            assert len(rb.log()) == length and len(ra.log()) == length

            async def inject(payload: bytes, reason: str) -> None:
                await mallory.publish(events_topic, rb.sealed(payload), qos=1)
                await expect_rejected(notes_b, reason)
                await expect_rejected(notes_a, reason)
                assert len(rb.log()) == length and len(ra.log()) == length

            # a forged signature: mallory signs, but claims alice's key
            forged = canonical.decode(
                move_event(Identity.from_seed(bytes(range(32))), rb, "2").raw
            )
            forged["pk"] = alice.identity.pk_hex
            await inject(canonical.encode(forged), "bad signature")
            # a move by the wrong seat: bob moves although alice is to move
            await inject(move_event(bob.identity, rb, "2").raw, "does not own position")
            # an illegal move: column 1 is full
            await inject(
                move_event(alice.identity, rb, "1", state="0" * 64).raw, "illegal move"
            )
            # an event replayed from another round
            await inject(old_move.raw, "another round")
            # a malformed payload, twice
            await inject(b"{not json", "not JSON")
            await inject(b'{"v":1}', "not an event envelope")
            # a duplicate: a real event of this round, sent again
            duplicates = bob.stats.dropped.get("duplicate", 0)
            await mallory.publish(events_topic, rb.sealed(rb.log()[-1].raw), qos=1)
            await eventually(
                lambda: bob.stats.dropped.get("duplicate", 0) > duplicates,
                5,
                "the duplicate to be dropped",
            )
            # an oversize payload never reaches the parser
            dropped = bob.transport.stats["dropped"]
            await mallory.publish(events_topic, b"x" * 9000, qos=1)
            await eventually(
                lambda: bob.transport.stats["dropped"] > dropped,
                5,
                "the oversize payload to be dropped",
            )
            assert len(rb.log()) == length

            # a chat flood from one key: the first lines pass, the rest hit the rate limit
            spammer = Identity.from_seed(bytes(range(2, 34)))
            for i in range(12):
                line = ev.make(
                    spammer,
                    "chat",
                    int(time.time() * 1000) + i,
                    {"text": f"spam {i}", "ns": topics.root},
                )
                await mallory.publish(topics.lobby_chat().topic, line.raw, qos=0)
            await expect_rejected(notes_b, "chat rate limit")
            # an invitation that cannot be a round (an unknown game) in bob's inbox
            bogus = ev.make(
                spammer,
                "genesis",
                ev.MAX_TS // 2,
                {
                    "game": "poker",
                    "options": {},
                    "seats": [
                        {"pk": spammer.pk_hex, "level": None},
                        {"pk": bob.identity.pk_hex, "level": None},
                    ],
                    "start": None,
                    "expires": ev.MAX_TS // 2 + 60_000,
                    "private": False,
                },
                round="ab" * 16,
                seq=0,
            )
            # (anyone can seal to bob's key; a plain copy is not even opened)
            inbox = topics.inbox(bob.peer_id).topic
            not_ours = bob.stats.dropped.get("not sealed to us", 0)
            await mallory.publish(inbox, bogus.raw, qos=1)
            await eventually(
                lambda: bob.stats.dropped.get("not sealed to us", 0) > not_ours,
                5,
                "the unsealed invitation to be dropped",
            )
            sealed_bogus = sealing.seal_invitation(
                bytes(range(9, 41)),
                spammer.seed(),
                spammer.public_key,
                bob.public_key,
                bogus.round,
                bytes(32),
                bytes.fromhex(bogus.round),
                bogus.raw,
            )
            await mallory.publish(inbox, sealed_bogus, qos=1)
            await expect_rejected(notes_b, "unusable invitation")
            assert bob.invitations == []

            # a fake Last Will: signed by someone else, on bob's presence topic
            fake = ev.make(
                Identity.from_seed(bytes(range(1, 33))),
                "presence",
                ev.MAX_TS // 2,
                {
                    "nick": "bob",
                    "status": "offline",
                    "busy": False,
                    "session": "00" * 16,
                    "ttl": 60,
                },
            )
            # (refused at the network edge, before any budget: authenticate, then charge)
            elsewhere = "presence on another peer's topic"
            refused = alice.stats.dropped.get(elsewhere, 0)
            await mallory.publish(topics.presence(bob.peer_id).topic, fake.raw, qos=0)
            await eventually(
                lambda: alice.stats.dropped.get(elsewhere, 0) > refused, 5, "the fake Will to be refused"
            )
            # bob's own, real Last Will of an earlier connection, replayed
            bob.interrupt_connection(hold=0.3)
            will = None
            async for message in mallory.messages:
                if message.topic.value == topics.presence(bob.peer_id).topic:
                    event = ev.parse(bytes(message.payload))
                    if event.pk == bob.public_key and event.body["status"] == "offline":
                        will = event.raw
                        break
            assert will is not None
            await eventually(
                lambda: bob.connected and bob.public_key in alice.lobby.peers,
                10,
                "bob to come back",
            )
            refused_before = _refusals(alice, ("another session", "duplicate"))
            await mallory.publish(
                topics.presence(bob.peer_id).topic, will, qos=0, retain=True
            )
            # refused by the lobby ("another session"), or already at the network edge
            # (the same bytes on the same topic seconds ago: a duplicate)
            await eventually(
                lambda: _refusals(alice, ("another session", "duplicate"))
                > refused_before,
                5,
                "the replayed Will to be refused",
            )
            assert bob.public_key in alice.lobby.peers

            # equivocation: two different moves signed by alice for the same ply
            first, second = (
                move_event(alice.identity, rb, "2"),
                move_event(alice.identity, rb, "3"),
            )
            await mallory.publish(events_topic, rb.sealed(first.raw), qos=1)
            await mallory.publish(events_topic, rb.sealed(second.raw), qos=1)
            proof = None
            while proof is None:
                note = await notes_b.next(5)
                if isinstance(note, Equivocated):
                    proof = note
            assert {proof.first.id, proof.second.id} == {first.id, second.id}
            # the proof ends the round the same way on both: the equivocator is out
            await ra.wait_over(10)
            await rb.wait_over(10)
            assert ra.state_hash == rb.state_hash and ra.log() == rb.log()
            for r in (ra, rb):
                assert r.chain_state.equivocators == [0] and r.winners == (1,)
                assert rb.log()[-1].seq == first.seq - 1  # the contested position is gone

    run(body(), timeout=90)
    logged = "\n".join(r.getMessage() for r in caplog.records)
    for reason in (
        "bad signature",
        "does not own position",
        "illegal move",
        "another round",
        "not JSON",
        "over the",
    ):
        assert reason in logged, f"no log line for {reason!r}"
