"""The fault-injection harness itself (``tests/faults.py``): each nemesis does what it says."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

import pytest
from conftest import eventually, meet, run
from faults import Clock, LinkProxy, broker_outage

from p2p.net.broker import LocalBroker
from p2p.peer import ConnectionChanged, Peer, now_ms
from p2p.protocol.events import parse


def test_each_peer_signs_with_its_own_clock() -> None:
    """Two in-process peers, one clock shifted by 10 min: each one's signed timestamps come
    from its own clock, and the default is the real one -- no global is patched."""
    ahead = Peer("mqtt://127.0.0.1:1", nick="ahead", clock=Clock(600_000))
    plain = Peer("mqtt://127.0.0.1:1", nick="plain")
    before = now_ms()
    ahead_ts = parse(ahead.lobby_link.make_will().payload).ts
    plain_ts = parse(plain.lobby_link.make_will().payload).ts
    after = now_ms()
    assert before + 600_000 <= ahead_ts <= after + 600_000
    assert before <= plain_ts <= after
    clock = Clock(-5_000)
    clock.shift(-55_000)
    assert abs(clock() - (time.time_ns() // 1_000_000 - 60_000)) < 1_000


def test_a_shifted_peer_is_seen_with_its_shifted_timestamps(broker_url: str) -> None:
    """Live: bob's clock runs 20 s ahead; alice receives his presence dated by his clock."""

    async def body() -> None:
        async with Peer(broker_url, nick="alice") as alice, Peer(
            broker_url, nick="bob", clock=Clock(20_000)
        ) as bob:
            await meet(alice, bob)
            seen = alice.lobby.peers[bob.public_key]
            await eventually(lambda: seen.ts > 0, what="a timestamp")
            assert 15_000 < seen.ts - now_ms() < 25_000

    run(body())


# -- the proxy, against a plain echo server (no broker needed) ---------------------------


async def _echo_server() -> tuple[asyncio.Server, int]:
    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(4096):
                writer.write(data)
                await writer.drain()
        except OSError:
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(echo, "127.0.0.1", 0)
    return server, int(server.sockets[0].getsockname()[1])


async def _round_trip(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> float:
    loop = asyncio.get_running_loop()
    start = loop.time()
    writer.write(b"ping")
    await writer.drain()
    assert await reader.readexactly(4) == b"ping"
    return loop.time() - start


def test_proxy_latency_with_jitter_delays_each_way_and_keeps_order() -> None:
    async def body() -> None:
        server, port = await _echo_server()
        async with server, LinkProxy(port, seed=1) as proxy:
            reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
            fast = await _round_trip(reader, writer)
            proxy.latency(100, 50)
            slow = [await _round_trip(reader, writer) for _ in range(5)]
            assert fast < 0.1
            assert all(0.1 <= t < 1.0 for t in slow)  # two ways of 50..150 ms each
            writer.write(b"".join(b"%03d" % i for i in range(50)))  # many chunks, jittered
            await writer.drain()
            got = await reader.readexactly(150)
            assert got == b"".join(b"%03d" % i for i in range(50))
            writer.close()

    run(body())


def test_proxy_reset_pause_and_cut() -> None:
    async def body() -> None:
        server, port = await _echo_server()
        async with server, LinkProxy(port) as proxy:
            reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
            await _round_trip(reader, writer)
            assert proxy.reset() == 1
            with pytest.raises((ConnectionError, asyncio.IncompleteReadError)):
                await _round_trip(reader, writer)
            # pause: nothing flows, the connection stays; resume delivers what was held
            reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
            proxy.pause()
            writer.write(b"held")
            await writer.drain()
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(reader.readexactly(4), 0.3)
            proxy.resume()
            assert await asyncio.wait_for(reader.readexactly(4), 2) == b"held"
            # cut: the open connection dies and new ones are refused until heal
            proxy.cut()
            with pytest.raises((ConnectionError, asyncio.IncompleteReadError)):
                await _round_trip(reader, writer)
            reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
            with pytest.raises((ConnectionError, asyncio.IncompleteReadError)):
                await _round_trip(reader, writer)
            proxy.heal()
            reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
            assert await _round_trip(reader, writer) < 1
            writer.close()

    run(body())


# -- live: a peer behind the proxy, a broker killed and restarted ---------------------------


def test_a_peer_behind_a_cut_link_is_offline_for_the_others_and_comes_back(
    broker_url: str, link_to: Any
) -> None:
    """The proxy's cut is a real outage: the broker fires the Will at once, the cut peer's
    transport knows it is down, and after ``heal`` it reconnects by itself."""

    async def body() -> None:
        async with link_to() as link, Peer(broker_url, nick="alice") as alice:
            async with Peer(link.url, nick="bob") as bob:
                await meet(alice, bob)
                link.cut()
                await eventually(lambda: not bob.connected, what="bob to know he is cut off")
                await eventually(
                    lambda: bob.public_key not in alice.lobby.peers, what="bob's Will"
                )
                link.heal()
                await eventually(lambda: bob.connected, 20, "bob to reconnect")
                await meet(alice, bob)

    run(body())


def test_broker_outage_forgets_retained_messages_and_restarts_on_the_same_port(
    private_mosquitto: LocalBroker,
) -> None:
    """``broker_outage``: kill -9, down, a fresh broker on the same port -- retained
    messages are gone, and a peer notices the loss and reconnects by itself."""
    import aiomqtt

    async def retained(port: int) -> list[bytes]:
        async with aiomqtt.Client("127.0.0.1", port) as client:
            await client.subscribe("faults/#")
            got: list[bytes] = []
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(0.5):
                    async for message in client.messages:
                        got.append(bytes(message.payload))  # type: ignore[arg-type]
            return got

    async def body() -> None:
        broker = private_mosquitto
        port = broker.port
        async with aiomqtt.Client("127.0.0.1", port) as client:
            await client.publish("faults/kept", b"x", qos=1, retain=True)
        assert await retained(port) == [b"x"]
        async with Peer(broker.url, nick="alice") as alice:
            states: list[str] = []
            notes = alice.events()
            await broker_outage(broker, 0.5)
            assert broker.port == port and broker.running
            await eventually(lambda: alice.connected, 20, "alice to reconnect")
            while not notes._queue.empty():
                note = notes._queue.get_nowait()
                if isinstance(note, ConnectionChanged):
                    states.append(note.state)
            assert "reconnected" in states, states
        assert await retained(port) == []

    run(body())
