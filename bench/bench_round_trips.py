"""How many round trips a round needs, over a link with 50 ms +- 10 ms one-way delay.

Run: python bench/bench_round_trips.py [--runs 3] [--moves 6] [--delay-ms 50]
                                       [--jitter-ms 10] [--markdown]
     python bench/bench_round_trips.py --trace 4,public   (one round, every step timed)

A local Mosquitto, and in front of it a small TCP proxy (in this process) that holds
every chunk in each direction for ``delay +- jitter`` ms (uniform, seeded, in order per
connection): every peer's link to the broker is such a link, so one message from one
peer to another crosses two of them -- **one link round trip** (the unit below, measured
first with two raw MQTT clients through the same proxy).  Peers are real ``Peer``
objects in this process (the CPU of a move is far below the delay).

For 2, 3 and 4 seats (Connect Four; Viergewinnt 3D for three; Vierschach for four, with
the seats drawn by commit-reveal) and three kinds of round -- public (invited from the
lobby), private (everyone else joins by the code) and slow (a turn limit: retained
stores) -- ``--runs`` rounds each, medians of:

1. **start**: from the admin's ``invite`` (private: ``open_private``; the joiners call
   ``join`` at the same moment; public and slow: each guest accepts as soon as its
   invitation is in) until the starting seat may move, and until every member holds the
   started round;
2. **move**: from ``play`` until every other member has applied it (``--moves`` moves);
3. **end**: from the call that ends the round (Connect Four: the winning move; three and
   four seats: the last of the resignations, sent together) until every member holds all
   members' acknowledgements of the result (``Round.agreed``).

Beside each, the least the protocol as it stands needs (counted from the messages it
sends, docs/performance.md gives the reasoning).  The "before" rows run the same rounds
with each peer's transport publishing one message at a time, each awaiting its PUBACK,
and the admin awaiting its SUBACK before it invites (as before issue 28's publish
window and early invitation; the store changes are not undone there).  ``--trace SEATS,KIND`` runs one round instead
and prints when each peer sent, published, got its PUBACK and received what, and every
stall of the shared event loop: how the round trips were found.  No figure here is
asserted by a test.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import aiomqtt

from p2p.games import game_class
from p2p.net.broker import LocalBroker
from p2p.net.transport import NODELAY, Transport
from p2p.peer import Peer
from p2p.peer.edge import Edge
from p2p.protocol.topics import code_secret

WAIT_S = 60.0
"""Longest wait for anything (every wait has a limit)."""


class DelayProxy:
    """A TCP proxy that delays every chunk, in each direction, by ``delay +- jitter``
    seconds, keeping the order of one connection's bytes (a chunk never overtakes the
    one before it)."""

    def __init__(self, target_port: int, delay: float, jitter: float, seed: int = 1) -> None:
        self.target_port = target_port
        self.delay = delay
        self.jitter = jitter
        self.rng = random.Random(seed)
        self.port = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            writer.close()
            return
        for src, dst in ((reader, up_writer), (up_reader, writer)):
            task = asyncio.get_running_loop().create_task(self._pump(src, dst))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _pump(self, src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

        async def deliver() -> None:
            while True:
                due, chunk = await queue.get()
                if not chunk:
                    break
                wait = due - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                dst.write(chunk)
                await dst.drain()

        sender = loop.create_task(deliver())
        last = 0.0
        try:
            while True:
                chunk = await src.read(65536)
                delay = self.delay + self.rng.uniform(-self.jitter, self.jitter)
                last = max(last, loop.time() + delay)  # in order
                queue.put_nowait((last, chunk))
                if not chunk:
                    break
            await sender
        except (OSError, asyncio.CancelledError):
            sender.cancel()
        finally:
            with contextlib.suppress(Exception):
                dst.close()


async def link_round_trip(port: int, samples: int) -> list[float]:
    """One message from one raw MQTT client to another through the proxy (QoS 1)."""
    got: asyncio.Queue[float] = asyncio.Queue()
    times: list[float] = []
    async with (
        aiomqtt.Client(
            "127.0.0.1", port, identifier=f"rt-a-{os.getpid()}", socket_options=[NODELAY]
        ) as a,
        aiomqtt.Client(
            "127.0.0.1", port, identifier=f"rt-b-{os.getpid()}", socket_options=[NODELAY]
        ) as b,
    ):
        await b.subscribe("rt/x", qos=1)
        await asyncio.sleep(0.5)

        async def listen() -> None:
            async for _ in b.messages:
                got.put_nowait(time.monotonic())

        listener = asyncio.get_running_loop().create_task(listen())
        try:
            for _ in range(samples):
                t0 = time.monotonic()
                await a.publish("rt/x", b"x" * 400, qos=1)  # returns on the PUBACK
                t1 = await asyncio.wait_for(got.get(), WAIT_S)
                times.append(t1 - t0)
                await asyncio.sleep(0.05)
        finally:
            listener.cancel()
            await asyncio.gather(listener, return_exceptions=True)
    return times


async def until(check: Any, what: str, timeout: float = WAIT_S) -> float:
    """Poll ``check()`` every millisecond; the time it first held (monotonic)."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        await asyncio.sleep(0.001)
    return time.monotonic()


