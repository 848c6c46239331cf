"""CPU of one move event, before and after "sign once, verify once" (issue 28).

Run: python bench/bench_event_cpu.py [--rounds 7] [--n 2000]

Side by side in one process and one run, alternating, medians of ``--rounds`` rounds of
``--n`` calls each (microseconds per call):

* **author**: ``events.make`` as it is (signs once, no verification of its own
  signature), against ``make`` followed by the self-check it did before
  (``from_value`` of the signed envelope: schema, id, signature, encoding again);
* **receiver**: what the network edge and the parse do with a move's bytes now (one
  signature check: ``_unverified`` + ``_checked``, then ``parse(signed=...)``), against
  before (``_signed_id``, then ``parse`` checking the signature again);
* **sealing**: a ``start`` event sealing three accepts we hold, made now (their
  signatures are not checked again) and before (each checked again);
* **mover's engine**: the cube position encoded and hashed once per move (now) or twice
  (before: once on the trial copy, once more when the move was applied).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from p2p.games.cube import Cube
from p2p.peer import checks
from p2p.protocol import canonical, events
from p2p.protocol.identity import Identity

ROUND, PREV = "5a" * 16, "ab" * 32


def per_call_us(fn: Callable[[], object], n: int) -> float:
    t = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t) / n * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--n", type=int, default=2000)
    args = parser.parse_args()
    me = Identity.from_seed(bytes([1]) * 32)
    guests = [Identity.from_seed(bytes([i + 2]) * 32) for i in range(3)]
    body = {"ply": 12, "move": "b3", "state": "cd" * 32}

    def make() -> events.Event:
        return events.make(me, "move", 1_000, body, round=ROUND, seq=14, prev=PREV)

    def make_before() -> events.Event:
        made = make()
        events.from_value(canonical.decode(made.raw))  # the self-check make did before
        return made

    move = make()
    payload = move.raw

    def receive_now() -> events.Event:
        claim = checks._unverified(payload, me.public_key)
        assert claim is not None and checks._checked(claim)
        return events.parse(payload, signed=claim)

    def receive_before() -> events.Event:
        assert checks._signed_id(payload, me.public_key) is not None
        return events.parse(payload)

    accepts = [
        events.make(g, "accept", 900, {"seat": i + 1}, round=ROUND, prev=PREV)
        for i, g in enumerate(guests)
    ]

    def seal_now() -> events.Event:
        return events.make(
            me, "start", 1_000, {"sealed": [a.value() for a in accepts]},
            round=ROUND, seq=1, prev=PREV,
        )

    def seal_before() -> events.Event:
        return events.make(  # plain values: every sealed signature checked again
            me, "start", 1_000, {"sealed": [canonical.decode(a.raw) for a in accepts]},
            round=ROUND, seq=1, prev=PREV,
        )

    cube = Cube.create({"players": 2})
    for text in ["a1", "b2", "c3", "d4", "a2", "b3"]:
        cube.push(text)

    def mover_now() -> str:
        trial = cube.copy()
        trial.push("c1")
        digest = trial.state_hash()
        # RoundState._apply_move takes the trial after comparing the histories
        assert trial.history() == [*cube.history(), "c1"]
        return digest

    def mover_before() -> str:
        trial = cube.copy()
        trial.push("c1")
        digest = trial.state_hash()
        cube.push("c1")  # applied again to the live position, hashed again
        assert cube.state_hash() == digest
        cube.pop()  # (the bench's own undo, not part of the old path)
        return digest

    pairs = {
        "author: make a move event": (make_before, make),
        "receiver: check and parse a move event": (receive_before, receive_now),
        "admin: make a start sealing 3 accepts": (seal_before, seal_now),
        "mover: play and hash the cube position": (mover_before, mover_now),
    }
    times: dict[str, tuple[list[float], list[float]]] = {k: ([], []) for k in pairs}
    load0 = os.getloadavg()[0]
    for _ in range(args.rounds):
        for name, (before, now) in pairs.items():
            times[name][0].append(per_call_us(before, args.n))
            times[name][1].append(per_call_us(now, args.n))
    print(
        f"{platform.node()} · {os.cpu_count()} cores · Python {platform.python_version()}"
        f" · load {load0:.1f} at the start, {os.getloadavg()[0]:.1f} at the end"
    )
    print("| what | before µs | now µs | now / before |")
    print("|---|---:|---:|---:|")
    for name, (before_t, now_t) in times.items():
        b, n = statistics.median(before_t), statistics.median(now_t)
        print(f"| {name} | {b:.0f} | {n:.0f} | {n / b:.2f}x |")


if __name__ == "__main__":
    main()
