"""How many round trips a round needs, over a link with 50 ms +- 10 ms one-way delay.

Run: python bench/bench_round_trips.py [--runs 3] [--moves 6] [--delay-ms 50]
                                       [--jitter-ms 10] [--markdown]
     python bench/bench_round_trips.py --trace 4,public   (one round, every step timed)
     python bench/bench_round_trips.py --procs             (one process per peer;
                                       or per kind: --kinds "public,public procs")

A local Mosquitto, and in front of it a small TCP proxy (in this process) that holds
every chunk in each direction for ``delay +- jitter`` ms (uniform, seeded, in order per
connection): every peer's link to the broker is such a link, so one message from one
peer to another crosses two of them -- **one link round trip** (the unit below, measured
first with two raw MQTT clients through the same proxy).  Peers are real ``Peer``
objects in this process (the CPU of a move is far below the delay), or with ``--procs``
each in a process of its own (``--worker``, driven over its stdin and stdout), so that
the three or four peers of a round do not share one event loop: what each step costs
then is one peer's work, as between people on their own machines.  The times the workers
report are ``time.monotonic()``, one clock for every process of a machine.

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
sends, docs/performance.md gives the reasoning); beside the end also its "path": how
many messages one after another the round's own end needed (``end_hops``: with three or
four resignations at once the position's owners may seal them in turn, 3 to 5).  The "before" rows run the same rounds
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
import json
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


def end_hops(chain: list[Any]) -> int:
    """The messages one after another that this round's end needed by the protocol
    (its critical path, in link round trips): after three or four seats resign at once,
    each owner of the position seals the resignations it holds -- a seal by another
    signer than the one before waits for that one (the position passed on), and a first
    seal of others' resignations waits for them to arrive -- then the acks (1).  A
    Connect Four win: the move (1), the acks (1)."""
    tail = []
    for event in reversed(chain):
        if event.kind != "seal":
            break
        tail.append(event)
    tail.reverse()
    if not tail:
        return 2
    runs = sum(1 for i, e in enumerate(tail) if i == 0 or e.pk != tail[i - 1].pk)
    waits_for_others = any(e.pk != tail[0].pk for e in tail[0].sealed())
    return 1 + runs + int(waits_for_others)


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

        def w_deliver_raw(old: Any) -> Any:  # a PUBLISH read from its bytes (decode_publish)
            def deliver(self: Any, topic: str, *a: Any, **kw: Any) -> None:
                if "lobby" not in topic:
                    trace.note(self, f"  arrived {tail(topic)}")
                return old(self, topic, *a, **kw)
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
        patch(Transport, "_deliver_raw", w_deliver_raw)
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
    result["hops"] = end_hops(rounds[0].log())
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
    current = _before(peers) if before else Edge.subscribe_round
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
        "hops": statistics.median(r["hops"] for r in rows),
        "n_moves": sum(len(r["move"]) for r in rows),
    }


def _before(peers: list[Peer]) -> Any:
    """As before issue 28's cuts: each publish awaits its PUBACK, and the admin awaits its
    SUBACK before it invites.  Returns the ``Edge.subscribe_round`` to put back."""
    current = Edge.subscribe_round
    for p in peers:
        transport = p.edge.transport
        assert isinstance(transport, Transport)
        transport._window = 1

    async def acknowledged(self: Edge, key: str, *, acknowledged: bool = True) -> None:
        await current(self, key)

    Edge.subscribe_round = acknowledged  # type: ignore[method-assign]
    return current


# -- one process per peer (--procs) ------------------------------------------------------
#
# A worker holds one Peer and answers JSON lines on its stdin ({"id", "do", ...}) with
# JSON lines on its stdout ({"id", ...}); for every round it holds it also reports, when
# they happen, {"ev": "started" | "ply" | "agreed", "round", "t", ...}: the moment (its
# time.monotonic(), polled every millisecond like ``until``) a condition first held.


class Worker:
    """``--worker``: one peer in this process, driven by the bench (see above)."""

    def __init__(self, url: str, nick: str, namespace: str, before: bool) -> None:
        self.peer = Peer(url, nick=nick, namespace=namespace, connect_timeout=WAIT_S)
        if before:
            _before([self.peer])
        self.rounds: dict[str, Any] = {}
        self.seen: set[str] = set()
        self.tasks: set[asyncio.Task[Any]] = set()

    def say(self, value: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(value) + "\n")
        sys.stdout.flush()

    def hold(self, rnd: Any) -> None:
        """Report when ``rnd`` starts, each time its log grows, and when all agreed."""
        self.rounds[rnd.id] = rnd
        task = asyncio.get_running_loop().create_task(self.watch(rnd))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def watch(self, rnd: Any) -> None:
        started = agreed = False
        n = -1
        while not agreed:
            now = time.monotonic()
            if not started and playing(rnd):
                started = True
                self.say({"ev": "started", "round": rnd.id, "t": now, "seat": rnd.my_seat,
                          "starter": rnd.starter})
            if len(rnd.log()) != n:
                n = len(rnd.log())
                state = rnd.chain_state
                game = state.game
                to_move = game.to_move() if game is not None and not rnd.is_over else None
                self.say({"ev": "ply", "round": rnd.id, "t": now, "n": n, "to_move": to_move,
                          "play": state.phase.name == "PLAY", "over": rnd.is_over})
            if rnd.is_over and rnd.agreed:
                agreed = True
                self.say({"ev": "agreed", "round": rnd.id, "t": now, "hops": end_hops(rnd.log())})
            await asyncio.sleep(0.001)

    async def do(self, cmd: dict[str, Any]) -> dict[str, Any]:
        what, peer = cmd["do"], self.peer
        if what == "start":
            await asyncio.wait_for(peer.start(), WAIT_S)
            return {"pk": peer.public_key.hex(), "peer_id": peer.peer_id}
        if what == "lobby":
            for pk in cmd["pks"]:
                await until(lambda pk=pk: bytes.fromhex(pk) in peer.lobby.peers, "the lobby")
            return {}
        if what == "invite":
            t0 = time.monotonic()
            rnd = await peer.invite(cmd["guests"], cmd["game"], cmd["options"],
                                    turn_limit=cmd["turn"])
            self.hold(rnd)
            return {"round": rnd.id, "t0": t0}
        if what == "accept_from":  # the next invitation of that admin, as soon as it is in
            admin = bytes.fromhex(cmd["admin"])

            def fresh() -> Any:
                return next((i for i in peer.invitations
                             if i.admin == admin and i.round_id not in self.seen), None)

            await until(lambda: fresh() is not None, "the invitation")
            invitation = fresh()
            self.seen.add(invitation.round_id)
            rnd = await invitation.accept()
            self.hold(rnd)
            return {"round": rnd.id}
        if what == "private":
            t0 = time.monotonic()
            rnd = await peer.open_private(cmd["game"], cmd["options"], open_seats=cmd["open"])
            self.hold(rnd)
            return {"round": rnd.id, "code": rnd.code, "t0": t0}
        if what == "join":
            rnd = await peer.join(cmd["code"], timeout=WAIT_S)
            self.hold(rnd)
            return {"round": rnd.id}
        rnd = self.rounds[cmd["round"]]
        if what == "play":  # the first legal move if we started, else the second
            legal = rnd.game.legal_moves()
            text = legal[0] if rnd.my_seat == rnd.starter or len(legal) < 2 else legal[1]
            ply = len(rnd.log())
            t = time.monotonic()
            await rnd.play(text)
            return {"t": t, "ply": ply}
        if what == "resign":
            await rnd.resign()
            return {}
        raise ValueError(f"unknown command {what!r}")

    async def serve(self) -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)

        async def answer(cmd: dict[str, Any]) -> None:
            try:
                reply = await self.do(cmd)
            except Exception as err:  # noqa: BLE001 - the bench prints it and stops
                reply = {"error": f"{type(err).__name__}: {err}"}
            self.say({"id": cmd["id"], **reply})

        try:
            while line := await reader.readline():
                cmd = json.loads(line)
                if cmd["do"] == "close":
                    break
                task = loop.create_task(answer(cmd))
                self.tasks.add(task)
                task.add_done_callback(self.tasks.discard)
        finally:
            for task in list(self.tasks):
                task.cancel()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.peer.close(), WAIT_S)


class Remote:
    """The bench's side of one worker: commands and what it reported."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.next_id = 0
        self.replies: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.events: list[dict[str, Any]] = []
        self.changed = asyncio.Event()
        self.reading = asyncio.get_running_loop().create_task(self.read())
        self.pk = ""
        self.peer_id = ""

    async def read(self) -> None:
        assert self.proc.stdout is not None
        while line := await self.proc.stdout.readline():
            value = json.loads(line)
            if "id" in value:
                self.replies.pop(value["id"]).set_result(value)
            else:
                self.events.append(value)
                self.changed.set()
        for future in self.replies.values():
            if not future.done():
                future.set_exception(RuntimeError("a worker ended"))

    async def call(self, what: str, **fields: Any) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.next_id += 1
        future = asyncio.get_running_loop().create_future()
        self.replies[self.next_id] = future
        self.proc.stdin.write((json.dumps({"id": self.next_id, "do": what, **fields}) + "\n").encode())
        await self.proc.stdin.drain()
        reply = await asyncio.wait_for(future, 4 * WAIT_S)
        if "error" in reply:
            raise RuntimeError(f"worker: {reply['error']}")
        return reply

    async def first(self, what: str, check: Any = lambda e: True) -> dict[str, Any]:
        """The first event of kind ``what`` for which ``check`` holds (waits for it)."""
        deadline = time.monotonic() + WAIT_S
        while True:
            found = next((e for e in self.events if e["ev"] == what and check(e)), None)
            if found is not None:
                return found
            self.changed.clear()
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"timed out waiting for {what}")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), left)

    def last(self, what: str, rid: str) -> dict[str, Any]:
        return [e for e in self.events if e["ev"] == what and e["round"] == rid][-1]


