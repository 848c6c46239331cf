"""The only network I/O of ``p2p``: one MQTT connection that survives broker outages.

``Transport`` wraps aiomqtt 2.x (``docs/brokers.md``) and adds what a
long-lived game client needs on top of it:

* **reconnect** -- aiomqtt 2.x has no built-in reconnect: the connection loop re-enters
  ``async with Client`` with exponential backoff and jitter.  Every connection gets a
  new ``Client`` with a new random client id (a reused id kicks the older connection off
  the broker) and a freshly built Last Will (so a peer can bind it to the session);
* **resubscribe and re-announce** -- subscriptions are remembered and replayed on every
  connect, then the ``on_connected`` hook runs (the peer re-publishes presence and asks
  for the round log it may have missed);
* **outbox** -- publishing while disconnected raises in aiomqtt, so ``publish`` only
  enqueues; one sender task drains the queue in order whenever a connection is up and
  keeps a message until the broker took it (QoS 1: until PUBACK).  Events are idempotent
  by id, so a resend after a reconnect is harmless;
* **bounded, prioritised input** -- the socket is read in chunks and each PUBLISH from
  its bytes (``_PacketReader``, ``decode_publish``); payloads above ``max_payload`` bytes
  are dropped with a log line; everything else goes straight from the read callback into
  ``p2p.net.inbound.InboundQueues`` (bounded lanes with budgets: a flood drops its own
  messages, never eats memory and never crowds out a move of our rounds), and once one
  is taken no connection of the loop reads on before its dispatch (``hold_reads``).
  Several transports (one per broker, ``p2p.net.multi``) may share one ``InboundQueues``;
* **connection state** -- ``on_state`` callbacks hear ``connected``, ``lost``,
  ``reconnected`` and ``closed`` so the shell can show them;
* **the broker's size limit** -- a message larger than the broker takes is not sent but
  reported to ``on_refused`` callbacks (``Refused``), and the messages behind it go on.
  The limit comes from the v5 CONNACK (Maximum Packet Size), from ``p2p.net.known``, or
  is learned when the same QoS 1 message was cut off twice before its PUBACK (what
  Mosquitto's ``message_size_limit`` over v5 and ``max_packet_size`` over 3.1.1 do); see
  ``docs/brokers.md``.

MQTT v5 is used by default (message expiry keeps retained presence self-cleaning);
a broker that refuses v5, or does not answer a v5 connect within
``HANDSHAKE_TIMEOUT_S``, is retried with 3.1.1 (``protocol_version`` says which one is in
use): expiry is then simply not sent, and since 3.1.1 has no ``noLocal`` our own
messages come back and are dropped as duplicates by id.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import functools
import logging
import os
import random
import secrets
import socket
import ssl
import string
import sys
import threading
import time
import weakref
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import urlsplit

import aiomqtt
from aiomqtt.exceptions import MqttConnectError
from paho.mqtt.exception import MalformedPacket
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode
from paho.mqtt.subscribeoptions import SubscribeOptions

from p2p.net import known
from p2p.net.face import Broker, tell_state
from p2p.net.inbound import Inbound, InboundQueues, Lane, LaneLimits

__all__ = [
    "DEFAULT_BROKER_URL",
    "DEFAULT_BROKER_URLS",
    "BrokerAddress",
    "ConnectionState",
    "Inbound",
    "Transport",
    "WillMessage",
    "hold_reads",
    "parse_broker_url",
    "run",
    "split_brokers",
]

log = logging.getLogger("p2p.net")

DEFAULT_BROKER_URL = "wss://broker.emqx.io:8084/mqtt"
"""The public EMQX broker, as in the original browser game."""

DEFAULT_BROKER_URLS = (
    DEFAULT_BROKER_URL,
    "wss://broker.hivemq.com:8884/mqtt",
    "wss://test.mosquitto.org:8081/mqtt",
)
"""Well-known public brokers, tried together when no broker is named (``p2p.net.multi``):
websockets over TLS on port 8084/8884/8081, which most networks let through."""


def split_brokers(text: str | Sequence[str]) -> list[str]:
    """Broker URLs from a list, or from one string separated by spaces or commas."""
    items = [text] if isinstance(text, str) else list(text)
    urls: list[str] = []
    for item in items:
        urls += [u for u in item.replace(",", " ").split() if u]
    return list(dict.fromkeys(urls))

HANDSHAKE_TIMEOUT_S = 4.0
"""How long a first MQTT v5 connect waits for its CONNACK before 3.1.1 is tried."""

PUBLISH_BURST = 8
PUBLISH_RATE_PER_S = 9.0
"""The most we publish per broker connection on our own: bursts of ``PUBLISH_BURST``,
then ``PUBLISH_RATE_PER_S`` per second (a token bucket; ``Transport(publish_rate=...)``).
Hosted brokers cut clients over about 10 publishes a second, counted as the packets
arrive: a burst held up on the way arrives packed together with what follows it, so the
burst stays 2 below such a limit's (with a burst of 10 the harness's 10/s proxy cut us
now and then under load).  What goes beyond the burst waits its turn (docs/brokers.md)."""

PUBLISH_WINDOW = 8
"""How many of our QoS 1 publishes may await their PUBACK at once on one connection
(fewer if the broker's v5 CONNACK says ``ReceiveMaximum`` is lower).  One at a time cost
a link round trip for every message queued behind another -- an invitation to the second
guest, the commitment the admin sends with its ``start``, a seal after a resignation
(issue 28, docs/performance.md); MQTT keeps one connection's messages in order anyway."""

PROBE_TIMEOUT_S = 3.0
"""The longest the retained-delivery probe of a first connect takes (``_probe_retained``)."""

CLOSED_BEFORE_CONNACK = "connection closed before CONNACK"
"""The handshake failure when a broker closes the socket instead of answering."""

CUT_WINDOW_S = 1.0
"""A connection lost this soon after a message was sent counts against that message."""

SUSPECT_BYTES = 512
"""Smaller packets are never suspected of a broker's size limit (every broker takes them)."""

MAX_PAYLOAD = 8192 + 512
"""Receive cap in bytes: bigger payloads are dropped before any parsing (an event of at
most 8192 bytes plus the envelope that seals it, ``p2p.protocol.sealing``)."""

READ_CHUNK = 65536
"""Bytes asked of the socket per read (``_PacketReader``): what the broker has queued for
us comes in one system call, where paho asks for every packet three or four times (its
fixed header a byte at a time)."""

READ_SLICE_S = 0.0003
"""How long one connection's turn of the event loop goes on reading packets its lanes
drop (``_PacketReader``).  A packet that is handed on (a move, any message the lanes
take, a PUBACK) ends the turn at once, so its dispatch and the waiters it wakes run
before more of a flood is read; junk alone is read up to this long per turn instead of
one packet per turn (issue 28: a batch of 32 packets per turn, whatever they held, had
put another connection's junk between a move's dispatch and its waiter)."""

HOLD_MAX_S = 0.005
"""The longest the readers of a loop wait in a row for the work of handed-on messages
(``hold_reads``): one move's dispatch and waiters take well under it."""

_CLIENT_ID_ALPHABET = string.ascii_letters + string.digits

NODELAY = (socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
"""Small game messages must not wait for Nagle's algorithm: with it, a PUBACK followed by
a PUBLISH stalls for the peer's delayed ACK (about 40 ms per hop, measured in
``bench/bench_latency.py``)."""


_T = TypeVar("_T")


def _raw_socket(sock: Any) -> socket.socket:
    """A duplicate of the TCP socket under ``sock`` (paho's websocket wrapper included).

    The wrapper has neither ``setsockopt`` nor ``shutdown``; both act on the socket,
    not on the descriptor, so a duplicate descriptor reaches the real connection.
    """
    return socket.socket(fileno=os.dup(sock.fileno()))


def _set_nodelay(sock: Any) -> None:
    """``NODELAY`` on a websocket connection (aiomqtt applies it to plain TCP only)."""
    if sock is None:
        return
    with contextlib.suppress(OSError), _raw_socket(sock) as raw:
        raw.setsockopt(*NODELAY)


def run(main: Coroutine[Any, Any, _T]) -> _T:
    """``asyncio.run`` on an event loop aiomqtt can use on every platform.

    Windows' default Proactor loop has no ``add_reader``, which aiomqtt needs
    (``docs/brokers.md``), so there the selector loop is used.
    """
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
        if sys.version_info >= (3, 12):
            return asyncio.run(main, loop_factory=asyncio.SelectorEventLoop)
        # the policy class exists on Windows only, and mypy checks as on Linux
        asyncio.set_event_loop_policy(asyncio.WindowsSelectorEventLoopPolicy())  # type: ignore[attr-defined]
    return asyncio.run(main)


class ConnectionState(enum.Enum):
    """What the connection is doing; reported through ``Transport.on_state``."""

    CONNECTING = "connecting"
    CONNECTED = "connected"  # the first connection is up
    LOST = "lost"  # an established connection dropped; reconnecting
    RECONNECTED = "reconnected"  # up again after a loss (subscriptions restored)
    CLOSED = "closed"  # closed by us


@dataclass(frozen=True)
class BrokerAddress:
    """A parsed broker URL."""

    scheme: str
    host: str
    port: int
    path: str = ""
    username: str | None = None
    password: str | None = None

    @property
    def tls(self) -> bool:
        return self.scheme in ("mqtts", "wss")

    @property
    def websockets(self) -> bool:
        return self.scheme in ("ws", "wss")

    def __str__(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}{self.path}"


_DEFAULT_PORTS = {"mqtt": 1883, "mqtts": 8883, "ws": 80, "wss": 443}


def parse_broker_url(url: str) -> BrokerAddress:
    """Parse ``mqtt://``, ``mqtts://``, ``ws://`` or ``wss://`` URLs; ``ValueError`` if bad.

    >>> parse_broker_url("wss://broker.emqx.io:8084/mqtt").port
    8084
    >>> parse_broker_url("localhost:1883").scheme
    'mqtt'
    """
    text = url.strip()
    if "://" not in text:
        text = "mqtt://" + text
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as err:
        raise ValueError(f"bad broker URL {url!r}: {err}") from None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        raise ValueError(
            f"bad broker URL {url!r}: scheme must be mqtt, mqtts, ws or wss"
        )
    if not parts.hostname:
        raise ValueError(f"bad broker URL {url!r}: no host name")
    path = parts.path
    if scheme in ("ws", "wss") and not path:
        path = "/mqtt"
    return BrokerAddress(
        scheme=scheme,
        host=parts.hostname,
        port=port or _DEFAULT_PORTS[scheme],
        path=path if scheme in ("ws", "wss") else "",
        username=parts.username,
        password=parts.password,
    )


@dataclass(frozen=True)
class WillMessage:
    """The Last Will the broker publishes for us if the connection dies unannounced."""

    topic: str
    payload: bytes
    qos: int = 0
    retain: bool = False
    expiry: int | None = None  # seconds (MQTT v5 message expiry)


class _Pacer:
    """A token bucket on the monotonic clock: ``take()`` a token now if there is one,
    ``wait()`` until there is; ``held`` counts the publishes that had to wait."""

    def __init__(self, burst: int, per_s: float) -> None:
        self.burst = burst
        self.per_s = per_s
        self.tokens = float(burst)
        self.stamp = time.monotonic()
        self.held = 0

    def take(self) -> bool:
        """Take a token if one is there now (``False``: the publish must wait)."""
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.per_s)
        self.stamp = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False

    async def wait(self) -> None:
        if self.take():
            return
        self.held += 1
        while True:
            await asyncio.sleep((1 - self.tokens) / self.per_s)
            if self.take():
                return


class _Confirmation:
    """What aiomqtt's PUBACK callback sets (``Client._pending_publishes``): a future."""

    __slots__ = ("future",)

    def __init__(self, future: asyncio.Future[None]) -> None:
        self.future = future

    def set(self) -> None:
        if not self.future.done():
            self.future.set_result(None)


@dataclass(frozen=True)
class _Started:
    """A PUBLISH handed to paho (``Transport._start_publish``): the future its PUBACK
    resolves (``None``: QoS 0, written already) and its message id."""

    acked: asyncio.Future[None] | None
    mid: int


@dataclass
class _Outgoing:
    topic: str
    payload: bytes
    qos: int
    retain: bool
    expiry: int | None
    droppable: bool
    done: asyncio.Future[None] = field(repr=False)
    attempts: int = 0
    cuts: int = 0
    """Connections lost right after this message was sent (``CUT_WINDOW_S``)."""
    sending: bool = False
    """Sent and awaiting its PUBACK (``Transport._send_one``)."""


@dataclass(frozen=True)
class Refused:
    """A message the broker does not take: ``size`` bytes as an MQTT packet, over the
    broker's ``limit``; it was not sent (``Transport.on_refused``)."""

    broker: str
    topic: str
    size: int
    limit: int
    learned: bool
    """The limit was learned from cut connections (else the broker or the facts said it)."""


def packet_size(topic: str, payload: bytes, qos: int, v5: bool, expiry: int | None) -> int:
    """The size in bytes of the MQTT PUBLISH packet that carries ``payload``.

    >>> packet_size("a/b", b"x" * 10, 1, False, None)
    19
    >>> packet_size("a/b", b"x" * 200, 1, True, 60)
    216
    """
    body = 2 + len(topic.encode()) + (2 if qos else 0) + len(payload)
    if v5:
        props = 5 if expiry is not None else 0
        body += 1 + props
    header = 1 + next(n for n in (1, 2, 3, 4) if body < 128**n)
    return header + body


StateCallback = Callable[[ConnectionState, str], None]
RefusedCallback = Callable[[Refused], None]


class _SinkQueue(asyncio.Queue["aiomqtt.Message"]):
    """aiomqtt's incoming queue, replaced by a direct hand-over to ``Transport._deliver``.

    aiomqtt puts every message into its own queue and wakes a task per message; under a
    flood that queue overflows first and drops messages blindly.  Handing each message
    over synchronously lets the cheap checks of ``InboundQueues`` decide instead.
    """

    def __init__(self, sink: Callable[[aiomqtt.Message], None], maxsize: int = 0) -> None:
        super().__init__(maxsize=0)
        self._sink = sink

    def put_nowait(self, item: aiomqtt.Message) -> None:
        self._sink(item)


def _random_client_id() -> str:
    """23 characters of ``[0-9a-zA-Z]``: the portable client id every broker accepts."""
    return "p2p" + "".join(secrets.choice(_CLIENT_ID_ALPHABET) for _ in range(20))


def _properties(packet: int) -> Properties:
    """Empty MQTT v5 properties for one packet type."""
    # paho's Properties.__init__ carries no annotations, so strict mypy calls it untyped
    return Properties(packet)  # type: ignore[no-untyped-call]


def _varint(data: bytes | bytearray, pos: int) -> tuple[int, int]:
    """An MQTT variable byte integer at ``pos``: its value and the position after it."""
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7
        if shift > 21:
            raise ValueError("malformed variable byte integer")


_EXPIRY = 0x02
"""The v5 property Message Expiry Interval (a four-byte integer)."""


@dataclass(frozen=True, slots=True)
class RawPublish:
    """A received PUBLISH, read from its bytes (``decode_publish``)."""

    topic: str
    payload: bytes
    qos: int
    retain: bool
    mid: int
    expiry: int | None


def decode_publish(command: int, packet: bytes | bytearray, v5: bool) -> RawPublish | None:
    """A PUBLISH packet's fields from its fixed header byte and its body, without paho's
    objects (``Properties``, ``MQTTMessage``, aiomqtt's ``Message``); ``None`` for what
    this first look leaves to paho: QoS 2, and v5 properties other than one message
    expiry (a topic alias, user properties).  ``ValueError`` if malformed (a topic that is
    not UTF-8 included).

    >>> body = bytes([0, 3]) + b"a/b" + bytes([0, 7]) + bytes([5, 2, 0, 0, 0, 60]) + b"hi"
    >>> decode_publish(0x33, body, True)
    RawPublish(topic='a/b', payload=b'hi', qos=1, retain=True, mid=7, expiry=60)
    >>> decode_publish(0x30, bytes([0, 1]) + b"t" + bytes([0]) + b"x", True).payload
    b'x'
    >>> decode_publish(0x30, bytes([0, 1]) + b"t" + b"x", False).qos
    0
    >>> decode_publish(0x34, bytes([0, 1]) + b"t" + bytes([0, 1, 0]), True) is None  # QoS 2
    True
    """
    qos = (command >> 1) & 3
    if qos > 1:
        return None
    if len(packet) < 2:
        raise ValueError("PUBLISH shorter than its topic length")
    end = 2 + ((packet[0] << 8) | packet[1])
    if end > len(packet):
        raise ValueError("PUBLISH shorter than its topic")
    try:
        topic = bytes(packet[2:end]).decode()
    except UnicodeDecodeError:
        raise ValueError("topic is not UTF-8") from None
    mid = 0
    if qos:
        if end + 2 > len(packet):
            raise ValueError("PUBLISH without its message id")
        mid = (packet[end] << 8) | packet[end + 1]
        end += 2
    expiry = None
    if v5:
        if end >= len(packet):
            raise ValueError("PUBLISH without its properties")
        size, end = _varint(packet, end)
        if size:
            if size != 5 or end + size > len(packet) or packet[end] != _EXPIRY:
                return None  # other properties: paho reads them
            expiry = int.from_bytes(packet[end + 1 : end + 5], "big")
            end += size
    return RawPublish(topic, bytes(packet[end:]), qos, bool(command & 1), mid, expiry)


class _Hold:
    """The readers of one event loop that wait for the turn after a handed-on message
    (``hold_reads``): all connections of a process share the loop, so one connection's
    junk read between a move's dispatch and the waiter it wakes delays that move."""

    __slots__ = ("release_at", "since", "waiting")

    def __init__(self) -> None:
        self.release_at: asyncio.Handle | None = None
        self.since = 0.0
        """When the readers were first held since one of them last read (0: not held)."""
        self.waiting: list[_PacketReader] = []

    def hold(self, loop: asyncio.AbstractEventLoop) -> None:
        if self.release_at is not None:
            self.release_at.cancel()
        if not self.since:
            self.since = time.monotonic()
        self.release_at = loop.call_soon(self.release)

    def holding(self) -> bool:
        """Whether readers wait now: held, and not for longer than ``HOLD_MAX_S`` in a
        row (a backlog of our rounds' messages dispatched one per turn, each holding
        the readers again, never keeps a socket unread)."""
        return self.release_at is not None and time.monotonic() - self.since < HOLD_MAX_S

    def release(self) -> None:
        self.release_at = None
        waiting, self.waiting = self.waiting, []
        for reader in waiting:
            reader.resume()


_HOLDS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Hold] = weakref.WeakKeyDictionary()


