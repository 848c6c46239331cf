"""What a lobby join and an idle lobby cost, with N real peers on a local Mosquitto.

Run: python bench/bench_lobby.py [--sizes 200,400,1000] [--per-process 40] [--joins 3]
                                 [--idle-seconds 40] [--join-rate 5] [--drain-limit 300]
                                 [--nice 10] [--broker URL] [--namespace NS] [--markdown]
                                 [--remote-peers K]
     python bench/bench_lobby.py --serve K --broker URL --namespace NS  (other machines)

One Mosquitto (started here, no connection limit on its listener, ``ulimit -n`` raised
for N; or ``--broker URL``, an existing one, e.g. on another machine) and a lobby that
grows to each of ``--sizes`` in turn: the new ``Peer`` objects join in worker processes
of ``--per-process`` peers each (so the figures are not one process's cost; the whole
bench and its workers run at ``--nice``; the broker started here does not, it stands for
a server of its own), at most ``--join-rate`` a second
and paced by the lobby itself: a batch of two seconds' joins, and the next only once
every peer lists all but that batch (``Workers.grow``).  One lobby may be spread over
machines: each other machine hosts peers with ``--serve K`` (the same ``--broker`` and
``--namespace``), the measuring bench counts them with ``--remote-peers`` and sets their
heartbeat too; its per-peer figures are those of its own peers.  At each N, once every
peer sees every other one:

1. **joins**: ``--joins`` times, a newcomer peer (in the main process) connects; we
   measure the time from ``start()`` until its lobby lists all N, the publications on the
   namespace, the deliveries to the N existing peers and to the newcomer, and the CPU of
   the worker processes per existing peer and of the newcomer, over a window that ends
   1.5 s after the newcomer saw everyone (longer than the 1 s answer back-off);
2. **idle**: for ``--idle-seconds``, rounded to whole periods of the heartbeat the peers
   use at N (the protocol's real one: 20 s up to 100 peers, N / 5 s above, so at least
   200 s at N = 1,000): publications (a subscriber on the namespace's ``#`` counts them),
   deliveries sent (each presence goes to all N), arrived at the peers' transports,
   handled by the peers, dropped at their edges; CPU per peer per second, and the
   receive CPU per presence handled (the idle CPU less the timers' alone); the cores the
   peers and the broker used; connections lost.  When the peers cannot keep up, the rest
   waits in the broker and the sockets: the bench then waits (``--drain-limit``) until
   it has been worked off, so the next N starts clean, and says how long that took.

For the setup and the joins every process stretches the heartbeat to 10 minutes (the
idle heartbeat is set for the idle phase, each peer's phase spread over the period): on
a real lobby each of N machines verifies N / (its heartbeat) presences a second (N / 20
up to 100 peers, 5 above), here the shared cores verify all N times that.  The presence
TTL and the silence limit are stretched throughout (the bench runs longer than a minute;
nothing is sent because of them).  Everything else
is the real code.  Every wait has a limit; when one runs out, the bench prints what it
measured, then one line saying why it stopped, and exits with status 1.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import os
import platform
import random
import ssl
import statistics
import sys
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import aiomqtt

from p2p.net import transport as transport_module
from p2p.net.broker import BrokerError, LocalBroker
from p2p.net.transport import ConnectionState, parse_broker_url
from p2p.peer import Peer
from p2p.protocol import lobby as lobby_module
from p2p.protocol.topics import Topics

REAL_HEARTBEAT_MS = lobby_module.HEARTBEAT_MS
QUIET_ERRORS = 0
"""Errors asyncio reported in the background (sockets closing under a stopping peer,
"Bad file descriptor"): counted and summed up in one line, never a traceback."""


def quiet(loop: asyncio.AbstractEventLoop, debug: bool = False) -> None:
    """Route background errors of ``loop`` to a counter (``--debug``: print them) and
    keep library log lines off the console: the bench prints its figures only."""
    import logging

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        global QUIET_ERRORS
        QUIET_ERRORS += 1
        if debug:
            loop.default_exception_handler(context)

    loop.set_exception_handler(handler)
    if not debug:
        logging.basicConfig(level=logging.CRITICAL)
STRETCHED_HEARTBEAT_MS = 600_000
ASK_TIMEOUT_S = 60.0
"""Longest wait for a worker's answer to one command (every wait has a limit)."""
JOIN_TIMEOUT_S = 120.0
"""Longest wait for a newcomer to connect and list all N (else the bench says so)."""


