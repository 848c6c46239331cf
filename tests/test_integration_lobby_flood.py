"""The lobby attacks of issue 10 played live on a real Mosquitto against real peers.

A raw aiomqtt client ("mallory") floods validly signed fake presences, rotates keys to
flood the lobby chat, spams invitations, replays chat and hellos and deletes a retained
presence.  Each test asserts that the honest peers keep working and lose nothing honest.
The floods are paced in batches so that what is measured is the lobby's policy, not the
transport's inbound queue (issue 10 item 1 owns that).
"""

from __future__ import annotations

import asyncio
import os
import time

import aiomqtt
import pytest
from conftest import Peers, autoplay, eventually, first_legal, meet, run, start_round
from test_integration_rounds import assert_same_outcome

from p2p.friends import Friends
from p2p.net.inbound import DEDUPE_WINDOW_S, Lane
from p2p.peer import ChatMessage, Peer
from p2p.peer.config import offline_grace_ms
from p2p.peer.round_link import offline_members
from p2p.protocol import events as ev
from p2p.protocol import sealing
from p2p.protocol.identity import Identity
from p2p.protocol.lobby import HEARTBEAT_MS, Lobby
from p2p.protocol.round import Phase, TurnTimeouts


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def fake_keys(n: int, salt: int) -> list[Identity]:
    return [
        Identity.from_seed(i.to_bytes(4, "big") + bytes([salt]) * 28) for i in range(n)
    ]


async def flood(
    mallory: aiomqtt.Client,
    messages: list[tuple[str, bytes]],
    *,
    retain: bool = False,
    batch: int = 250,
    settle: float = 0.15,
) -> None:
    """Publish ``messages`` in batches, pausing so the peers' queues can drain."""
    for start in range(0, len(messages), batch):
        for topic, payload in messages[start : start + batch]:
            await mallory.publish(topic, payload, qos=0, retain=retain)
        await asyncio.sleep(settle)


@pytest.mark.slow
def test_2500_fake_presences_hide_no_real_peer_and_forfeit_no_member(
    private_mosquitto,
) -> None:
    url = private_mosquitto.url
    # offline_ms short: a member the flood made look offline would be forfeited at once;
    # silent_ms long: bob's turn lasts the whole flood, which took over 60 s under load
    timeouts = TurnTimeouts(silent_ms=600_000, offline_ms=1_000)

    carol_key = Identity.from_seed(bytes([7]) * 32)

    async def body() -> None:
        async with (
            Peer(
                url,
                nick="alice",
                turn_timeouts=timeouts,
                friends=Friends({carol_key.public_key: "carol"}),
            ) as alice,
            Peer(url, nick="bob", turn_timeouts=timeouts) as bob,
            Peer(url, nick="carol", identity=carol_key) as carol,
            aiomqtt.Client(
                "127.0.0.1", private_mosquitto.port, identifier="mallory"
            ) as mallory,
        ):
            await meet(alice, bob, carol)
            topics = alice.topics
            ra, rb = await start_round(alice, [bob], "connect4", start=0)
            await ra.play("1")
            await rb.wait_turn(
                10
            )  # bob to move: an "offline" bob could be forfeited in 1 s
            # alice (the admin, who would forfeit) holds only 100 strangers: the part
            # of the flood her inbound lanes let through overflows it; bob (partner)
            # and carol (friend) stay
            alice.lobby.max_peers = 100
            ts = now_ms()
            fakes = [
                (
                    topics.presence(who.peer_id).topic,
                    Lobby(who, f"fake{i}", i.to_bytes(16, "big"))
                    ._presence("online", ts)
                    .raw,
                )
                for i, who in enumerate(fake_keys(2_500, salt=1))
            ]
            await flood(mallory, fakes, retain=True, batch=2_500, settle=0)
            await eventually(
                lambda: len(alice.lobby.peers) >= 100,
                30,
                "the flood to fill alice's list",
            )
            # the rest of what her lanes let through (a fixed 1 s was too short under load)
            await eventually(
                lambda: alice.inbound.stats["accepted"] > 200  # the list overflowed
                and alice.inbound.size(Lane.STRANGER) == 0,
                30,
                "alice to take in what her lanes let through",
            )
            assert len(alice.lobby.peers) <= 100 + 2  # bounded; bob and carol on top
            for peer in (alice, bob, carol):
                assert all(
                    o.public_key in peer.lobby.peers
                    for o in (alice, bob, carol)
                    if o is not peer
                )
            await asyncio.sleep(1.5)  # longer than offline_ms: no forfeit may come
            assert all(alice.lobby.offline_since(o.public_key) is None for o in (bob, carol))
            grace = offline_grace_ms(ra.machine.timeouts.offline_ms)
            seats = ra.chain_state.seats
            assert offline_members(alice.lobby, seats, alice.public_key, grace, alice.now_ms()) == frozenset()
            assert ra.phase is Phase.PLAY
            assert not [e for e in ra.log() if e.kind == "forfeit"]
            # a newcomer learns everyone from the retained presences, fakes and all
            # (connect_timeout: four peers checking 2,500 signatures kept a loaded machine
            # from answering dave's connect within the default 10 s)
            async with Peer(url, nick="dave", connect_timeout=60) as dave:
                await meet(alice, bob, carol, dave, timeout=30)
                await eventually(  # the fakes are in its list too: the flood was there
                    lambda: len(dave.lobby.peers) >= 2_000, 120, "dave to take them in"
                )
                for peer in (alice, bob, carol):
                    assert not [r for r in peer.stats.dropped if "lobby full" in r]
                await asyncio.gather(
                    autoplay(ra, first_legal), autoplay(rb, first_legal)
                )
                await ra.wait_over(20)
                await rb.wait_over(20)
                assert_same_outcome([ra, rb])

    run(body(), timeout=280)  # 2,500 signatures checked by each of four peers: CPU-bound


