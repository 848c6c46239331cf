"""The transport reads a received PUBLISH from its bytes (``decode_publish``), not through
paho's objects (issue 28, the move under a flood): what it hands on is what paho would
have, QoS 1 messages are still acknowledged, and what the first look leaves to paho
(other v5 properties) still arrives, parsed by paho."""

from __future__ import annotations

import asyncio

import aiomqtt
import paho.mqtt._packet as paho_packet
import pytest
from conftest import eventually, run
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from p2p.net.broker import LocalBroker
from p2p.net.transport import Inbound, Transport, decode_publish


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