def stretch(heartbeat_ms: int) -> None:
    """Bench-only knobs, per process: heartbeat interval; TTL and silence kept long."""
    lobby_module.HEARTBEAT_MS = heartbeat_ms
    lobby_module.PRESENCE_TTL_S = 3_600  # read where used (the ttl each presence signs)
    lobby_module.SILENCE_MS = 7_200_000
    # Dozens of peers share one event loop here (on a real lobby each has its machine):
    # a new peer's first CONNACK and its retained-delivery probe can wait behind its
    # neighbours' checking of hundreds of presences, longer than the few seconds after
    # which the transport takes a broker for one that does not answer v5 (measured:
    # N = 600 stopped on that at load 20-30).  Bench-only, like the heartbeat.
    transport_module.HANDSHAKE_TIMEOUT_S = 60.0
    transport_module.PROBE_TIMEOUT_S = 60.0


# -- worker processes -------------------------------------------------------------------


def worker(conn: Connection, url: str, namespace: str, heartbeat: int, debug: bool = False) -> None:
    stretch(heartbeat)
    try:
        asyncio.run(_worker(conn, url, namespace, debug))
    except (OSError, EOFError, KeyboardInterrupt) as err:  # the main process went away
        if debug:
            print(f"worker {os.getpid()}: {err}", file=sys.stderr)
    except Exception as err:  # noqa: BLE001 - reported to the main process in one line
        try:
            conn.send(("error", f"worker {os.getpid()}: {err}"))
        except OSError:
            pass


async def _join(url: str, namespace: str, nick: str) -> Peer:
    """One more peer of this worker, connected (five tries, then one line why not)."""
    last: Exception | None = None
    for attempt in range(5):
        peer = Peer(url, nick=nick, namespace=namespace, connect_timeout=60)
        try:
            await peer.start()
            return peer
        except ConnectionError as err:
            last = err
            await peer.close()
            await asyncio.sleep(1 + attempt)
    raise RuntimeError(f"a bench peer could not connect 5 times: {last}")


async def _worker(conn: Connection, url: str, namespace: str, debug: bool = False) -> None:
    loop = asyncio.get_running_loop()
    quiet(loop, debug)
    peers: list[Peer] = []
    lost = [0]  # connections our peers lost (keepalive missed under load, broker gone)

    def on_state(state: ConnectionState, detail: str) -> None:
        if state is ConnectionState.LOST:
            lost[0] += 1

    conn.send(("ready", 0))
    while True:
        command, arg = await loop.run_in_executor(None, recv, conn)
        if command == "join":
            # ``count`` more peers, one every ``gap`` seconds (the main process paces
            # the ramp by what the lobby has taken in, see ``Workers.grow``)
            count, gap = arg
            for _ in range(count):
                peer = await _join(url, namespace, f"w{os.getpid()}-{len(peers)}")
                peer.transport.on_state(on_state)
                peers.append(peer)
                await asyncio.sleep(gap)
            conn.send(("joined", len(peers)))
        elif command == "stats":
            conn.send(
                (
                    "stats",
                    {
                        "peers": len(peers),
                        "min_seen": min((len(p.lobby.peers) for p in peers), default=None),
                        # handled: taken off the inbound queue and dispatched
                        "received": sum(p.stats.received for p in peers),
                        # arrived: what the broker delivered and the transport read
                        "arrived": sum(
                            p.transport.stats["received"] + p.transport.stats["dropped"]
                            for p in peers
                        ),
                        "drops": drops(peers),
                        "lost": lost[0],
                        "cpu": time.process_time(),
                    },
                )
            )
        elif command == "heartbeat":
            lobby_module.HEARTBEAT_MS = arg
            # spread the peers' heartbeats over their period (bench-only: else all N
            # would send at the next tick and stay in step, a burst every period); the
            # period is what each peer's lobby makes of ``arg`` and the N it sees
            # (``Lobby.heartbeat_ms``), and counts as announced from now on
            rng = random.Random(os.getpid())
            longest = 0
            for p in peers:
                if p.lobby._last_presence is not None:
                    beat = p.lobby.heartbeat_ms()
                    p.lobby._beat_ms = beat
                    p.lobby._last_presence = p.now_ms() - rng.randrange(beat)
                    longest = max(longest, beat)
            conn.send(("ok", longest))
        elif command == "stop":
            await asyncio.gather(*(p.close() for p in peers), return_exceptions=True)
            conn.send(("stopped", None))
            return


def recv(conn: Connection) -> Any:
    """The next command from the main process; polls in short steps so that a thread
    waiting here never outlives the bench by more than a second."""
    while not conn.poll(1.0):
        pass
    return conn.recv()


def drops(peers: list[Peer]) -> dict[str, int]:
    """What the peers' edges dropped, by reason (the inbound lanes and the peer)."""
    out: dict[str, int] = {}
    for p in peers:
        for key, value in p.inbound.stats.items():
            if key.startswith("dropped"):
                out[key] = out.get(key, 0) + value
        for key, value in p.stats.dropped.items():
            out[f"peer: {key}"] = out.get(f"peer: {key}", 0) + value
    return out


