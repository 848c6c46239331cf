"""What the transport learns about a broker (issue 25): the MQTT version it speaks, to
whom it hands retained messages, and that both are remembered for the next connect.

A broker that closes a v5 CONNECT without a CONNACK (RabbitMQ 3.x does) is played by
``faults.MqttLimits(refuse_v5=True)`` in front of a real Mosquitto.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import run
from faults import MqttLimits

from p2p.net import known
from p2p.net.transport import HANDSHAKE_TIMEOUT_S, Transport


@pytest.fixture(autouse=True)
def fresh_facts() -> Iterator[None]:
    known.forget()
    yield
    known.forget()


def test_a_v5_connect_closed_before_connack_falls_back_to_3_1_1_at_once(broker_url: str) -> None:
    port = int(broker_url.rsplit(":", 1)[1])

    async def body() -> None:
        async with MqttLimits(port, refuse_v5=True) as proxy:
            begin = time.monotonic()
            async with Transport(proxy.url) as transport:
                took = time.monotonic() - begin
                assert transport.protocol_version == "3.1.1"
                assert proxy.v5_connects == 1
            # the fallback follows the close, not the handshake timeout
            assert took < HANDSHAKE_TIMEOUT_S / 2, f"connected after {took:.2f} s"

    run(body(), 30)


def test_a_broker_that_needs_3_1_1_is_remembered_for_the_next_connect(
    broker_url: str, tmp_path: Path
) -> None:
    port = int(broker_url.rsplit(":", 1)[1])
    path = tmp_path / "brokers.json"

    async def body() -> None:
        async with MqttLimits(port, refuse_v5=True) as proxy:
            known.attach(path)
            async with Transport(proxy.url):
                pass
            saved = json.loads(path.read_text())
            assert saved[proxy.url] == {"protocol": "3.1.1", "retained": "wildcard"}
            known.forget()  # a new process: it reads the file
            known.attach(path)
            again = Transport(proxy.url)
            assert again.protocol_version == "3.1.1"  # before it connects
            async with again:
                pass
            assert proxy.v5_connects == 1  # the second process never tried v5

    run(body(), 30)


def test_a_corrupt_facts_file_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "brokers.json"
    for junk in (b"\xff\x00not json", b"[1, 2]", b'{"mqtt://x:1": {"protocol": "9"}}'):
        path.write_bytes(junk)
        known.forget()
        known.attach(path)
        assert known.facts("mqtt://x:1") == {}


def test_mosquitto_hands_retained_messages_to_wildcards(broker_url: str) -> None:
    async def body() -> None:
        async with Transport(broker_url) as transport:
            assert transport.retained_to() == "wildcard"
            assert transport.protocol_version == "5"

    run(body(), 30)


def test_a_connection_asked_to_speak_3_1_1_does_not_mark_the_broker_as_3_1_1(
    broker_url: str,
) -> None:
    # a caller (a test, a bot) that asks for 3.1.1 learns nothing of the broker's version:
    # before, every later v5 transport of the process to that broker spoke 3.1.1
    async def body() -> None:
        async with Transport(broker_url, protocol="3.1.1") as old:
            assert old.protocol_version == "3.1.1"
        assert "protocol" not in known.facts(broker_url)
        async with Transport(broker_url) as new:
            assert new.protocol_version == "5"
        assert known.facts(broker_url)["protocol"] == "5"

    run(body(), timeout=30)