GAMES = {2: ("connect4", {}), 3: ("cube", {"players": 3}), 4: ("chess4", {})}


def playing(r: Any) -> bool:
    return r.phase.name == "PLAY" or r.is_over


class Trace:
    """``--trace``: when each peer sends, publishes (PUBLISH out, PUBACK back), subscribes
    and receives what, in one round -- to find where a start loses its round trips."""

    def __init__(self) -> None:
        self.t0 = time.monotonic()
        self.rows: list[tuple[float, str, str]] = []
        self.names: dict[int, str] = {}

    def note(self, owner: object, what: str) -> None:
        self.rows.append((time.monotonic(), self.names.get(id(owner), "?"), what))

    def install(self, peers: list[Peer]) -> contextlib.ExitStack:
        from p2p.net.transport import Transport
        from p2p.peer.core import Peer as PeerClass
        from p2p.peer.lobby_link import LobbyLink
        from p2p.peer.round_link import RoundLink

        for p in peers:
            self.names[id(p)] = p.nick
            self.names[id(p.edge)] = p.nick
            self.names[id(p.edge.transport)] = p.nick
            self.names[id(p.lobby_link)] = p.nick
        nick_of = {p.public_key: p.nick for p in peers}
        trace = self
        stack = contextlib.ExitStack()

        def patch(cls: Any, name: str, wrap: Any) -> None:
            old = getattr(cls, name)
            setattr(cls, name, wrap(old))
            stack.callback(setattr, cls, name, old)

        def tail(topic: str) -> str:
            parts = topic.split("/")
            return "/".join(parts[-2:]) if "round" in parts else "/".join(parts[-2:])[:30]

        def w_send(old: Any) -> Any:
            def send(self: Any, effect: Any, link: Any) -> None:
                if effect.event.kind not in ("presence",):
                    trace.note(self, f"send {effect.event.kind} -> {tail(effect.route.topic)}")
                return old(self, effect, link)
            return send

        def w_pub(old: Any) -> Any:
            async def pub(self: Any, client: Any, topic: str, *a: Any, **kw: Any) -> None:
                trace.note(self, f"  PUBLISH {tail(topic)}")
                try:
                    return await old(self, client, topic, *a, **kw)
                finally:
                    trace.note(self, f"  PUBACK {tail(topic)}")
            return pub

        def w_sub(old: Any) -> Any:
            async def sub(self: Any, topic: str, *a: Any, **kw: Any) -> None:
                trace.note(self, f"  SUBSCRIBE {tail(topic)}")
                try:
                    return await old(self, topic, *a, **kw)
                finally:
                    trace.note(self, f"  SUBACK {tail(topic)}")
            return sub

        def w_deliver(old: Any) -> Any:
            def deliver(self: Any, message: Any) -> None:
                topic = message.topic.value
                if "lobby" not in topic:
                    trace.note(self, f"  arrived {tail(topic)}")
                return old(self, message)
            return deliver

        def w_recv(old: Any) -> Any:
            async def recv(self: Any, event: Any, channel: str, retained: bool) -> None:
                who = nick_of.get(event.pk, "?")
                how = channel + (", retained" if retained else "")
                trace.note(self.host, f"recv {event.kind} from {who} ({how})")
                return await old(self, event, channel, retained)
            return recv

        def w_lrecv(old: Any) -> Any:
            async def recv(self: Any, event: Any, *a: Any, **kw: Any) -> None:
                if event.kind != "presence":
                    trace.note(self, f"recv (lobby) {event.kind} from {nick_of.get(event.pk, '?')}")
                return await old(self, event, *a, **kw)
            return recv

        def w_pace(old: Any) -> Any:
            async def wait(self: Any) -> None:
                before = time.monotonic()
                await old(self)
                if time.monotonic() - before > 0.002:
                    waited = (time.monotonic() - before) * 1000
                    trace.rows.append((before, "?", f"  pacer held a publish {waited:.0f} ms"))
            return wait

        from p2p.net.transport import _Pacer

        patch(_Pacer, "wait", w_pace)
        patch(PeerClass, "_send", w_send)
        patch(Transport, "_publish_while_up", w_pub)
        patch(Transport, "subscribe", w_sub)
        patch(Transport, "_deliver", w_deliver)
        patch(RoundLink, "receive", w_recv)
        patch(LobbyLink, "receive", w_lrecv)
        return stack

    async def watch_loop(self) -> None:
        """Note every stall of the event loop over 20 ms (all peers share it)."""
        while True:
            before = time.monotonic()
            await asyncio.sleep(0.005)
            stalled = time.monotonic() - before - 0.005
            if stalled > 0.02:
                self.rows.append((before, "loop", f"stalled {stalled * 1000:.0f} ms from here"))

    def print(self, rt: float) -> None:
        for when, who, what in sorted(self.rows, key=lambda r: r[0]):
            ms = (when - self.t0) * 1000
            print(f"{ms:8.1f} ms {ms / 1000 / rt:6.2f} RT  {who:3} {what}")