ANSWERS = {"join": "joined", "stats": "stats", "heartbeat": "ok", "stop": "stopped"}
"""What a worker answers to each command."""


class Workers:
    """The worker processes of the lobby, driven over pipes; ``grow`` adds peers."""

    def __init__(self, url: str, namespace: str, debug: bool = False):
        self.url, self.namespace, self.debug = url, namespace, debug
        self.conns: list[Connection] = []
        self.procs: list[Any] = []
        self.counts: list[int] = []
        """Peers in each worker process."""
        self.peers = 0

    async def _spawn(self, heartbeat: int) -> None:
        ctx = mp.get_context("spawn")
        parent, child = ctx.Pipe()
        proc = ctx.Process(
            target=worker,
            args=(child, self.url, self.namespace, heartbeat, self.debug),
            daemon=True,
        )
        proc.start()
        self.procs.append(proc)
        self.conns.append(parent)
        self.counts.append(0)
        await self._recv(parent, ASK_TIMEOUT_S, "ready")  # imported and listening

    async def grow(
        self, target: int, per: int, heartbeat: int, rate: float, deadline: float
    ) -> None:
        """Add peers until ``target`` are online, in worker processes of ``per``.

        The ramp is paced by the lobby itself: a batch of about two seconds' joins at
        ``rate`` goes to one worker (filled in turn, ``per`` each), and the next one
        only once every peer lists all but that batch.  Each join costs the k peers
        already there one presence check each and the newcomer k: when the cores cannot
        keep up with ``rate``, the joins wait instead of piling up behind the checks
        (at N = 600 a new peer's first connect once waited longer than its timeout
        behind its neighbours' backlog).  ``TimeoutError`` past ``deadline``
        (``time.monotonic()``).
        """
        batch = max(1, round(rate * 2))
        while self.peers < target:
            if not self.conns or self.counts[-1] >= per:
                await self._spawn(heartbeat)
            count = min(batch, per - self.counts[-1], target - self.peers)
            conn = self.conns[-1]
            conn.send(("join", (count, 1 / rate)))
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{self.peers} of {target} peers were online in time")
            try:
                joined = (await self._recv(conn, left, "joined"))[1]
            except TimeoutError:
                raise TimeoutError(
                    f"a worker's joins did not finish in time ({self.peers} of {target}"
                    " peers confirmed online)"
                ) from None
            self.counts[-1] = joined
            self.peers += count
            least = await self.caught_up(self.peers - 1 - batch, deadline)
            if self.peers % 100 < count:  # a line now and then: where the ramp is
                print(f"  {self.peers} online, each lists at least {least} others",
                      file=sys.stderr, flush=True)

    async def caught_up(self, seen: int, deadline: float) -> int:
        """Wait until every peer lists at least ``seen`` others; the least any lists."""
        while True:
            least = (await self.stats())["min_seen"]
            if least >= seen:
                return least
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"the lobby of {self.peers} did not catch up in time"
                    f" (one peer lists {least} of the {self.peers - 1} others)"
                )
            await asyncio.sleep(0.5)

    async def _recv(self, conn: Connection, timeout: float, want: str = "") -> Any:
        """One answer of a worker (``want``: the first of that kind, older answers to a
        command that timed out are passed over), or ``TimeoutError`` (a hung or dead
        worker)."""
        loop = asyncio.get_running_loop()
        deadline = time.monotonic() + timeout
        while True:
            # short polls: a thread left waiting never holds up the bench's exit for long
            while not await loop.run_in_executor(None, conn.poll, 1.0):
                if time.monotonic() > deadline:
                    raise TimeoutError(f"a worker did not answer in {timeout:.0f} s")
            answer = conn.recv()
            if answer[0] == "error":
                raise RuntimeError(answer[1])
            if not want or answer[0] == want:
                return answer

    async def ask(self, command: str, arg: Any = None, timeout: float = ASK_TIMEOUT_S) -> list[Any]:
        for conn in self.conns:
            conn.send((command, arg))
        want = ANSWERS[command]
        return [(await self._recv(conn, timeout, want))[1] for conn in self.conns]

    async def stats(self) -> dict[str, Any]:
        parts = await self.ask("stats")
        merged: dict[str, int] = {}
        for p in parts:
            for key, value in p["drops"].items():
                merged[key] = merged.get(key, 0) + value
        return {
            "peers": sum(p["peers"] for p in parts),
            "min_seen": min((p["min_seen"] for p in parts if p["min_seen"] is not None), default=0),
            "received": sum(p["received"] for p in parts),
            "arrived": sum(p["arrived"] for p in parts),
            "dropped": sum(merged.values()),
            "drops": merged,
            "lost": sum(p["lost"] for p in parts),
            "cpu": sum(p["cpu"] for p in parts),
        }

    async def stop(self) -> None:
        await self.ask("stop", timeout=60)
        for proc in self.procs:
            proc.join(10)