async def one_round_procs(remotes: list[Remote], kind: str, moves: int) -> dict[str, Any]:
    """``one_round`` with each peer in its own process (``--procs``)."""
    admin, guests = remotes[0], remotes[1:]
    game, options = GAMES[len(remotes)]
    if kind == "private":
        opened = await admin.call("private", game=game, options=options, open=len(guests))
        await asyncio.gather(*(g.call("join", code=opened["code"]) for g in guests))
    else:
        turn = 3600 if kind == "slow" else None
        accepting = [asyncio.ensure_future(g.call("accept_from", admin=admin.pk)) for g in guests]
        await asyncio.sleep(0.05)  # the guests are listening before the invitation goes
        opened = await admin.call("invite", guests=[g.peer_id for g in guests], game=game,
                                  options=options, turn=turn)
        await asyncio.gather(*accepting)
    rid, t0 = opened["round"], opened["t0"]

    def of(rid: str) -> Any:
        return lambda e: e["round"] == rid

    started = await asyncio.gather(*(r.first("started", of(rid)) for r in remotes))
    first_possible = next(e["t"] for e in started if e["seat"] == e["starter"])
    result: dict[str, Any] = {
        "start_first": first_possible - t0,
        "start_all": max(e["t"] for e in started) - t0,
        "move": [],
    }
    by_seat = {e["seat"]: r for e, r in zip(started, remotes, strict=True)}

    async def applied(ply: int, among: list[Remote]) -> float:
        events = await asyncio.gather(
            *(r.first("ply", lambda e: e["round"] == rid and e["n"] > ply) for r in among)
        )
        return max(e["t"] for e in events)

    for _ in range(moves):
        state = admin.last("ply", rid)
        if not state["play"] or state["to_move"] is None:
            break
        mover = by_seat[state["to_move"]]
        played = await mover.call("play", round=rid)
        done = await applied(played["ply"], [r for r in remotes if r is not mover])
        await applied(played["ply"], [mover])  # (the admin's report is then up to date)
        result["move"].append(done - played["t"])
    t2 = time.monotonic()
    if len(remotes) == 2:
        while not admin.last("ply", rid)["over"]:
            mover = by_seat[admin.last("ply", rid)["to_move"]]
            played = await mover.call("play", round=rid)
            t2 = played["t"]
            await applied(played["ply"], remotes)
    else:
        await asyncio.gather(*(r.call("resign", round=rid) for r in guests))
    agreed = await asyncio.gather(*(r.first("agreed", of(rid)) for r in remotes))
    result["end"] = max(e["t"] for e in agreed) - t2
    result["hops"] = agreed[0]["hops"]
    return result


