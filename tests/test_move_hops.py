"""A move leaves on the socket before ``play()`` returns (issue 28): the transport writes
a publish that may go at once inside ``publish_nowait``, not a few turns of the event loop
later.  Held by behaviour, not by timings: a listener in a thread of its own receives
the bytes while our event loop is blocked (so nothing that runs later in the loop could
have sent them), and the writer we then do not register is never left behind."""

from __future__ import annotations

import asyncio
import selectors
import socket
import threading
from typing import Any

import paho.mqtt.client as paho_mqtt
from conftest import Peers, eventually, run, start_round

from p2p.net.broker import LocalBroker
from p2p.net.transport import Transport, _Pacer
from p2p.protocol.sealing import open_round

BLOCK_S = 10.0
"""How long the blocked loop waits for the listener (only a failure waits that long)."""


class Listener:
    """A plain paho client in its own thread (its own network loop): ``got`` is set as
    soon as a message arrives on ``topic``, whatever our event loop does meanwhile."""

    def __init__(self, broker: LocalBroker, topic: str) -> None:
        self.got = threading.Event()
        self.payloads: list[bytes] = []
        subscribed = threading.Event()
        client = paho_mqtt.Client(paho_mqtt.CallbackAPIVersion.VERSION2)

        def on_connect(c: Any, *_: Any) -> None:
            c.subscribe(topic, qos=1)

        def on_subscribe(*_: Any) -> None:
            subscribed.set()

        def on_message(_c: Any, _u: Any, message: Any) -> None:
            self.payloads.append(bytes(message.payload))
            self.got.set()

        client.on_connect = on_connect
        client.on_subscribe = on_subscribe
        client.on_message = on_message
        client.connect("127.0.0.1", broker.port)
        client.loop_start()
        assert subscribed.wait(BLOCK_S), "the listener could not subscribe"
        self.client = client

    def close(self) -> None:
        self.client.loop_stop()
        self.client.disconnect()


def _writer_registered(transport: Transport) -> bool:
    """Whether the event loop watches our MQTT socket for writing."""
    client = transport._client
    assert client is not None
    sock = client._client.socket()
    assert sock is not None
    selector = asyncio.get_running_loop()._selector  # type: ignore[attr-defined]
    try:
        key = selector.get_key(sock.fileno())
    except KeyError:
        return False
    return bool(key.events & selectors.EVENT_WRITE)


def test_a_publish_is_on_the_socket_when_publish_nowait_returns(mosquitto: LocalBroker) -> None:
    listener = Listener(mosquitto, "t/at-once")
    try:
        async def body() -> None:
            async with Transport(mosquitto.url) as sender:
                sender.publish_nowait("t/at-once", b"now", qos=1)
                # the loop is blocked here: only bytes already written can arrive
                assert listener.got.wait(BLOCK_S), "not written inside publish_nowait"
                await eventually(lambda: sender.outbox_size == 0, 10, "the PUBACK")
                assert not _writer_registered(sender)

        run(body())
    finally:
        listener.close()
    assert listener.payloads == [b"now"]


def test_a_move_is_at_the_broker_when_play_returns(peers: Peers, mosquitto: LocalBroker) -> None:
    async def body() -> None:
        async with peers("alice", "bob") as (alice, bob):
            ra, rb = await start_round(alice, [bob], "connect4", start=0)
            # the round's start may have used up the pacer's burst: what is held here is
            # the write at once, not the pacer's tokens (tests/test_broker_limits.py)
            alice.transport._pacer = _Pacer(100, 100.0)
            await eventually(lambda: alice.transport.outbox_size == 0, 10, "a quiet outbox")
            listener = Listener(mosquitto, ra.topic("events"))
            try:
                await ra.play(ra.game.legal_moves()[0])
                # blocked: the sealed move reached the broker before play() returned
                assert listener.got.wait(BLOCK_S), "the move waited for the event loop"
                move = ra.log()[-1]
                assert move.kind == "move"
                opened = [open_round(ra.sealing_key, "events", p) for p in listener.payloads]
                assert move.raw in opened
                await rb.wait_until(lambda r: len(r.log()) == len(ra.log()), 10)
                assert rb.log()[-1].id == ra.log()[-1].id
            finally:
                listener.close()

    run(body())


def test_what_the_socket_does_not_take_at_once_goes_later_and_no_writer_stays(
    mosquitto: LocalBroker,
) -> None:
    """A send buffer far smaller than a window of large messages: the first write is
    partial, aiomqtt's writer sends the rest; our own messages come back meanwhile (paho
    queues a PUBACK for each, through the writer), and once all is done the loop watches
    the socket for writing no more (a writer left with nothing to write would wake the
    loop forever)."""

    async def body() -> None:
        sender = Transport(mosquitto.url, publish_rate=(1000, 1000.0))
        async with sender:
            client = sender._client
            assert client is not None
            sock = client._client.socket()
            assert isinstance(sock, socket.socket)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
            await sender.subscribe("t/partial/#", qos=1)
            got: list[bytes] = []

            async def collect() -> None:
                async for message in sender.messages():
                    got.append(message.payload)

            task = asyncio.create_task(collect())
            sent = [bytes([i]) * 8000 for i in range(40)]
            for i, payload in enumerate(sent):
                sender.publish_nowait(f"t/partial/{i % 3}", payload, qos=1)
            await eventually(lambda: len(got) == len(sent), 20, "every message")
            assert got == sent
            await eventually(lambda: sender.outbox_size == 0, 20, "every PUBACK")
            await eventually(lambda: not client._client.want_write(), 10, "our PUBACKs written")
            assert not _writer_registered(sender)
            assert not client._client._registered_write
            task.cancel()

    run(body())


def test_a_waiter_runs_in_the_loops_next_turn_after_a_change(peers: Peers) -> None:
    """``Round.wait_until`` is woken straight by the change: nothing scheduled after the
    change runs before it (with a task of its own, as ``asyncio.wait_for`` starts one,
    the waiter came a turn later, after whatever the loop had to do meanwhile)."""

    async def body() -> None:
        async with peers("alice", "bob") as (alice, bob):
            ra, rb = await start_round(alice, [bob], "connect4", start=0)
            changed = False
            order: list[str] = []

            async def waiter() -> None:
                await rb.wait_until(lambda r: changed, 10)
                order.append("waiter")

            task = asyncio.create_task(waiter())
            await eventually(lambda: bool(rb._changed._waiters), 10, "the waiter waiting")
            changed = True
            await rb.wake_waiters()  # what the round link does after each change
            asyncio.get_running_loop().call_soon(order.append, "next")
            await task
            assert order == ["waiter", "next"]

    run(body())