# -- measuring ----------------------------------------------------------------------------


def client(url: str, identifier: str) -> aiomqtt.Client:
    """A plain MQTT client of the bench on the broker at ``url``."""
    address = parse_broker_url(url)
    return aiomqtt.Client(
        address.host,
        address.port,
        username=address.username,
        password=address.password,
        identifier=identifier,
        transport="websockets" if address.websockets else "tcp",
        websocket_path=address.path or None,
        tls_context=ssl.create_default_context() if address.tls else None,
    )


def control_topic(namespace: str) -> str:
    """Where the measuring bench tells the hosts of ``--serve`` the heartbeat (outside
    the lobby's topics: no peer and no counter sees it)."""
    return f"p2p-bench/{namespace}/heartbeat"


async def tell_hosts(url: str, namespace: str, heartbeat: int) -> None:
    """Set the heartbeat of the peers that other machines host (``--serve``)."""
    async with client(url, f"control-{os.getpid()}") as c:
        await c.publish(control_topic(namespace), str(heartbeat).encode(), qos=1, retain=True)


async def serve(count: int, per: int, rate: float, url: str, namespace: str,
                time_limit_s: float, debug: bool = False) -> str:
    """Host ``count`` peers of the lobby ``namespace`` on ``url`` (for a measuring bench
    on another machine, ``--remote-peers``), following the heartbeat it sets, until
    ``time_limit_s``; why it stopped early, or ''."""
    quiet(asyncio.get_running_loop(), debug)
    stretch(STRETCHED_HEARTBEAT_MS)
    workers = Workers(url, namespace, debug)
    deadline = time.monotonic() + time_limit_s
    try:
        await workers.grow(count, per, STRETCHED_HEARTBEAT_MS, rate, deadline)
        print(f"serving {count} peers in {len(workers.procs)} processes", file=sys.stderr, flush=True)
        async with client(url, f"serve-{os.getpid()}") as c:
            await c.subscribe(control_topic(namespace), qos=1)
            async with asyncio.timeout(max(1.0, deadline - time.monotonic())):
                async for message in c.messages:
                    payload = message.payload
                    if isinstance(payload, bytes) and payload.isdigit():
                        await workers.ask("heartbeat", int(payload))
    except TimeoutError as err:
        if time.monotonic() < deadline:
            return str(err)
    except (RuntimeError, aiomqtt.MqttError) as err:
        return str(err)
    finally:
        try:
            await asyncio.wait_for(workers.stop(), 90)
        except (OSError, EOFError, TimeoutError, RuntimeError):
            pass
        for proc in workers.procs:
            if proc.is_alive():
                proc.kill()
    return ""


class Counter:
    """A subscriber on the namespace's ``#``: counts publications (not retained copies)."""

    def __init__(self) -> None:
        self.count = 0
        self.topics: list[str] = []

    async def run(self, url: str, root: str) -> None:
        async with client(url, f"count-{os.getpid()}") as c:
            await c.subscribe(root + "/#")
            async for message in c.messages:
                if not message.retain:
                    self.count += 1
                    self.topics.append(message.topic.value)


def broker_cpu_s(broker: LocalBroker | None) -> float | None:
    """CPU seconds the Mosquitto child has used so far (``/proc``; 0 where there is none;
    ``None`` for a broker the bench did not start)."""
    if broker is None:
        return None
    process = broker._process  # the bench's own broker: its pid, nothing else
    try:
        assert process is not None
        fields = Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (AssertionError, OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def enough_files(n: int) -> None:
    """The broker holds one socket per peer (plus the counter and newcomers), the bench
    a pipe per worker: raise the soft ``ulimit -n`` (inherited by Mosquitto) or say why
    it cannot be."""
    import resource

    need = n + 256
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < need:
        if hard != resource.RLIM_INFINITY and hard < need:
            raise RuntimeError(
                f"N = {n} needs {need} open files in the broker, ulimit -n allows {hard}"
            )
        resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))


BROKER_CONFIG = "max_connections -1\n"
"""The bench's broker: no connection limit on its listener (the default, said aloud)."""


