"""The transport alone against a real Mosquitto: reconnect, outbox, caps, state reports."""

from __future__ import annotations

import asyncio

import pytest
from conftest import eventually, run
from faults import LinkProxy

from p2p.net.broker import LocalBroker, free_port
from p2p.net.transport import (
    PUBLISH_WINDOW,
    ConnectionState,
    Transport,
    WillMessage,
    parse_broker_url,
)


def test_broker_urls() -> None:
    assert parse_broker_url("wss://broker.emqx.io:8084/mqtt") == parse_broker_url(
        "wss://broker.emqx.io:8084/mqtt"
    )
    wss = parse_broker_url("wss://broker.emqx.io:8084/mqtt")
    assert (wss.host, wss.port, wss.path, wss.tls, wss.websockets) == (
        "broker.emqx.io",
        8084,
        "/mqtt",
        True,
        True,
    )
    assert parse_broker_url("ws://example.org").path == "/mqtt"
    assert parse_broker_url("ws://example.org").port == 80
    assert parse_broker_url("mqtts://example.org").port == 8883
    assert parse_broker_url("localhost").port == 1883
    user = parse_broker_url("mqtt://me:secret@host:1999")
    assert (user.username, user.password, user.port) == ("me", "secret", 1999)
    for bad in ("http://x", "mqtt://", "mqtt://host:99999", "mqtt://host:port"):
        with pytest.raises(ValueError, match="bad broker URL"):
            parse_broker_url(bad)


def test_unreachable_broker_is_one_clear_error() -> None:
    async def body() -> None:
        transport = Transport(f"mqtt://127.0.0.1:{free_port()}")
        with pytest.raises(ConnectionError, match="cannot connect to mqtt://127.0.0.1"):
            await transport.start(wait=1.0)

    run(body())


def test_outbox_survives_a_broker_outage_and_subscriptions_come_back(
    private_mosquitto: LocalBroker,
) -> None:
    async def body() -> None:
        states: list[ConnectionState] = []
        announced = 0

        async def announce() -> None:
            nonlocal announced
            announced += 1

        sender = Transport(
            private_mosquitto.url, on_connected=announce, max_backoff=0.5
        )
        sender.on_state(lambda state, detail: states.append(state))
        receiver = Transport(private_mosquitto.url, max_backoff=0.5)
        async with sender, receiver:
            await receiver.subscribe("t/events", qos=1)
            got: list[bytes] = []

            async def collect() -> None:
                async for message in receiver.messages():
                    got.append(message.payload)

            task = asyncio.create_task(collect())
            await sender.publish("t/events", b"before", qos=1, wait=True)
            await eventually(lambda: got == [b"before"], 20, "the first message")
            await asyncio.to_thread(private_mosquitto.stop)
            await eventually(lambda: not sender.connected, 5, "the loss to be noticed")
            for i in range(3):  # published while the broker is down: kept in the outbox
                sender.publish_nowait("t/events", f"during {i}".encode(), qos=1)
            assert sender.outbox_size == 3
            # MQTT delivers only to current subscribers: let the receiver come back first
            sender.interrupt(hold=1.0)
            await asyncio.to_thread(private_mosquitto.restart)
            await eventually(
                lambda: receiver.connected, 10, "the receiver to reconnect"
            )
            assert sender.outbox_size == 3
            await eventually(lambda: sender.connected, 10, "the sender to reconnect")
            await eventually(lambda: len(got) == 4, 10, "the outbox to drain")
            assert got == [b"before", b"during 0", b"during 1", b"during 2"]
            assert states[:3] == [
                ConnectionState.CONNECTED,
                ConnectionState.LOST,
                ConnectionState.RECONNECTED,
            ]
            assert announced == 2, "re-announced after the reconnect"
            task.cancel()

    run(body())