async def scenario_procs(
    url: str, seats: int, kind: str, runs: int, moves: int, before: bool = False
) -> dict[str, Any]:
    """``scenario`` with one process per peer."""
    namespace = f"rp{seats}{kind}{int(before)}{os.getpid()}"
    remotes = []
    try:
        for i in range(seats):
            proc = await asyncio.create_subprocess_exec(
                sys.executable, __file__, "--worker", url, f"p{i}", namespace,
                *(["--before"] if before else []),
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            )
            remotes.append(Remote(proc))
        for r, started in zip(remotes, await asyncio.gather(*(r.call("start") for r in remotes)),
                              strict=True):
            r.pk, r.peer_id = started["pk"], started["peer_id"]
        await asyncio.gather(*(r.call("lobby", pks=[q.pk for q in remotes if q is not r])
                               for r in remotes))
        rows = []
        for _ in range(runs):
            rows.append(await asyncio.wait_for(one_round_procs(remotes, kind, moves), 4 * WAIT_S))
            await asyncio.sleep(0.5)
    finally:
        for r in remotes:
            with contextlib.suppress(Exception):
                assert r.proc.stdin is not None
                r.proc.stdin.write(b'{"do": "close"}\n')
                await r.proc.stdin.drain()
        for r in remotes:
            try:
                await asyncio.wait_for(r.proc.wait(), WAIT_S)
            except TimeoutError:
                r.proc.kill()
                await r.proc.wait()
            r.reading.cancel()
    return {
        "start_first": statistics.median(r["start_first"] for r in rows),
        "start_all": statistics.median(r["start_all"] for r in rows),
        "move": statistics.median(m for r in rows for m in r["move"]),
        "end": statistics.median(r["end"] for r in rows),
        "hops": statistics.median(r["hops"] for r in rows),
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
                words = kind.split()
                run = scenario_procs if args.procs or "procs" in words else scenario
                results[(seats, kind)] = await run(
                    url,
                    seats,
                    words[0],
                    args.runs,
                    args.moves,
                    before="before" in words,
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
        "peers: one process each" if args.procs
        else "peers: all in the bench's one process (rows 'one process per peer': each its own)"
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
        end_min += f"; path {r['hops']:g}"  # this run's own seals (``end_hops``), median

        def x(seconds: float) -> str:
            return f"{seconds / rt:.2f} ({seconds * 1000:.0f} ms)"

        rows.append(
            [
                str(seats),
                kind
                + (", one process per peer" if "procs" in label.split() else "")
                + (", one publish at a time (before)" if "before" in label.split() else ""),
                x(r["start_first"]),
                x(r["start_all"]),
                "6-7" if "before" in label.split() else MINIMUM[(kind, "start")],
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
        help="comma-separated rounds to run; a kind followed by 'before' runs as before"
        " the cuts, by 'procs' with one process per peer (e.g. 'slow procs')",
    )
    parser.add_argument(
        "--trace", metavar="SEATS,KIND", help="one round, every step of every peer timed"
    )
    parser.add_argument(
        "--procs", action="store_true", help="one process per peer (not with --trace)"
    )
    parser.add_argument("--worker", nargs=3, metavar=("URL", "NICK", "NAMESPACE"),
                        help=argparse.SUPPRESS)
    parser.add_argument("--before", action="store_true", help=argparse.SUPPRESS)
    import logging

    logging.basicConfig(level=logging.CRITICAL)
    args = parser.parse_args()
    if args.worker:
        asyncio.run(Worker(*args.worker, before=args.before).serve())
        return
    if args.procs and args.trace:
        parser.error("--trace runs in one process; leave out --procs")
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
