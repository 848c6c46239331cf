"""Which rounds complete when one member's wall clock is off, and what each peer was told.

Run: python bench/bench_clock_offsets.py [--offsets -60,-30,-14,-10,-1,0,1,10,14,30,60]
                                          [--players 2,3] [--seconds 25]

For every offset (minutes) and every seat count, a fresh Mosquitto-backed lobby of real
``Peer`` objects in this process (anna the admin, bob, cleo) plays one round of Connect Four
(2 seats) or Viergewinnt 3D (3 seats), first legal moves, with *one* member's clock shifted:
the admin's, then a guest's (``Peer(..., clock=...)``).  It prints one line per case: whether
they saw each other in the lobby, whether the round completed with one state hash for all,
and every notice each peer was shown (deduplicated), e.g. "bob's clock is about 14 min
ahead of yours".  Rounds within 10 minutes complete (docs/protocol.md, "Time"); past that
the peers say whose clock is off instead of failing silently.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from p2p.net.broker import LocalBroker  # noqa: E402
from p2p.peer import ActionError, Peer, RoundNotice  # noqa: E402
from p2p.protocol.round import Phase, TurnTimeouts  # noqa: E402

MIN = 60_000
TIMEOUTS = TurnTimeouts(silent_ms=60_000, offline_ms=3_000)


class Shifted:
    """The real wall clock in ms plus ``offset_ms``."""

    def __init__(self, offset_ms: int) -> None:
        self.offset_ms = offset_ms

    def __call__(self) -> int:
        return time.time_ns() // 1_000_000 + self.offset_ms


async def one_case(url: str, offsets: list[int], seconds: float) -> tuple[str, dict[str, list[str]]]:
    """Play one round; (outcome, notices shown to each peer)."""
    nicks = ["anna", "bob", "cleo"][: len(offsets)]
    peers = [Peer(url, nick=n, clock=Shifted(o), turn_timeouts=TIMEOUTS)
             for n, o in zip(nicks, offsets, strict=True)]
    told: dict[str, list[str]] = {n: [] for n in nicks}
    tasks = []

    async def collect(peer: Peer) -> None:
        async for note in peer.events():
            if isinstance(note, RoundNotice) and note.text not in told[peer.nick]:
                told[peer.nick].append(note.text)

    for p in peers:
        await p.start()
        tasks.append(asyncio.create_task(collect(p)))
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    try:
        while loop.time() < deadline:  # the lobby: everyone sees everyone?
            if all(o.public_key in p.lobby.peers for p in peers for o in peers if o is not p):
                break
            await asyncio.sleep(0.1)
        else:
            return "not seen in the lobby", told
        admin, guests = peers[0], peers[1:]
        game = "connect4" if len(peers) == 2 else "cube"
        options = {"players": len(peers)} if game == "cube" else None
        rnd = await admin.invite([g.peer_id for g in guests], game, options)
        rounds = [rnd]
        for g in guests:
            while g.invitation(rnd.id) is None and loop.time() < deadline:
                await asyncio.sleep(0.05)
            pending = g.invitation(rnd.id)
            if pending is None:
                return f"{g.nick} got no invitation", told
            try:
                rounds.append(await pending.accept())
            except ActionError as err:
                return f"{g.nick} could not accept: {err}", told

        async def play(r):  # type: ignore[no-untyped-def]
            while await r.wait_turn(max(0.1, deadline - loop.time())):
                await r.play(r.game.legal_moves()[0])

        try:
            await asyncio.wait_for(asyncio.gather(*(play(r) for r in rounds)),
                                   max(0.1, deadline - loop.time()))
        except TimeoutError:
            pass
        phases = {r.phase for r in rounds}
        if phases == {Phase.OVER} and len({r.state_hash for r in rounds}) == 1:
            return "completed, same result for all", told
        return "not completed: " + ", ".join(f"{p.nick} {r.phase.value}"
                                             for p, r in zip(peers, rounds, strict=False)), told
    finally:
        for p in peers:
            await p.close()
        for t in tasks:
            t.cancel()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--offsets", default="-60,-30,-14,-10,-1,0,1,10,14,30,60",
                        help="clock offsets in minutes")
    parser.add_argument("--players", default="2,3")
    parser.add_argument("--seconds", type=float, default=25.0, help="time limit per case")
    args = parser.parse_args()
    offsets = [int(x) for x in args.offsets.split(",")]
    players = [int(x) for x in args.players.split(",")]
    broker = LocalBroker().start()
    try:
        for minutes in offsets:
            for n in players:
                for who in ("admin", "guest"):
                    if minutes == 0 and who == "guest":
                        continue
                    shifted = [0] * n
                    shifted[0 if who == "admin" else 1] = minutes * MIN
                    outcome, told = asyncio.run(one_case(broker.url, shifted, args.seconds))
                    print(f"{minutes:+4d} min on the {who}, {n} seats: {outcome}", flush=True)
                    for nick, lines in told.items():
                        for line in lines:
                            print(f"      {nick} was told: {line}", flush=True)
    finally:
        broker.stop()


if __name__ == "__main__":
    main()
