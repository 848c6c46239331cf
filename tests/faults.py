"""Fault injection for the live tests: per-peer clocks, a TCP proxy in front of Mosquitto.

``Clock``: a wall clock for one in-process ``Peer`` (``Peer(..., clock=Clock(+600_000))``),
the real one shifted by a number of milliseconds that a test may change while it runs (a
clock bump).  Other nemeses of the fault model (docs/protocol.md, "Time and faults") live
beside it: ``LinkProxy`` (latency with jitter, resets, a blackholed or cut link) and the
restartable broker of ``tests/conftest.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import time

from p2p.net.broker import LocalBroker


class Clock:
    """The real wall clock in integer ms plus ``offset_ms`` (an injectable ``Peer`` clock)."""

    def __init__(self, offset_ms: int = 0) -> None:
        self.offset_ms = offset_ms

    def __call__(self) -> int:
        return time.time_ns() // 1_000_000 + self.offset_ms

    def shift(self, delta_ms: int) -> None:
        """Jump the clock by ``delta_ms`` (negative: back), as an NTP step would."""
        self.offset_ms += delta_ms


# -- a TCP proxy with toxics ---------------------------------------------------------


class LinkProxy:
    """An asyncio TCP proxy ``127.0.0.1:port`` -> ``upstream`` (a Mosquitto) with toxics.

    One proxy per peer is one peer's network link: the test points the peer at
    ``proxy.url`` and then, while the peer runs,

    * ``latency(ms, jitter_ms)`` delays every chunk by ``ms`` plus a seeded uniform jitter
      in ``[-jitter_ms, +jitter_ms]``, in order (TCP never reorders);
    * ``reset()`` aborts every open connection with an RST (the broker sees no
      DISCONNECT, so it fires the peer's Last Will; the client sees a reset);
    * ``pause()`` / ``resume()`` blackholes the link: connections stay open, nothing
      flows either way until ``resume()`` delivers what was held (keepalives time out);
    * ``cut()`` / ``heal()`` takes the link down: open connections are reset and new ones
      are refused (accepted and reset at once) until ``heal()``; ``cut_for(s)`` does both.

    Runs on the test's event loop (``async with LinkProxy(port) as proxy``).
    """

    def __init__(self, upstream_port: int, *, seed: int = 0) -> None:
        import random

        self.upstream_port = upstream_port
        self.port = 0
        self._server: asyncio.Server | None = None
        self._links: set[_Link] = set()
        self._random = random.Random(seed)
        self.delay_ms = 0
        self.jitter_ms = 0
        self.down = False
        self.paused = False
        self._resumed = asyncio.Event()
        self._resumed.set()
        self.resets = 0
        """Connections this proxy aborted (``reset``/``cut``): tests check the fault hit."""
        self.accepted = 0

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    async def __aenter__(self) -> LinkProxy:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = int(self._server.sockets[0].getsockname()[1])
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for link in list(self._links):
            link.abort()
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None

    # -- toxics ------------------------------------------------------------------------

    def latency(self, ms: int, jitter_ms: int = 0) -> None:
        """Every chunk from now on waits ``ms`` ± ``jitter_ms`` (seeded) before it goes on."""
        self.delay_ms, self.jitter_ms = ms, jitter_ms

    def reset(self) -> int:
        """Abort every open connection with an RST; returns how many."""
        links = list(self._links)
        for link in links:
            link.abort()
        self.resets += len(links)
        return len(links)

    def pause(self) -> None:
        """Blackhole: hold every byte in both directions (connections stay open)."""
        self.paused = True
        self._resumed.clear()

    def resume(self) -> None:
        self.paused = False
        self._resumed.set()

    def cut(self) -> None:
        """Take the link down: reset what is open and refuse new connections."""
        self.down = True
        self.reset()

    def heal(self) -> None:
        self.down = False

    async def cut_for(self, seconds: float) -> None:
        """A cut link for ``seconds`` (a Wi-Fi change, a closed laptop lid)."""
        self.cut()
        try:
            await asyncio.sleep(seconds)
        finally:
            self.heal()

    async def reset_every(self, seconds: float) -> None:
        """Reset the connection every ``seconds`` until cancelled (a flaky link)."""
        while True:
            await asyncio.sleep(seconds)
            self.reset()

    def _delay_s(self) -> float:
        jitter = self._random.randint(-self.jitter_ms, self.jitter_ms) if self.jitter_ms else 0
        return max(0, self.delay_ms + jitter) / 1000

    # -- plumbing ----------------------------------------------------------------------

    async def _accept(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        if self.down:
            _abort(writer)
            self.resets += 1
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(
                "127.0.0.1", self.upstream_port
            )
        except OSError:
            _abort(writer)  # broker down: the client sees its connection fail
            return
        self.accepted += 1
        link = _Link(self, writer, up_writer)
        self._links.add(link)
        try:
            await link.run(reader, up_reader)
        finally:
            self._links.discard(link)


def _abort(writer: asyncio.StreamWriter) -> None:
    """Close with an RST (SO_LINGER 0), as a dropped link or a crashed host does."""
    import socket
    import struct

    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


class _Link:
    """One client connection and its upstream twin: two pumps with a delay line each."""

    def __init__(
        self, proxy: LinkProxy, down: asyncio.StreamWriter, up: asyncio.StreamWriter
    ) -> None:
        self.proxy = proxy
        self.writers = (down, up)
        self.tasks: list[asyncio.Task[None]] = []

    def abort(self) -> None:
        for writer in self.writers:
            _abort(writer)
        for task in self.tasks:
            task.cancel()

    async def run(self, client: asyncio.StreamReader, upstream: asyncio.StreamReader) -> None:
        down, up = self.writers
        self.tasks = [
            asyncio.create_task(self._pump(client, up)),
            asyncio.create_task(self._pump(upstream, down)),
        ]
        await asyncio.wait(self.tasks, return_when=asyncio.FIRST_COMPLETED)
        self.abort()
        await asyncio.gather(*self.tasks, return_exceptions=True)

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        loop = asyncio.get_running_loop()
        line: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

        async def deliver() -> None:
            while True:
                due, chunk = await line.get()
                wait = due - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                await self.proxy._resumed.wait()
                if not chunk:  # the sender closed: pass the FIN on after the data
                    with contextlib.suppress(OSError):
                        writer.write_eof()
                    return
                writer.write(chunk)
                await writer.drain()

        sender = asyncio.create_task(deliver())
        last_due = 0.0
        try:
            while True:
                chunk = await reader.read(65536)
                if not chunk:
                    line.put_nowait((max(last_due, loop.time()), b""))
                    with contextlib.suppress(OSError):
                        await sender
                    return
                last_due = max(last_due, loop.time() + self.proxy._delay_s())
                line.put_nowait((last_due, chunk))
                if sender.done():
                    return
        except (OSError, asyncio.IncompleteReadError):
            return
        finally:
            sender.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await sender


# -- the broker: killed and restarted without persistence -------------------------------


def kill_broker(broker: LocalBroker) -> None:
    """``kill -9`` the broker: no goodbye to anyone; with ``persistence false`` (the
    fixtures' config) every session, subscription and retained message is gone."""
    process = broker._process
    if process is not None and process.poll() is None:
        process.kill()
        process.wait(timeout=5)


async def broker_outage(broker: LocalBroker, seconds: float) -> None:
    """Kill the broker, keep it down ``seconds``, start a fresh one on the same port."""
    await asyncio.to_thread(kill_broker, broker)
    await asyncio.sleep(seconds)
    await asyncio.to_thread(broker.restart)


# -- an MQTT-aware proxy: limits Mosquitto has no switch for ----------------------------


def _split_packet(buf: bytes) -> tuple[bytes, bytes] | None:
    """The first whole MQTT packet in ``buf`` and the rest, or ``None`` if incomplete."""
    length, shift = 0, 0
    for i in range(1, 5):
        if i >= len(buf):
            return None
        length |= (buf[i] & 0x7F) << shift
        shift += 7
        if not buf[i] & 0x80:
            end = i + 1 + length
            return (buf[:end], buf[end:]) if len(buf) >= end else None
    raise ValueError("malformed remaining length")


def _body_start(packet: bytes) -> int:
    i = 1
    while packet[i] & 0x80:
        i += 1
    return i + 1


def _varint(data: bytes, i: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        value |= (data[i] & 0x7F) << shift
        shift += 7
        i += 1
        if not data[i - 1] & 0x80:
            return value, i


class MqttLimits:
    """A TCP proxy in front of Mosquitto that reads the client's MQTT packets and plays a
    hosted broker's limits that Mosquitto has no option for:

    * ``refuse_v5``: a v5 CONNECT is answered by closing the socket (RabbitMQ 3.x), or
      with ``refuse_v5="connack"`` by a 3.1.1 CONNACK "unacceptable protocol version"
      and then closing (what MQTT 3.1.1 asks of a broker, and amqtt does);
    * ``publish_rate=(burst, per_s)``: a token bucket per connection over PUBLISH
      packets; a client over it is disconnected (``cut_for_rate`` counts them);
    * ``max_depth``: a PUBLISH or SUBSCRIBE with a topic of more levels is disconnected;
    * ``reset_every(s)``: every connection is dropped every ``s`` seconds.

    It also measures: ``v5_connects``, ``max_per_second`` (the most PUBLISH packets one
    connection sent within any second) and ``deepest`` (topic levels seen).
    """

    def __init__(
        self,
        upstream_port: int,
        *,
        refuse_v5: bool | str = False,
        publish_rate: tuple[int, float] | None = None,
        max_depth: int | None = None,
    ) -> None:
        self.upstream_port = upstream_port
        self.refuse_v5 = refuse_v5
        self.publish_rate = publish_rate
        self.max_depth = max_depth
        self.port = 0
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self.v5_connects = 0
        self.cut_for_rate = 0
        self.cut_for_depth = 0
        self.drops = 0
        self.max_per_second = 0
        self.deepest = 0

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    async def __aenter__(self) -> MqttLimits:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = int(self._server.sockets[0].getsockname()[1])
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.close()
        for writer in list(self._writers):
            _abort(writer)
        if self._server is not None:
            await self._server.wait_closed()

    def reset(self) -> None:
        """Drop every open connection (RST)."""
        for writer in list(self._writers):
            _abort(writer)
        self.drops += 1

    async def reset_every(self, seconds: float) -> None:
        while True:
            await asyncio.sleep(seconds)
            self.reset()

    def _topics(self, packet: bytes, v5: bool) -> list[str]:
        kind = packet[0] >> 4
        i = _body_start(packet)
        if kind == 3:  # PUBLISH
            n = int.from_bytes(packet[i : i + 2], "big")
            return [packet[i + 2 : i + 2 + n].decode("utf-8", "replace")]
        if kind == 8:  # SUBSCRIBE
            i += 2
            if v5:
                size, i = _varint(packet, i)
                i += size
            found = []
            while i < len(packet):
                n = int.from_bytes(packet[i : i + 2], "big")
                found.append(packet[i + 2 : i + 2 + n].decode("utf-8", "replace"))
                i += 2 + n + 1
            return found
        return []

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        except OSError:
            _abort(writer)
            return
        self._writers.update((writer, up_writer))
        loop = asyncio.get_running_loop()
        tokens, stamp = (float(self.publish_rate[0]) if self.publish_rate else 0.0), loop.time()
        recent: list[float] = []
        v5 = False

        async def upstream() -> None:
            nonlocal tokens, stamp, v5
            buf = b""
            while True:
                chunk = await reader.read(65536)
                if not chunk:
                    return
                buf += chunk
                while (split := _split_packet(buf)) is not None:
                    packet, buf = split
                    kind = packet[0] >> 4
                    if kind == 1:  # CONNECT: name (2 + 4 bytes "MQTT"), then the level
                        i = _body_start(packet)
                        v5 = packet[i + 6] == 5
                        self.v5_connects += v5
                        if v5 and self.refuse_v5:
                            if self.refuse_v5 == "connack":
                                writer.write(b"\x20\x02\x00\x01")
                                await writer.drain()
                            return
                    for topic in self._topics(packet, v5):
                        depth = topic.count("/") + 1
                        self.deepest = max(self.deepest, depth)
                        if self.max_depth is not None and depth > self.max_depth:
                            self.cut_for_depth += 1
                            return
                    if kind == 3:
                        now = loop.time()
                        recent.append(now)
                        while recent and recent[0] <= now - 1.0:
                            recent.pop(0)
                        self.max_per_second = max(self.max_per_second, len(recent))
                        if self.publish_rate is not None:
                            burst, per_s = self.publish_rate
                            tokens = min(burst, tokens + (now - stamp) * per_s)
                            stamp = now
                            if tokens < 1:
                                self.cut_for_rate += 1
                                return
                            tokens -= 1
                    up_writer.write(packet)
                await up_writer.drain()

        async def downstream() -> None:
            while chunk := await up_reader.read(65536):
                writer.write(chunk)
                await writer.drain()

        tasks = [asyncio.create_task(upstream()), asyncio.create_task(downstream())]
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            for w in (writer, up_writer):
                _abort(w)
                self._writers.discard(w)