def test_publishes_await_their_pubacks_together_in_order_and_go_again_after_a_cut(
    private_mosquitto: LocalBroker,
) -> None:
    """Several QoS 1 publishes are on their way at once (a link round trip each, one
    after another, cost a round start one round trip per message queued behind another,
    issue 28): up to ``PUBLISH_WINDOW`` of them, delivered in the order published; cut
    before their PUBACKs, they are sent again in that order after the reconnect."""

    async def body() -> None:
        async with LinkProxy(private_mosquitto.port) as proxy:
            sender = Transport(proxy.url, max_backoff=0.5)
            receiver = Transport(private_mosquitto.url)
            async with sender, receiver:
                await receiver.subscribe("t/window/#", qos=1)
                got: list[bytes] = []

                async def collect() -> None:
                    async for message in receiver.messages():
                        got.append(message.payload)

                task = asyncio.create_task(collect())
                proxy.pause()  # nothing reaches the broker, no PUBACK comes back
                sent = [f"{i}".encode() for i in range(PUBLISH_WINDOW + 2)]
                for i, payload in enumerate(sent):  # two topics: one order for both
                    sender.publish_nowait(f"t/window/{i % 2}", payload, qos=1)
                await eventually(
                    lambda: sender.in_flight == PUBLISH_WINDOW, 10, "a window on its way"
                )
                assert sender.outbox_size == len(sent)
                proxy.resume()
                await eventually(lambda: len(got) == len(sent), 10, "every message")
                assert got == sent
                await eventually(lambda: sender.outbox_size == 0, 20, "every PUBACK")

                proxy.pause()
                again = [f"again {i}".encode() for i in range(3)]
                for payload in again:
                    sender.publish_nowait("t/window/0", payload, qos=1)
                await eventually(lambda: sender.in_flight == 3, 10, "three on their way")
                proxy.reset()  # the held bytes never reach the broker
                proxy.resume()
                await eventually(lambda: len(got) == len(sent) + 3, 15, "the three again")
                assert got[len(sent) :] == again
                # the broker's PUBACK to the sender may come after its copy to the receiver
                await eventually(lambda: sender.outbox_size == 0, 10, "the three acknowledged")
                task.cancel()

    run(body())


def test_a_retained_message_waiting_in_the_outbox_gives_way_to_a_newer_one(
    private_mosquitto: LocalBroker,
) -> None:
    """A retained message not yet sent is dropped for a newer one on its topic (the
    broker would keep only the newer; a slow round's store is republished on every
    change); other topics and the message already on its way are untouched."""

    async def body() -> None:
        async with LinkProxy(private_mosquitto.port) as proxy:
            sender = Transport(proxy.url, max_backoff=0.5, publish_window=1)
            receiver = Transport(private_mosquitto.url)
            async with sender, receiver:
                await receiver.subscribe("t/kept/#", qos=1)
                got: list[tuple[str, bytes]] = []

                async def collect() -> None:
                    async for message in receiver.messages():
                        got.append((message.topic, message.payload))

                task = asyncio.create_task(collect())
                proxy.pause()
                sender.publish_nowait("t/kept/store", b"1", qos=1, retain=True)
                await eventually(lambda: sender.in_flight == 1, 10, "the first on its way")
                sender.publish_nowait("t/kept/store", b"2", qos=1, retain=True)
                sender.publish_nowait("t/kept/move", b"m", qos=1)
                superseded = sender.publish_nowait("t/kept/store", b"3", qos=1, retain=True)
                assert not superseded.done()
                sender.publish_nowait("t/kept/store", b"4", qos=1, retain=True)
                assert sender.outbox_size == 3  # "1" on its way, "m", "4"
                assert superseded.done()  # "4" took its place
                proxy.resume()
                await eventually(lambda: len(got) == 3, 10, "three messages")
                assert got == [
                    ("t/kept/store", b"1"),
                    ("t/kept/move", b"m"),
                    ("t/kept/store", b"4"),
                ]
                task.cancel()

    run(body())


def test_caps_and_last_will(mosquitto: LocalBroker) -> None:
    async def body() -> None:
        url = mosquitto.url
        watcher = Transport(url, max_payload=100, inbound_limit=5)
        dying = Transport(url, will=lambda: WillMessage("t/will/dying", b"gone", qos=1))
        async with watcher, dying:
            await watcher.subscribe("t/will/#", qos=1)
            await watcher.subscribe("t/caps", qos=1)
            await dying.publish("t/caps", b"x" * 101, qos=1, wait=True)  # over the cap
            await eventually(
                lambda: watcher.stats["dropped"] == 1, 5, "the oversize drop"
            )
            for i in range(20):  # nobody reads: the bounded queue drops the excess
                await dying.publish("t/caps", bytes([i]), qos=1, wait=True)
            await eventually(
                lambda: watcher.stats["dropped"] >= 1 + 15, 5, "queue overflow drops"
            )
            messages = watcher.messages()
            first = [await messages.__anext__() for _ in range(5)]
            assert [m.payload for m in first] == [bytes([i]) for i in range(5)]
            dying.interrupt(hold=5)  # the broker publishes the Last Will
            will = await asyncio.wait_for(messages.__anext__(), 5)
            assert (will.topic, will.payload) == ("t/will/dying", b"gone")

    run(body())
