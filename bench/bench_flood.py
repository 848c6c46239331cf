"""A round under a flood of junk, side by side with the same round unflooded.

Run: python bench/bench_flood.py [--runs 3] [--count 5000] [--seconds 3] [--markdown]

In one process, on one local Mosquitto: two peers play the same Connect Four round
(each plays the leftmost free column, 19 plies, "thinking" 0.15 s before each move) three ways, ``--runs`` times
each, in turn:

* **quiet** -- nobody else on the broker;
* **flooded** -- a stranger in its own process (``tests/flooder.py``) sends ``--count``
  junk messages over ``--seconds`` s, half to the round's events topic (random bytes,
  moves signed by fresh keys, moves forged in a member's name, replays of the round's own
  events), half to the lobby (random bytes, presences, chat and hellos of fresh keys),
  starting with the first move;
* **flooded, one queue** -- the same flood against an inbound path without lanes and
  budgets: one FIFO of 1,000 messages for everything (an approximation of the path before
  issue 10: the read path and sealing are today's).

For each: the median round time (first move until both peers see the end), the median
move (from the mover's ``play()`` until the other peer has applied it, measured as
``bench_latency.py`` measures it; issue 28's goal: flooded at most 1.3x the quiet move),
the events that reached a peer only through a sync (an honest event lost on the way),
whether both logs are identical, and what the peers' edges dropped.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from bench_latency import latencies, play_seat
from flooder import FloodPlan, FloodProcess

from p2p.net.broker import LocalBroker
from p2p.net.inbound import InboundQueues, Lane, LaneLimits
from p2p.peer import Peer, Resynced

THINK_S = 0.15


def _single_queue(peer: Peer) -> None:
    """Put back the inbound path as it was: one 1,000-message FIFO, no budgets."""
    old = InboundQueues(None, {Lane.ROUND: LaneLimits(1000, None)}, dedupe_window=0)
    peer.edge.inbound = old
    peer.edge.transport.inbound = old  # type: ignore[attr-defined]


async def one_round(url: str, mode: str, count: int, seconds: float, run: int) -> dict[str, Any]:
    namespace = f"flood-{os.getpid()}-{mode[:5].replace(' ', '')}-{run}"
    alice = Peer(url, nick="alice", namespace=namespace)
    bob = Peer(url, nick="bob", namespace=namespace)
    if mode == "one queue":
        _single_queue(alice)
        _single_queue(bob)
    flooder: FloodProcess | None = None
    await alice.start()
    await bob.start()
    try:
        while alice.public_key not in bob.lobby.peers or bob.public_key not in alice.lobby.peers:
            await asyncio.sleep(0.01)
        ra = await alice.invite([bob.peer_id], "connect4", start=0)
        while bob.invitation(ra.id) is None:
            await asyncio.sleep(0.01)
        rb = await bob.invitation(ra.id).accept()
        await ra.wait_started(30)
        await rb.wait_started(30)
        synced = 0

        async def count_syncs(peer: Peer) -> None:
            nonlocal synced
            with peer.events() as notes:
                async for note in notes:
                    if isinstance(note, Resynced):
                        synced += note.applied

        watchers = [asyncio.create_task(count_syncs(p)) for p in (alice, bob)]
        if mode != "quiet":
            flooder = FloodProcess(
                FloodPlan(
                    port=int(url.rsplit(":", 1)[1]),
                    namespace=namespace,
                    round_key=ra.machine.key,
                    round_id=ra.id,
                    member_pk_hex=alice.identity.pk_hex,
                    count=count,
                    seconds=seconds,
                    seed=run + 1,
                )
            )
            await asyncio.to_thread(flooder.start)

        def leftmost(game: Any) -> str:
            return str(game.legal_moves()[0])  # columns fill up left to right

        start = time.monotonic()
        if flooder is not None:
            flooder.go()
        # as bench_latency measures a move: from the mover's play() until the other
        # peer has applied it (both stamps on the monotonic clock)
        seats = await asyncio.gather(
            play_seat(ra, THINK_S, leftmost), play_seat(rb, THINK_S, leftmost)
        )
        await asyncio.gather(ra.wait_over(180), rb.wait_over(180))
        elapsed = time.monotonic() - start
        moves = latencies(list(seats))
        sent = await asyncio.to_thread(flooder.wait) if flooder is not None else 0
        await asyncio.sleep(0.3)  # let a late Resynced flush
        for task in watchers:
            task.cancel()
        same = [e.id for e in ra.log()] == [e.id for e in rb.log()]
        drops: dict[str, int] = {}
        for peer in (alice, bob):
            for key, value in peer.inbound.stats.items():
                if key.startswith("dropped"):
                    drops[key] = drops.get(key, 0) + value
        return {
            "time": elapsed,
            "plies": len(ra.game.history()),
            "moves": moves,
            "move_ms": statistics.median(moves) * 1000 if moves else 0.0,
            "worst_ms": max(moves) * 1000 if moves else 0.0,
            "synced": synced,
            "same": same,
            "sent": sent,
            "round_lane_drops": sum(v for k, v in drops.items() if k.startswith("dropped: round ")),
            "drops": drops,
        }
    finally:
        if flooder is not None:
            flooder.stop()
        await alice.close()
        await bob.close()


async def bench(url: str, runs: int, count: int, seconds: float) -> dict[str, list[dict[str, Any]]]:
    modes = ["quiet", "flooded", "one queue"]
    results: dict[str, list[dict[str, Any]]] = {m: [] for m in modes}
    for run in range(runs):
        for mode in modes:
            result = await one_round(url, mode, count, seconds, run)
            results[mode].append(result)
            print(
                f"  run {run + 1} {mode:10s} {result['time']:6.2f} s  plies {result['plies']}"
                f"  move {result['move_ms']:.1f} ms (worst {result['worst_ms']:.0f})"
                f"  synced {result['synced']}  same logs {result['same']}  sent {result['sent']}",
                file=sys.stderr,
            )
    return results


def report(results: dict[str, list[dict[str, Any]]], markdown: bool) -> None:
    quiet = statistics.median(r["time"] for r in results["quiet"])
    quiet_move = statistics.median(m for r in results["quiet"] for m in r["moves"])
    rows = []
    for mode, label in (
        ("quiet", "quiet"),
        ("flooded", "flooded, lanes and budgets"),
        ("one queue", "flooded, one FIFO (before)"),
    ):
        rs = results[mode]
        t = statistics.median(r["time"] for r in rs)
        move = statistics.median(m for r in rs for m in r["moves"])
        rows.append(
            (
                label,
                f"{t:.2f}",
                f"{t / quiet:.2f}x",
                f"{move * 1000:.2f}",
                f"{move / quiet_move:.2f}x",
                str(sum(r["synced"] for r in rs)),
                "yes" if all(r["same"] for r in rs) else "NO",
                str(sum(r["sent"] for r in rs) // max(1, len(rs))),
            )
        )
    head = (
        "round", "median s", "vs quiet", "median move ms", "move vs quiet",
        "events via sync (all runs)", "logs identical", "junk sent/run",
    )
    if markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for row in rows:
            print("| " + " | ".join(row) + " |")
    else:
        for row in (head, *rows):
            print("  ".join(f"{c:>26s}" if i else f"{c:30s}" for i, c in enumerate(row)))
    flooded = results["flooded"][-1]["drops"]
    print()
    print("edge drops, both peers, last flooded run (lanes and budgets):")
    for key, value in sorted(flooded.items(), key=lambda kv: -kv[1]):
        print(f"  {key}: {value}")
    print()
    print(
        "a move: from the mover's play() until the other peer applied it, median of all "
        "moves of all runs (issue 28's goal: flooded at most 1.3x the quiet move)"
    )
    print(f"machine: {platform.platform()}, {os.cpu_count()} cores, python {platform.python_version()}")
    print(f"load at the end: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--count", type=int, default=5000)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--verbose", action="store_true", help="also print each peer's drop lines")
    args = parser.parse_args()
    import logging

    # Each of the two peers logs every drop (so each showed twice); the report counts them.
    logging.basicConfig(level=logging.INFO if args.verbose else logging.ERROR, format="%(name)s: %(message)s")
    print(f"load at the start: {os.getloadavg()[0]:.2f}", file=sys.stderr)
    with LocalBroker() as broker:
        results = asyncio.run(bench(broker.url, args.runs, args.count, args.seconds))
    report(results, args.markdown)


if __name__ == "__main__":
    main()
