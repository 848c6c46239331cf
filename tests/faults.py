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
