"""Move latency between real peers, side by side with raw MQTT on the same broker.

Run: python bench/bench_latency.py [--runs 3] [--think 0.15] [--broker URL] [--markdown]
     python bench/bench_latency.py --compare ../main [--runs 3] [--markdown]

One command prints the whole table.  Every run measures, in turn, on one local
Mosquitto (or ``--broker``), so raw MQTT and our moves share the same load:

1. raw aiomqtt QoS 1 in one process: one client publishes, another receives (one-way
   delivery), and a ping-pong between the two (round trip), back to back (``--raw``
   each) and at the moves' pace (64 round trips, ``--think`` s before each);
2. raw aiomqtt QoS 1 round trip **between two processes**: this process pings, an echo
   process of its own answers; back to back and at the moves' pace;
3. ``p2p`` moves with **all peers in one process**: 2 and 3 peers play Viergewinnt 3D to
   its end (64 moves); for every move, the time from ``round.play(move)`` on the mover
   (check, sign, apply locally, publish) until *every* other peer has received it,
   checked it (signature, chain, seat, legality, state hash) and applied it;
4. the same with **one process per peer**: the mover stamps ``time.monotonic()`` before
   ``play()``, each other peer when it has applied the move (on Linux the monotonic clock
   is one clock for every process), and a move takes from the mover's stamp to the
   latest of the others';
5. one row **back to back**: 2 peers in one process playing each move the moment it is
   their turn, without thinking time.

Moves are played **at a person's pace**: each mover thinks ``--think`` seconds (0.15 s by
default, as in ``bench_flood.py``) before its move, so samples never overlap and the
transport's publish pacer (``p2p.net.transport``: a burst of ``PUBLISH_BURST``, then
``PUBLISH_RATE_PER_S`` per second and connection, kept for hosted brokers' rate limits)
never holds a move; the table says how many publishes it held.  The back-to-back row is
there to show what the pacer does to 64 moves in a row (they wait for its tokens).
Every ``p2p`` row is given as a multiple of the raw round trip measured the same way:
at the moves' pace (a pause of ``--think`` before each ping; after a pause a machine may
answer about twice as slowly as back to back) or back to back, in one process or
between two processes; issue 28's goals are at most 1.3x with 2 peers and 1.8x with 3,
both ways.

``--compare TREE`` (e.g. a worktree of main) measures only the rows of all peers in one
process, this tree and ``TREE`` in turn (each run once each, alternating, on one broker,
each in a fresh process of its own), and prints them side by side: the raw round trip
at the moves' pace and the 2- and 3-peer moves with their ratios.

Also printed: messages and bytes per move; verifying and replaying a finished 64-move
log; event-loop stalls while a strong computer seat plays; CPU to sign and check a move
event.  ``--markdown`` prints Markdown for ``docs/performance.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import aiomqtt

from p2p.games import Game
from p2p.net.broker import LocalBroker
from p2p.net.transport import NODELAY, parse_broker_url
from p2p.peer import Peer, Round
from p2p.protocol.replay import replay_log
from p2p.protocol.round import verify_chain

THINK_S = 0.15
"""A person's pause before each move: long enough that the publish pacer never binds."""
WAIT_S = 60.0
"""The longest any wait of the bench may take (a stuck run fails instead of hanging)."""


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]


def ms(value: float) -> str:
    return f"{value * 1000:.3f}"


def _client(host: str, port: int, name: str) -> aiomqtt.Client:
    return aiomqtt.Client(
        host, port, identifier=f"bench-{name}-{os.getpid()}", socket_options=[NODELAY]
    )


