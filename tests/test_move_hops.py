"""The hops and the work on a move's path that issue 28 cut, held by behaviour and by
counts, never by timings:

* a move leaves on the socket before ``play()`` returns: the transport writes a publish
  that may go at once inside ``publish_nowait``, not a few turns of the event loop later
  (a listener in a thread of its own receives the bytes while our event loop is blocked,
  so nothing that runs later in the loop could have sent them), and the writer we then
  do not register is never left behind;
* a waiter (``Round.wait_until``) runs in the loop's next turn after a change;
* the PUBACK of a move we read goes out after the move's waiters ran;
* the members' store subscriptions are worked out when the members change, not per move.
"""

from __future__ import annotations

import asyncio
import selectors
import socket
import threading
from typing import Any

import paho.mqtt.client as paho_mqtt
from conftest import Peers, eventually, play_out, run, start_round

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
            await eventually(lambda: bool(rb._waiters), 10, "the waiter waiting")
            changed = True
            await rb.wake_waiters()  # what the round link does after each change
            asyncio.get_running_loop().call_soon(order.append, "next")
            await task
            assert order == ["waiter", "next"]

    run(body())


def test_the_members_stores_are_worked_out_when_the_members_change_not_per_move(
    peers: Peers, monkeypatch: Any
) -> None:
    """After each change of a round its link follows the members' retained stores
    (``StoreLink.refresh``): the subscriptions are worked out again only when the members
    change, not after every move; the stores are still followed (a member's store topic
    is subscribed)."""
    from p2p.peer.edge import Edge

    calls: list[str] = []
    real = Edge.follow_stores

    def counted(self: Edge, key: str, owners: Any) -> None:
        calls.append(key)
        real(self, key, owners)

    monkeypatch.setattr(Edge, "follow_stores", counted)

    async def body() -> None:
        async with peers("alice", "bob") as (alice, bob):
            rounds = await start_round(alice, [bob], "connect4", start=0)
            await play_out(rounds)
            moves = sum(1 for e in rounds[0].log() if e.kind == "move")
            assert moves >= 7
            assert len(calls) <= 4, f"{len(calls)} times for {moves} moves"  # 2 per peer
            store = alice.topics.round_store(rounds[0].machine.key, bob.peer_id).topic
            assert store in alice.edge._stores[rounds[0].machine.key]

    run(body())


def test_a_received_move_is_acknowledged_after_its_waiters_ran(peers: Peers) -> None:
    """The PUBACK of a move we read goes to the broker after the move was applied and
    the round's waiters ran (it used to go out in the turn between them, and sending it
    could cost the waiting player the CPU); it still goes, and no writer stays behind."""
    puback = 0x40

    async def body() -> None:
        async with peers("alice", "bob") as (alice, bob):
            ra, rb = await start_round(alice, [bob], "connect4", start=0)
            client = bob.transport._client
            assert client is not None
            paho = client._client
            queued: list[list[int]] = []
            applied = len(rb.log()) + 1

            async def waiter() -> None:
                await rb.wait_until(lambda r: len(r.log()) >= applied, 10)
                queued.append([packet["command"] & 0xF0 for packet in paho._out_packet])

            task = asyncio.create_task(waiter())
            await eventually(lambda: bool(rb._waiters), 10, "the waiter waiting")
            await ra.play(ra.game.legal_moves()[0])
            await task
            assert puback in queued[0], queued
            await eventually(lambda: not paho._out_packet, 10, "the PUBACK written")
            assert not _writer_registered(bob.transport)

    run(body())
