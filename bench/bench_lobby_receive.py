"""What one presence costs the peer that receives it, and where that CPU goes.

Run: python bench/bench_lobby_receive.py [--receivers 20] [--senders 200] [--rate 50]
                                         [--window 10] [--runs 3] [--profile]
                                         [--compare PATH] [--nice 10]

A local Mosquitto; ``--receivers`` real ``Peer`` objects in one child process; in this
process ``--senders`` keys that each publish their presence (the lobby's own
``Lobby`` builds and signs it, exactly as a heartbeat) retained, QoS 0, with the
message expiry a peer gives it, ``--rate`` presences a second in all.  The child first
lists every sender (their retained presences), then measures its own CPU with nobody
publishing (the timers alone), then while the senders publish: the **receive CPU per
presence handled** is the difference over the presences its peers handled.  Only the
child's CPU is counted (the senders and the broker are other processes).

``--compare PATH``: a second source tree (e.g. a worktree of ``main``) whose receivers
run alternately with this tree's in the same run, so the two costs are side by side
(medians over ``--runs``).  ``--profile``: one more run of this tree under ``cProfile``,
its top functions by own time and the share of the main parts (MQTT client, event
loop, inbound lanes, event parse, signature check, lobby rules).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
TREE = os.environ.get("P2P_TREE") or str(HERE)
sys.path.insert(0, TREE)

import aiomqtt  # noqa: E402
from paho.mqtt.packettypes import PacketTypes  # noqa: E402
from paho.mqtt.properties import Properties  # noqa: E402

from p2p.protocol import lobby as lobby_module  # noqa: E402
from p2p.protocol.effects import Publish  # noqa: E402
from p2p.protocol.identity import Identity  # noqa: E402
from p2p.protocol.lobby import Lobby  # noqa: E402
from p2p.protocol.topics import Topics  # noqa: E402

# -- the receivers (child process) ----------------------------------------------------


def _say(*words: object) -> None:
    print(*words, flush=True)


async def _receivers(url: str, namespace: str, count: int, senders: int, window: float,
                     profile: str) -> None:
    import logging

    logging.basicConfig(level=logging.CRITICAL)
    lobby_module.HEARTBEAT_MS = 3_600_000  # the receivers' own heartbeats stay out of it
    from p2p.peer import Peer

    peers = []
    for i in range(count):
        peer = Peer(url, nick=f"r{i}", namespace=namespace, connect_timeout=60)
        await peer.start()
        peers.append(peer)
    deadline = time.monotonic() + 120
    while min(len(p.lobby.peers) for p in peers) < senders + count - 1:
        if time.monotonic() > deadline:
            _say("error", "the receivers did not list every sender in 120 s")
            return
        await asyncio.sleep(0.2)
    await asyncio.sleep(1.0)
    c0, t0 = time.process_time(), time.monotonic()
    await asyncio.sleep(window / 2)
    base = (time.process_time() - c0) / (time.monotonic() - t0)
    _say("go")  # the senders publish from now on
    await asyncio.sleep(1.0)
    r0, c0, t0 = sum(p.stats.received for p in peers), time.process_time(), time.monotonic()
    profiler = None
    if profile:
        import cProfile

        # CPU time, not wall time: other processes on the machine do not inflate it
        profiler = cProfile.Profile(time.process_time)
        profiler.enable()
    await asyncio.sleep(window)
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(profile)
    cpu, elapsed = time.process_time() - c0, time.monotonic() - t0
    handled = sum(p.stats.received for p in peers) - r0
    drops = {}
    for p in peers:
        for key, value in p.stats.dropped.items():
            drops[key] = drops.get(key, 0) + value
    result = {
        "handled": handled,
        "elapsed": elapsed,
        "cpu": cpu,
        "base_per_s": base,
        "per_presence_ms": (cpu - base * elapsed) * 1000 / handled if handled else None,
        "drops": drops,
        "tree": str(Path(sys.modules["p2p"].__file__ or "").parent.parent),
    }
    _say("result", json.dumps(result))
    await asyncio.gather(*(p.close() for p in peers), return_exceptions=True)


# -- the senders (this process) -----------------------------------------------------


def _sender_lobbies(namespace: str, count: int) -> list[Lobby]:
    topics = Topics(namespace)
    out = []
    for i in range(count):
        seed = hashlib.sha256(f"bench-sender-{i}".encode()).digest()
        lobby = Lobby(Identity.from_seed(seed), f"s{i}", os.urandom(16), topics)
        lobby.will(lobby_module_now())
        out.append(lobby)
    return out


def lobby_module_now() -> int:
    return time.time_ns() // 1_000_000


async def _publish(client: aiomqtt.Client, lobby: Lobby) -> None:
    (effect,) = lobby.set_busy(False, lobby_module_now())
    assert isinstance(effect, Publish)
    props = Properties(PacketTypes.PUBLISH)  # type: ignore[no-untyped-call]
    props.MessageExpiryInterval = lobby_module.PRESENCE_TTL_S
    await client.publish(
        effect.route.topic, effect.event.raw, qos=0, retain=True, properties=props
    )


async def _run_once(url: str, port: int, tree: str, args: argparse.Namespace,
                    profile: str = "") -> dict:
    namespace = f"rx{os.getpid()}x{time.monotonic_ns() % 10**9}"
    lobbies = _sender_lobbies(namespace, args.senders)
    async with aiomqtt.Client(
        "127.0.0.1", port, protocol=aiomqtt.ProtocolVersion.V5, identifier=f"s{namespace}"
    ) as client:
        for lobby in lobbies:  # retained: the receivers list them on subscribing
            await _publish(client, lobby)
        env = dict(os.environ, P2P_TREE=tree)
        child = await asyncio.create_subprocess_exec(
            sys.executable, __file__, "--role", "receivers", "--url", url,
            "--namespace", namespace, "--receivers", str(args.receivers),
            "--senders", str(args.senders), "--window", str(args.window),
            "--profile-out", profile,
            env=env, stdout=asyncio.subprocess.PIPE,  # (at our niceness)
        )
        assert child.stdout is not None
        result: dict = {}
        publishing: asyncio.Task | None = None

        async def publish_forever() -> None:
            gap = 1 / args.rate
            i = 0
            next_at = time.monotonic()
            while True:
                try:
                    await _publish(client, lobbies[i % len(lobbies)])
                except aiomqtt.MqttError:
                    return  # the run is over (the broker closed the connection)
                i += 1
                next_at += gap
                await asyncio.sleep(max(0.0, next_at - time.monotonic()))

        try:
            async with asyncio.timeout(300):
                while line := (await child.stdout.readline()).decode().strip():
                    word, _, rest = line.partition(" ")
                    if word == "go":
                        publishing = asyncio.create_task(publish_forever())
                    elif word == "result":
                        result = json.loads(rest)
                    elif word == "error":
                        raise RuntimeError(rest)
        finally:
            if publishing is not None:
                publishing.cancel()
            await child.wait()
    if not result:
        raise RuntimeError("the receivers' process ended without a result")
    return result


PARTS = [
    ("MQTT client (paho, aiomqtt)", ("paho", "aiomqtt")),
    ("event loop (asyncio, selectors)", ("asyncio", "selectors")),
    ("transport and inbound lanes", ("p2p/net/",)),
    ("canonical bytes and event parse", ("p2p/protocol/canonical", "p2p/protocol/events", "json")),
    ("signature check", ("cryptography", "identity.py")),
    ("lobby rules", ("p2p/protocol/lobby", "p2p/protocol/clocks", "p2p/protocol/topics")),
    ("peer (edge, lobby link, notifications)", ("p2p/peer/",)),
]


def _show_profile(path: str, handled: int) -> None:
    import pstats

    stats = pstats.Stats(path)
    table = stats.stats  # type: ignore[attr-defined]
    total = sum(v[2] for v in table.values())
    by_part = dict.fromkeys([name for name, _ in PARTS] + ["other"], 0.0)
    for (filename, _line, func), (_cc, _nc, tt, _ct, _callers) in table.items():
        where = f"{filename}:{func}"
        for name, keys in PARTS:
            if any(k in where for k in keys):
                by_part[name] += tt
                break
        else:
            by_part["other"] += tt
    print(f"\nProfile in {path} (CPU time; cProfile inflates it): {total * 1000 / handled:.3f} ms per presence handled")
    for name, tt in sorted(by_part.items(), key=lambda kv: -kv[1]):
        print(f"  {name:42s} {tt * 1e6 / handled:7.1f} us  {tt / total * 100:5.1f} %")
    print()
    stats.sort_stats("tottime").print_stats(30)


async def _main(args: argparse.Namespace) -> None:
    from p2p.net.broker import LocalBroker

    trees = [("this tree", str(HERE))]
    if args.compare:
        trees.append(("compare", str(Path(args.compare).resolve())))
    with LocalBroker() as broker:
        rows: dict[str, list[dict]] = {name: [] for name, _ in trees}
        for _ in range(args.runs):
            for name, tree in trees:
                r = await _run_once(broker.url, broker.port, tree, args)
                rows[name].append(r)
                assert r["tree"] == tree, (r["tree"], tree)  # the code we meant to measure
                print(f"  {name}: {r['per_presence_ms']:.4f} ms per presence"
                      f" ({r['handled']} handled, drops {r['drops']})", file=sys.stderr, flush=True)
        medians = {}
        for name, tree in trees if args.runs else ():
            per = statistics.median(r["per_presence_ms"] for r in rows[name])
            medians[name] = per
            base = statistics.median(r["base_per_s"] for r in rows[name]) * 1000 / args.receivers
            print(f"{name} ({tree}): receive CPU per presence handled, median of"
                  f" {args.runs}: {per:.4f} ms (timers alone {base:.3f} ms per peer per s)")
        if args.compare and args.runs:
            print(f"ratio this tree / compare: {medians['this tree'] / medians['compare']:.2f}")
        if args.profile:
            out = f"/tmp/bench_lobby_receive.{os.getpid()}.prof"
            r = await _run_once(broker.url, broker.port, str(HERE), args, profile=out)
            _show_profile(out, r["handled"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--role", default="main", help=argparse.SUPPRESS)
    parser.add_argument("--url", default="", help=argparse.SUPPRESS)
    parser.add_argument("--namespace", default="", help=argparse.SUPPRESS)
    parser.add_argument("--profile-out", default="", help=argparse.SUPPRESS)
    parser.add_argument("--receivers", type=int, default=20)
    parser.add_argument("--senders", type=int, default=200)
    parser.add_argument("--rate", type=float, default=50.0, help="presences a second, all senders")
    parser.add_argument("--window", type=float, default=10.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--compare", default="", help="a second source tree, run alternately")
    parser.add_argument("--nice", type=int, default=10)
    args = parser.parse_args()
    if args.role == "receivers":
        asyncio.run(_receivers(args.url, args.namespace, args.receivers, args.senders,
                               args.window, args.profile_out))
        return
    if args.nice:
        os.nice(args.nice)
    load0 = os.getloadavg()
    asyncio.run(_main(args))
    load1 = os.getloadavg()
    print(f"{platform.node()} · {os.cpu_count()} cores · Python {platform.python_version()}"
          f" · load average at the start {load0[0]:.2f}, at the end {load1[0]:.2f}")


if __name__ == "__main__":
    main()