async def raw_mqtt(
    host: str, port: int, count: int, paced: int, think: float
) -> tuple[list[float], list[float], list[float]]:
    """One-way QoS 1 delivery times and QoS 1 ping-pong round trips in one process, in
    seconds: ``count`` of each back to back, then ``paced`` round trips with ``think``
    seconds before each (as the moves are played)."""
    one_way: list[float] = []
    round_trip: list[float] = []
    at_pace: list[float] = []
    async with _client(host, port, "a") as a, _client(host, port, "b") as b:
        topic = f"bench/{os.getpid()}"
        await b.subscribe(topic + "/ping", qos=1)
        await a.subscribe(topic + "/pong", qos=1)
        payload = b"x" * 400  # about the size of a signed move event
        b_messages = b.messages
        a_messages = a.messages
        for _ in range(count):
            start = time.perf_counter()
            await a.publish(topic + "/ping", payload, qos=1)
            await b_messages.__anext__()
            one_way.append(time.perf_counter() - start)
        for _ in range(count):
            start = time.perf_counter()
            await a.publish(topic + "/ping", payload, qos=1)
            await b_messages.__anext__()
            await b.publish(topic + "/pong", payload, qos=1)
            await a_messages.__anext__()
            round_trip.append(time.perf_counter() - start)
        for _ in range(paced):
            await asyncio.sleep(think)
            start = time.perf_counter()
            await a.publish(topic + "/ping", payload, qos=1)
            await b_messages.__anext__()
            await b.publish(topic + "/pong", payload, qos=1)
            await a_messages.__anext__()
            at_pace.append(time.perf_counter() - start)
    return one_way, round_trip, at_pace


async def echo_worker(host: str, port: int, topic: str) -> None:
    """The other process of the raw round trip: answers each ping with a pong."""
    async with _client(host, port, "echo") as client:
        await client.subscribe(topic + "/ping", qos=1)
        print("ready", flush=True)
        async for message in client.messages:
            if message.payload == b"stop":
                return
            await client.publish(topic + "/pong", message.payload, qos=1)


async def raw_between_processes(
    host: str, port: int, count: int, paced: int, think: float
) -> tuple[list[float], list[float]]:
    """QoS 1 ping-pong round trips between this process and an echo process, in seconds
    (the same exchange as ``raw_mqtt``'s, the answer made in another process): ``count``
    back to back, ``paced`` with ``think`` seconds before each."""
    topic = f"bench/x{os.getpid()}"
    echo = await _spawn("echo", "--host", host, "--port", str(port), "--topic", topic)
    try:
        await _expect(echo, "ready")
        round_trip: list[float] = []
        at_pace: list[float] = []
        async with _client(host, port, "ping") as a:
            await a.subscribe(topic + "/pong", qos=1)
            messages = a.messages
            payload = b"x" * 400
            for i in range(count + paced):
                if i >= count:
                    await asyncio.sleep(think)
                start = time.perf_counter()
                await a.publish(topic + "/ping", payload, qos=1)
                await asyncio.wait_for(messages.__anext__(), WAIT_S)
                (round_trip if i < count else at_pace).append(time.perf_counter() - start)
            await a.publish(topic + "/ping", b"stop", qos=1)
        await asyncio.wait_for(echo.wait(), WAIT_S)
        return round_trip, at_pace
    finally:
        if echo.returncode is None:
            echo.kill()
            await echo.wait()


# -- one seat, the same code in one process and in a process per peer -----------------------


def _my_move(rnd: Round) -> int:
    """The ply of the newest move we signed in the chain."""
    me = rnd.machine.me.public_key
    return next(
        int(e.body["ply"])
        for e in reversed(rnd.machine.state.chain)
        if e.kind == "move" and e.pk == me
    )


def spread(game: Game) -> str:
    """Legal move number ``7 * ply`` (modulo their count): moves all over the cube."""
    legal = game.legal_moves()
    return legal[(7 * len(game.history())) % len(legal)]


async def play_seat(
    rnd: Round, think: float, choose: Callable[[Game], str] = spread
) -> dict[str, Any]:
    """Play our seat of ``rnd`` to the end (``choose`` picks each move, after ``think``
    seconds); when we played each move and when each other seat's move was applied here
    (``time.monotonic()``, by ply)."""
    played: dict[int, float] = {}
    applied: dict[int, float] = {}
    me = rnd.machine.me.public_key
    seen = len(rnd.machine.state.chain)

    def changed(r: Round) -> bool:
        return len(r.machine.state.chain) != seen or r.is_over or r.is_my_turn

    while True:
        await rnd.wait_until(changed, WAIT_S)
        now = time.monotonic()
        chain = rnd.machine.state.chain
        for event in chain[seen:]:
            if event.kind == "move" and event.pk != me:
                applied[int(event.body["ply"])] = now
        seen = len(chain)
        if rnd.is_over:
            break
        if not rnd.is_my_turn:
            continue
        if think:
            await asyncio.sleep(think)
        game = rnd.game
        assert game is not None
        move = choose(game)
        start = time.monotonic()
        await rnd.play(move)
        played[_my_move(rnd)] = start
        seen = len(rnd.machine.state.chain)  # (nobody else moves before ours reached them)
    return {"played": played, "applied": applied, "hash": rnd.state_hash}