def test_key_rotating_chat_flood_and_invitation_spam(
    broker_url: str, mosquitto
) -> None:
    async def body() -> None:
        friends = Friends()
        async with (
            Peer(
                broker_url,
                nick="alice",
                namespace="chatflood",
                friends=friends,
            ) as alice,
            Peer(broker_url, nick="bob", namespace="chatflood") as bob,
            aiomqtt.Client(
                "127.0.0.1", mosquitto.port, identifier="mallory-chat"
            ) as mallory,
        ):
            friends.add(bob.public_key, "bob")
            await meet(alice, bob)
            topics = alice.topics
            notes = alice.events()
            # 2,000 fresh keys, one line each
            ts = now_ms()
            spam = [
                (
                    topics.lobby_chat().topic,
                    ev.make(
                        who,
                        "chat",
                        ts + i,
                        {"text": f"buy gold {i}", "ns": topics.root},
                    ).raw,
                )
                for i, who in enumerate(fake_keys(2_000, salt=2))
            ]
            started = time.monotonic()
            await flood(mallory, spam[:1_000])
            await bob.say("hi alice, mid-flood")
            await flood(mallory, spam[1_000:])
            # her inbound lanes let a few hundred through, the lobby's budget the rest
            await eventually(
                lambda: (
                    alice.stats.dropped.get("lobby chat budget", 0)
                    + alice.stats.dropped.get("stranger lane over budget", 0)
                    >= 1_990
                ),
                120,  # CPU-bound: 2,000 signatures (60 s did not do at load 20 on 2 cores)
                "alice to refuse the flood",
            )
            assert alice.stats.dropped.get("lobby chat budget", 0) >= 100
            await bob.say("still here")
            shown: list[str] = []
            while True:  # until a quiet second after bob's last line (a loaded run is slow)
                try:
                    note = await notes.next(1.0 if "still here" in shown else 30.0)
                except TimeoutError:
                    break
                if isinstance(note, ChatMessage):
                    shown.append(note.text)
            assert "hi alice, mid-flood" in shown and "still here" in shown
            seconds = time.monotonic() - started  # the budget's time: all the lines shown
            spam_shown = [t for t in shown if t.startswith("buy gold")]
            assert (
                len(spam_shown) <= 5 + seconds / 2 + 1
            )  # burst, then one line per 2 s

            # invitation spam: a friend's real invitation is never pushed out
            real = await bob.invite([alice.peer_id], "connect4")
            await eventually(
                lambda: alice.invitation(real.id) is not None, 30, "the invitation"
            )
            inbox = topics.inbox(alice.peer_id).topic
            ts = now_ms()
            junk = []
            for i, who in enumerate(fake_keys(40, salt=3)):
                genesis = ev.make(
                    who,
                    "genesis",
                    ts,
                    {
                        "game": "connect4",
                        "options": {},
                        "seats": [
                            {"pk": who.pk_hex, "level": None},
                            {"pk": alice.identity.pk_hex, "level": None},
                        ],
                        "start": 0,
                        "expires": ts + 600_000,
                        "private": False,
                    },
                    round=f"{i + 1:032x}",
                    seq=0,
                )
                sealed = sealing.seal_invitation(
                    os.urandom(32),
                    who.seed(),
                    who.public_key,
                    alice.public_key,
                    genesis.round,
                    os.urandom(32),
                    bytes.fromhex(genesis.round),  # the topic key of a public round
                    genesis.raw,
                )  # sealed to alice as any sender can: the lobby must rank it
                junk.append((inbox, sealed))
            await flood(mallory, junk)
            await eventually(
                lambda: len(alice.invitations) == 16, 30, "the spam to fill the list"
            )
            await asyncio.sleep(0.5)  # the rest of the 40 arrives and evicts spam only
            assert (
                alice.invitation(real.id) is not None and len(alice.invitations) == 16
            )
            accepted = await alice.invitation(real.id).accept()
            await accepted.wait_started(30)

    run(body(), timeout=280)  # generous: CPU-bound floods on a loaded machine