def _hold_of(loop: asyncio.AbstractEventLoop) -> _Hold:
    hold = _HOLDS.get(loop)
    if hold is None:
        hold = _HOLDS[loop] = _Hold()
    return hold


def hold_reads() -> None:
    """No connection of the running event loop reads from its socket until the loop's next
    turn has run what is scheduled now: called when a message was handed on (the reader)
    and after one was dispatched (the peer's receive loop), so the dispatch of a move and
    the waiters it wakes run before more of a flood is read, on any connection."""
    loop = asyncio.get_running_loop()
    _hold_of(loop).hold(loop)


def _fresh_in_packet() -> Any:  # (paho's ``_InPacket``, a private TypedDict)
    """Paho's state of a packet not yet begun (as its ``_packet_read`` leaves it)."""
    return {
        "command": 0,
        "have_remaining": 0,
        "remaining_count": [],
        "remaining_mult": 1,
        "remaining_length": 0,
        "packet": bytearray(b""),
        "to_process": 0,
        "pos": 0,
    }


class _PacketReader:
    """Reads one connection's socket in chunks and splits them into packets, in front
    of paho (issue 28: the move under a flood).

    Paho asks the socket for each packet three or four times (the fixed header a byte at
    a time) and reads one packet per readable event.  Here one ``recv`` takes up to
    ``READ_CHUNK`` bytes; each complete packet in them is cut out by its length and handed
    to ``handle`` (a PUBLISH read from its bytes) or to paho's own handler for its type
    (the same bytes paho would have read: PUBACK, SUBACK, CONNACK, PINGRESP, DISCONNECT,
    and what ``decode_publish`` leaves to paho).  A packet cut off at the end of a chunk
    is finished by paho's own reader, which then reads from what is left here first
    (``recv``).  ``loop_read`` reads on while the lanes drop what it reads, for at most
    ``READ_SLICE_S``; what stays buffered is read in the loop's next turn (the socket no
    longer says it is readable for it)."""

    __slots__ = (
        "_client", "_handle", "_hold", "_paho", "_paho_read", "_sock_recv", "buf", "calm",
        "pos", "resuming", "stats", "urgent",
    )

    def __init__(
        self, client: aiomqtt.Client, handle: Callable[[int, bytes], Any], stats: dict[str, int]
    ) -> None:
        self._client = client
        self._paho = paho = client._client
        self._handle = handle
        self._sock_recv = paho._sock_recv
        self._paho_read = paho._packet_read
        self.buf = b""
        self.pos = 0
        self.calm = True
        """Every packet of this turn so far was a PUBLISH the lanes dropped: cleared by
        every other packet (the ``publish`` hook of ``Transport._read_publishes`` for a PUBLISH)."""
        self.urgent = False
        """A message of our rounds or our inbox was handed on this turn: every connection
        of the loop waits for the next turn (``hold_reads``)."""
        self.resuming: asyncio.Handle | None = None
        """``resume``, scheduled for the loop's next turn (what is still buffered)."""
        self._hold = _hold_of(asyncio.get_running_loop())
        self.stats = stats
        # paho's own methods, replaced on this one client (mypy forbids assigning them)
        paho._sock_recv = self.recv  # type: ignore[method-assign]
        # (the same: paho's method, replaced on this client)
        paho._packet_read = self.read_packet  # type: ignore[method-assign]

    def recv(self, bufsize: int) -> bytes:
        """Paho's ``_sock_recv``: from the chunk read already, else a new chunk."""
        if self.pos >= len(self.buf):
            data = self._sock_recv(READ_CHUNK)
            self.stats["recv_calls"] += 1
            if not data:
                return data
            self.buf, self.pos = data, 0
        start = self.pos
        self.pos = min(start + bufsize, len(self.buf))
        return self.buf[start : self.pos]

    def read_packet(self) -> Any:
        """Paho's ``_packet_read``: the next whole packet from the chunk, else paho's own
        reader (a packet begun or cut off, an empty chunk, a closed socket)."""
        paho = self._paho
        if paho._in_packet["command"] == 0:
            buf, pos = self.buf, self.pos
            if pos >= len(buf):
                try:
                    buf = self._sock_recv(READ_CHUNK)
                except BlockingIOError:
                    return aiomqtt.client.mqtt.MQTT_ERR_AGAIN
                except Exception:  # noqa: BLE001 - paho's reader says what went wrong
                    self.calm = False
                    return self._paho_read()
                self.stats["recv_calls"] += 1
                if not buf:
                    return aiomqtt.client.mqtt.MQTT_ERR_CONN_LOST
                self.buf = buf
                self.pos = pos = 0
            end = len(buf)
            at = pos + 1
            length = shift = 0
            while at < end and shift <= 21:
                byte = buf[at]
                at += 1
                length |= (byte & 0x7F) << shift
                if byte < 0x80:
                    if at + length <= end:  # a whole packet: no paho state to keep
                        self.pos = at + length
                        paho._last_bytes_received = time.monotonic()
                        return self._whole(buf[pos], buf[at : at + length])
                    break
                shift += 7
        self.calm = False  # (a packet paho finishes: whatever it is, the turn ends)
        return self._paho_read()

    def _whole(self, command: int, body: bytes) -> Any:
        if command & 0xF0 == 0x30:  # PUBLISH
            done = self._handle(command, body)
            if done is not None:
                return done
        self.calm = False
        paho = self._paho
        packet = _fresh_in_packet()
        packet.update(command=command, have_remaining=1, remaining_length=len(body))
        packet["packet"] = bytearray(body)
        paho._in_packet = packet
        try:
            return paho._packet_handle()
        except MalformedPacket as exc:
            log.debug("received a malformed packet: %s", exc)
            return aiomqtt.client.mqtt.MQTT_ERR_PROTOCOL
        finally:
            paho._in_packet = _fresh_in_packet()

    def loop_read(self, read: Callable[[int], Any], max_packets: int) -> Any:
        """Paho's ``loop_read`` (``read``), then on while the lanes drop what is read, for
        at most ``READ_SLICE_S``; the rest in the loop's next turn.  A message handed on
        ends the turn; after one of our rounds or our inbox (here or on another connection
        of this loop, ``hold_reads``) nothing is read until the loop's next turn has run
        what that message woke."""
        hold = self._hold
        if hold.release_at is not None and hold.holding():
            if self not in hold.waiting:
                hold.waiting.append(self)
            if self.pos < len(self.buf) and self.resuming is None:
                # asked again next turn: the hold may be renewed until ``HOLD_MAX_S``
                self.resuming = asyncio.get_running_loop().call_soon(self.resume)
            return aiomqtt.client.mqtt.MQTT_ERR_SUCCESS
        hold.since = 0.0
        self.calm = True
        rc = read(max_packets)
        if self.calm and self.pos < len(self.buf):
            started = time.perf_counter()
            while (
                self.calm
                and not rc
                and self.pos < len(self.buf)
                and time.perf_counter() - started < READ_SLICE_S
            ):
                rc = read(1)
        if rc:
            return rc
        if self.urgent:  # a message of our rounds or our inbox: every connection waits
            self.urgent = False
            hold.hold(asyncio.get_running_loop())
            if self.pos < len(self.buf):
                hold.waiting.append(self)
        elif self.pos < len(self.buf) and self.resuming is None:
            self.resuming = asyncio.get_running_loop().call_soon(self.resume)
        return rc

    def resume(self) -> None:
        """Read what stays buffered, as aiomqtt's reader does when the socket is readable
        (the socket no longer says so for it)."""
        if self.resuming is not None:
            self.resuming.cancel()
            self.resuming = None
        client, paho = self._client, self._paho
        if paho._sock is None:
            return
        try:  # (what is buffered, else the socket: a held reader may have left it unread)
            paho.loop_read()
        except Exception as exc:  # noqa: BLE001 - the connection broke: end it (as aiomqtt)
            if not client._disconnected.done():
                client._disconnected.set_exception(exc)


