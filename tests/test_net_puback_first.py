"""The transport reads a plain PUBACK ("success") from its bytes (``plain_puback``), not
through paho's ``ReasonCode`` and ``Properties`` (issue 28: in one process that read
falls between the receiver's read of a move and its dispatch): each message it
publishes is still taken as delivered exactly once, and any other PUBACK (a reason
code such as "no matching subscribers") is still paho's to read."""

from __future__ import annotations

import asyncio

import paho.mqtt._packet as paho_packet
import pytest
from conftest import eventually, run

from p2p.net.broker import LocalBroker
from p2p.net.transport import Transport, plain_puback


def test_only_a_plain_success_is_read_first() -> None:
    assert plain_puback(b"\x01\x02", True) == 258
    assert plain_puback(b"\x01\x02", False) == 258
    assert plain_puback(b"\x00\x07\x00", True) == 7  # success, written out
    assert plain_puback(b"\x00\x07\x00\x00", True) == 7  # and no properties
    for other in (
        b"\x00\x07\x10",  # no matching subscribers
        b"\x00\x07\x80",  # unspecified error
        b"\x00\x07\x00\x03\x1f\x00\x00",  # success with a reason string
        b"\x00",  # cut short
        b"",
    ):
        assert plain_puback(other, True) is None
    assert plain_puback(b"\x00\x07\x00", False) is None  # 3.1.1 has two bytes exactly


@pytest.mark.parametrize("protocol", ["5", "3.1.1"])
def test_publishes_are_acknowledged_once_each(
    mosquitto: LocalBroker, protocol: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """40 QoS 1 messages to a topic someone reads (a plain success each), then 5 to a
    topic nobody reads (v5: Mosquitto answers "no matching subscribers", paho reads
    that): every future resolves, the window of messages awaiting a PUBACK empties,
    and paho decoded exactly the PUBACKs that were not plain."""
    decoded = 0
    paho_decode = paho_packet.decode_puback

    def counting(*args: object) -> object:
        nonlocal decoded
        decoded += 1
        return paho_decode(*args)  # type: ignore[arg-type]

    async def body() -> None:
        topic = f"ackfirst/{protocol}"
        reader = Transport(mosquitto.url)
        await reader.subscribe(f"{topic}/read", 1)
        await reader.start()
        transport = Transport(mosquitto.url, protocol=protocol)
        await transport.start()
        # (the retained probe of a first connection to the broker deletes its messages
        # behind, to topics nobody reads: done before paho's reads are counted)
        await eventually(
            lambda: not transport._cleanups and not reader._cleanups, 10, "the probes cleaned up"
        )
        monkeypatch.setattr(paho_packet, "decode_puback", counting)
        try:
            read = [transport.publish_nowait(f"{topic}/read", b"m%d" % i, qos=1) for i in range(40)]
            await asyncio.wait_for(asyncio.gather(*read), 20)
            unread = [transport.publish_nowait(f"{topic}/nobody", b"x", qos=1) for _ in range(5)]
            await asyncio.wait_for(asyncio.gather(*unread), 20)
            await eventually(lambda: transport.in_flight == 0, 10, "no message awaits its PUBACK")
            await eventually(lambda: reader.stats["received"] >= 40, 10, "the reader has all 40")
        finally:
            await transport.close()
            await reader.close()
        assert transport.stats["published"] == 45
        if protocol == "5":
            assert transport.stats["acks_read_raw"] == 40
            assert decoded == 5
        else:  # 3.1.1 has no reason codes: every PUBACK is plain
            assert transport.stats["acks_read_raw"] == 45
            assert decoded == 0

    run(body(), timeout=60)