async def one_round(peers: list[Peer], kind: str, moves: int) -> dict[str, Any]:
    """One round of ``kind`` between ``peers`` (the first is the admin); its timings."""
    admin, guests = peers[0], peers[1:]
    game, options = GAMES[len(peers)]
    t0 = time.monotonic()
    if kind == "private":
        opened = await admin.open_private(game, options, open_seats=len(guests))
        assert opened.code is not None
        joined = await asyncio.wait_for(
            asyncio.gather(*(g.join(opened.code, timeout=WAIT_S) for g in guests)), WAIT_S
        )
        rounds = [opened, *joined]
    else:
        turn = 3600 if kind == "slow" else None
        opened = await admin.invite([g.peer_id for g in guests], game, options, turn_limit=turn)

        async def accept(g: Peer) -> Any:  # each guest as soon as its invitation is in
            await until(lambda: g.invitation(opened.id) is not None, "the invitation")
            return await g.invitation(opened.id).accept()  # type: ignore[union-attr]

        rounds = [opened, *await asyncio.gather(*(accept(g) for g in guests))]
    started = await asyncio.gather(*(until(lambda r=r: playing(r), "the start") for r in rounds))
    all_started = max(started)
    first_move_possible = next(
        when for r, when in zip(rounds, started, strict=True) if r.my_seat == r.starter
    )
    starter = next(r for r in rounds if r.my_seat == r.starter)
    result: dict[str, Any] = {
        "start_first": first_move_possible - t0,
        "start_all": all_started - t0,
        "move": [],
    }
    by_seat = {r.my_seat: r for r in rounds}
    # moves: the seat to move plays its first legal move (Connect Four: the starter
    # always column a, the other b, so the starter wins with its fourth stone)
    for _ in range(moves):
        state = rounds[0].chain_state
        if state.phase.name != "PLAY" or state.game is None:
            break
        mover = by_seat[state.game.to_move()]
        ply = len(mover.log())
        game_now = mover.game
        assert game_now is not None
        legal = game_now.legal_moves()
        text = legal[0] if mover is starter or len(legal) < 2 else legal[1]
        t1 = time.monotonic()
        await mover.play(text)
        done = max(
            await asyncio.gather(
                *(
                    until(lambda r=r, ply=ply: len(r.log()) > ply, "a move applied")
                    for r in rounds
                    if r is not mover
                )
            )
        )
        result["move"].append(done - t1)
    # the end: Connect Four's winning move (the starter has three in column a), else
    # every seat but one resigns at once
    t2 = time.monotonic()
    if len(peers) == 2:
        while not rounds[0].is_over:
            state = rounds[0].chain_state
            assert state.game is not None
            mover = by_seat[state.game.to_move()]
            legal = mover.game.legal_moves()  # type: ignore[union-attr]
            text = legal[0] if mover is starter else legal[1]
            ply = len(mover.log())
            t2 = time.monotonic()
            await mover.play(text)
            await asyncio.gather(
                *(
                    until(lambda r=r, ply=ply: len(r.log()) > ply, "a move applied")
                    for r in rounds
                )
            )
    else:
        keep = rounds[0]
        await asyncio.gather(*(r.resign() for r in rounds if r is not keep))
    agreed = max(
        await asyncio.gather(
            *(until(lambda r=r: r.is_over and r.agreed, "the acks") for r in rounds)
        )
    )
    result["end"] = agreed - t2
    return result


