"""What a lobby join and an idle lobby cost, with N real peers on a local Mosquitto.

Run: python bench/bench_lobby.py [--sizes 50,200,500] [--per-process 25] [--joins 5]
                                 [--idle-seconds 40] [--idle-max 200]
                                 [--big-heartbeat 200] [--markdown]

For each N a fresh Mosquitto is started and N ``Peer`` objects are spread over
``ceil(N / per-process)`` worker processes (so the figures are not one process's cost).
When every peer sees every other one:

1. **idle** (N <= ``--idle-max``): for ``--idle-seconds`` with the protocol's real 20 s
   heartbeat, publications (a subscriber on the namespace's ``#`` counts them), broker
   deliveries to the peers (their transports count them) and CPU, per peer per second;
   above ``--idle-max``, with ``--big-heartbeat`` seconds if given (2 shared cores cannot
   verify N * N / 20 presences a second at N = 1,000), and scaled back to the real
   heartbeat in the last column (deliveries and receive CPU grow with the heartbeat rate);
2. **joins**: ``--joins`` times, a newcomer peer (in the main process) connects; we
   measure the time from ``start()`` until its lobby lists all N, the publications on the
   namespace, the deliveries to the N existing peers and to the newcomer, and the CPU of
   the worker processes per existing peer and of the newcomer, over a window that ends
   1.5 s after the newcomer saw everyone (longer than the 1 s answer back-off).

For the setup joins and the join phase (and all of N > ``--idle-max`` without
``--big-heartbeat``) every process stretches the heartbeat to 10 minutes (the idle
heartbeat is set once all have met, each peer's phase spread over the period): on a real lobby each of N machines verifies N/20 presences per second,
but here 2 shared cores would verify all N * N / 20 of them, which at N = 500 is more
than they can do and would bury the join in idle work.  In every phase the presence TTL
and the silence limit are stretched too (the bench runs longer than a minute; nothing is
sent because of them).  Everything else is the real code.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import multiprocessing as mp
import os
import platform
import random
import statistics
import sys
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import aiomqtt

from p2p.net.broker import BrokerError, LocalBroker
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
    lobby_module.PRESENCE_TTL_S = 3_600  # read where used (p2p.peer.config.presence_ttl_s)
    lobby_module.SILENCE_MS = 7_200_000


# -- worker processes -------------------------------------------------------------------


def worker(
    conn: Connection, url: str, namespace: str, count: int, heartbeat: int, gap: float, debug: bool = False
) -> None:
    stretch(heartbeat)
    try:
        asyncio.run(_worker(conn, url, namespace, count, gap, debug))
    except (OSError, EOFError, KeyboardInterrupt) as err:  # the main process went away
        if debug:
            print(f"worker {os.getpid()}: {err}", file=sys.stderr)
    except Exception as err:  # noqa: BLE001 - reported to the main process in one line
        try:
            conn.send(("error", f"worker {os.getpid()}: {err}"))
        except OSError:
            pass


async def _worker(
    conn: Connection, url: str, namespace: str, count: int, gap: float, debug: bool = False
) -> None:
    loop = asyncio.get_running_loop()
    quiet(loop, debug)
    peers: list[Peer] = []
    last: Exception | None = None
    for i in range(count):
        for attempt in range(5):
            peer = Peer(
                url, nick=f"w{os.getpid()}-{i}", namespace=namespace, connect_timeout=60
            )
            try:
                await peer.start()
                break
            except ConnectionError as err:
                last = err
                await peer.close()
                await asyncio.sleep(1 + attempt)
        else:
            raise RuntimeError(f"a bench peer could not connect 5 times: {last}")
        peers.append(peer)
        await asyncio.sleep(gap)  # a ramp: joins at --join-rate, not a storm
    conn.send(("ready", count))
    while True:
        command, arg = await loop.run_in_executor(None, conn.recv)
        if command == "stats":
            conn.send(
                (
                    "stats",
                    {
                        "min_seen": min(len(p.lobby.peers) for p in peers),
                        # handled: taken off the inbound queue and dispatched
                        "received": sum(p.stats.received for p in peers),
                        # arrived: what the broker delivered and the transport read
                        "arrived": sum(
                            p.transport.stats["received"] + p.transport.stats["dropped"]
                            for p in peers
                        ),
                        "drops": drops(peers),
                        "cpu": time.process_time(),
                    },
                )
            )
        elif command == "heartbeat":
            lobby_module.HEARTBEAT_MS = arg
            # spread the peers' heartbeats over the period (bench-only: else all N
            # would send at the next tick and stay in step, a burst every period)
            rng = random.Random(os.getpid())
            for p in peers:
                if p.lobby._last_presence is not None:
                    p.lobby._last_presence = p.now_ms() - rng.randrange(arg)
            conn.send(("ok", None))
        elif command == "stop":
            await asyncio.gather(*(p.close() for p in peers), return_exceptions=True)
            conn.send(("stopped", None))
            return


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


class Workers:
    """The worker processes of one lobby size, driven over pipes."""

    def __init__(
        self, url: str, namespace: str, n: int, per: int, heartbeat: int, rate: float, debug: bool = False
    ):
        ctx = mp.get_context("spawn")
        self.conns: list[Connection] = []
        self.procs: list[Any] = []
        sizes = [per] * (n // per) + ([n % per] if n % per else [])
        gap = len(sizes) / rate  # seconds between two joins of one worker
        for size in sizes:
            parent, child = ctx.Pipe()
            proc = ctx.Process(
                target=worker,
                args=(child, url, namespace, size, heartbeat, gap, debug),
                daemon=True,
            )
            proc.start()
            self.conns.append(parent)
            self.procs.append(proc)

    async def _recv(self, conn: Connection, timeout: float) -> Any:
        """One answer of a worker, or ``TimeoutError`` (a hung or dead worker)."""
        loop = asyncio.get_running_loop()
        if not await loop.run_in_executor(None, conn.poll, timeout):
            raise TimeoutError(f"a worker did not answer in {timeout:.0f} s")
        answer = conn.recv()
        if answer[0] == "error":
            raise RuntimeError(answer[1])
        return answer

    async def ask(self, command: str, arg: Any = None, timeout: float = ASK_TIMEOUT_S) -> list[Any]:
        for conn in self.conns:
            conn.send((command, arg))
        return [(await self._recv(conn, timeout))[1] for conn in self.conns]

    async def ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        for conn in self.conns:
            await self._recv(conn, max(1.0, deadline - time.monotonic()))

    async def stats(self) -> dict[str, float]:
        parts = await self.ask("stats")
        merged: dict[str, int] = {}
        for p in parts:
            for key, value in p["drops"].items():
                merged[key] = merged.get(key, 0) + value
        return {
            "min_seen": min(p["min_seen"] for p in parts),
            "received": sum(p["received"] for p in parts),
            "arrived": sum(p["arrived"] for p in parts),
            "dropped": sum(merged.values()),
            "drops": merged,
            "cpu": sum(p["cpu"] for p in parts),
        }

    async def stop(self) -> None:
        await self.ask("stop", timeout=60)
        for proc in self.procs:
            proc.join(10)


# -- measuring ----------------------------------------------------------------------------


class Counter:
    """A subscriber on the namespace's ``#``: counts publications (not retained copies)."""

    def __init__(self) -> None:
        self.count = 0
        self.topics: list[str] = []

    async def run(self, port: int, root: str) -> None:
        async with aiomqtt.Client(
            "127.0.0.1", port, identifier=f"count-{os.getpid()}"
        ) as c:
            await c.subscribe(root + "/#")
            async for message in c.messages:
                if not message.retain:
                    self.count += 1
                    self.topics.append(message.topic.value)


