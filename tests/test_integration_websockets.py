"""MQTT over websockets (the default broker's ``wss://`` way in) against a real Mosquitto.

Mosquitto here serves plain TCP only, so ``tests/ws_bridge.py`` puts a real websocket
server (subprotocol ``mqtt``, path ``/mqtt``, optionally TLS) in front of it.  The
transport under test is the product's own: aiomqtt/paho with ``transport="websockets"``.
"""

from __future__ import annotations

import asyncio
import os
import socket

import pytest
from conftest import autoplay, computer, eventually, meet, run, start_round
from test_integration_rounds import assert_same_outcome
from ws_bridge import WebsocketBridge

from p2p.net.broker import LocalBroker, free_port
from p2p.net.transport import Transport
from p2p.peer import Peer


def nodelay(transport: Transport) -> bool:
    """Whether the TCP socket under the transport's connection has ``TCP_NODELAY`` set.

    Without it a PUBACK followed by a PUBLISH waits for the broker's delayed ACK: a
    websocket reply took 88 ms instead of 1 ms on loopback (``docs/performance.md``).
    """
    client = transport._client
    assert client is not None
    wrapped = client._client.socket()  # paho's websocket wrapper: no getsockopt
    with socket.socket(fileno=os.dup(wrapped.fileno())) as raw:
        return raw.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0


async def round_trip(sender: Transport, receiver: Transport, topic: str) -> list[bytes]:
    """``receiver`` subscribes to ``topic``; ``sender`` publishes three messages to it."""
    await receiver.subscribe(topic, qos=1)
    got: list[bytes] = []

    async def collect() -> None:
        async for message in receiver.messages():
            got.append(message.payload)

    task = asyncio.create_task(collect())
    for i in range(3):
        await sender.publish(topic, f"m{i}".encode(), qos=1, wait=True)
    await eventually(lambda: len(got) == 3, 5, f"three messages on {topic}")
    task.cancel()
    return got


def test_transport_over_ws(ws_bridge: WebsocketBridge, mosquitto: LocalBroker) -> None:
    async def body() -> None:
        before = ws_bridge.connections
        async with (
            Transport(ws_bridge.url) as over_ws,
            Transport(mosquitto.url) as over_tcp,
        ):
            assert over_ws.address.websockets and over_ws.address.path == "/mqtt"
            assert ws_bridge.connections == before + 1, "the ws client used the bridge"
            assert nodelay(over_ws), "websocket sends must not wait for Nagle"
            sent = [b"m0", b"m1", b"m2"]
            assert await round_trip(over_ws, over_tcp, "t/ws/up") == sent
            assert await round_trip(over_tcp, over_ws, "t/ws/down") == sent
            big = bytes(range(256)) * 30  # 7680 bytes: several TCP reads, one frame
            await over_ws.subscribe("t/ws/big", qos=1)
            await over_ws.publish("t/ws/big", big, qos=1, wait=True)
            echoed = await asyncio.wait_for(over_ws.messages().__anext__(), 5)
            assert echoed.payload == big

    run(body())


def test_transport_reconnects_over_ws(ws_bridge: WebsocketBridge) -> None:
    async def body() -> None:
        async with Transport(ws_bridge.url, max_backoff=0.5) as transport:
            await transport.subscribe("t/ws/again", qos=1)
            transport.interrupt()  # cut the websocket's TCP connection under paho
            await eventually(lambda: not transport.connected, 5, "the loss")
            await eventually(lambda: transport.connected, 10, "the reconnect")
            await transport.publish("t/ws/again", b"back", qos=1, wait=True)
            message = await asyncio.wait_for(transport.messages().__anext__(), 5)
            assert message.payload == b"back", "subscription restored after reconnect"

    run(body())


def test_transport_over_wss(wss_bridge: WebsocketBridge) -> None:
    async def body() -> None:
        async with Transport(
            wss_bridge.url, tls_context=wss_bridge.client_context()
        ) as transport:
            assert transport.address.tls
            assert nodelay(transport)
            await transport.subscribe("t/wss", qos=1)
            await transport.publish("t/wss", b"secret", qos=1, wait=True)
            message = await asyncio.wait_for(transport.messages().__anext__(), 5)
            assert message.payload == b"secret"

    run(body())


def test_wss_with_an_untrusted_certificate_is_one_clear_error(
    wss_bridge: WebsocketBridge,
) -> None:
    async def body() -> None:
        transport = Transport(wss_bridge.url)  # the system CAs do not know our cert
        with pytest.raises(ConnectionError) as info:
            await transport.start(wait=1.0)
        text = str(info.value)
        assert "\n" not in text
        assert text.startswith(f"cannot connect to {wss_bridge.url}: ")
        assert "CERTIFICATE_VERIFY_FAILED" in text

    run(body())


def test_wrong_path_is_one_clear_error(ws_bridge: WebsocketBridge) -> None:
    async def body() -> None:
        url = f"ws://127.0.0.1:{ws_bridge.port}/nomqtt"
        transport = Transport(url)
        with pytest.raises(ConnectionError) as info:
            await transport.start(wait=1.0)
        text = str(info.value)
        assert "\n" not in text
        assert text.startswith(f"cannot connect to {url}: ")
        assert "WebSocket handshake error" in text

    run(body())


def test_refused_ws_connection_is_one_clear_error() -> None:
    async def body() -> None:
        url = f"ws://127.0.0.1:{free_port()}/mqtt"
        transport = Transport(url)
        with pytest.raises(ConnectionError) as info:
            await transport.start(wait=1.0)
        text = str(info.value)
        assert "\n" not in text
        assert text.startswith(f"cannot connect to {url}: ")
        assert "refused" in text.lower()

    run(body())


def test_ws_peer_and_tcp_peer_play_connect4(
    wss_bridge: WebsocketBridge, broker_url: str
) -> None:
    async def body() -> None:
        async with (
            Peer(
                wss_bridge.url, nick="webby", tls_context=wss_bridge.client_context()
            ) as webby,
            Peer(broker_url, nick="tcpy") as tcpy,
        ):
            assert webby.transport.address.websockets
            await meet(webby, tcpy)
            rw, rt = await start_round(webby, [tcpy], "connect4")
            assert rw.id == rt.id and rw.seed == rt.seed
            await asyncio.gather(
                autoplay(rw, computer("normal")), autoplay(rt, computer("neuling"))
            )
            await rt.wait_over(10)
            assert_same_outcome([rw, rt])

    run(body())