def latencies(seats: list[dict[str, Any]]) -> list[float]:
    """Per move: from the mover's stamp to the latest other seat's (seconds)."""
    found: list[float] = []
    for seat in seats:
        for ply, start in seat["played"].items():
            others = [s["applied"].get(ply) for s in seats if s is not seat]
            assert all(t is not None for t in others), f"move {ply} not applied everywhere"
            found.append(max(others) - start)
    return found


async def _wait_peers(peer: Peer, count: int) -> None:
    async with asyncio.timeout(WAIT_S):
        while len(peer.lobby.peers) < count:
            await asyncio.sleep(0.01)


async def _open_round(peers: list[Peer]) -> list[Round]:
    """The first peer invites the others to a cube round it starts; all rounds started."""
    admin = peers[0]
    await _wait_peers(admin, len(peers) - 1)
    rnd = await admin.invite(
        [p.peer_id for p in peers[1:]], "cube", {"players": len(peers)}, start=0
    )
    rounds = [rnd]
    for peer in peers[1:]:
        async with asyncio.timeout(WAIT_S):
            while peer.invitation(rnd.id) is None:
                await asyncio.sleep(0.005)
        rounds.append(await peer.invitation(rnd.id).accept())  # type: ignore[union-attr]
    for r in rounds:
        await r.wait_started(WAIT_S)
    return rounds


def _traffic(peers: list[Peer]) -> dict[str, int]:
    return {
        key: sum(p.transport.stats.get(key, 0) for p in peers)
        for key in ("published", "published_bytes", "received", "paced")
    }


async def moves_in_process(url: str, players: int, think: float, tag: str) -> dict[str, Any]:
    """One cube round with ``players`` peers in this process; latencies and traffic."""
    namespace = f"bench-{os.getpid()}-{players}-{tag}"
    peers = [Peer(url, nick=f"bench{i}", namespace=namespace) for i in range(players)]
    for peer in peers:
        await peer.start()
    try:
        for peer in peers[1:]:
            await _wait_peers(peer, players - 1)
        rounds = await _open_round(peers)
        await asyncio.sleep(0.3)
        before = _traffic(peers)
        seats = await asyncio.gather(*(play_seat(r, think) for r in rounds))
        await asyncio.sleep(0.2)
        after = _traffic(peers)
        assert len({s["hash"] for s in seats}) == 1, "peers disagree"
        moves = sum(len(s["played"]) for s in seats)
        log = rounds[0].log()
        return {
            "latencies": latencies(list(seats)),
            "moves": moves,
            "published": (after["published"] - before["published"]) / moves,
            "bytes": (after["published_bytes"] - before["published_bytes"]) / moves,
            "received": (after["received"] - before["received"]) / moves,
            "paced": after["paced"] - before["paced"],
            "event_size": statistics.median(len(e.raw) for e in log if e.kind == "move"),
            "log": [e.raw for e in log],
        }
    finally:
        for peer in peers:
            await peer.close()


async def seat_worker(args: argparse.Namespace) -> None:
    """One peer of a round played with one process per peer (``moves_by_process``)."""
    async with Peer(args.url, nick=f"bench{args.index}", namespace=args.namespace) as peer:
        await _wait_peers(peer, args.players - 1)
        if args.index == 0:
            rounds = await _open_round_admin(peer, args.players)
        else:
            rounds = [await _accept_any(peer)]
        await rounds[0].wait_started(WAIT_S)
        print("started", flush=True)
        line = await asyncio.wait_for(asyncio.to_thread(sys.stdin.readline), WAIT_S)
        assert line.strip() == "go", line
        before = peer.transport.stats.get("paced", 0)
        result = await play_seat(rounds[0], args.think)
        result["paced"] = peer.transport.stats.get("paced", 0) - before
        await asyncio.sleep(0.5)  # the last move reaches the others before we say goodbye
        print(json.dumps(result), flush=True)