def broker_cpu_s(broker: LocalBroker) -> float:
    """CPU seconds the Mosquitto child has used so far (``/proc``; 0 where there is none)."""
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
    workers: Workers, broker: LocalBroker, counter: Counter, n: int, heartbeat: int,
    window_s: float, base_cpu_ms: float,
) -> dict[str, Any]:
    """Idle the lobby with ``heartbeat`` ms for whole periods of ``window_s``: per peer
    per second, publications, deliveries sent, arrived and handled, CPU."""
    await workers.ask("heartbeat", heartbeat)
    # each peer's next heartbeat falls at a random point of the period (the "heartbeat"
    # command spreads them), so the publication rate is steady from the start
    await asyncio.sleep(2.0)
    before, pubs, b0 = await workers.stats(), counter.count, broker_cpu_s(broker)
    t0 = time.monotonic()
    # whole heartbeat periods: each peer publishes the same number of times in the
    # window, whatever the phase of its heartbeat
    await asyncio.sleep(heartbeat / 1000 * max(1, round(window_s * 1000 / heartbeat)))
    after, elapsed = await workers.stats(), time.monotonic() - t0
    broker_s = broker_cpu_s(broker) - b0
    per_s = 1 / elapsed / n  # per peer per second
    published = counter.count - pubs
    r: dict[str, Any] = {
        "heartbeat_s": heartbeat / 1000,
        "idle_s": elapsed,
        "idle_pub": published * per_s,
        # every presence goes to all N peers (its sender too: the presence subscription
        # takes retained messages, so it is not a noLocal one)
        "idle_sent": published / elapsed,
        "idle_arrived": (after["arrived"] - before["arrived"]) * per_s,
        "idle_deliv": (after["received"] - before["received"]) * per_s,
        "idle_dropped": (after["dropped"] - before["dropped"]) * per_s,
        "idle_cpu_ms": (after["cpu"] - before["cpu"]) * 1000 * per_s,
        "base_cpu_ms": base_cpu_ms,
        "workers_cores": (after["cpu"] - before["cpu"]) / elapsed,
        "broker_cores": broker_s / elapsed,
        "drops": {
            k: v - before["drops"].get(k, 0)
            for k, v in after["drops"].items()
            if v - before["drops"].get(k, 0)
        },
    }
    print(f"  N = {n} idle, heartbeat {heartbeat / 1000:g} s: {r}", file=sys.stderr, flush=True)
    await workers.ask("heartbeat", STRETCHED_HEARTBEAT_MS)
    await asyncio.sleep(1)
    return r


