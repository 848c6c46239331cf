"""The transport reads a received PUBLISH from its bytes (``decode_publish``), not through
paho's objects (issue 28, the move under a flood): what it hands on is what paho would
have, QoS 1 messages are still acknowledged, and what the first look leaves to paho
(other v5 properties) still arrives, parsed by paho."""

from __future__ import annotations

import asyncio
import collections
import socket
import time
from collections.abc import Callable
from typing import Any

import aiomqtt
import paho.mqtt._packet as paho_packet
import pytest
from conftest import eventually, run
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from p2p.net import transport as transport_module
from p2p.net.broker import LocalBroker
from p2p.net.inbound import InboundQueues, Lane, Verdict
from p2p.net.transport import Inbound, Transport, decode_publish, hold_reads


def _body(topic: bytes, qos: int, props: bytes, payload: bytes, v5: bool = True) -> bytes:
    body = len(topic).to_bytes(2, "big") + topic + (b"\x00\x09" if qos else b"")
    return body + ((bytes([len(props)]) + props) if v5 else b"") + payload


def test_the_first_look_reads_what_paho_reads() -> None:
    raw = decode_publish(0x32, _body(b"r/e", 1, b"", b"move"), True)
    assert raw is not None
    assert (raw.topic, raw.payload, raw.qos, raw.retain, raw.mid, raw.expiry) == (
        "r/e", b"move", 1, False, 9, None
    )
    old = decode_publish(0x31, _body(b"p/x", 0, b"", b"presence", v5=False), False)
    assert old is not None and (old.retain, old.payload, old.expiry) == (True, b"presence", None)
    # a user property (0x26), a topic alias (0x23), QoS 2: left to paho
    user = b"\x26\x00\x01k\x00\x01v"
    assert decode_publish(0x30, _body(b"t", 0, user, b"x"), True) is None
    assert decode_publish(0x30, _body(b"t", 0, b"\x23\x00\x01", b"x"), True) is None
    assert decode_publish(0x34, _body(b"t", 1, b"", b"x"), True) is None
    for bad in (b"", b"\x00", b"\x00\x09ab", _body(b"\xff\xfe", 0, b"", b"x")):
        with pytest.raises(ValueError):
            decode_publish(0x30, bad, True)
    with pytest.raises(ValueError):  # no message id
        decode_publish(0x32, b"\x00\x01t", True)
    # properties cut short (a broker's malformed packet): never an IndexError out of
    # paho's read callback, the packet is left to paho's own path
    for cut in (b"\x00\x01t\x05", b"\x00\x01t\x05\x02\x00"):
        assert decode_publish(0x30, cut, True) is None