async def _open_round_admin(peer: Peer, players: int) -> list[Round]:
    others = sorted(peer.lobby.peers)[: players - 1]
    rnd = await peer.invite(others, "cube", {"players": players}, start=0)
    return [rnd]


async def _accept_any(peer: Peer) -> Round:
    async with asyncio.timeout(WAIT_S):
        while not peer.invitations:
            await asyncio.sleep(0.005)
    return await peer.invitations[0].accept()


async def _spawn(role: str, *args: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        str(Path(__file__).resolve()),
        "--worker",
        role,
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )


async def _expect(process: asyncio.subprocess.Process, word: str) -> str:
    assert process.stdout is not None
    line = await asyncio.wait_for(process.stdout.readline(), WAIT_S)
    text = line.decode().strip()
    if not text.startswith(word):
        raise RuntimeError(f"worker said {text!r}, expected {word!r}")
    return text


async def moves_by_process(url: str, players: int, think: float, tag: str) -> dict[str, Any]:
    """One cube round with each of ``players`` peers in a process of its own."""
    namespace = f"benchp-{os.getpid()}-{players}-{tag}"
    workers = [
        await _spawn(
            "seat", "--url", url, "--namespace", namespace, "--players", str(players),
            "--index", str(i), "--think", str(think),
        )
        for i in range(players)
    ]
    try:
        for worker in workers:
            await _expect(worker, "started")
        for worker in workers:
            assert worker.stdin is not None
            worker.stdin.write(b"go\n")
            await worker.stdin.drain()
        seats = []
        for worker in workers:
            result = json.loads(await _expect(worker, "{"))
            for key in ("played", "applied"):
                result[key] = {int(k): v for k, v in result[key].items()}
            seats.append(result)
        for worker in workers:
            await asyncio.wait_for(worker.wait(), WAIT_S)
        assert len({s["hash"] for s in seats}) == 1, "peers disagree"
        return {"latencies": latencies(seats), "paced": sum(s["paced"] for s in seats)}
    finally:
        for worker in workers:
            if worker.returncode is None:
                worker.kill()
                await worker.wait()


async def loop_stall(url: str, offload: bool, plies: int = 12) -> tuple[float, float]:
    """Longest and p99 event-loop stall while a strong computer seat plays (cube meister).

    The admin's peer computes each computer move and the guest recomputes it to check it;
    with ``offload`` those machine steps run in a worker thread (``p2p.peer.round_link``).
    """
    from p2p.peer import config as peer_config

    peer_config.OFFLOAD_COMPUTER_MOVES = offload
    gaps: list[float] = []
    stop = asyncio.Event()

    async def ticker() -> None:
        last = time.perf_counter()
        while not stop.is_set():
            await asyncio.sleep(0.005)
            now = time.perf_counter()
            gaps.append(now - last - 0.005)
            last = now

    namespace = f"stall-{os.getpid()}-{int(offload)}"
    async with (
        Peer(url, nick="a", namespace=namespace) as a,
        Peer(url, nick="b", namespace=namespace) as b,
    ):
        while not a.lobby.peers:
            await asyncio.sleep(0.01)
        rnd = await a.invite([b.peer_id], "cube", computers=["meister"], start=2)
        while b.invitation(rnd.id) is None:
            await asyncio.sleep(0.005)
        guest = await b.invitation(rnd.id).accept()  # type: ignore[union-attr]
        task = asyncio.create_task(ticker())

        async def play(r: Any) -> None:
            def ready(x: Any) -> bool:
                return x.is_my_turn or x.is_over or len(x.game.history()) >= plies

            await r.wait_started(30)
            while True:
                await r.wait_until(ready, 60)
                if r.is_over or len(r.game.history()) >= plies:
                    return
                await r.play(r.game.legal_moves()[0])

        await asyncio.gather(play(rnd), play(guest))
        stop.set()
        await task
        await rnd.resign()
    peer_config.OFFLOAD_COMPUTER_MOVES = True
    return max(gaps), p99(gaps)