async def idle(
    workers: Workers, broker: LocalBroker | None, counter: Counter, n: int, heartbeat: int,
    window_s: float, base_cpu_ms: float, hosts: tuple[str, str] | None = None,
) -> dict[str, Any]:
    """Idle the lobby with the base heartbeat ``heartbeat`` ms, for whole periods of the
    heartbeat the peers' lobbies make of it at N (``p2p.protocol.lobby``: N / R seconds
    from 100 peers on), at least ``window_s``: per peer per second, publications,
    deliveries sent, arrived and handled, CPU."""
    local = workers.peers  # (fewer than n when other machines host some: ``--serve``)
    if hosts is not None:
        await tell_hosts(*hosts, heartbeat)
    period = max([heartbeat, *await workers.ask("heartbeat", heartbeat)])
    # each peer's next heartbeat falls at a random point of the period (the "heartbeat"
    # command spreads them), so the publication rate is steady from the start
    await asyncio.sleep(2.0)
    before, pubs, b0 = await workers.stats(), counter.count, broker_cpu_s(broker)
    t0 = time.monotonic()
    # whole heartbeat periods: each peer publishes the same number of times in the
    # window, whatever the phase of its heartbeat
    await asyncio.sleep(period / 1000 * max(1, round(window_s * 1000 / period)))
    after, elapsed = await workers.stats(), time.monotonic() - t0
    b1 = broker_cpu_s(broker)
    broker_s = None if b0 is None or b1 is None else b1 - b0
    per_s = 1 / elapsed / local  # per peer per second, of the peers measured here
    published = counter.count - pubs
    r: dict[str, Any] = {
        "heartbeat_s": period / 1000,
        "idle_s": elapsed,
        "idle_pub": published / elapsed / n,
        # every presence goes to all N peers (its sender too: the presence subscription
        # takes retained messages, so it is not a noLocal one)
        "idle_sent": published / elapsed,
        "idle_arrived": (after["arrived"] - before["arrived"]) * per_s,
        "idle_deliv": (after["received"] - before["received"]) * per_s,
        "idle_dropped": (after["dropped"] - before["dropped"]) * per_s,
        "idle_cpu_ms": (after["cpu"] - before["cpu"]) * 1000 * per_s,
        "base_cpu_ms": base_cpu_ms,
        "lost": after["lost"] - before["lost"],
        "workers_cores": (after["cpu"] - before["cpu"]) / elapsed,
        "broker_cores": None if broker_s is None else broker_s / elapsed,
        "drops": {
            k: v - before["drops"].get(k, 0)
            for k, v in after["drops"].items()
            if v - before["drops"].get(k, 0)
        },
    }
    print(f"  N = {n} idle, heartbeat {period / 1000:g} s: {r}", file=sys.stderr, flush=True)
    if hosts is not None:
        await tell_hosts(*hosts, STRETCHED_HEARTBEAT_MS)
    await workers.ask("heartbeat", STRETCHED_HEARTBEAT_MS)
    await asyncio.sleep(1)
    return r


async def drain(workers: Workers, limit_s: float) -> float:
    """Wait until the peers have read and handled everything sent to them (nothing is
    published meanwhile: the heartbeat is stretched); the seconds it took, or
    ``TimeoutError``."""
    started = time.monotonic()
    last = None
    while True:
        now = await workers.stats()
        mark = (now["arrived"], now["received"])
        if mark == last:
            return time.monotonic() - started - 2.0
        if time.monotonic() - started > limit_s:
            raise TimeoutError(f"the peers' backlog did not drain in {limit_s:.0f} s")
        last = mark
        await asyncio.sleep(2.0)


async def join(workers: Workers, counter: Counter, url: str, n: int,
               namespace: str, base_cpu_per_s: float) -> dict[str, float]:
    """A newcomer joins the lobby of ``n``: its view and what it cost everyone."""
    await asyncio.sleep(1.0)
    before, pubs = await workers.stats(), counter.count
    cpu0, w0 = time.process_time(), time.monotonic()
    newcomer = Peer(
        url, nick="newcomer", namespace=namespace, connect_timeout=JOIN_TIMEOUT_S
    )
    t0 = time.monotonic()
    try:
        await asyncio.wait_for(newcomer.start(), JOIN_TIMEOUT_S)
        while len(newcomer.lobby.peers) < n:
            if time.monotonic() - t0 > JOIN_TIMEOUT_S:
                raise RuntimeError(
                    f"the newcomer saw {len(newcomer.lobby.peers)} peers"
                    f" after {JOIN_TIMEOUT_S:.0f} s"
                )
            await asyncio.sleep(0.005)
        seen_s = time.monotonic() - t0
        await asyncio.sleep(1.5)
        after = await workers.stats()
        return {
            "seen_s": seen_s,
            "pubs": counter.count - pubs,
            "to_peers": (after["received"] - before["received"]) * n / workers.peers,
            "to_newcomer": newcomer.stats.received,
            # less than the quiet baseline is measuring noise: no negative cost
            "cpu_peer_ms": max(
                0.0,
                (after["cpu"] - before["cpu"] - base_cpu_per_s * (time.monotonic() - w0))
                * 1000
                / workers.peers,
            ),
            "cpu_new_ms": (time.process_time() - cpu0) * 1000,
        }
    finally:
        await asyncio.wait_for(newcomer.close(), 60)