def test_replayed_chat_and_hellos_are_dropped_and_nobody_republishes(
    broker_url: str, mosquitto
) -> None:
    async def body() -> None:
        async with (
            Peer(broker_url, nick="alice", namespace="replay") as alice,
            Peer(broker_url, nick="bob", namespace="replay") as bob,
            Peer(broker_url, nick="carol", namespace="replay") as carol,
            Peer(broker_url, nick="eve", namespace="other") as elsewhere,
            aiomqtt.Client(
                "127.0.0.1", mosquitto.port, identifier="mallory-replay"
            ) as mallory,
        ):
            await meet(alice, bob, carol)
            topics = alice.topics
            presence_prefix = topics.root + "/lobby/presence/"
            last_presence: dict[bytes, int] = {}  # each peer's latest presence mallory saw

            def heartbeat(message: aiomqtt.Message) -> bool:
                """Note a presence; true if it is its peer's heartbeat, due HEARTBEAT_MS
                after its previous one (on the peers' own clock: the times they signed)."""
                event = ev.parse(bytes(message.payload))  # type: ignore[arg-type,unused-ignore]
                before = last_presence.get(event.pk)
                last_presence[event.pk] = max(event.ts, before or 0)
                return before is not None and event.ts >= before + HEARTBEAT_MS

            await mallory.subscribe(topics.root + "/#")
            notes = bob.events()
            await alice.say("I resign, gg")
            captured = None
            async for message in mallory.messages:
                if message.topic.value.startswith(presence_prefix) and message.payload:
                    heartbeat(message)  # the retained ones first: where each peer stands
                if message.topic.value == topics.lobby_chat().topic:
                    captured = bytes(message.payload)
                    break
            shown = []
            await eventually(lambda: bob.stats.received > 0, 30)
            # later than the edge's duplicate window: the lobby's replay guard decides
            await asyncio.sleep(DEDUPE_WINDOW_S + 0.3)
            edge_dupes = bob.inbound.stats.get("dropped: duplicate", 0)
            for _ in range(3):  # replayed on the same lobby
                await mallory.publish(topics.lobby_chat().topic, captured)
            await mallory.publish(
                elsewhere.topics.lobby_chat().topic, captured
            )  # elsewhere
            await eventually(
                lambda: bob.stats.dropped.get("duplicate", 0) >= 1,
                30,
                "bob to drop the replays",
            )  # once by the lobby's replay guard (asked at the edge, as alice is a
            # known key: tests/test_net_edge_attacks.py), then by the duplicate check
            assert bob.inbound.stats.get("dropped: duplicate", 0) - edge_dupes >= 1
            await eventually(
                lambda: elsewhere.stats.dropped.get("signed for another lobby", 0) >= 1,
                30,
                "the other lobby to refuse the replay",
            )
            while True:
                try:
                    note = await notes.next(0.5)
                except TimeoutError:
                    break
                if isinstance(note, ChatMessage):
                    shown.append(note.text)
            assert shown == ["I resign, gg"]
            # a stale line (5 minutes old) is refused
            old = ev.make(
                alice.identity,
                "chat",
                now_ms() - 300_000,
                {"text": "old", "ns": topics.root},
            )
            await mallory.publish(topics.lobby_chat().topic, old.raw)
            await eventually(
                lambda: bob.stats.dropped.get("outside the replay window", 0) >= 1, 30
            )

            # hellos, fresh and replayed: nobody re-publishes its presence
            ts = now_ms()
            hellos = [
                ev.make(who, "hello", ts, {"nick": "new", "ns": topics.root}).raw
                for who in fake_keys(200, salt=4)
            ]
            for raw in hellos:
                await mallory.publish(topics.hello().topic, raw)
            await asyncio.sleep(DEDUPE_WINDOW_S + 0.3)
            for raw in hellos:  # replayed after the edge forgot them
                await mallory.publish(topics.hello().topic, raw)
            published = 0
            deadline = asyncio.get_running_loop().time() + 1.5
            try:
                async with asyncio.timeout_at(deadline):
                    async for message in mallory.messages:
                        # (a heartbeat in this window is no answer: all three peers started
                        # together, and under load their heartbeats fell in it, 3 != 0)
                        if message.topic.value.startswith(presence_prefix) and not (
                            message.payload and heartbeat(message)
                        ):
                            published += 1
            except TimeoutError:
                pass
            assert published == 0
            for peer in (alice, bob, carol):
                # polled: under load a peer had not yet taken in all 400 in the 1.5 s above
                def dropped_them(peer: Peer = peer) -> bool:
                    reasons = ("duplicate", "hello budget", "stranger lane over budget")
                    return sum(peer.stats.dropped.get(r, 0) for r in reasons) >= 390

                await eventually(dropped_them, 90, f"{peer.nick} to drop the hellos")  # 30 s: short at load 20

    run(body(), timeout=280)  # generous: CPU-bound floods on a loaded machine