def replay_times(log: list[bytes], runs: int) -> tuple[float, float]:
    from p2p.protocol import events

    parsed = [events.parse(line) for line in log]
    chain_t, replay_t = [], []
    for _ in range(runs):
        start = time.perf_counter()
        verify_chain(parsed)
        chain_t.append(time.perf_counter() - start)
        start = time.perf_counter()
        replay_log(log)
        replay_t.append(time.perf_counter() - start)
    return statistics.median(chain_t), statistics.median(replay_t)


def event_costs(runs: int = 300) -> tuple[float, float]:
    """Median CPU time to sign (``events.make``) and to check (``events.parse``) a move event."""
    from p2p.protocol import events
    from p2p.protocol.identity import Identity

    me = Identity.from_seed(os.urandom(32))
    body = {"ply": 10, "move": "a1", "state": "ab" * 32}
    make_t, parse_t = [], []
    for _ in range(runs):
        start = time.perf_counter()
        event = events.make(
            me, "move", 1, body, round="cd" * 16, seq=12, prev="ef" * 32
        )
        make_t.append(time.perf_counter() - start)
        start = time.perf_counter()
        events.parse(event.raw)
        parse_t.append(time.perf_counter() - start)
    return statistics.median(make_t), statistics.median(parse_t)


_IN_PROCESS_ROWS = """
import asyncio, json, sys
tree, url, think = sys.argv[1], sys.argv[2], float(sys.argv[3])
sys.path[:0] = [tree, tree + "/bench"]
import bench_latency as b
import p2p
from p2p.net.transport import parse_broker_url
assert p2p.__file__.startswith(tree), p2p.__file__
async def main():
    a = parse_broker_url(url)
    _, _, paced = await b.raw_mqtt(a.host, a.port, 0, 64, think)
    out = {"raw_prt": paced}
    for players in (2, 3):
        out[f"in{players}"] = (await b.moves_in_process(url, players, think, "cmp"))["latencies"]
    print(json.dumps(out))
asyncio.run(main())
"""
"""One run of the in-process rows with the ``p2p`` and bench of ``tree`` (``--compare``):
the functions it calls are in every tree since issue 28's bench."""


async def compare_trees(url: str, trees: list[str], runs: int, think: float) -> dict[str, Any]:
    """The in-process rows of each tree, runs alternating between the trees."""
    found: dict[str, dict[str, list[float]]] = {t: {} for t in trees}
    loads: dict[str, list[float]] = {t: [] for t in trees}
    for _ in range(runs):
        for tree in trees:
            loads[tree].append(os.getloadavg()[0])
            process = await asyncio.create_subprocess_exec(
                sys.executable, "-c", _IN_PROCESS_ROWS, tree, url, str(think),
                stdout=asyncio.subprocess.PIPE,
            )
            out, _ = await asyncio.wait_for(process.communicate(), 20 * WAIT_S)
            if process.returncode != 0:
                raise RuntimeError(f"the rows of {tree} failed")
            for key, values in json.loads(out).items():
                found[tree].setdefault(key, []).extend(values)
    return {"samples": found, "loads": loads}


def print_comparison(result: dict[str, Any], md: bool) -> None:
    samples, loads = result["samples"], result["loads"]
    trees = list(samples)
    # the raw round trip runs the same aiomqtt code in every tree: its samples are pooled
    raw = statistics.median([x for tree in trees for x in samples[tree]["raw_prt"]])
    if md:
        print("\n| measurement (medians) | " + " | ".join(f"{t} ms | / raw" for t in trees) + " | goal |")
        print("|---|" + "---:|---:|" * len(trees) + "---:|")
    for key, name, goal in (
        ("raw_prt", "raw aiomqtt QoS 1 round trip, one process, at the moves' pace", "-"),
        ("in2", "p2p move, 2 peers in one process", "1.3x"),
        ("in3", "p2p move, 3 peers in one process", "1.8x"),
    ):
        cells = []
        for tree in trees:
            median = statistics.median(samples[tree][key])
            ratio = median / raw
            cells.append((ms(median), "-" if key == "raw_prt" else f"{ratio:.2f}x"))
        if md:
            print(f"| {name} | " + " | ".join(f"{a} | {b}" for a, b in cells) + f" | {goal} |")
        else:
            print(f"{name:64s} " + "   ".join(f"{t}: {a} ms {b}" for t, (a, b) in zip(trees, cells)))
    print(
        ("- " if md else "")
        + f"ratios against the raw round trip of all runs pooled: {ms(raw)} ms"
    )
    for tree in trees:
        n = len(samples[tree]["in2"])
        print(("- " if md else "") + f"{tree}: load average at the start of its runs "
              + ", ".join(f"{x:.1f}" for x in loads[tree]) + f"; {n} moves per row")