async def ramp(
    sizes: list[int],
    per: int,
    joins: int,
    idle_s: float,
    rate: float,
    debug: bool = False,
    drain_s: float = 300.0,
    idle_at: set[int] | None = None,
    time_limit_s: float = 3600.0,
    broker: LocalBroker | None = None,
    broker_url: str = "",
    namespace: str = "",
    remote: int = 0,
) -> tuple[list[dict[str, Any]], str]:
    """The lobby grows to each of ``sizes`` in turn on one broker; at each size, the
    joins and (``idle_s`` > 0) the idle lobby with the real heartbeat, then the backlog
    drained (not after the last).  ``idle_at``: the sizes with an idle phase (all if
    None).  When the peers have not all met within the step's limit or what is left of
    ``time_limit_s``, the idle phase still runs on the lobby as it is (all N connected,
    not all seen by all: said in the result) and the ramp stops there.  The results of
    the sizes reached, and why the ramp stopped ('' if it did not).  ``broker``: the
    local Mosquitto the bench started (closed here), else ``broker_url``, an existing
    one; ``namespace``: the lobby's (default a fresh one per run); ``remote``: peers of
    the lobby that other machines host (``--serve``), counted in each N (the figures per
    peer are those of the peers here; deliveries to the N peers are scaled to N)."""
    begun = time.monotonic()
    quiet(asyncio.get_running_loop(), debug)
    url = broker.url if broker is not None else broker_url
    namespace = namespace or f"bench{os.getpid()}"
    root = Topics(namespace).root
    stretch(STRETCHED_HEARTBEAT_MS)  # the main process: the counter and the newcomers
    counter = Counter()
    counting = asyncio.create_task(counter.run(url, root))
    # the setup joins with the stretched heartbeat (N * N / 20 idle checks a second
    # while they join would starve the broker on two shared cores); the joins measured
    # next with it too; the real heartbeat in the idle phase, then stretched again
    workers = Workers(url, namespace, debug)
    results: list[dict[str, Any]] = []
    failure = ""
    try:
        for n in sizes:
            print(f"N = {n} ...", file=sys.stderr, flush=True)
            added = n - workers.peers
            result: dict[str, Any] = {"n": n, "processes": 0, "idle": [], "failed_joins": 0}
            try:
                started = time.monotonic()
                # a limit for a hang, not a budget; and the whole run's
                limit = min(600 + 3 * added / rate, time_limit_s - (started - begun))
                try:
                    if n - remote < 1:
                        raise RuntimeError(f"N = {n} leaves no peer here beside {remote} remote ones")
                    await workers.grow(n - remote, per, STRETCHED_HEARTBEAT_MS, rate, started + limit)
                    await workers.caught_up(n - 1, started + limit)
                except TimeoutError as err:
                    if workers.peers < 2:
                        raise
                    # the idle phase still runs on the lobby as it is (said in the result)
                    failure = f"N = {n}: {err}"
                    now = await workers.stats()  # (a worker may have joined more since)
                    result["unmet"], result["online"] = now["min_seen"], now["peers"]
                result["processes"] = len(workers.procs)
                result["setup_s"] = time.monotonic() - started
                print(f"  N = {workers.peers} online after {result['setup_s']:.0f} s",
                      file=sys.stderr, flush=True)
                if failure:
                    print(f"  {failure}", file=sys.stderr, flush=True)
                    joins = 0  # a newcomer could not see everyone either
                    n = result["online"] + remote
                # the workers' own cost with nothing happening (timers)
                await asyncio.sleep(1.0)
                quiet0, t0 = await workers.stats(), time.monotonic()
                await asyncio.sleep(3.0)
                quiet1 = await workers.stats()
                base_cpu_per_s = (quiet1["cpu"] - quiet0["cpu"]) / (time.monotonic() - t0)
                result["base_cpu_ms"] = base_cpu_per_s * 1000 / workers.peers
                rows = []
                for _ in range(joins):
                    try:
                        rows.append(
                            await join(workers, counter, url, n, namespace, base_cpu_per_s)
                        )
                    except (ConnectionError, TimeoutError, RuntimeError) as err:
                        print(f"  N = {n}: a join failed: {err}", file=sys.stderr, flush=True)
                        result["failed_joins"] += 1
                if joins and not rows:
                    raise RuntimeError("every join failed")
                for key in rows[0] if rows else ():
                    result[key] = statistics.median(r[key] for r in rows)
                if rows:
                    result["seen_max_s"] = max(r["seen_s"] for r in rows)
                if idle_s > 0 and (idle_at is None or n in idle_at or failure):
                    result["idle"].append(
                        await idle(
                            workers, broker, counter, n, REAL_HEARTBEAT_MS, idle_s,
                            result["base_cpu_ms"], (url, namespace) if remote else None,
                        )
                    )
                    if n != sizes[-1] and not failure:
                        try:
                            result["idle"][-1]["drain_s"] = await drain(workers, drain_s)
                        except TimeoutError as err:
                            print(f"  N = {n}: {err}", file=sys.stderr, flush=True)
            except (RuntimeError, TimeoutError) as err:
                failure = f"N = {n}: {err}"
                if result["idle"]:
                    results.append(result)  # what was measured before it stopped
                break
            results.append(result)
            print(f"  {result}", file=sys.stderr, flush=True)
            if failure:
                break
    finally:
        try:
            await asyncio.wait_for(workers.stop(), 90)
        except (OSError, EOFError, TimeoutError, RuntimeError):
            pass
        for proc in workers.procs:
            if proc.is_alive():
                proc.kill()
        counting.cancel()
        await asyncio.gather(counting, return_exceptions=True)
        if broker is not None:
            broker.close()
    return results, failure