def test_a_join_costs_one_publication_and_a_deleted_presence_is_repaired(
    peers: Peers, broker_url: str, mosquitto
) -> None:
    async def body() -> None:
        async with (
            peers("p0", "p1", "p2", namespace="joincost") as (p0, p1, p2),
            aiomqtt.Client(
                "127.0.0.1", mosquitto.port, identifier="mallory-join"
            ) as mallory,
        ):
            topics = p0.topics
            await mallory.subscribe(topics.root + "/#")
            await asyncio.sleep(0.3)
            seen: list[str] = []
            filled: list[str] = []  # topics of what carried a payload (not a deletion)

            async def listen() -> None:
                async for message in mallory.messages:
                    if not message.retain:
                        seen.append(message.topic.value)
                        if message.payload:
                            filled.append(message.topic.value)

            # listened to from before the newcomer connects until a second after everyone
            # met (a fixed 2 s window ended before a slow connect on a loaded machine)
            counting = asyncio.create_task(listen())
            async with Peer(
                broker_url, nick="newcomer", namespace="joincost"
            ) as newcomer:
                await meet(p0, p1, p2, newcomer)
                await asyncio.sleep(1.0)  # what the others would answer with
                counting.cancel()
            # the newcomer's presence; nobody else published
            assert seen.count(topics.presence(newcomer.peer_id).topic) >= 1
            others = [t for t in seen if t != topics.presence(newcomer.peer_id).topic]
            assert others == [], others

            # someone deletes p1's retained presence: p1 publishes it again
            own = topics.presence(p1.peer_id).topic
            seen.clear()
            filled.clear()
            counting = asyncio.create_task(listen())
            await mallory.publish(own, b"", retain=True)
            await eventually(lambda: own in filled, 15, "p1 to publish its presence again")
            counting.cancel()
            async with Peer(broker_url, nick="late", namespace="joincost") as late:
                await meet(late, p1)

    run(body(), timeout=180)  # generous: CPU-bound floods on a loaded machine
