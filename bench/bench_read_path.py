"""CPU per received message on the transport's read path, beside another tree.

Run: python bench/bench_read_path.py [--runs 5] [--count 20000] [--compare OTHER_TREE]

What a flood costs a peer before its lanes drop the junk (issue 28, the move under a
flood): a ``Transport``'s MQTT client reads from one end of a socket pair, through the
reader aiomqtt registers with the event loop, what a broker would send: ``--count`` QoS 0
PUBLISH packets of 40-400 random bytes on a round's events topic and the lobby's topics,
and every 100th a QoS 1 "move" on the round's topic.  The lanes' classifier drops the
junk at once (the edge's own checks are left out: they are the same in every tree) and
keeps the moves, which a reader task takes as the peer's receive loop does.  Measured:
the process's CPU per packet read, and the turns of the event loop the reading took.
No broker, no other process: CPU figures that the machine's load changes little (read
them within one run).  ``--compare TREE`` measures another checkout's ``p2p`` (e.g. a
worktree of main) the same way, one run of each tree in turn, each in a process of its own.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent.parent
ROOT = Path(sys.argv[sys.argv.index("--tree") + 1]).resolve() if "--tree" in sys.argv else HERE
sys.path.insert(0, str(ROOT))

from p2p.net.inbound import InboundQueues, Lane, Verdict  # noqa: E402
from p2p.net.transport import Transport  # noqa: E402

EVENTS = "p2p/v2/public/round/0123456789abcdef0123456789abcdef/events"
LOBBY = ["p2p/v2/public/lobby/chat", "p2p/v2/public/lobby/hello"]


def publish(topic: str, payload: bytes, qos: int, mid: int = 0) -> bytes:
    """One MQTT v5 PUBLISH packet as a broker sends it (no properties)."""
    body = len(topic).to_bytes(2, "big") + topic.encode()
    if qos:
        body += mid.to_bytes(2, "big")
    body += b"\x00" + payload
    size, length = len(body), bytearray()
    while True:
        byte, size = size & 127, size >> 7
        length.append(byte | (128 if size else 0))
        if not size:
            break
    return bytes([0x30 | qos << 1]) + bytes(length) + body


async def one_run(count: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    packets = []
    for i in range(count):
        if i % 100 == 99:
            packets.append(publish(EVENTS, b"move %d" % i, 1, 1 + i % 60000))
        else:
            topic = EVENTS if i % 2 else rng.choice(LOBBY)
            packets.append(publish(topic, rng.randbytes(rng.randint(40, 400)), 0))
    data = b"".join(packets)

    def classify(topic: str, payload: bytes) -> Verdict:
        if payload.startswith(b"move "):
            return Verdict(Lane.ROUND)
        return Verdict(None, reason="junk")

    transport = Transport("mqtt://127.0.0.1:1", inbound=InboundQueues(classify))
    client = transport._make_client()
    paho = client._client
    ours, broker = socket.socketpair()
    ours.setblocking(False)
    broker.setblocking(False)
    paho._sock = ours
    loop = asyncio.get_running_loop()
    client._on_socket_open(paho, None, ours)  # aiomqtt's reader, as on a connect
    moves = count // 100
    got = 0

    async def take() -> None:
        nonlocal got
        async for _ in transport.messages():
            got += 1
            if got == moves:
                return

    turns = 0
    run_once = loop._run_once  # type: ignore[attr-defined]

    def counted() -> None:
        nonlocal turns
        turns += 1
        run_once()

    loop._run_once = counted  # type: ignore[attr-defined]
    taker = asyncio.create_task(take())
    cpu = time.process_time()
    wall = time.monotonic()
    sent = 0
    while sent < len(data):
        try:
            sent += broker.send(data[sent : sent + 65536])
        except BlockingIOError:
            await asyncio.sleep(0)  # the reader's turn
    await asyncio.wait_for(taker, 60)
    cpu = time.process_time() - cpu
    wall = time.monotonic() - wall
    loop._run_once = run_once  # type: ignore[attr-defined]
    loop.remove_reader(ours.fileno())
    ours.close()
    broker.close()
    stats = transport.stats
    read = stats["received"] + stats["dropped"]
    return {"us": cpu / read * 1e6, "read": read, "turns": turns, "wall": wall}


def measure(runs: int, count: int) -> list[dict[str, Any]]:
    return [asyncio.run(one_run(count, seed)) for seed in range(runs)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--count", type=int, default=20000)
    parser.add_argument("--compare", metavar="TREE")
    parser.add_argument("--tree", metavar="TREE", help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    print(f"load at the start: {os.getloadavg()[0]:.2f}", file=sys.stderr)
    if args.json:
        print(json.dumps(measure(args.runs, args.count)))
        return
    trees = [HERE] + ([Path(args.compare).resolve()] if args.compare else [])
    found: dict[Path, list[dict[str, Any]]] = {t: [] for t in trees}
    for _ in range(args.runs):
        for tree in trees:
            out = subprocess.run(
                [sys.executable, __file__, "--tree", str(tree), "--runs", "1", "--json",
                 "--count", str(args.count)],
                stdout=subprocess.PIPE, check=True, text=True,
            ).stdout
            found[tree] += json.loads(out.strip().splitlines()[-1])
    print("| tree | CPU per packet read (median, us) | range | turns of the loop per packet |")
    print("|---|---:|---|---:|")
    for tree, rs in found.items():
        us = [r["us"] for r in rs]
        turns = statistics.median(r["turns"] / r["read"] for r in rs)
        print(
            f"| {tree} | {statistics.median(us):.1f} | {min(us):.1f}-{max(us):.1f} "
            f"| {turns:.2f} |"
        )
    print(f"\n{args.count} packets per run, {args.runs} runs per tree, alternated")
    print(f"machine: {platform.platform()}, {os.cpu_count()} cores, python {platform.python_version()}")
    print(f"load at the end: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")


if __name__ == "__main__":
    main()