async def scenario(
    url: str,
    seats: int,
    kind: str,
    runs: int,
    moves: int,
    before: bool = False,
    trace: Trace | None = None,
) -> dict[str, Any]:
    namespace = f"rt{seats}{kind}{int(before)}{os.getpid()}"
    peers = [Peer(url, nick=f"p{i}", namespace=namespace, connect_timeout=WAIT_S) for i in range(seats)]
    current = Edge.subscribe_round
    if before:  # as before this change: each publish awaits its PUBACK, and the admin
        # awaits its SUBACK before it invites
        for p in peers:
            transport = p.edge.transport
            assert isinstance(transport, Transport)
            transport._window = 1

        async def acknowledged(self: Edge, key: str, *, acknowledged: bool = True) -> None:
            await current(self, key)

        Edge.subscribe_round = acknowledged  # type: ignore[method-assign]
    try:
        for p in peers:
            await asyncio.wait_for(p.start(), WAIT_S)
        for p in peers:
            for q in peers:
                if p is not q:
                    await until(lambda p=p, q=q: q.public_key in p.lobby.peers, "the lobby")
        rows = []
        for _ in range(runs):
            with trace.install(peers) if trace is not None else contextlib.nullcontext():
                lag = None
                if trace is not None:
                    trace.t0 = time.monotonic()
                    lag = asyncio.get_running_loop().create_task(trace.watch_loop())
                rows.append(await asyncio.wait_for(one_round(peers, kind, moves), 4 * WAIT_S))
                if lag is not None:
                    lag.cancel()
            await asyncio.sleep(0.5)
    finally:
        Edge.subscribe_round = current  # type: ignore[method-assign]
        for p in reversed(peers):
            with contextlib.suppress(Exception):
                await asyncio.wait_for(p.close(), WAIT_S)
    return {
        "start_first": statistics.median(r["start_first"] for r in rows),
        "start_all": statistics.median(r["start_all"] for r in rows),
        "move": statistics.median(m for r in rows for m in r["move"]),
        "end": statistics.median(r["end"] for r in rows),
        "n_moves": sum(len(r["move"]) for r in rows),
    }


# The least each step needs under the protocol as it stands, in link round trips (one
# message from one peer to the others is one; so is waiting for a subscription's
# acknowledgement); docs/performance.md gives the reasoning.
MINIMUM = {
    # protocol v5 (the draw starts with the invitation): genesis with the admin's
    # commitment (1) -> guest subscribes (1) -> accept with its commitment (1) -> start
    # sealing the accepts, closing the commitments (1) -> reveals (1) -> draw (1); the
    # admin holds the draw one trip before the guests (v4: + commits and commit_close, 2;
    # the "before" rows and an admin that awaits its own SUBACK first: + 1)
    ("public", "start"): "5-6",
    ("slow", "start"): "5-6",
    # the joiner's scrypt (CPU); subscribe and the retained genesis (1) -> join with its
    # commitment (1) -> start, reveals, draw (3)
    ("private", "start"): "4-5 + scrypt",
    ("public", "move"): "1",
    ("private", "move"): "1",
    ("slow", "move"): "1",
    # Connect Four: the last move (1) -> the other members' acks (1); three or four
    # seats: the resignations (1) -> sealed by the position's owner (1) -> acks (1)
    ("public", "end"): "2",
    ("private", "end"): "2",
    ("slow", "end"): "2",
}


