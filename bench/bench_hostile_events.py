"""What hostile round events cost a member: old-position forfeits, copies and variants.

Run: python bench/bench_hostile_events.py [--events 600] [--runs 3]

Pure (no broker): a four-player chess round with two computer seats is played for a
while by the round machines, then a member is resumed from its log (no snapshots but the
last few positions: the case where the version-1 code replayed the chain, recomputing
every computer move, for each such forfeit).  Then, side by side in one run:

1. ``events.parse`` of one event (canonical check, id, Ed25519): the unavoidable cost;
2. ``RoundMachine.receive`` of forfeits at old positions, signed by a stranger and by the
   admin, each distinct (new ids) -- what a varied burst costs;
3. the same events again -- what identical copies cost;
4. for scale, one replay of the chain up to the oldest attacked position
   (``verify_chain``), which no incoming event triggers any more.

Prints medians per event in microseconds and the ratios to (1).
"""

from __future__ import annotations

import argparse
import functools
import os
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from p2p.protocol import events
from p2p.protocol.identity import Identity
from p2p.protocol.loopback import Loopback
from p2p.protocol.round import verify_chain
from p2p.protocol.round_machine import RoundMachine

PEOPLE = [Identity.from_seed(bytes([i + 1]) * 32) for i in range(2)]
STRANGER = Identity.from_seed(b"\x66" * 32)
ROUND = "5a" * 16
LEVEL = "normal"
"""The computer seats' level: replaying the chain recomputes each of their moves."""


def played_round(plies: int) -> tuple[RoundMachine, RoundMachine]:
    net = Loopback()
    seats = [
        {"pk": PEOPLE[0].pk_hex, "level": None},
        {"pk": PEOPLE[1].pk_hex, "level": None},
        {"pk": None, "level": LEVEL},
        {"pk": None, "level": LEVEL},
    ]
    admin, effects = RoundMachine.open(
        PEOPLE[0], 0, ROUND, "chess4", {}, seats, 0, b"\x01" * 32
    )
    bob = RoundMachine(PEOPLE[1], admin.state.genesis, b"\x02" * 32)
    net.add("p0", admin, effects)
    net.add("p1", bob, bob.accept(1))
    net.run()
    while len(admin.state.chain) < plies and admin.state.game is not None:
        mover = next(
            (m for m in (admin, bob) if m.state.owner() == m.me.public_key), None
        )
        if mover is None or admin.state.game.is_over():
            break
        name = "p0" if mover is admin else "p1"
        net.post(name, mover.move(mover.state.game.legal_moves()[0], net.now + 1_000))
        net.run()
    return admin, bob


def _receive(machine: RoundMachine, now: int, event: events.Event) -> None:
    machine.receive(event, now)


def timed(fn, items) -> list[float]:
    out = []
    for item in items:
        start = time.perf_counter()
        fn(item)
        out.append(time.perf_counter() - start)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=600)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--plies", type=int, default=40)
    args = parser.parse_args()
    _admin, bob = played_round(args.plies)
    chain = bob.log()
    bobs = [e.seq for e in chain if e.kind == "move" and e.pk == bob.me.public_key]
    old = [seq for seq in bobs if len(chain) - seq > 8][-3:]  # just outside the window
    rows: dict[str, list[float]] = {
        "parse": [],
        "varied": [],
        "copies": [],
        "replay": [],
    }
    for run in range(args.runs):
        resumed = RoundMachine.from_log(
            PEOPLE[1], chain, b"\x02" * 32, now=chain[-1].ts
        )
        now = chain[-1].ts + 10**9
        hostile = []
        for k in range(args.events):
            seq = old[k % len(old)]
            who = STRANGER if k % 2 else PEOPLE[0]
            hostile.append(
                events.make(
                    who,
                    "forfeit",
                    chain[seq - 1].ts + 900_000 + run * args.events + k,
                    {"seat": 1, "reason": "silent"},
                    round=ROUND,
                    seq=seq,
                    prev=chain[seq - 1].id,
                )
            )
        rows["parse"] += timed(lambda e: events.parse(e.raw), hostile)
        receive = functools.partial(_receive, resumed, now)
        rows["varied"] += timed(receive, hostile)
        rows["copies"] += timed(receive, hostile)
        assert resumed.state.head.id == chain[-1].id
        rows["replay"] += timed(lambda s: verify_chain(chain[:s]), [max(old)])
    parse = statistics.median(rows["parse"])
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores; load {os.getloadavg()}"
    )
    print(f"chain of {len(chain)} events, attacked positions {old}")
    print("| what | median per event | ratio to parse |")
    print("|------|------------------|----------------|")
    for name, label in (
        ("parse", "parse + verify one event (unavoidable)"),
        ("varied", "old-position forfeit, new id (stranger / admin)"),
        ("copies", "the same bytes again"),
        ("replay", "one replay up to an attacked position (v1 did this per event)"),
    ):
        med = statistics.median(rows[name])
        print(f"| {label} | {med * 1e6:,.0f} µs | {med / parse:.2f}x |")


if __name__ == "__main__":
    main()