def plain_puback(packet: bytes | bytearray, v5: bool) -> int | None:
    """The message id of a PUBACK that says only "success" (no reason string, no user
    properties), read from its body; ``None`` for anything else (paho reads it).

    >>> plain_puback(bytes([1, 2]), True), plain_puback(bytes([0, 7, 0, 0]), True)
    (258, 7)
    >>> plain_puback(bytes([0, 7, 0x10]), True) is None  # "no matching subscribers"
    True
    >>> plain_puback(bytes([0, 7, 0]), False) is None  # 3.1.1: exactly two bytes
    True
    """
    size = len(packet)
    if size == 2 or v5 and (size == 3 and packet[2] == 0 or size == 4 and packet[2:] == b"\0\0"):
        return (packet[0] << 8) | packet[1]
    return None


class Transport(Broker):
    """One resilient MQTT connection: subscribe, publish through an outbox, receive.

    Typical use (the peer does exactly this)::

        async with Transport(url, on_connected=announce) as transport:
            await transport.subscribe("ns/lobby/chat")
            await transport.publish("ns/lobby/chat", b"...")
            async for message in transport.messages():
                ...

    ``publish`` never raises for a lost connection: the message waits in the outbox.
    ``tls_context`` (``mqtts://``, ``wss://``) replaces the system's default context,
    e.g. to trust a private CA.
    """

    def __init__(
        self,
        url: str,
        *,
        on_connected: Callable[[], Awaitable[None]] | None = None,
        will: Callable[[], WillMessage | None] | None = None,
        max_payload: int = MAX_PAYLOAD,
        inbound_limit: int = 1000,
        outbox_limit: int = 1000,
        keepalive: int = 30,
        min_backoff: float = 0.1,
        max_backoff: float = 10.0,
        protocol: str = "5",
        tls_context: ssl.SSLContext | None = None,
        inbound: InboundQueues | None = None,
        publish_rate: tuple[int, float] = (PUBLISH_BURST, PUBLISH_RATE_PER_S),
        publish_window: int = PUBLISH_WINDOW,
    ) -> None:
        self.address = parse_broker_url(url)
        self._address_text = str(self.address)
        self._pacer = _Pacer(*publish_rate)
        self._window = max(1, publish_window)
        self._connack_receive_max: int | None = None
        self._sending: set[asyncio.Task[None]] = set()
        """One task per publish awaiting its PUBACK (at most the window's)."""
        self.max_qos = 2
        """The highest QoS the broker takes (its v5 CONNACK may say less): publishes and
        subscriptions above it are sent at it instead (a broker may cut a client that
        exceeds it)."""
        self._tls_context = tls_context
        self._on_connected = on_connected
        self._will = will
        self.max_payload = max_payload
        self._keepalive = keepalive
        self._min_backoff = min_backoff
        self._max_backoff = max_backoff
        learned = known.facts(str(self.address))
        self._v5 = protocol == "5" and learned.get("protocol") != "3.1.1"
        self._asked_v5 = protocol == "5"
        """Whether v5 was ours to try: a connection the caller asked to speak 3.1.1 says
        nothing of what the broker speaks, so it is not noted in ``p2p.net.known``."""
        self.retained_delivery: str | None = learned.get("retained")
        """To whom the broker hands retained messages (``p2p.net.known.RETAINED``),
        ``None`` until probed (once per broker: ``_probe_retained``)."""
        self._connack_retain: int | None = None
        self._connack_max: int | None = None
        learned_max = learned.get("max_packet", "")
        self._learned_max: int | None = int(learned_max) if learned_max.isdigit() else None
        self._unacked_large: list[tuple[_Outgoing, float, int]] = []
        """Large QoS 1 messages sent and not yet acknowledged, in the order sent (with when
        and their size): the first is the suspect of a cut (``_cut_after_send``)."""
        self._refused_callbacks: list[RefusedCallback] = []
        self._probe: dict[str, asyncio.Future[None]] = {}
        self._probe_cuts = 0
        self._probe_root = "\0"  # (no topic starts with it)
        self._cleanups: set[asyncio.Task[None]] = set()
        self._probing_v5 = self._v5  # v5 not confirmed by a broker yet
        self._v5_fallback = False  # on 3.1.1 because a v5 connect went unanswered
        self._subscriptions: dict[str, tuple[int, bool, bool]] = {}
        self._own_inbound = inbound is None
        self.inbound = (
            inbound
            if inbound is not None
            else InboundQueues(
                None, {Lane.ROUND: LaneLimits(inbound_limit, None)}, dedupe_window=0
            )
        )
        self._outbox: deque[_Outgoing] = deque()
        self._writing = False
        """``_start_publish`` writes the packet paho is queueing itself (no writer)."""
        self._adding = 0
        """Writers asked for from paho's connect thread, not yet added (``_watch_writes``)."""
        self._delivering = False
        """Inside paho's read callback (``_deliver``): nothing is written from there."""
        self._outbox_limit = outbox_limit
        self._outbox_wakeup = asyncio.Event()
        self._up = asyncio.Event()
        self._client: aiomqtt.Client | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._closing = False
        self._ever_connected = False
        self.state = ConnectionState.CONNECTING
        self._state_callbacks: list[StateCallback] = []
        self._last_error = "no answer"
        self._hold_until = 0.0
        self._stats = {
            "published": 0, "published_bytes": 0, "largest_published": 0, "received": 0,
            "dropped": 0, "read_raw": 0, "read_by_paho": 0, "recv_calls": 0, "acks_read_raw": 0,
        }

    # -- lifecycle ---------------------------------------------------------------------

    def on_state(self, callback: StateCallback) -> None:
        """Call ``callback(state, detail)`` on every connection state change."""
        self._state_callbacks.append(callback)

    def on_refused(self, callback: RefusedCallback) -> None:
        """Call ``callback(refused)`` for every message too large for the broker."""
        self._refused_callbacks.append(callback)

    @property
    def max_packet(self) -> int | None:
        """The largest MQTT packet the broker takes, in bytes, if known: from its v5
        CONNACK, or learned (``p2p.net.known``); ``None`` while unknown."""
        found = [n for n in (self._connack_max, self._learned_max) if n]
        return min(found) if found else None

    @property
    def stats(self) -> dict[str, int]:
        """Counters: published, published_bytes, received, dropped; and
        largest_published (bytes of the largest PUBLISH packet sent); paced (publishes
        the pacer held back for a token, ``PUBLISH_RATE_PER_S``); read_raw and
        read_by_paho (received PUBLISH packets read from their bytes, ``decode_publish``,
        and those left to paho's own parse); acks_read_raw (plain PUBACKs read from
        their bytes, ``plain_puback``)."""
        self._stats["paced"] = self._pacer.held
        return self._stats

    @property
    def connected(self) -> bool:
        return self._up.is_set()

    @property
    def protocol_version(self) -> str:
        """``"5"`` or ``"3.1.1"``: what the current (or next) connection speaks."""
        return "5" if self._v5 else "3.1.1"

    def brokers(self) -> list[tuple[str, bool]]:
        """This broker's URL and whether it is connected now (``Broker``'s face)."""
        return [(str(self.address), self.connected)]

    def retained_to(self) -> str | None:
        """To whom this broker hands retained messages (probed on the first connect)."""
        return self.retained_delivery

    def is_reconnect(self) -> bool:
        """True while the connection that is (or was last) up is not the first one."""
        return self.state is ConnectionState.RECONNECTED

    async def start(self, wait: float | None = 10.0) -> None:
        """Start the connection loop; wait up to ``wait`` seconds for the first connect.

        Raises ``ConnectionError`` with a one-line reason if no connection came up in
        time (the loop is stopped again, nothing keeps running).
        """
        if self._tasks:
            return
        self._tasks = [
            asyncio.create_task(self._connection_loop(), name="p2p-mqtt-connection"),
            asyncio.create_task(self._sender_loop(), name="p2p-mqtt-sender"),
        ]
        if wait is None:
            return
        try:
            await asyncio.wait_for(self._up.wait(), wait)
        except TimeoutError:
            reason = self._last_error
            await self.close()
            raise ConnectionError(
                f"cannot connect to {self.address}: {reason}"
            ) from None

    async def close(self, flush: float = 2.0) -> None:
        """Send what is still in the outbox (up to ``flush`` seconds), then disconnect."""
        if self._closing:
            return
        if self._outbox and self._up.is_set() and flush > 0:
            pending = [item.done for item in self._outbox]
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(
                    asyncio.gather(*pending, return_exceptions=True), flush
                )
        self._closing = True
        for task in [*self._tasks, *self._cleanups, *self._sending]:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks = []
        for item in self._outbox:
            if not item.done.done():
                item.done.cancel()
        self._up.clear()
        if self._own_inbound:
            self.inbound.close()  # ends messages()
        self._set_state(ConnectionState.CLOSED, "")

    def interrupt(self, hold: float = 0.0) -> None:
        """Cut the current connection abruptly, as a network failure would.

        The broker sees no DISCONNECT (so it publishes our Last Will) and the loop
        reconnects, after ``hold`` seconds at the earliest (an outage that lasts).
        Used by tests and the demo.
        """
        self._hold_until = time.monotonic() + hold
        client = self._client
        if client is None:
            return
        sock = client._client.socket()
        if sock is not None:
            with contextlib.suppress(OSError), _raw_socket(sock) as raw:
                raw.shutdown(socket.SHUT_RDWR)

    # -- subscriptions -----------------------------------------------------------------

    async def subscribe(
        self,
        topic: str,
        qos: int = 1,
        *,
        retained: bool = False,
        no_local: bool = False,
    ) -> None:
        """Subscribe now (if connected) and after every reconnect.

        ``retained=False`` asks a v5 broker not to send retained messages on this topic
        (nothing retained is expected there, so a planted one is never delivered);
        ``no_local=True`` asks it not to echo our own publishes back (v5 only; over 3.1.1
        the echo arrives and is dropped as a duplicate by id).
        """
        self._subscriptions[topic] = (qos, retained, no_local)
        client = self._client
        if client is not None and self._up.is_set():
            try:
                await self._subscribe_one(client, topic, qos, retained, no_local)
            except aiomqtt.MqttError as err:
                log.info(
                    "subscribe %s failed (%s); retried after reconnect", topic, err
                )

    async def unsubscribe(self, topic: str) -> None:
        """Forget a subscription."""
        if self._subscriptions.pop(topic, None) is None:
            return
        client = self._client
        if client is not None and self._up.is_set():
            with contextlib.suppress(aiomqtt.MqttError):
                await client.unsubscribe(topic)

    async def _subscribe_one(
        self,
        client: aiomqtt.Client,
        topic: str,
        qos: int,
        retained: bool,
        no_local: bool,
    ) -> None:
        qos = min(qos, self.max_qos)
        if self._v5:
            options = SubscribeOptions(
                qos=qos, noLocal=no_local, retainHandling=0 if retained else 2
            )
            await client.subscribe(topic, options=options)
        else:
            await client.subscribe(topic, qos=qos)

    # -- publishing --------------------------------------------------------------------

    def publish_nowait(
        self,
        topic: str,
        payload: bytes,
        *,
        qos: int = 0,
        retain: bool = False,
        expiry: int | None = None,
        droppable: bool = False,
    ) -> asyncio.Future[None]:
        """Put a message in the outbox (``Broker.publish_nowait``)."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if self._closing:
            done.cancel()
            return done
        if droppable and not self._up.is_set():
            done.set_result(None)
            return done
        if retain:
            # a retained message still waiting for its turn is replaced by a newer one on
            # its topic: the broker would keep only the newer, and every subscriber is
            # given the newer too (a slow round's store republished on every change, a
            # presence) -- under the publish pacer, stale copies held the moves back
            stale_ones = [
                m
                for m in self._outbox
                if m.retain and m.topic == topic and not m.sending and not m.cuts
            ]  # (a suspect of a size limit keeps its place: ``_cut_after_send``)
            for stale in stale_ones:
                self._outbox.remove(stale)
                if not stale.done.done():
                    stale.done.set_result(None)  # superseded: the broker gets the newer
        if len(self._outbox) >= self._outbox_limit:
            victim = next(
                (m for m in self._outbox if m.droppable or m.qos == 0), self._outbox[0]
            )
            self._outbox.remove(victim)
            victim.done.cancel()
            log.warning("outbox full: dropped a message for %s", victim.topic)
        item = _Outgoing(topic, payload, qos, retain, expiry, droppable, done)
        self._outbox.append(item)
        if not self._send_now(item):
            self._outbox_wakeup.set()  # the sender loop sends it when it may go
        return done

    @property
    def outbox_size(self) -> int:
        return len(self._outbox)

    @property
    def in_flight(self) -> int:
        """Publishes sent and awaiting their PUBACK (at most ``PUBLISH_WINDOW``)."""
        return sum(1 for m in self._outbox if m.sending)

    def _next_to_send(self) -> _Outgoing | None:
        """The first message of the outbox not yet sent, if it may go now.

        Up to the window's worth await their PUBACKs at once (``PUBLISH_WINDOW``); a
        message suspected once of a broker's unannounced size limit goes alone, so that a
        second cut right after it blames it and nothing else (``_cut_after_send``)."""
        window = self._window
        if self._connack_receive_max:
            window = min(window, self._connack_receive_max)
        busy = self.in_flight
        if busy >= window:
            return None
        item = next((m for m in self._outbox if not m.sending), None)
        if item is None or not busy:
            return item
        if item.cuts or any(m.cuts for m in self._outbox if m.sending):
            return None  # a suspect goes alone
        return item

    def _send_now(self, item: _Outgoing) -> bool:
        """Send ``item`` at once, inside ``publish_nowait``, if it may go now: connected,
        nothing unsent ahead of it, room in the window, a token of the pacer, not over
        the broker's size limit.  A move is then on the socket before ``play()`` returns,
        not a few turns of the event loop later (issue 28); anything else is left to the
        sender loop, which keeps the order."""
        client = self._client
        if (
            client is None
            or self._delivering
            or not self._up.is_set()
            or self._next_to_send() is not item
        ):
            return False
        qos, properties, size = self._packet(item)
        limit = self.max_packet
        if limit is not None and size > limit:
            return False  # the sender loop refuses it and says so
        if not self._pacer.take():
            return False
        self._launch(client, item, qos, properties, size)
        return True

    def _packet(self, item: _Outgoing) -> tuple[int, Properties | None, int]:
        """The QoS, the v5 properties and the packet size ``item`` is sent with."""
        properties = None
        if self._v5 and item.expiry is not None:
            properties = _properties(PacketTypes.PUBLISH)
            properties.MessageExpiryInterval = item.expiry
        qos = min(item.qos, self.max_qos)
        size = packet_size(
            item.topic, item.payload, qos, self._v5, item.expiry if self._v5 else None
        )
        return qos, properties, size

    async def _sender_loop(self) -> None:
        while True:
            item = self._next_to_send()
            if item is None:
                self._outbox_wakeup.clear()
                await self._outbox_wakeup.wait()
                continue
            await self._up.wait()
            client = self._client
            if client is None:
                await asyncio.sleep(0.01)
                continue
            qos, properties, size = self._packet(item)
            limit = self.max_packet
            if limit is not None and size > limit:
                self._refuse(item, size, limit)
                continue
            await self._pacer.wait()
            if client is not self._client or self._next_to_send() is not item:
                continue  # the connection changed, or the outbox did, while we waited
            self._launch(client, item, qos, properties, size)

    def _launch(
        self,
        client: aiomqtt.Client,
        item: _Outgoing,
        qos: int,
        properties: Properties | None,
        size: int,
    ) -> None:
        """Hand ``item`` to the connection now and await its PUBACK in a task."""
        if size > SUSPECT_BYTES and qos:
            self._unacked_large.append((item, time.monotonic(), size))
        item.sending = True
        try:
            started: _Started | BaseException = self._start_publish(
                client,
                item.topic,
                item.payload,
                qos,
                # a broker without retained messages may cut a client that sends one
                item.retain and self.retained_delivery != "none",
                properties,
            )
        except (aiomqtt.MqttError, ValueError) as err:
            started = err  # raised where the PUBACK is awaited (``_send_one``)
        task = asyncio.get_running_loop().create_task(
            self._send_one(client, item, qos, properties, size, started)
        )
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)

    def _start_publish(
        self,
        client: aiomqtt.Client,
        topic: str,
        payload: bytes,
        qos: int,
        retain: bool,
        properties: Properties | None,
    ) -> _Started:
        """Give the PUBLISH to paho and write it to the socket now; what to await.

        aiomqtt's own ``publish`` is a coroutine (a task must start first), and paho then
        asks the event loop for a writer on the socket and writes when the selector next
        says it is writable: three turns of the loop before the bytes leave.  Here the
        packet is written at once, with whatever paho had queued before it; what the
        socket does not take at once goes through the writer as before.  Paho is told
        while it queues the packet that no writer need be registered (``_writing``,
        ``_watch_writes``), so none is left behind with nothing to write (a writer the
        selector would wake forever); a writer registered already is removed by paho
        once all is written.
        """
        paho = client._client
        registered = paho._registered_write
        if self._adding:  # a writer on its way from paho's connect thread: it writes
            return self._published(client, paho.publish(topic, payload, qos, retain, properties))
        self._writing = True
        try:
            info = paho.publish(topic, payload, qos, retain, properties)
        finally:
            self._writing = False
        paho._registered_write = registered  # (as it was: the hook registered nothing)
        if paho.want_write():
            try:
                paho.loop_write()  # registers the writer for what is left, if anything
            except Exception as exc:  # noqa: BLE001 - as the writer does
                if not client._disconnected.done():
                    client._disconnected.set_exception(exc)
        return self._published(client, info)

    def _published(self, client: aiomqtt.Client, info: Any) -> _Started:
        """What to await for the PUBLISH paho has taken (``info``: its message info)."""
        if info.rc != aiomqtt.client.mqtt.MQTT_ERR_SUCCESS:
            raise aiomqtt.MqttCodeError(info.rc, "Could not publish message")
        if info.is_published():
            return _Started(None, info.mid)
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        # aiomqtt's PUBACK callback only calls ``.set()`` on what it finds there
        client._pending_publishes[info.mid] = _Confirmation(future)  # type: ignore[assignment]
        return _Started(future, info.mid)

    async def _send_one(
        self,
        client: aiomqtt.Client,
        item: _Outgoing,
        qos: int,
        properties: Properties | None,
        size: int,
        started: _Started | BaseException | None = None,
    ) -> None:
        """Await ``item``'s PUBACK (sent already if ``started``); taken off the outbox once
        the broker has it, put back in line (in its place) if the connection fails first."""
        try:
            if isinstance(started, BaseException):
                raise started
            await self._publish_while_up(
                client,
                item.topic,
                item.payload,
                qos=qos,
                retain=item.retain and self.retained_delivery != "none",
                properties=properties,
                started=started,
            )
        except aiomqtt.MqttError as err:
            item.attempts += 1
            if item.attempts >= 20:
                self._pop(item)
                item.done.cancel()
                log.warning(
                    "gave up publishing to %s after %d attempts: %s",
                    item.topic,
                    item.attempts,
                    err,
                )
            else:
                # Most likely the connection is going down: wait for the next one.
                await asyncio.sleep(0.05)
            return
        finally:
            item.sending = False
            self._outbox_wakeup.set()
        self._unacked_large = [s for s in self._unacked_large if s[0] is not item]  # taken
        self._pop(item)
        self.stats["published"] += 1
        self.stats["published_bytes"] += len(item.payload)
        self.stats["largest_published"] = max(self.stats["largest_published"], size)
        if not item.done.done():
            item.done.set_result(None)

    async def _publish_while_up(
        self,
        client: aiomqtt.Client,
        topic: str,
        payload: bytes,
        *,
        qos: int,
        retain: bool,
        properties: Properties | None,
        started: _Started | None = None,
    ) -> None:
        """Publish (unless ``started`` already) and await the PUBACK; failed at once when
        the connection drops (aiomqtt would wait out its timeout for a PUBACK that can no
        longer come), and after the client's timeout without one."""
        if started is None:
            started = self._start_publish(client, topic, payload, qos, retain, properties)
        if started.acked is None:
            return  # (QoS 0, written)
        lost = client._disconnected
        try:
            await asyncio.wait(
                [started.acked, lost], timeout=client.timeout, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            client._pending_publishes.pop(started.mid, None)
        if started.acked.done():
            return
        started.acked.cancel()
        if lost.done():
            raise aiomqtt.MqttError("connection lost while publishing")
        raise aiomqtt.MqttError("Operation timed out")

    def _refuse(self, item: _Outgoing, size: int, limit: int) -> None:
        """Do not send ``item`` (too large for the broker); tell who listens."""
        self._pop(item)
        if not item.done.done():
            item.done.cancel()
        learned = self._connack_max is None or limit < self._connack_max
        log.warning(
            "not sent to %s: %d-byte message on %s, over the broker's %d-byte limit%s",
            self.address, size, item.topic, limit, " (learned)" if learned else "",
        )
        refused = Refused(str(self.address), item.topic, size, limit, learned)
        for callback in list(self._refused_callbacks):
            try:
                callback(refused)
            except Exception:
                log.exception("refused-message listener failed")

    def _cut_after_send(self) -> None:
        """The connection was lost: if a large QoS 1 message was sent just before and
        never acknowledged, suspect it (the first such, if several were on their way:
        the broker takes one connection's messages in order).

        Brokers with a size limit they do not announce cut the client right after a
        message over it, with no PUBACK (Mosquitto's ``max_packet_size`` over 3.1.1, its
        ``message_size_limit`` over v5).  The suspect is sent first after the reconnect;
        cut again before its PUBACK, its size is learned as over the limit (kept in
        ``p2p.net.known``) and it is refused.  A cut for another reason (a network drop, a
        takeover of the client id) rarely falls twice into the moment between sending
        that message and its PUBACK; a coincidence once costs nothing (the message was
        not taken, it is sent again anyway).  A QoS 0 message is never suspected: no
        PUBACK tells a cut for its size from another one.
        """
        unacked, self._unacked_large = self._unacked_large, []
        if not unacked or self._closing:
            return
        item, sent_at, size = unacked[0]
        if time.monotonic() - sent_at > CUT_WINDOW_S:
            return
        item.cuts += 1
        if item.cuts >= 2:
            self._learned_max = min(size - 1, self._learned_max or size)
            known.note(str(self.address), max_packet=str(self._learned_max))
            self._refuse(item, size, self._learned_max)
            return
        if item in self._outbox and self._outbox[0] is not item:
            self._outbox.remove(item)
            self._outbox.appendleft(item)  # sent first after the reconnect

    def _pop(self, item: _Outgoing) -> None:
        if self._outbox and self._outbox[0] is item:
            self._outbox.popleft()
        else:
            with contextlib.suppress(ValueError):
                self._outbox.remove(item)

    # -- receiving ---------------------------------------------------------------------

    def messages(self) -> AsyncIterator[Inbound]:
        """Inbound messages, most important lane first, until ``close()``."""
        return self.inbound.drain()

    def _deliver(self, message: aiomqtt.Message) -> None:
        """A message paho parsed itself (what ``decode_publish`` leaves to it)."""
        payload = message.payload
        if isinstance(payload, str):
            payload = payload.encode()
        elif not isinstance(payload, (bytes, bytearray)):
            payload = b"" if payload is None else str(payload).encode()
        expiry = getattr(message.properties, "MessageExpiryInterval", None)
        self._stats["read_by_paho"] += 1
        self._deliver_raw(
            message.topic.value,
            bytes(payload),
            bool(message.retain),
            expiry if isinstance(expiry, int) else None,
        )

    def _deliver_raw(self, topic: str, payload: bytes, retain: bool, expiry: int | None) -> bool:
        self._delivering = True
        try:
            return self._take(topic, payload, retain, expiry)
        finally:
            self._delivering = False

    def _read_publishes(self, client: aiomqtt.Client) -> None:
        """Read the socket in chunks (``_PacketReader``) and each received PUBLISH from its
        bytes (``decode_publish``), handing it to the lanes directly, as paho would after
        building its objects.

        Paho builds a v5 ``Properties`` object, an ``MQTTMessage``, a log line's
        arguments and (through aiomqtt) a ``Message`` with a ``Topic`` for every PUBLISH,
        and asks the socket three or four times per packet: most of a junk message's cost
        before our lanes drop it in microseconds (issue 28: the move under a flood).  A
        QoS 1 message is acknowledged after it was handed over, as paho does; what the
        first look leaves to paho (QoS 2, other v5 properties, a malformed packet) takes
        paho's own path unchanged.
        """
        paho = client._client
        slow = paho._handle_publish
        v5 = self._v5  # (a client speaks one protocol version)
        success = aiomqtt.client.mqtt.MQTT_ERR_SUCCESS

        def publish(command: int, body: bytes | bytearray) -> Any:
            """A PUBLISH read from its bytes; ``None``: paho's to read."""
            try:
                raw = decode_publish(command, body, v5)
            except ValueError:
                raw = None
            if raw is None:
                return None
            self._stats["read_raw"] += 1
            if self._deliver_raw(raw.topic, raw.payload, raw.retain, raw.expiry):
                reader.calm = False  # handed on: its dispatch goes first
                lane = self.inbound.last_lane
                reader.urgent = reader.urgent or (lane is not None and lane <= Lane.INBOX)
            if raw.qos == 1 and not paho._manual_ack:
                reader.calm = False
                return paho._send_puback(raw.mid)
            return success

        def handle_publish() -> Any:  # what paho's ``_packet_handle`` calls for a PUBLISH
            packet = paho._in_packet
            done = publish(packet["command"], packet["packet"])
            return slow() if done is None else done

        # what paho's ``_packet_handle`` calls for every PUBLISH it has read itself
        paho._handle_publish = handle_publish  # type: ignore[method-assign]
        reader = _PacketReader(client, publish, self._stats)
        inner = paho.loop_read

        def loop_read(max_packets: int = 1) -> Any:  # what aiomqtt's reader calls
            return reader.loop_read(inner, max_packets)

        # what aiomqtt's reader calls when the socket is readable
        paho.loop_read = loop_read  # type: ignore[method-assign]

        # The PUBACK of each message we publish: paho builds a ``ReasonCode`` (a scan of
        # its table of names) and a ``Properties`` for it: more than half of the 0.15 ms
        # that read took in a probe of 2 peers in one process (3 Dec, load 0.6);
        # in one process that read falls between the receiver's read of the very move
        # and its dispatch (issue 28).  A plain "success" is read here and handed on as
        # paho does, with one reason code and empty properties built once per client.
        acked = paho._handle_pubackcomp
        success_code = ReasonCode(PacketTypes.PUBACK)
        no_properties = _properties(PacketTypes.PUBACK)

        def handle_puback(cmd: Any) -> Any:
            packet = paho._in_packet
            mid = plain_puback(packet["packet"], v5) if cmd == "PUBACK" else None
            if mid is None:
                return acked(cmd)
            self._stats["acks_read_raw"] += 1
            with paho._out_message_mutex:
                if mid in paho._out_messages:  # (only the first PUBACK of a message counts)
                    return paho._do_on_publish(mid, success_code, no_properties)
            return success

        # what paho's ``_packet_handle`` calls for every PUBACK and PUBCOMP it has read
        paho._handle_pubackcomp = handle_puback  # type: ignore[method-assign]

    def _take(self, topic: str, payload: bytes, retain: bool, expiry: int | None) -> bool:
        """One message from the read path: dropped (``False``), or offered to the lanes
        and taken (our probe's included)."""
        if topic.startswith(self._probe_root):  # our probe's, late ones included
            waiting = self._probe.get(topic)
            if payload and waiting is not None and not waiting.done():
                waiting.set_result(None)
            return True
        if len(payload) > self.max_payload:
            self._stats["dropped"] += 1
            log.warning(
                "dropped %d-byte message on %s: over the %d-byte cap",
                len(payload),
                topic,
                self.max_payload,
            )
            return False
        accepted = self.inbound.offer(
            Inbound(topic, payload, retain, self._address_text, expiry=expiry)
        )
        if not accepted:
            self._stats["dropped"] += 1
            return False
        self._stats["received"] += 1
        return True

    # -- the connection loop -------------------------------------------------------------

    def _make_client(self) -> aiomqtt.Client:
        address = self.address
        will = self._will() if self._will else None
        aio_will = None
        if will is not None:
            will_props = None
            if self._v5 and will.expiry is not None:
                will_props = _properties(PacketTypes.WILLMESSAGE)
                will_props.MessageExpiryInterval = will.expiry
            aio_will = aiomqtt.Will(
                will.topic,
                will.payload,
                will.qos,
                will.retain and self.retained_delivery != "none",
                will_props,
            )
        connect_props = None
        # A first v5 CONNECT carries no properties (their defaults are what we want):
        # some 3.1.1-only brokers (amqtt) misread one with properties and never answer,
        # but refuse a plain one at once.
        if self._v5 and not self._probing_v5:
            connect_props = _properties(PacketTypes.CONNECT)
            connect_props.SessionExpiryInterval = 0
            # Let the broker drop absurd packets for us; the app-level cap is smaller.
            connect_props.MaximumPacketSize = max(65536, self.max_payload * 4)
        tls_context = None
        if address.tls:
            tls_context = self._tls_context or ssl.create_default_context()
        client = aiomqtt.Client(
            address.host,
            address.port,
            username=address.username,
            password=address.password,
            identifier=_random_client_id(),
            protocol=aiomqtt.ProtocolVersion.V5
            if self._v5
            else aiomqtt.ProtocolVersion.V311,
            will=aio_will,
            clean_session=None if self._v5 else True,
            clean_start=True
            if self._v5
            else aiomqtt.client.mqtt.MQTT_CLEAN_START_FIRST_ONLY,
            transport="websockets" if address.websockets else "tcp",
            websocket_path=address.path or None,
            tls_context=tls_context,
            keepalive=self._keepalive,
            # A first v5 handshake gets a short timeout: some 3.1.1-only brokers (amqtt)
            # misread a v5 CONNECT with properties and never answer.
            timeout=HANDSHAKE_TIMEOUT_S if self._probing_v5 else 10,
            # aiomqtt only calls queue_type(maxsize=...): a partial of the class serves,
            # though it is not a class itself
            queue_type=functools.partial(_SinkQueue, self._deliver),  # type: ignore[arg-type]
            properties=connect_props,
            logger=logging.getLogger("p2p.net.mqtt"),
            socket_options=[NODELAY] if not address.websockets else (),
        )
        self._watch_handshake(client)
        self._read_publishes(client)
        return client

    def _watch_handshake(self, client: aiomqtt.Client) -> None:
        """End the wait for a CONNACK as soon as the broker closes the socket.

        aiomqtt ignores a disconnect before the CONNACK and waits out its timeout (a
        3.1.1-only broker such as RabbitMQ 3.x closes a v5 connect that way): here the
        close fails the handshake at once with ``CLOSED_BEFORE_CONNACK``.  The CONNACK's
        v5 properties are kept (``RetainAvailable`` says whether retained messages work).
        """
        paho = client._client
        on_disconnect = paho.on_disconnect
        on_connect = paho.on_connect

        def disconnected(*args: Any) -> None:
            waiting = client._connected
            if not waiting.done():
                waiting.set_exception(aiomqtt.MqttError(CLOSED_BEFORE_CONNACK))
            if on_disconnect is not None:
                on_disconnect(*args)

        def connected(*args: Any) -> None:
            properties = args[4] if len(args) > 4 else None
            self._connack_retain = getattr(properties, "RetainAvailable", None)
            self._connack_max = getattr(properties, "MaximumPacketSize", None)
            self._connack_receive_max = getattr(properties, "ReceiveMaximum", None)
            self.max_qos = getattr(properties, "MaximumQoS", 2)
            if on_connect is not None:
                on_connect(*args)

        paho.on_disconnect = disconnected
        paho.on_connect = connected
        self._watch_writes(client)

    def _watch_writes(self, client: aiomqtt.Client) -> None:
        """Register the socket's writer with the event loop at once (aiomqtt schedules
        that for the loop's next turn, ``call_soon_threadsafe``), and not at all while
        ``_start_publish`` writes the packet paho is queueing itself.

        So when paho says a writer is registered (``_registered_write``), it is, and a
        packet written directly leaves nothing behind: paho removes the writer once all
        is written.  Two writers are added a turn later (``_adding`` counts them; no
        packet is written directly meanwhile): paho's connect runs in another thread
        (aiomqtt's executor), and what paho queues while we read -- the PUBACK of a
        message just read -- waits until the work that message started has run (the
        round's step, and the waiters of a move in the turn after it): the broker
        needs the acknowledgement soon, the player the move at once."""
        loop = asyncio.get_running_loop()
        home = threading.get_ident()
        paho = client._client
        reading = False

        def write() -> None:  # what aiomqtt's writer does
            try:
                paho.loop_write()
            except Exception as exc:  # noqa: BLE001 - the connection broke: end it
                if not client._disconnected.done():
                    client._disconnected.set_exception(exc)

        def added(sock: Any) -> None:
            self._adding -= 1
            current = paho._sock
            if current is not None and current is sock:  # (not if the connection went)
                loop.add_writer(current.fileno(), write)

        def register(_client: Any, _userdata: Any, sock: Any) -> None:
            if self._writing:
                return  # (``_start_publish`` writes it itself, now)
            if threading.get_ident() != home:
                self._adding += 1
                loop.call_soon_threadsafe(added, sock)
            elif reading:
                self._adding += 1
                loop.call_soon(added, sock)
            else:
                loop.add_writer(sock.fileno(), write)

        paho.on_socket_register_write = register

        read_packets = paho.loop_read

        def read(max_packets: int = 1) -> Any:  # paho's loop_read, noting that we read
            nonlocal reading
            reading = True
            try:
                return read_packets(max_packets)
            finally:
                reading = False

        # what aiomqtt's reader calls when the socket is readable
        paho.loop_read = read  # type: ignore[method-assign]

    async def _probe_retained(self, client: aiomqtt.Client) -> None:
        """Find out once per broker to whom it hands retained messages.

        Two retained messages on topics of our own client id, one read through a wildcard
        filter and one through an exact subscription, then both deleted: ``wildcard``
        (both arrive, MQTT as written) or ``exact`` (only the exact one: RabbitMQ 3.x);
        ``none`` when the broker says so in its v5 CONNACK, or cuts us twice for sending a
        retained message.  Costs about two round trips on the first connect to a broker
        (the deletion runs behind), ``PROBE_TIMEOUT_S`` at most; no answer in time leaves
        it unknown (asked again on the next connect).  The answer is kept
        (``p2p.net.known``); the peer asks present peers to answer when retained
        presences cannot reach a newcomer's wildcard filter (``docs/brokers.md``).
        """
        if self._connack_retain == 0:
            self._learned_retained("none")
            return
        root = f"p2p/probe/{client.identifier}"
        self._probe_root = root + "/"
        exact, under = f"{root}/e", f"{root}/w/r"
        loop = asyncio.get_running_loop()
        arrived = {exact: loop.create_future(), under: loop.create_future()}
        self._probe = arrived
        qos = min(1, self.max_qos)
        result: str | None = None
        try:
            async with asyncio.timeout(PROBE_TIMEOUT_S):
                for _ in (exact, under):
                    await self._pacer.wait()
                await asyncio.gather(
                    client.publish(exact, b"p", qos=qos, retain=True),
                    client.publish(under, b"p", qos=qos, retain=True),
                )
                await asyncio.gather(  # sent in this order: the wildcard first
                    client.subscribe(f"{root}/w/+", qos=qos), client.subscribe(exact, qos=qos)
                )
                await arrived[exact]
                # the broker answers in order: a wildcard delivery comes before this
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(arrived[under]), 0.1)
                result = "wildcard" if arrived[under].done() else "exact"
        except TimeoutError:
            if arrived[under].done():
                result = "wildcard"
            elif arrived[exact].done():
                result = "exact"
        except aiomqtt.MqttError:
            # a broker without retained messages may cut a client that sends one; a
            # connection lost for another reason is simply probed again
            self._probe_cuts += 1
            if self._probe_cuts >= 2:
                self._learned_retained("none")
            raise
        finally:
            self._probe = {}

        async def clean_up() -> None:  # delete them: nothing of ours stays
            with contextlib.suppress(aiomqtt.MqttError, TimeoutError):
                async with asyncio.timeout(PROBE_TIMEOUT_S):
                    await client.unsubscribe([f"{root}/w/+", exact])
                    for topic in (exact, under):
                        await self._pacer.wait()
                        await client.publish(topic, b"", qos=qos, retain=True)

        task = loop.create_task(clean_up())
        self._cleanups.add(task)
        task.add_done_callback(self._cleanups.discard)
        if result is not None:
            self._learned_retained(result)
        else:
            log.info("broker %s: no answer to the retained probe in time", self.address)

    def _learned_retained(self, how: str) -> None:
        self.retained_delivery = how
        known.note(str(self.address), retained=how)
        log.info("broker %s hands retained messages to: %s", self.address, how)

    def _set_state(self, state: ConnectionState, detail: str) -> None:
        self.state = state
        log.info("connection %s %s", state.value, detail)
        tell_state(self._state_callbacks, state, detail)

    async def _connection_loop(self) -> None:
        backoff = self._min_backoff
        while not self._closing:
            detail = ""
            was_up = False
            outage = self._hold_until - time.monotonic()
            if outage > 0:
                await asyncio.sleep(outage)
            try:
                client = self._make_client()
                async with client:
                    self._client = client
                    if self.address.websockets:
                        _set_nodelay(client._client.socket())
                    for topic, (qos, retained, no_local) in list(
                        self._subscriptions.items()
                    ):
                        await self._subscribe_one(
                            client, topic, qos, retained, no_local
                        )
                    was_up = True
                    if self.retained_delivery is None:
                        await self._probe_retained(client)
                    backoff = self._min_backoff
                    self._set_state(
                        ConnectionState.RECONNECTED
                        if self._ever_connected
                        else ConnectionState.CONNECTED,
                        str(self.address),
                    )
                    self._ever_connected = True
                    self._probing_v5 = False
                    if self._asked_v5:
                        known.note(str(self.address), protocol=self.protocol_version)
                    self._up.set()
                    if self._on_connected is not None:
                        try:
                            await self._on_connected()
                        except aiomqtt.MqttError:
                            raise
                        except Exception:
                            log.exception("on_connected hook failed")
                    async for message in client.messages:
                        self._deliver(message)
            except MqttConnectError as err:
                detail = str(err)
                if err.rc == 154 and self.retained_delivery != "none":
                    # "retain not supported": a broker without retained messages refuses
                    # our retained Will; connect again without retaining anything
                    self._learned_retained("none")
                    continue
                if self._v5 and err.rc in (1, 132):  # unsupported protocol version
                    log.info("broker refused MQTT v5; using 3.1.1")
                    self._v5 = False
                    self._probing_v5 = False
                    continue
            except aiomqtt.MqttError as err:
                detail = str(err)
                if not was_up and self._probing_v5 and (
                    "timed out" in detail or detail == CLOSED_BEFORE_CONNACK
                ):
                    # No CONNACK at all to a v5 CONNECT (closed, or no answer): try 3.1.1
                    # at once, and go back to v5 if that fails too (the broker may just
                    # have been slow, or restarting).
                    log.info("no CONNACK to an MQTT v5 connect (%s); trying 3.1.1", detail)
                    self._v5 = False
                    self._probing_v5 = False
                    self._v5_fallback = True
                    continue
                if not was_up and self._v5_fallback and not self._ever_connected:
                    self._v5 = self._probing_v5 = True
                    self._v5_fallback = False
            except (TimeoutError, OSError) as err:
                detail = str(err) or type(err).__name__
            except Exception as err:
                detail = f"{type(err).__name__}: {err}"
                log.debug("connection loop error", exc_info=True)
            finally:
                self._up.clear()
                self._client = None
            if self._closing:
                return
            self._cut_after_send()
            self._last_error = detail or "connection closed"
            if was_up:
                self._set_state(ConnectionState.LOST, self._last_error)
            delay = backoff * random.uniform(
                0.8, 1.2
            )  # jitter: peers do not reconnect in lockstep
            backoff = min(backoff * 2, self._max_backoff)
            await asyncio.sleep(delay)
