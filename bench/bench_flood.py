"""A round under a flood of junk, side by side with the same round unflooded.

Run: python bench/bench_flood.py [--runs 3] [--count 5000] [--seconds 3] [--markdown]
     [--compare OTHER_TREE]

In one process, on one local Mosquitto: two peers play the same Connect Four round
(each plays the leftmost free column, 19 plies, "thinking" 0.15 s before each move) four ways, ``--runs`` times
each, in turn:

* **quiet** -- nobody else on the broker;
* **flooded** -- a stranger in its own process (``tests/flooder.py``) sends ``--count``
  junk messages over ``--seconds`` s, half to the round's events topic (random bytes,
  moves signed by fresh keys, moves forged in a member's name, replays of the round's own
  events), half to the lobby (random bytes, presences, chat and hellos of fresh keys),
  starting with the first move;
* **flooded, flooder niced** -- the same flood from a flooder at nice 19: on a machine
  with two cores the flooder's own CPU (about half a core) competes with the peers and
  the broker; this row shows how much of the flooded move is that;
* **flooded, one queue** -- the same flood against an inbound path without lanes and
  budgets: one FIFO of 1,000 messages for everything (an approximation of the path before
  issue 10: the read path and sealing are today's).

For each: the median round time (first move until both peers see the end), the median
move (from the mover's ``play()`` until the other peer has applied it, measured as
``bench_latency.py`` measures it; issue 28's goal: flooded at most 1.3x the quiet move),
the events that reached a peer only through a sync (an honest event lost on the way),
whether both logs are identical, what the peers' edges dropped, and the CPU the peers'
process, the flooder and Mosquitto used during the round.  ``--compare TREE`` measures
another checkout's ``p2p`` (e.g. a worktree of main) the same way, one run of each tree
in turn, each in a process of its own.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent.parent
# ``--tree PATH``: measure the p2p package of another checkout (e.g. a worktree of main)
# with this bench, its flooder and its move stamps (``--compare`` runs it so)
ROOT = Path(sys.argv[sys.argv.index("--tree") + 1]).resolve() if "--tree" in sys.argv else HERE
sys.path.insert(0, str(HERE / "tests"))
sys.path.insert(0, str(HERE / "bench"))
sys.path.insert(0, str(ROOT))

from bench_latency import latencies, play_seat
from flooder import FloodPlan, FloodProcess

from p2p.net.broker import LocalBroker
from p2p.net.inbound import InboundQueues, Lane, LaneLimits
from p2p.peer import Peer, Resynced

THINK_S = 0.15
FLOODER_NICE = 19
"""``flooded, flooder niced``: the same flood from a flooder at this niceness (what the
flooder's own CPU costs the round on a machine with few cores)."""


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU of a process so far (Linux ``/proc``), ``None`` if unknown."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class CpuWatch:
    """The CPU a process used from ``start`` until it ended or ``stop`` (sampled, so a
    process that ends is still counted up to its last sample)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.first = cpu_seconds(pid)
        self.last = self.first
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._done.wait(0.02):
            now = cpu_seconds(self.pid)
            if now is None:
                return
            self.last = now

    def stop(self) -> float | None:
        self._done.set()
        self._thread.join(1)
        now = cpu_seconds(self.pid)
        if now is not None:
            self.last = now
        if self.first is None or self.last is None:
            return None
        return self.last - self.first


def _single_queue(peer: Peer) -> None:
    """Put back the inbound path as it was: one 1,000-message FIFO, no budgets."""
    old = InboundQueues(None, {Lane.ROUND: LaneLimits(1000, None)}, dedupe_window=0)
    peer.edge.inbound = old
    peer.edge.transport.inbound = old  # type: ignore[attr-defined]


async def one_round(
    url: str, mode: str, count: int, seconds: float, run: int, broker_pid: int | None = None
) -> dict[str, Any]:
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
            if mode == "flooder niced":
                os.setpriority(os.PRIO_PROCESS, flooder.pid, FLOODER_NICE)

        def leftmost(game: Any) -> str:
            return str(game.legal_moves()[0])  # columns fill up left to right

        start = time.monotonic()
        cpu_start = time.process_time()
        broker_cpu = CpuWatch(broker_pid) if broker_pid else None
        flooder_cpu = CpuWatch(flooder.pid) if flooder is not None else None
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
        await asyncio.sleep(0.3)  # let a late Resynced flush (and the flood's tail in)
        read = sum(
            p.transport.stats.get(k, 0) for p in (alice, bob) for k in ("received", "dropped")
        )
        cpu = {
            "peers": time.process_time() - cpu_start,  # the round and the flood's tail
            "flooder": flooder_cpu.stop() if flooder_cpu is not None else 0.0,
            "broker": broker_cpu.stop() if broker_cpu is not None else None,
        }
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
            "cpu": cpu,
            "read": read,
        }
    finally:
        if flooder is not None:
            flooder.stop()
        await alice.close()
        await bob.close()


MODES = ["quiet", "flooded", "flooder niced", "one queue"]
LABELS = {
    "quiet": "quiet",
    "flooded": "flooded, lanes and budgets",
    "flooder niced": f"flooded, flooder at nice {FLOODER_NICE}",
    "one queue": "flooded, one FIFO (before)",
}


async def bench(
    url: str, runs: int, count: int, seconds: float, broker_pid: int | None = None,
    first_run: int = 0,
) -> dict[str, list[dict[str, Any]]]:
    modes = MODES
    results: dict[str, list[dict[str, Any]]] = {m: [] for m in modes}
    for run in range(first_run, first_run + runs):
        for mode in modes:
            result = await one_round(url, mode, count, seconds, run, broker_pid)
            results[mode].append(result)
            print(
                f"  run {run + 1} {mode:10s} {result['time']:6.2f} s  plies {result['plies']}"
                f"  move {result['move_ms']:.1f} ms (worst {result['worst_ms']:.0f})"
                f"  synced {result['synced']}  same logs {result['same']}  sent {result['sent']}"
                f"  cpu {result['cpu']['peers']:.2f} s (flooder {result['cpu']['flooder'] or 0:.2f})"
                f"  read {result['read']}",
                file=sys.stderr,
            )
    return results


def _cpu(rs: list[dict[str, Any]], who: str) -> str:
    found = [r["cpu"][who] for r in rs if r.get("cpu", {}).get(who) is not None]
    return f"{statistics.median(found):.2f}" if found else "-"


def _per_message(rs: list[dict[str, Any]], quiet: list[dict[str, Any]]) -> str:
    """The peers' CPU beyond the quiet round's, per message their transports read more."""
    base_cpu = statistics.median(r["cpu"]["peers"] for r in quiet)
    base_read = statistics.median(r.get("read", 0) for r in quiet)
    found = [
        (r["cpu"]["peers"] - base_cpu) / (r["read"] - base_read)
        for r in rs
        if r.get("read", 0) - base_read > 100
    ]
    return f"{statistics.median(found) * 1e6:.0f} us" if found else "-"


def report(results: dict[str, list[dict[str, Any]]], markdown: bool, tree: str = "") -> None:
    quiet = statistics.median(r["time"] for r in results["quiet"])
    quiet_move = statistics.median(m for r in results["quiet"] for m in r["moves"])
    rows = []
    for mode, label in LABELS.items():
        rs = results.get(mode)
        if not rs:
            continue
        t = statistics.median(r["time"] for r in rs)
        move = statistics.median(m for r in rs for m in r["moves"])
        rows.append(
            (
                label,
                f"{t:.2f}",
                f"{t / quiet:.2f}x",
                f"{move * 1000:.2f}",
                f"{move / quiet_move:.2f}x",
                f"{max(m for r in rs for m in r['moves']) * 1000:.0f}",
                str(sum(r["synced"] for r in rs)),
                "yes" if all(r["same"] for r in rs) else "NO",
                str(sum(r["sent"] for r in rs) // max(1, len(rs))),
                f"{_cpu(rs, 'peers')} / {_cpu(rs, 'flooder')} / {_cpu(rs, 'broker')}",
                _per_message(rs, results["quiet"]),
            )
        )
    head = (
        "round", "median s", "vs quiet", "median move ms", "move vs quiet", "worst move ms",
        "events via sync (all runs)", "logs identical", "junk sent/run",
        "CPU s: peers / flooder / broker", "peers' CPU per junk message read",
    )
    if tree:
        print(f"\n{tree}:")
    if markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for row in rows:
            print("| " + " | ".join(row) + " |")
    else:
        for row in (head, *rows):
            print("  ".join(f"{c:>26s}" if i else f"{c:30s}" for i, c in enumerate(row)))
    if tree:
        return
    flooded = results["flooded"][-1]["drops"]
    print()
    print("edge drops, both peers, last flooded run (lanes and budgets):")
    for key, value in sorted(flooded.items(), key=lambda kv: -kv[1]):
        print(f"  {key}: {value}")
    print()
    print(
        "a move: from the mover's play() until the other peer applied it, median of all "
        "moves of all runs (issue 28's goal: flooded at most 1.3x the quiet move); read it "
        "with the round time and the worst move: moves stalled behind the flood for a "
        "second let the others be played after it, at the quiet speed"
    )
    print(
        "CPU: seconds of CPU from the first move until both peers saw the end and the "
        "flood was over (medians of the runs): the peers' process, the flooder (sampled), "
        "Mosquitto; per junk message: the peers' CPU beyond the quiet round's over the "
        "messages their transports read beyond it; "
        f"'flooder at nice {FLOODER_NICE}': the same flood, the flooder's CPU given last"
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
    parser.add_argument(
        "--compare", metavar="TREE",
        help="also measure the p2p of another checkout (e.g. a worktree of main), one run "
        "of each tree in turn, each in a process of its own with a broker of its own",
    )
    parser.add_argument("--tree", metavar="TREE", help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--first-run", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.compare:
        compare(args)
        return
    import logging

    # Each of the two peers logs every drop (so each showed twice); the report counts them.
    logging.basicConfig(level=logging.INFO if args.verbose else logging.ERROR, format="%(name)s: %(message)s")
    print(f"load at the start: {os.getloadavg()[0]:.2f}", file=sys.stderr)
    with LocalBroker() as broker:
        pid = broker._process.pid if broker._process is not None else None
        results = asyncio.run(
            bench(broker.url, args.runs, args.count, args.seconds, pid, args.first_run)
        )
    if args.json:
        print(json.dumps(results))
        return
    report(results, args.markdown)


def compare(args: argparse.Namespace) -> None:
    """One run of each tree in turn (this one first), each in a process of its own."""
    trees = [HERE, Path(args.compare).resolve()]
    found: dict[Path, dict[str, list[dict[str, Any]]]] = {t: {m: [] for m in MODES} for t in trees}
    for run in range(args.runs):
        for tree in trees:
            print(f"run {run + 1}: {tree}", file=sys.stderr)
            out = subprocess.run(
                [
                    sys.executable, __file__, "--tree", str(tree), "--runs", "1", "--json",
                    "--first-run", str(run), "--count", str(args.count),
                    "--seconds", str(args.seconds),
                ],
                stdout=subprocess.PIPE, check=True, text=True,
            ).stdout
            for mode, rs in json.loads(out.strip().splitlines()[-1]).items():
                found[tree][mode] += rs
    for tree in trees:
        report(found[tree], args.markdown, tree=str(tree))
    print()
    print(
        "each tree's p2p measured by this bench (its flooder, its move stamps), runs of "
        "the two trees alternated; a move: from the mover's play() until the other peer "
        "applied it, median of all moves of all runs"
    )
    print(f"machine: {platform.platform()}, {os.cpu_count()} cores, python {platform.python_version()}")
    print(f"load at the end: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")


if __name__ == "__main__":
    main()