async def measure(
    n: int,
    per: int,
    joins: int,
    idle_s: float,
    idle_max: int,
    rate: float,
    debug: bool = False,
    big_heartbeat_s: float = 0.0,
    overload: bool = False,
) -> dict:
    quiet(asyncio.get_running_loop(), debug)
    enough_files(n)
    broker = LocalBroker(extra_config=BROKER_CONFIG).start()
    namespace = f"bench{n}"
    root = Topics(namespace).root
    # idle: with the real heartbeat up to --idle-max peers; above, with --big-heartbeat
    # (if given), a longer one that 2 shared cores can verify (every delivery is one
    # presence checked), scaled back to the real heartbeat in the table; and with
    # --overload, above --idle-max with the real heartbeat too, last (to measure
    # whether the peers keep up: if not, a backlog builds that would spoil what follows)
    heartbeats: list[int] = []
    if idle_s > 0:
        if n <= idle_max:
            heartbeats = [REAL_HEARTBEAT_MS]
        else:
            heartbeats = [int(big_heartbeat_s * 1000)] if big_heartbeat_s > 0 else []
            heartbeats += [REAL_HEARTBEAT_MS] if overload else []
    stretch(STRETCHED_HEARTBEAT_MS)  # the main process: the counter and the newcomers
    counter = Counter()
    counting = asyncio.create_task(counter.run(broker.port, root))
    result: dict[str, Any] = {"n": n, "processes": math.ceil(n / per), "idle": []}
    # the setup joins with the stretched heartbeat (N * N / 20 idle checks a second
    # while they join would starve the broker on two shared cores); the joins measured
    # next with it too; the idle heartbeats last
    workers = Workers(broker.url, namespace, n, per, STRETCHED_HEARTBEAT_MS, rate, debug)
    try:
        started = time.monotonic()
        await workers.ready(timeout=600 + 3 * n / rate)  # a limit for a hang, not a budget
        while (seen := (await workers.stats())["min_seen"]) < n - 1:
            if time.monotonic() - started > 600 + 3 * n / rate:
                raise TimeoutError(
                    f"N = {n}: the peers did not all meet in {600 + 3 * n / rate:.0f} s"
                    f" (one sees only {seen} of {n - 1})"
                )
            await asyncio.sleep(0.5)
        result["setup_s"] = time.monotonic() - started
        # the workers' own cost with nothing happening (timers), subtracted per join
        await asyncio.sleep(1.0)
        quiet0, t0 = await workers.stats(), time.monotonic()
        await asyncio.sleep(3.0)
        quiet1 = await workers.stats()
        base_cpu_per_s = (quiet1["cpu"] - quiet0["cpu"]) / (time.monotonic() - t0)
        result["base_cpu_ms"] = base_cpu_per_s * 1000 / n
        rows = []
        result["failed_joins"] = 0
        for _ in range(joins):
            await asyncio.sleep(1.0)
            before, pubs = await workers.stats(), counter.count
            cpu0, w0 = time.process_time(), time.monotonic()
            newcomer = Peer(
                broker.url, nick="newcomer", namespace=namespace, connect_timeout=JOIN_TIMEOUT_S
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
            except (ConnectionError, TimeoutError, RuntimeError) as err:
                print(f"  N = {n}: a join failed: {err}", file=sys.stderr, flush=True)
                result["failed_joins"] += 1
                await asyncio.wait_for(newcomer.close(), 60)
                continue
            seen_s = time.monotonic() - t0
            await asyncio.sleep(1.5)
            after = await workers.stats()
            rows.append(
                {
                    "seen_s": seen_s,
                    "pubs": counter.count - pubs,
                    "to_peers": after["received"] - before["received"],
                    "to_newcomer": newcomer.stats.received,
                    # less than the quiet baseline is measuring noise: no negative cost
                    "cpu_peer_ms": max(
                        0.0,
                        (after["cpu"] - before["cpu"] - base_cpu_per_s * (time.monotonic() - w0))
                        * 1000
                        / n,
                    ),
                    "cpu_new_ms": (time.process_time() - cpu0) * 1000,
                }
            )
            await asyncio.wait_for(newcomer.close(), 60)
        if joins and not rows:
            raise RuntimeError(f"N = {n}: every join failed")
        for key in rows[0] if rows else ():
            result[key] = statistics.median(r[key] for r in rows)
        if rows:
            result["seen_max_s"] = max(r["seen_s"] for r in rows)
        for heartbeat in heartbeats:
            result["idle"].append(
                await idle(workers, broker, counter, n, heartbeat, idle_s, result["base_cpu_ms"])
            )
    finally:
        try:
            await asyncio.wait_for(workers.stop(), 60)
        except (OSError, EOFError, TimeoutError, RuntimeError):
            pass
        for proc in workers.procs:
            if proc.is_alive():
                proc.kill()
        counting.cancel()
        await asyncio.gather(counting, return_exceptions=True)
        broker.close()
    return result


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
    """The idle lobby, one row per N and heartbeat; per peer per second."""
    head = [
        "N",
        "procs",
        "heartbeat",
        "publications / peer / s",
        "deliveries sent / peer / s",
        "arrived / peer / s",
        "handled / peer / s (kept up)",
        "CPU / peer / s (of it receiving)",
        "receive CPU per presence",
        "cores used: peers + broker",
        "at the real 20 s heartbeat: publications, deliveries, receive CPU / peer / s",
    ]
    lines = []
    for r in results:
        for i in r["idle"]:
            recv = receive_ms(i)
            scale = i["heartbeat_s"] / 20
            lines.append(
                [
                    str(r["n"]),
                    str(r["processes"]),
                    f"{i['heartbeat_s']:.0f} s",
                    f"{i['idle_pub']:.4f}",
                    f"{i['idle_sent']:.2f}",
                    f"{i['idle_arrived']:.2f}",
                    f"{i['idle_deliv']:.2f} ({i['idle_deliv'] / i['idle_sent'] * 100:.0f} %)"
                    if i["idle_sent"]
                    else "-",
                    f"{i['idle_cpu_ms']:.2f} ms ({recv:.2f} ms)",
                    f"{recv / i['idle_deliv']:.3f} ms" if i["idle_deliv"] else "-",
                    f"{i['workers_cores']:.2f} + {i['broker_cores']:.2f}",
                    (
                        f"{i['idle_pub'] * scale:.3f}, {i['idle_deliv'] * scale:.1f}, "
                        f"{recv * scale:.2f} ms (scaled)"
                    )
                    if scale != 1
                    else "(this row)",
                ]
            )
    return render(head, lines, markdown) if lines else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="50,200,500")
    parser.add_argument("--per-process", type=int, default=25)
    parser.add_argument("--joins", type=int, default=5)
    parser.add_argument("--idle-seconds", type=float, default=40)
    parser.add_argument(
        "--idle-max",
        type=int,
        default=200,
        help="largest N idled with the real 20 s heartbeat; above, --big-heartbeat",
    )
    parser.add_argument(
        "--big-heartbeat",
        type=float,
        default=0.0,
        help="seconds: idle N > --idle-max with this heartbeat (0: no idle phase there)",
    )
    parser.add_argument(
        "--join-rate",
        type=float,
        default=10.0,
        help="setup joins per second, all workers",
    )
    parser.add_argument(
        "--overload",
        action="store_true",
        help="above --idle-max, also idle with the real 20 s heartbeat, last: do the peers keep up?",
    )
    parser.add_argument(
        "--nice",
        type=int,
        default=10,
        help="run the bench, its workers and its broker at this niceness (a shared machine)",
    )
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--debug", action="store_true", help="print background errors with their tracebacks")
    args = parser.parse_args()
    if args.nice:
        os.nice(args.nice)
    load0 = os.getloadavg()
    results = []
    failure = ""
    for n in (int(s) for s in args.sizes.split(",")):
        print(f"N = {n} ...", file=sys.stderr, flush=True)
        try:
            results.append(
                asyncio.run(
                    measure(
                        n,
                        args.per_process,
                        args.joins,
                        args.idle_seconds,
                        args.idle_max,
                        args.join_rate,
                        args.debug,
                        args.big_heartbeat,
                        args.overload,
                    )
                )
            )
        except (RuntimeError, TimeoutError, OSError, BrokerError) as err:
            failure = f"bench_lobby: N = {n} stopped: {err}".replace("\n", " ")
            break
        print(f"  {results[-1]}", file=sys.stderr, flush=True)
    load1 = os.getloadavg()
    print(
        f"{platform.node()} · {os.cpu_count()} cores · Python {platform.python_version()}"
        f" · nice {os.nice(0)} · load average (1, 5, 15 min) at the start"
        f" {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}, at the end"
        f" {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}"
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