@pytest.mark.parametrize("protocol", ["5", "3.1.1"])
def test_received_messages_skip_paho_objects_and_qos1_is_still_acknowledged(
    mosquitto: LocalBroker, protocol: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """60 QoS 1 messages: Mosquitto lets at most 20 await our PUBACK over 3.1.1 (its
    ``max_inflight_messages``), so all 60 arrive only if each one is acknowledged."""
    decoded = 0
    paho_decode = paho_packet.decode_publish

    def counting(*args: object) -> object:
        nonlocal decoded
        decoded += 1
        return paho_decode(*args)  # type: ignore[arg-type]

    async def body() -> None:
        topic = f"readfirst/{protocol}"
        transport = Transport(mosquitto.url, protocol=protocol)
        await transport.subscribe(f"{topic}/#", 1)
        await transport.start()
        got: list[Inbound] = []

        async def take() -> None:
            async for message in transport.messages():
                got.append(message)

        reader = asyncio.create_task(take())
        monkeypatch.setattr(paho_packet, "decode_publish", counting)
        try:
            async with aiomqtt.Client("127.0.0.1", mosquitto.port, protocol=aiomqtt.ProtocolVersion.V5) as sender:
                for i in range(60):
                    await sender.publish(f"{topic}/q1", b"one %d" % i, qos=1)
                await sender.publish(f"{topic}/q0", b"zero", qos=0)
                expiring = Properties(PacketTypes.PUBLISH)  # type: ignore[no-untyped-call]
                expiring.MessageExpiryInterval = 60
                await sender.publish(f"{topic}/ex", b"kept", qos=1, properties=expiring)
                tagged = Properties(PacketTypes.PUBLISH)  # type: ignore[no-untyped-call]
                tagged.UserProperty = ("k", "v")
                await sender.publish(f"{topic}/user", b"tagged", qos=0, properties=tagged)
                await eventually(lambda: len(got) == 63, 20, "all 63 messages")
        finally:
            reader.cancel()
            await transport.close()
        assert [m.payload for m in got[:60]] == [b"one %d" % i for i in range(60)]
        by_topic = {m.topic.rsplit("/", 1)[1]: m for m in got[60:]}
        assert by_topic["q0"].payload == b"zero" and not by_topic["q0"].retain
        assert by_topic["ex"].payload == b"kept"
        if protocol == "5":
            assert by_topic["ex"].expiry is not None and 55 <= by_topic["ex"].expiry <= 60
            # the user property is paho's to read: the one message it parsed
            assert transport.stats["read_by_paho"] == decoded == 1
            assert transport.stats["read_raw"] >= 62  # (and the retained probe's)
        else:
            assert by_topic["ex"].expiry is None  # (3.1.1 carries no expiry)
            assert transport.stats["read_by_paho"] == decoded == 0
            assert transport.stats["read_raw"] >= 63
        assert by_topic["user"].payload == b"tagged"

    run(body(), timeout=60)


def _packet(topic: str, payload: bytes, qos: int = 0, mid: int = 0) -> bytes:
    """One MQTT v5 PUBLISH as a broker sends it (no properties)."""
    body = _body(topic.encode(), qos, b"", payload)
    if qos:
        body = body[: 2 + len(topic)] + mid.to_bytes(2, "big") + body[4 + len(topic) :]
    size, length = len(body), bytearray()
    while True:
        byte, size = size & 127, size >> 7
        length.append(byte | (128 if size else 0))
        if not size:
            break
    return bytes([0x30 | qos << 1]) + bytes(length) + body


async def _on_a_socket_pair(
    classify: Callable[[str, bytes], Verdict],
) -> tuple[Transport, Any, socket.socket, socket.socket]:
    """A transport's MQTT client reading one end of a socket pair through aiomqtt's reader
    (what a broker sends is written to the other end)."""
    transport = Transport("mqtt://127.0.0.1:1", inbound=InboundQueues(classify))
    client = transport._make_client()
    paho = client._client
    ours, broker = socket.socketpair()
    ours.setblocking(False)
    paho._sock = ours
    client._on_socket_open(paho, None, ours)  # aiomqtt's reader, as on a connect
    await asyncio.sleep(0)
    broker.setblocking(False)
    return transport, paho, ours, broker


async def _send(broker: socket.socket, data: bytes) -> None:
    while data:
        try:
            data = data[broker.send(data) :]
        except BlockingIOError:
            await asyncio.sleep(0.001)  # the reader's turn


def test_the_socket_is_read_in_chunks_and_a_move_ends_the_turn() -> None:
    """200 junk packets, a QoS 1 move, 200 more, a PINGRESP, in one write: read with a few
    ``recv`` calls (paho's reader made 3-4 per packet), the junk dropped, the move handed on
    and acknowledged, and no packet read behind the move in its turn of the loop (its
    dispatch goes first); a packet cut in two by the writer is finished by paho's reader."""
    seen: list[str] = []

    def classify(topic: str, payload: bytes) -> Verdict:
        seen.append(topic)
        return Verdict(Lane.ROUND) if topic == "r/move" else Verdict(None, reason="junk")

    async def body() -> None:
        transport, paho, ours, broker = await _on_a_socket_pair(classify)
        paho._ping_t = time.monotonic()  # waiting for a PINGRESP
        junk = [_packet("lobby/chat", bytes([i % 256]) * (40 + i % 300)) for i in range(400)]
        data = b"".join(junk[:200]) + _packet("r/move", b"e4", 1, 77) + b"".join(junk[200:])
        taken: list[tuple[bytes, int]] = []

        async def take() -> None:  # as the peer's receive loop does
            async for message in transport.messages():
                taken.append((message.payload, len(seen)))

        taker = asyncio.create_task(take())
        await asyncio.sleep(0)
        await _send(broker, data + b"\xd0\x00")
        await eventually(lambda: bool(taken), 10, "the move")
        assert taken[0] == (b"e4", 201), "a packet read behind the move in its turn"
        await eventually(lambda: len(seen) == 401 and paho._ping_t == 0, 10, "all packets")
        assert transport.stats["recv_calls"] <= 20, transport.stats
        assert transport.stats["dropped"] == 400 and transport.stats["received"] == 1
        await eventually(lambda: paho._out_packet == collections.deque(), 10, "the PUBACK sent")
        assert broker.recv(4) == b"\x40\x02\x00\x4d"  # the move's PUBACK
        split = _packet("r/move", b"d5", 1, 78)
        await _send(broker, junk[0] + split[:5])
        await eventually(lambda: len(seen) == 402, 10, "the packet before the cut")
        await _send(broker, split[5:])
        await eventually(lambda: len(taken) == 2, 10, "the cut move")
        assert taken[1][0] == b"d5"
        await eventually(lambda: paho._out_packet == collections.deque(), 10, "the PUBACK sent")
        assert broker.recv(4) == b"\x40\x02\x00\x4e"
        broker.close()  # the broker goes away: the connection is lost, not a traceback
        client_lost = paho._sock  # (paho closes its socket on the lost connection)
        await eventually(lambda: paho._sock is None, 10, "the lost connection noticed")
        assert client_lost is ours
        taker.cancel()

    run(body(), timeout=30)


def test_no_connection_reads_between_a_move_and_the_waiter_it_wakes() -> None:
    """Two connections of one event loop, both flooded, one with a move among its junk:
    from the move's hand-over until the waiter its dispatch woke has run, neither reads
    a packet (the reader holds every connection of the loop for the turn after a message
    was handed on, the receive loop for the turn after a dispatch: ``hold_reads``, as the
    peer's edge calls it).  Reading 32 packets per turn whatever they held had put the
    other connection's junk there (docs/performance.md, "A round under a flood")."""
    seen: list[str] = []

    def classify(topic: str, payload: bytes) -> Verdict:
        seen.append(topic)
        return Verdict(Lane.ROUND) if topic == "r/move" else Verdict(None, reason="junk")

    async def body() -> None:
        first, _, _, one = await _on_a_socket_pair(classify)
        _, _, _, other = await _on_a_socket_pair(classify)
        stamps: dict[str, int] = {}
        applied = asyncio.get_running_loop().create_future()

        async def dispatch() -> None:  # the edge's receive loop
            async for message in first.messages():
                stamps["dispatched"] = len(seen)
                applied.set_result(None)
                hold_reads()
                await asyncio.sleep(0)

        async def waiter() -> None:  # e.g. the other player's wait for the move
            await applied
            stamps["woken"] = len(seen)

        tasks = [asyncio.create_task(dispatch()), asyncio.create_task(waiter())]
        await asyncio.sleep(0)
        junk = [_packet("lobby/chat", bytes([i % 256]) * (40 + i % 300)) for i in range(600)]
        flood = b"".join(junk[:100]) + _packet("r/move", b"e4", 1, 7) + b"".join(junk[100:300])
        await asyncio.gather(_send(one, flood), _send(other, b"".join(junk)))
        await eventually(lambda: len(seen) == 901, 10, "every packet")
        moved = seen.index("r/move") + 1
        assert stamps == {"dispatched": moved, "woken": moved}, (stamps, moved)
        for task in tasks:
            task.cancel()

    run(body(), timeout=30)


@pytest.mark.parametrize("slice_s", [transport_module.READ_SLICE_S, 0.0])
def test_readers_held_again_and_again_still_read(
    slice_s: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A backlog of our rounds' messages dispatched one per turn holds the readers again
    after every dispatch (``hold_reads``): a socket is still read within ``HOLD_MAX_S``,
    never left unread for as long as the backlog lasts -- also what a reader holds
    buffered already (with no time to read on per turn, as on a busy machine)."""
    monkeypatch.setattr(transport_module, "READ_SLICE_S", slice_s)
    seen: list[str] = []

    def classify(topic: str, payload: bytes) -> Verdict:
        seen.append(topic)
        return Verdict(None, reason="junk")

    async def body() -> None:
        _, _, _, broker = await _on_a_socket_pair(classify)

        async def backlog() -> None:  # the receive loop, dispatching without end
            while True:
                hold_reads()
                await asyncio.sleep(0)

        dispatching = asyncio.create_task(backlog())
        await asyncio.sleep(0)
        await _send(broker, b"".join(_packet("lobby/chat", b"x%d" % i) for i in range(20)))
        await eventually(lambda: len(seen) == 20, 10, "the packets read while held")
        dispatching.cancel()

    run(body(), timeout=30)