ROWS = (
    # key, label, raw round trip it is compared with
    ("raw_one", "raw aiomqtt QoS 1 one-way delivery, one process, back to back", None),
    ("raw_rt", "raw aiomqtt QoS 1 round trip, one process, back to back", None),
    ("raw_xrt", "raw aiomqtt QoS 1 round trip, two processes, back to back", None),
    ("raw_prt", "raw aiomqtt QoS 1 round trip, one process, at the moves' pace", None),
    ("raw_pxrt", "raw aiomqtt QoS 1 round trip, two processes, at the moves' pace", None),
    ("in2", "p2p move, 2 peers in one process", "raw_prt"),
    ("in3", "p2p move, 3 peers in one process", "raw_prt"),
    ("pp2", "p2p move, 2 peers, one process per peer", "raw_pxrt"),
    ("pp3", "p2p move, 3 peers, one process per peer", "raw_pxrt"),
    ("b2b", "p2p move, 2 peers in one process, back to back (no thinking)", "raw_rt"),
)
GOALS = {"in2": 1.3, "in3": 1.8, "pp2": 1.3, "pp3": 1.8}


async def main_async(args: argparse.Namespace) -> None:
    load0 = os.getloadavg()[0]
    broker: LocalBroker | None = None
    url = args.broker
    if url is None:
        broker = LocalBroker()
        await asyncio.to_thread(broker.start)
        url = broker.url
    address = parse_broker_url(url)
    samples: dict[str, list[float]] = {key: [] for key, _, _ in ROWS}
    paced: dict[str, int] = {key: 0 for key, _, _ in ROWS}
    traffic: dict[int, dict[str, Any]] = {}
    think = args.think
    try:
        if args.compare:
            here = str(Path(__file__).resolve().parent.parent)
            other = str(Path(args.compare).resolve())
            result = await compare_trees(url, [here, other], args.runs, think)
            print(
                f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
                f"{platform.python_version()}; load average {load0:.1f} at the start, "
                f"{os.getloadavg()[0]:.1f} at the end; {args.runs} run(s) of each tree, "
                f"alternating; {think:.2f} s thinking before each move"
            )
            print_comparison(result, args.markdown)
            return
        for run in range(args.runs):
            one, rt, prt = await raw_mqtt(address.host, address.port, args.raw, 64, think)
            samples["raw_one"] += one
            samples["raw_rt"] += rt
            samples["raw_prt"] += prt
            xrt, pxrt = await raw_between_processes(
                address.host, address.port, args.raw, 64, think
            )
            samples["raw_xrt"] += xrt
            samples["raw_pxrt"] += pxrt
            for players in (2, 3):
                result = await moves_in_process(url, players, think, f"{run}")
                samples[f"in{players}"] += result["latencies"]
                paced[f"in{players}"] += result["paced"]
                traffic[players] = result
            for players in (2, 3):
                result = await moves_by_process(url, players, think, f"{run}")
                samples[f"pp{players}"] += result["latencies"]
                paced[f"pp{players}"] += result["paced"]
            result = await moves_in_process(url, 2, 0.0, f"{run}b")
            samples["b2b"] += result["latencies"]
            paced["b2b"] += result["paced"]
        chain_s, replay_s = replay_times(traffic[2]["log"], 20)
        stalls = {offload: await loop_stall(url, offload) for offload in (False, True)}
    finally:
        if broker is not None:
            await asyncio.to_thread(broker.close)

    md = args.markdown
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{platform.system()} {platform.release()}; broker {'local mosquitto' if args.broker is None else url}; "
        f"load average {load0:.1f} at the start, {os.getloadavg()[0]:.1f} at the end; "
        f"{args.runs} run(s); moves at a person's pace: {think:.2f} s thinking before each"
    )
    if md:
        print(
            "\n| measurement | n | median ms | p99 ms | median / raw round trip | goal | "
            "publishes the pacer held |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|")
    for key, name, base in ROWS:
        values = samples[key]
        median = statistics.median(values)
        ratio = f"{median / statistics.median(samples[base]):.2f}x" if base else "-"
        goal = f"{GOALS[key]}x" if key in GOALS else "-"
        held = str(paced[key]) if base else "-"
        if md:
            print(
                f"| {name} | {len(values)} | {ms(median)} | {ms(p99(values))} | {ratio} | "
                f"{goal} | {held} |"
            )
        else:
            print(
                f"{name:64s} n={len(values):4d} median {ms(median)} ms  p99 {ms(p99(values))} ms  "
                f"{ratio} of the raw round trip (goal {goal}), pacer held {held}"
            )
    print()
    note = (
        "ratios: each p2p row against the raw round trip measured the same way -- moves at "
        "a person's pace against round trips at that pace (after a pause this machine may "
        "answer about twice as slowly as back to back), in one process against one "
        "process, one process per peer against two processes; back to back against back "
        "to back"
    )
    print(("- " if md else "") + note)
    for players in (2, 3):
        t = traffic[players]
        line = (
            f"{players} peers: per move {t['published']:.2f} messages published, {t['bytes']:.0f} bytes published, "
            f"{t['received']:.2f} messages delivered to peers; a signed move event is {t['event_size']:.0f} bytes"
        )
        print(("- " if md else "") + line)
    n_moves = sum(1 for line in traffic[2]["log"] if b'"kind":"move"' in line)
    line = (
        f"verify + replay a finished {n_moves}-move cube log ({len(traffic[2]['log'])} events): "
        f"from parsed events {chain_s * 1000:.1f} ms, from raw log lines (parse + signatures) {replay_s * 1000:.1f} ms"
    )
    print(("- " if md else "") + line)
    for offload, (worst, p) in stalls.items():
        how = "in a worker thread" if offload else "on the event loop"
        line = (
            f"event-loop stall while a cube 'meister' computer seat plays 12 plies, machine steps {how}: "
            f"longest {worst * 1000:.0f} ms, p99 {p * 1000:.0f} ms"
        )
        print(("- " if md else "") + line)
    make_s, parse_s = event_costs()
    line = (
        f"CPU per move event: sign (events.make, no self-check since issue 28) {make_s * 1000:.2f} ms, "
        f"parse and verify on each receiver (events.parse) {parse_s * 1000:.2f} ms"
    )
    print(("- " if md else "") + line)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--runs", type=int, default=3, help="repeat everything this often (default 3)"
    )
    parser.add_argument(
        "--raw", type=int, default=300, help="raw MQTT messages per run and kind (default 300)"
    )
    parser.add_argument(
        "--think", type=float, default=THINK_S,
        help=f"seconds a mover thinks before each move (default {THINK_S})",
    )
    parser.add_argument(
        "--broker", metavar="URL", help="use this broker instead of a local mosquitto"
    )
    parser.add_argument(
        "--markdown", action="store_true", help="print Markdown for docs/performance.md"
    )
    parser.add_argument(
        "--compare", metavar="TREE",
        help="only the rows of all peers in one process, this tree and TREE (e.g. a "
        "worktree of main) in turn, side by side",
    )
    # the processes this bench starts itself
    parser.add_argument("--worker", choices=("seat", "echo"), help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--namespace", help=argparse.SUPPRESS)
    parser.add_argument("--players", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--index", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--host", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--topic", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker == "seat":
        asyncio.run(seat_worker(args))
    elif args.worker == "echo":
        asyncio.run(echo_worker(args.host, args.port, args.topic))
    else:
        asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
