"""The heartbeat grows with the lobby, live (issue 28 item 4): real peers on a real
Mosquitto, with the lobby's settings made small (read where they are used): a lobby of
three beats every 2 s instead of every 0.3 s, says so in the ttl of its signed presences
(also the broker's expiry of the retained one), the others keep every peer listed across
its longer silence, a newcomer still sees everyone at once, and a peer that leaves is
gone at once.  The rules themselves: tests/test_protocol_lobby_heartbeat.py."""

from __future__ import annotations

import asyncio
import os

import aiomqtt
import pytest
from conftest import eventually, meet, run

from p2p.peer import Peer
from p2p.protocol import events as ev
from p2p.protocol import lobby as lobby_rules


def test_live_a_lobby_announces_a_longer_heartbeat_and_keeps_its_peers(
    mosquitto, broker_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # small numbers: the base heartbeat 0.3 s (ttl 1 s, silent after 1.5 s), R = 1
    # presence a second, at most 2 s: a lobby of 2 or more beats every 2 s (ttl 6 s)
    for name, value in (
        ("HEARTBEAT_MS", 300), ("PRESENCE_TTL_S", 1), ("SILENCE_MS", 1_500),
        ("STALE_MS", 800), ("PRESENCE_RATE", 1), ("MAX_HEARTBEAT_MS", 2_000),
    ):
        monkeypatch.setattr(lobby_rules, name, value)
    namespace = f"beat{os.getpid()}x{os.urandom(3).hex()}"

    async def body() -> None:
        alice, bob, carol = (Peer(broker_url, nick=n, namespace=namespace) for n in ("alice", "bob", "carol"))
        seen: list[ev.Event] = []  # alice's presences, as the broker hands them out
        arrived: list[float] = []  # when each arrived (our monotonic clock)
        missing: list[str] = []  # whom bob or carol ever lost from their list meanwhile
        async with aiomqtt.Client("127.0.0.1", mosquitto.port, identifier=f"w{os.getpid()}") as spy:
            try:
                await alice.start()
                await spy.subscribe(alice.topics.presence(alice.peer_id).topic, qos=1)

                async def record() -> None:
                    async for message in spy.messages:
                        if message.payload:
                            seen.append(ev.parse(bytes(message.payload)))
                            arrived.append(asyncio.get_running_loop().time())

                recording = asyncio.create_task(record())
                await bob.start()
                await carol.start()
                await meet(alice, bob, carol)

                async def watch() -> None:
                    while True:
                        for who, other in ((bob, alice), (carol, alice), (alice, bob)):
                            if other.public_key not in who.lobby.peers:
                                missing.append(f"{who.nick} lost {other.nick}")
                        await asyncio.sleep(0.02)

                watching = asyncio.create_task(watch())
                # alice announces the longer heartbeat: ttl 6 (three 2 s beats)
                await eventually(lambda: any(e.body["ttl"] == 6 for e in seen), 10,
                                 "alice's presence announcing a 2 s heartbeat")
                first = next(i for i, e in enumerate(seen) if e.body["ttl"] == 6)
                await eventually(lambda: len(seen) >= first + 3, 10, "two more of her beats")
                long = [e for e in seen[first:] if e.body["status"] == "online"]
                gaps = [b.ts - a.ts for a, b in zip(long, long[1:], strict=False)]
                assert all(e.body["ttl"] == 6 for e in long), [e.body["ttl"] for e in long]
                # every gap is a 2 s heartbeat, several times the 1.5 s fixed silence
                assert gaps and all(gap >= 2_000 for gap in gaps), gaps
                assert bob.lobby.peers[alice.public_key].ttl == 6
                assert not missing, missing[:3]  # nobody dropped for a longer silence
                # the broker keeps alice's retained presence for its own ttl (6 s), not
                # the base 1 s: read 1.3 s after her last one arrived, it is still there
                loop = asyncio.get_running_loop()
                await eventually(lambda: loop.time() - arrived[-1] >= 1.3, 5, "1.3 s of quiet")
                async with aiomqtt.Client("127.0.0.1", mosquitto.port, identifier=f"r{os.getpid()}") as late:
                    await late.subscribe(alice.topics.presence(alice.peer_id).topic, qos=1)
                    async with asyncio.timeout(5):
                        first_message = await anext(aiter(late.messages))
                    assert first_message.retain and first_message.payload
                # a newcomer still sees everyone at once, from the retained presences
                # (kept by the broker for their own ttl, not the base 1 s)
                async with Peer(broker_url, nick="dave", namespace=namespace) as dave:
                    await eventually(lambda: len(dave.lobby.peers) == 3, 5, "dave to see all three")
                    assert not missing, missing[:3]
                    watching.cancel()
                    # a peer that leaves is gone at once (its goodbye), long ttl or not
                    await carol.close()
                    await eventually(lambda: carol.public_key not in bob.lobby.peers, 1.0,
                                     "carol's goodbye to reach bob")
                    await eventually(lambda: carol.public_key not in dave.lobby.peers, 1.0,
                                     "carol's goodbye to reach dave")
                recording.cancel()
            finally:
                for peer in (carol, bob, alice):
                    await peer.close()

    run(body(), 60)