async def main_async(args: argparse.Namespace) -> None:
    broker = LocalBroker().start()
    proxy = DelayProxy(broker.port, args.delay_ms / 1000, args.jitter_ms / 1000)
    await proxy.start()
    url = f"mqtt://127.0.0.1:{proxy.port}"
    try:
        rt = statistics.median(await link_round_trip(proxy.port, args.samples))
        t = time.monotonic()
        code_secret("ABCDEF")  # what a code joiner spends before its first message
        scrypt_s = time.monotonic() - t
        for game, _ in GAMES.values():  # imported once before any round is timed
            game_class(game).create()
        load0 = os.getloadavg()[0]
        if args.trace:
            seats_s, kind = args.trace.split(",")
            trace = Trace()
            found = await scenario(url, int(seats_s), kind, 1, args.moves, trace=trace)
            trace.print(rt)
            print(f"link round trip {rt * 1000:.0f} ms; {found}")
            return
        results = {}
        for seats in args.seats:
            for kind in args.kinds.split(","):
                print(f"{seats} seats, {kind} ...", file=sys.stderr, flush=True)
                results[(seats, kind)] = await scenario(
                    url,
                    seats,
                    kind.split()[0],
                    args.runs,
                    args.moves,
                    before=kind.endswith("before"),
                )
        load1 = os.getloadavg()[0]
    finally:
        await proxy.close()
        broker.close()
    print(
        f"{platform.node()} · {os.cpu_count()} cores · Python {platform.python_version()}"
        f" · load {load0:.1f} at the start, {load1:.1f} at the end"
    )
    print(
        f"link: {args.delay_ms} ms +- {args.jitter_ms} ms one way; one link round trip"
        f" (raw MQTT, one client to another through the broker, median of {args.samples})"
        f" = {rt * 1000:.0f} ms; a code joiner's scrypt = {scrypt_s * 1000:.0f} ms"
    )
    head = [
        "seats",
        "round",
        "start: first move possible",
        "start: all members",
        "min",
        "move: all applied",
        "min",
        "end: result acked by all",
        "min",
    ]
    rows = []
    for (seats, label), r in results.items():
        kind = label.split()[0]
        end_min = MINIMUM[(kind, "end")] if seats == 2 else "3"

        def x(seconds: float) -> str:
            return f"{seconds / rt:.2f} ({seconds * 1000:.0f} ms)"

        rows.append(
            [
                str(seats),
                f"{kind}, one publish at a time (before)" if label.endswith("before") else kind,
                x(r["start_first"]),
                x(r["start_all"]),
                "6-7" if label.endswith("before") else MINIMUM[(kind, "start")],
                x(r["move"]),
                MINIMUM[(kind, "move")],
                x(r["end"]),
                end_min,
            ]
        )
    if args.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for row in rows:
            print("| " + " | ".join(row) + " |")
    else:
        widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(head)]
        print("  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)))
        for row in rows:
            print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--moves", type=int, default=6)
    parser.add_argument("--delay-ms", type=float, default=50)
    parser.add_argument("--jitter-ms", type=float, default=10)
    parser.add_argument("--samples", type=int, default=20)
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--seats", type=int, nargs="+", default=[2, 3, 4])
    parser.add_argument(
        "--kinds",
        default="public,public before,private,slow,slow before",
        help="comma-separated rounds to run",
    )
    parser.add_argument(
        "--trace", metavar="SEATS,KIND", help="one round, every step of every peer timed"
    )
    import logging

    logging.basicConfig(level=logging.CRITICAL)
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