def receive_ms(r: dict) -> float:
    """Idle CPU per peer per second spent on what arrived: the idle CPU less the quiet
    baseline (timers, measured with the heartbeat stretched to 10 minutes)."""
    return max(0.0, r["idle_cpu_ms"] - r["base_cpu_ms"])


def render(head: list[str], lines: list[list[str]], markdown: bool) -> str:
    if markdown:
        out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        out += ["| " + " | ".join(row) + " |" for row in lines]
        return "\n".join(out)
    widths = [max(len(h), *(len(row[i]) for row in lines)) for i, h in enumerate(head)]
    out = ["  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True))]
    out += [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in lines
    ]
    return "\n".join(out)


def table(results: list[dict], markdown: bool) -> str:
    """The joins, one row per N."""
    head = [
        "N",
        "procs",
        "newcomer sees all (median / max)",
        "publications per join",
        "deliveries to the N peers",
        "deliveries to the newcomer",
        "CPU per peer per join",
        "newcomer CPU",
    ]
    lines = []
    for r in results:
        if "seen_s" not in r:
            continue
        lines.append(
            [
                str(r["n"]),
                str(r["processes"]),
                f"{r['seen_s'] * 1000:.0f} / {r['seen_max_s'] * 1000:.0f} ms"
                + (f" ({r['failed_joins']} joins failed)" if r.get("failed_joins") else ""),
                f"{r['pubs']:.0f}",
                f"{r['to_peers']:.0f}",
                f"{r['to_newcomer']:.0f}",
                f"{r['cpu_peer_ms']:.2f} ms" if r["cpu_peer_ms"] >= 0.005 else "< 0.01 ms",
                f"{r['cpu_new_ms']:.0f} ms",
            ]
        )
    return render(head, lines, markdown) if lines else ""


def idle_table(results: list[dict], markdown: bool) -> str:
    """The idle lobby, one row per N and heartbeat; per peer per second.

    A peer that cannot keep up (the shared cores give the bench's processes less than
    the lobby needs) handles fewer presences than were sent to it; the rest wait in
    the broker and the sockets (nothing is dropped unless the drop column says so).
    The receive CPU per presence is measured on what was handled; what a peer needs
    for everything sent to it is that cost times the deliveries sent, said as such.
    """
    head = [
        "N",
        "procs",
        "heartbeat",
        "publications / peer / s",
        "deliveries sent / peer / s",
        "handled / peer / s (share of sent)",
        "dropped / peer / s",
        "CPU / peer / s (timers alone)",
        "receive CPU per presence handled",
        "receive CPU / peer / s for all sent (per presence x sent)",
        "cores used: peers + broker",
        "connections lost",
        "backlog worked off in",
        "at a fixed 20 s heartbeat (before it grew with N): publications, deliveries, receive CPU / peer / s",
    ]
    lines = []
    for r in results:
        for i in r["idle"]:
            per = receive_ms(i) / i["idle_deliv"] if i["idle_deliv"] else 0.0
            needed = per * i["idle_sent"]
            scale = i["heartbeat_s"] / (REAL_HEARTBEAT_MS / 1000)
            lines.append(
                [
                    str(r["n"])
                    + (
                        f" (not all met: {r.get('online', r['n'])} online, one saw {r['unmet']})"
                        if "unmet" in r
                        else ""
                    ),
                    str(r["processes"]),
                    f"{i['heartbeat_s']:.0f} s",
                    f"{i['idle_pub']:.4f}",
                    f"{i['idle_sent']:.2f}",
                    f"{i['idle_deliv']:.2f} ({i['idle_deliv'] / i['idle_sent'] * 100:.0f} %)"
                    if i["idle_sent"]
                    else "-",
                    f"{i['idle_dropped']:.2f}",
                    f"{i['idle_cpu_ms']:.2f} ms ({i['base_cpu_ms']:.2f} ms)",
                    f"{per:.3f} ms" if i["idle_deliv"] else "-",
                    f"{needed:.2f} ms",
                    f"{i['workers_cores']:.2f} + "
                    + ("-" if i["broker_cores"] is None else f"{i['broker_cores']:.2f}"),
                    str(i["lost"]),
                    f"{i['drain_s']:.0f} s" if "drain_s" in i else "-",
                    (
                        f"{i['idle_pub'] * scale:.3f}, {i['idle_sent'] * scale:.1f}, "
                        f"{needed * scale:.2f} ms (scaled)"
                    )
                    if scale != 1
                    else "(this row)",
                ]
            )
    return render(head, lines, markdown) if lines else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="200,400,1000")
    parser.add_argument("--per-process", type=int, default=40)
    parser.add_argument("--joins", type=int, default=3)
    parser.add_argument("--idle-seconds", type=float, default=40)
    parser.add_argument(
        "--join-rate",
        type=float,
        default=5.0,
        help="setup joins per second, all workers",
    )
    parser.add_argument(
        "--drain-limit",
        type=float,
        default=300.0,
        help="seconds the peers may take to work off the idle phase's backlog before the next N",
    )
    parser.add_argument(
        "--idle-at", default="", help="the sizes with an idle phase, e.g. 200,1000 (default: all)"
    )
    parser.add_argument(
        "--time-limit",
        type=float,
        default=3600.0,
        help="seconds for the whole ramp: a size not reached by then is idled as it is, then the bench stops",
    )
    parser.add_argument(
        "--nice",
        type=int,
        default=10,
        help="run the bench and its workers at this niceness (a shared machine; the local"
        " broker keeps the bench's own)",
    )
    parser.add_argument(
        "--broker",
        default="",
        help="an existing broker's URL (e.g. mqtt://HOST:1883 on another machine) instead of"
        " a local Mosquitto started here; its CPU is then not measured",
    )
    parser.add_argument(
        "--namespace", default="", help="the lobby's namespace (default: a fresh one per run)"
    )
    parser.add_argument(
        "--serve",
        type=int,
        default=0,
        help="only host this many peers of the lobby --namespace on --broker (on another"
        " machine than the measuring bench, which counts them with --remote-peers) until"
        " --time-limit, following the heartbeat it sets",
    )
    parser.add_argument(
        "--remote-peers",
        type=int,
        default=0,
        help="peers of the lobby that other machines host (--serve), counted in --sizes",
    )
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--debug", action="store_true", help="print background errors with their tracebacks")
    args = parser.parse_args()
    load0 = os.getloadavg()
    if (args.serve or args.remote_peers) and not (args.broker and args.namespace):
        parser.error("--serve and --remote-peers need --broker and --namespace")
    if args.serve:
        if args.nice:
            os.nice(args.nice)
        try:
            why = asyncio.run(serve(args.serve, args.per_process, args.join_rate, args.broker,
                                    args.namespace, args.time_limit, args.debug))
        except KeyboardInterrupt:
            why = ""
        if why:
            print(f"bench_lobby --serve stopped: {why}", file=sys.stderr)
            sys.exit(1)
        return
    sizes = sorted(int(s) for s in args.sizes.split(","))
    try:
        broker = None
        if not args.broker:
            # The broker stands for a server of its own: it keeps the niceness the bench
            # was started with.  Niced with the workers, it got 1/41 of the cores beside
            # 40 worker processes (0.05 of a core at N = 1,000, measured 3 Dec): it then
            # took in less than a tenth of the heartbeats, and under load it answered
            # new peers' connects too late.
            enough_files(max(sizes))
            broker = LocalBroker(extra_config=BROKER_CONFIG).start()
        if args.nice:
            os.nice(args.nice)
        results, failure = asyncio.run(
            ramp(sizes, args.per_process, args.joins, args.idle_seconds, args.join_rate,
                 args.debug, args.drain_limit,
                 {int(s) for s in args.idle_at.split(",")} if args.idle_at else None,
                 args.time_limit, broker, args.broker, args.namespace, args.remote_peers)
        )
    except (RuntimeError, OSError, BrokerError) as err:
        results, failure = [], str(err)
    except KeyboardInterrupt:
        results, failure = [], "interrupted"
    failure = f"bench_lobby stopped: {failure}".replace("\n", " ") if failure else ""
    load1 = os.getloadavg()
    print(
        f"{platform.node()} · {os.cpu_count()} cores · Python {platform.python_version()}"
        f" · nice {os.nice(0)} · load average (1, 5, 15 min) at the start"
        f" {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}, at the end"
        f" {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}"
        + (f" · broker {args.broker} (not started here, its CPU not measured)" if args.broker else "")
    )
    for text in (table(results, args.markdown), idle_table(results, args.markdown)):
        if text:
            print(text)
            print()
    if QUIET_ERRORS:
        print(f"({QUIET_ERRORS} background errors while connections closed were ignored; --debug shows them)",
              file=sys.stderr)
    if failure:
        print(failure, file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
