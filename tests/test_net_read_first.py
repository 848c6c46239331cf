"""The transport reads a received PUBLISH from its bytes (``decode_publish``), not through
paho's objects (issue 28, the move under a flood): what it hands on is what paho would
have, QoS 1 messages are still acknowledged, and what the first look leaves to paho
(other v5 properties) still arrives, parsed by paho."""

from __future__ import annotations

import asyncio
import socket

import aiomqtt
import paho.mqtt._packet as paho_packet
import pytest
from conftest import eventually, run
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from p2p.net import transport as transport_module
from p2p.net.broker import LocalBroker
from p2p.net.inbound import InboundQueues, Lane, Verdict
from p2p.net.transport import READ_BATCH, Inbound, Transport, decode_publish


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


def _packet(topic: str, payload: bytes) -> bytes:
    """A QoS 0 MQTT v5 PUBLISH packet as a broker sends it."""
    body = _body(topic.encode(), 0, b"", payload)
    assert len(body) < 128 * 128
    length = bytes([len(body)]) if len(body) < 128 else bytes([len(body) & 127 | 128, len(body) >> 7])
    return b"\x30" + length + body


def test_a_turn_reads_on_through_dropped_junk_and_stops_at_a_message_to_handle(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Paho reads one packet per turn of the event loop: a move behind 100 junk messages
    waited 100 turns.  Now one turn reads up to ``READ_BATCH`` packets while the lanes
    drop them, and stops right after one the lanes keep, so it is handled first; and
    when other work of the loop is ready, or its time (``READ_BUDGET_S``) is up, so that
    work is not held up."""
    monkeypatch.setattr(transport_module, "READ_BUDGET_S", 60.0)  # (counts, not speed)

    def classify(topic: str, payload: bytes) -> Verdict:
        return Verdict(Lane.ROUND) if topic == "r/events" else Verdict(None, reason="junk")

    async def body() -> None:
        transport = Transport("mqtt://127.0.0.1:1", inbound=InboundQueues(classify))
        paho = transport._make_client()._client
        ours, broker = socket.socketpair()
        ours.setblocking(False)
        paho._sock = ours
        try:
            junk = [_packet("lobby/chat", b"junk %d" % i) for i in range(100)]
            broker.sendall(b"".join(junk) + _packet("r/events", b"move") + b"".join(junk[:10]))
            stats = transport.stats
            paho.loop_read()  # what aiomqtt's reader calls when the socket is readable
            assert (stats["read_turns"], stats["dropped"], stats["received"]) == (
                1, READ_BATCH, 0
            )
            while not stats["received"]:
                paho.loop_read()
            # 100 junk messages, then the move, in 4 turns; the junk behind it waits
            assert (stats["read_turns"], stats["dropped"], stats["received"]) == (4, 100, 1)
            assert len(transport.inbound) == 1
            paho.loop_read()  # the move not handled yet: one packet a turn
            assert (stats["read_turns"], stats["dropped"]) == (5, 101)
            got = transport.inbound.get_nowait()
            assert got is not None and (got.topic, got.payload) == ("r/events", b"move")
            paho.loop_read()  # the lanes empty again: the rest at once
            assert (stats["read_turns"], stats["dropped"], stats["read_raw"]) == (6, 110, 111)
            broker.sendall(b"".join(junk[:6]))
            asyncio.get_running_loop().call_soon(lambda: None)  # other work is ready
            paho.loop_read()  # so one packet, and the loop goes on
            assert (stats["read_turns"], stats["dropped"]) == (7, 111)
            monkeypatch.setattr(transport_module, "READ_BUDGET_S", 0.0)
            await asyncio.sleep(0)  # (that work done)
            for turn in (8, 9, 10):  # no time left after a packet: one a turn
                paho.loop_read()
                assert (stats["read_turns"], stats["dropped"]) == (turn, turn + 104)
        finally:
            ours.close()
            broker.close()

    run(body())
