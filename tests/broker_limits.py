"""The broker-limits harness (issue 25): key scenarios under limits that hosted and public
brokers set, each limit played by a Mosquitto configuration or by ``faults.MqttLimits``
(an MQTT-aware proxy) where Mosquitto has no switch.

Scenarios per limit: a live Connect Four round between two peers to the end, a 3-seat
Viergewinnt 3D round to the end, a slow round between two peers who are never online
together after the invitation, a private round that the second peer joins by its code,
and a round resumed from its log after one player's process was killed with SIGKILL on
its turn.  Each ends
"complete and agreed" in both logs (it works), or the product tells the user why in one
line and the round goes on, unforked and with nothing lost, once both are online together
(it degrades).  ``tests/test_broker_limits.py`` runs one test per row and checks it
against the table in ``docs/brokers.md``; this script writes that table:

    python tests/broker_limits.py            # print the table
    python tests/broker_limits.py --write    # and put it into docs/brokers.md
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import tempfile
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import aiomqtt
from conftest import invitation, meet, play_out, start_round
from faults import MqttLimits
from test_integration_slow_rounds import DAY_S, _session

from p2p.net import known
from p2p.net.broker import LocalBroker
from p2p.peer import ActionError, Peer, RoundNotice
from p2p.protocol.identity import Identity
from p2p.protocol.replay import replay_log
from p2p.protocol.round import Phase

DOC = HERE.parent / "docs" / "brokers.md"
BEGIN, END = "<!-- limits-table -->", "<!-- /limits-table -->"


@dataclass(frozen=True)
class Limit:
    """One broker limit and how it is played."""

    name: str
    mosquitto: str = ""
    """Lines added to the Mosquitto config."""
    proxy: dict[str, object] | None = None
    """``MqttLimits`` options (the peers connect through it)."""
    drop_every_s: float | None = None
    """The proxy drops every connection this often (a scaled-down 5 minutes)."""
    takeover: bool = False
    """A second client connects with the peer's client id now and then."""


LIMITS = [
    Limit("none (Mosquitto 2 as configured by p2p)"),
    Limit("no retained messages (`retain_available false`)", "retain_available false\n"),
    Limit("messages up to 8 KB (`message_size_limit 8192`)", "message_size_limit 8192\n"),
    Limit("messages up to 64 KB (`message_size_limit 65536`)", "message_size_limit 65536\n"),
    Limit("packets up to 8 KB, told to v5 clients (`max_packet_size 8192`)",
          "max_packet_size 8192\n"),
    Limit("QoS 0 only (`max_qos 0`)", "max_qos 0\n"),
    Limit("10 publishes/s per client, disconnect on excess (proxy)",
          proxy={"publish_rate": (10, 10.0)}),
    Limit("topic depth 8, disconnect on deeper (proxy)", proxy={"max_depth": 8}),
    Limit("every connection dropped every 5 min (proxy; every 3 s here)", proxy={},
          drop_every_s=3.0),
    Limit("a second client takes over the client id (every 0.5 s)", takeover=True),
]


@dataclass
class Outcome:
    live: str
    three: str
    slow: str
    private: str
    resume: str

    def cells(self) -> tuple[str, str, str, str, str]:
        return self.live, self.three, self.slow, self.private, self.resume


LARGEST: list[int] = [0]
"""The largest MQTT packet any peer of the last ``run_limit`` sent (bytes)."""


def _note_sizes(*peers: Peer) -> None:
    for peer in peers:
        LARGEST[0] = max(LARGEST[0], peer.edge.transport.stats.get("largest_published", 0))


AGREED = "works: complete and agreed"


def _verdicts(logs: list[Path]) -> tuple[list[str], set[str]]:
    results = [replay_log(p.read_bytes().split(b"\n")) for p in logs]
    return [str(r.verdict) for r in results], {r.state.head.id for r in results}


KICKS: list[int] = [0]
"""Takeovers done by ``_kick`` (the test checks the limit was really played)."""


async def _kick(peer: Peer, port: int, every: float) -> None:
    """Connect a second client with ``peer``'s current client id every ``every`` s: the
    broker closes ``peer``'s connection (MQTT: the newer client with an id wins)."""
    while True:
        await asyncio.sleep(every)
        client = getattr(peer.transport, "_client", None)
        if client is None:
            continue
        with contextlib.suppress(aiomqtt.MqttError, OSError):
            async with aiomqtt.Client("127.0.0.1", port, identifier=client.identifier):
                KICKS[0] += 1
                await asyncio.sleep(0.05)


async def _live(url: str, tmp: Path, port: int, limit: Limit) -> str:
    async with Peer(url, nick="alice", log_dir=tmp / "live-a") as alice, \
            Peer(url, nick="bob", log_dir=tmp / "live-b") as bob:
        kicker = asyncio.create_task(_kick(alice, port, 0.5)) if limit.takeover else None
        try:
            await meet(alice, bob, timeout=20)
            rounds = await start_round(alice, [bob], "connect4", start=0)
            await play_out(rounds, 40)
            for r in rounds:
                await r.wait_until(lambda r: r.agreed, 20)
        finally:
            if kicker is not None:
                kicker.cancel()
        _note_sizes(alice, bob)
        verdicts, heads = _verdicts([r.log_path for r in rounds])
        if rounds[0].phase is Phase.OVER and verdicts == ["agreed", "agreed"] and len(heads) == 1:
            return AGREED
        return f"FAILS: {verdicts}"


async def _three(url: str, tmp: Path, port: int, limit: Limit) -> str:
    """A 3-seat Viergewinnt 3D round between three peers, played to the end."""
    async with Peer(url, nick="alice", log_dir=tmp / "three-a") as alice, \
            Peer(url, nick="bob", log_dir=tmp / "three-b") as bob, \
            Peer(url, nick="carol", log_dir=tmp / "three-c") as carol:
        kicker = asyncio.create_task(_kick(bob, port, 0.5)) if limit.takeover else None
        try:
            await meet(alice, bob, carol, timeout=20)
            rounds = await start_round(alice, [bob, carol], "cube", {"players": 3}, start=0)
            await play_out(rounds, 60)
            for r in rounds:
                await r.wait_until(lambda r: r.agreed, 20)
        finally:
            if kicker is not None:
                kicker.cancel()
        _note_sizes(alice, bob, carol)
        verdicts, heads = _verdicts([r.log_path for r in rounds])
        if rounds[0].phase is Phase.OVER and verdicts == ["agreed"] * 3 and len(heads) == 1:
            return AGREED
        return f"FAILS: {verdicts}"


async def _slow(url: str, tmp: Path, port: int, limit: Limit) -> str:
    ids = {"alice": Identity.from_seed(b"\x51" * 32), "bob": Identity.from_seed(b"\x52" * 32)}
    dirs = {name: tmp / f"slow-{name}" for name in ids}
    told: list[str] = []

    def listen(peer: Peer) -> Callable[[], None]:
        notes = peer.events()

        async def pump() -> None:
            async for note in notes:
                if isinstance(note, RoundNotice) and note.code == "broker_no_retained":
                    told.append(note.text)

        task = asyncio.create_task(pump())
        return task.cancel

    async with Peer(url, nick="alice", identity=ids["alice"], log_dir=dirs["alice"]) as alice, \
            Peer(url, nick="bob", identity=ids["bob"], log_dir=dirs["bob"]) as bob:
        stops = [listen(alice), listen(bob)]
        await meet(alice, bob, timeout=20)
        rnd = await alice.invite([bob.peer_id], "connect4", start=0, turn_limit=DAY_S)
        theirs = await (await invitation(bob, rnd.id)).accept()
        await rnd.wait_started(10)
        await theirs.wait_started(10)
        await asyncio.sleep(0.5)  # a tick of the timers: the broker's limits are told
        for stop in stops:
            stop()
        _note_sizes(alice, bob)
        logs = [rnd.log_path, theirs.log_path]
    assert logs[0] is not None and logs[1] is not None
    paths = {"alice": logs[0], "bob": logs[1]}
    columns = {"alice": 0, "bob": 1}
    other = {"alice": ids["bob"], "bob": ids["alice"]}
    visits = 2 if told else 24
    for visit in range(visits):  # never online together from here on
        name = "alice" if visit % 2 == 0 else "bob"
        await _session(url, name, ids[name], dirs[name], paths[name], other[name], columns[name])
        verdicts, heads = _verdicts(list(paths.values()))
        if verdicts == ["agreed", "agreed"]:
            return AGREED if len(heads) == 1 else "FAILS: forked"
    if not told:
        return f"FAILS: stuck without a word to the user ({verdicts})"
    # degraded: nothing lost, nothing forked -- both online together finish the round
    async with Peer(url, nick="alice", identity=ids["alice"], log_dir=dirs["alice"]) as alice, \
            Peer(url, nick="bob", identity=ids["bob"], log_dir=dirs["bob"]) as bob:
        rounds = [await alice.resume(paths["alice"]), await bob.resume(paths["bob"])]
        await play_out(rounds, 40)
        for r in rounds:
            await r.wait_until(lambda r: r.agreed, 20)
    verdicts, heads = _verdicts(list(paths.values()))
    if verdicts == ["agreed", "agreed"] and len(heads) == 1:
        return f'degrades: told "{told[0]}"; finished once both were online together, agreed'
    return f"FAILS: {verdicts}"


async def _private(url: str, tmp: Path, port: int, limit: Limit) -> str:
    """A private round: alice opens it, bob joins by its code, both play it out."""
    async with Peer(url, nick="alice", log_dir=tmp / "private-a") as alice, \
            Peer(url, nick="bob", log_dir=tmp / "private-b") as bob:
        kicker = asyncio.create_task(_kick(alice, port, 0.5)) if limit.takeover else None
        try:
            rnd = await alice.open_private("connect4", start=0)
            assert rnd.code is not None
            try:
                theirs = await bob.join(rnd.code, timeout=10)
            except ActionError as err:
                if err.code == "broker_no_retained":
                    return f'degrades: told "{err}"'
                return f"FAILS: {err}"
            rounds = [rnd, theirs]
            for r in rounds:
                await r.wait_started(20)
            await play_out(rounds, 40)
            for r in rounds:
                await r.wait_until(lambda r: r.agreed, 20)
        finally:
            if kicker is not None:
                kicker.cancel()
        _note_sizes(alice, bob)
    verdicts, heads = _verdicts([r.log_path for r in rounds])
    return AGREED if verdicts == ["agreed", "agreed"] and len(heads) == 1 else f"FAILS: {verdicts}"


CHILD = HERE / "peer_process.py"


async def _resume(url: str, tmp: Path, port: int, limit: Limit) -> str:
    """Bob plays in a process of his own, killed with SIGKILL on his turn; a new ``Peer``
    with his key resumes the round from his log and both play it out."""
    seed = bytes([0x61]) * 32
    bob_id = Identity.from_seed(seed)
    b_dir = tmp / "resume-b"
    async with Peer(url, nick="alice", log_dir=tmp / "resume-a") as alice:
        child = await asyncio.create_subprocess_exec(
            sys.executable, str(CHILD), url, seed.hex(), str(b_dir), "600000", "600000", "1",
            stdout=asyncio.subprocess.PIPE,
        )
        try:
            assert child.stdout is not None
            async with asyncio.timeout(30):
                await child.stdout.readline()  # ONLINE
            for _ in range(200):
                if bob_id.public_key in alice.lobby.peers:
                    break
                await asyncio.sleep(0.05)
            ra = await alice.invite([bob_id.peer_id], "connect4", start=1)
            await ra.wait_started(60)  # generous: the connection-drop row cuts links every 3 s
            if not await ra.wait_turn(60):
                return "FAILS: bob never moved"
            await ra.play(ra.game.legal_moves()[0])  # type: ignore[union-attr]
            async with asyncio.timeout(30):
                line = await child.stdout.readline()  # THINKING <round id>
            if not line.startswith(b"THINKING"):
                return f"FAILS: {line!r}"
        finally:
            if child.returncode is None:
                child.kill()  # SIGKILL on his turn: no goodbye
            await child.wait()
        async with Peer(url, nick="bob", identity=bob_id, log_dir=b_dir) as bob:
            rb = await bob.resume(b_dir / f"round-{ra.id}.log")
            await play_out([ra, rb], 40)
            for r in (ra, rb):
                await r.wait_until(lambda r: r.agreed, 20)
            _note_sizes(alice, bob)
    verdicts, heads = _verdicts([r.log_path for r in (ra, rb)])
    return AGREED if verdicts == ["agreed", "agreed"] and len(heads) == 1 else f"FAILS: {verdicts}"


@contextlib.asynccontextmanager
async def _proxy_thread(port: int, limit: Limit) -> AsyncIterator[MqttLimits]:
    """``MqttLimits`` on an event loop of its own, in a thread: it reads each packet when
    it arrives, not when the peers' loop (busy signing and replaying) lets it, so a
    burst it reads late is not counted as packets sent closer together than they were."""
    started: asyncio.Future[MqttLimits] = asyncio.get_running_loop().create_future()
    outer = asyncio.get_running_loop()
    stop = threading.Event()

    async def serve() -> None:
        try:
            async with MqttLimits(port, **limit.proxy) as proxy:  # type: ignore[arg-type]
                dropper = (
                    asyncio.create_task(proxy.reset_every(limit.drop_every_s))
                    if limit.drop_every_s else None
                )
                outer.call_soon_threadsafe(started.set_result, proxy)
                while not stop.is_set():
                    await asyncio.sleep(0.05)
                if dropper is not None:
                    dropper.cancel()
        except BaseException as err:  # e.g. no port: the harness fails, not hangs
            if not started.done():
                outer.call_soon_threadsafe(started.set_exception, err)
            raise

    thread = threading.Thread(target=asyncio.run, args=(serve(),), daemon=True)
    thread.start()
    try:
        yield await started
    finally:
        stop.set()
        await asyncio.to_thread(thread.join, 10)


@contextlib.asynccontextmanager
async def _played(limit: Limit) -> AsyncIterator[tuple[str, int, MqttLimits | None]]:
    async with LocalBroker(extra_config=limit.mosquitto) as broker:
        if limit.proxy is None:
            yield broker.url, broker.port, None
            return
        async with _proxy_thread(broker.port, limit) as proxy:
            yield proxy.url, broker.port, proxy


async def run_limit(limit: Limit, tmp: Path) -> tuple[Outcome, MqttLimits | None]:
    """Both scenarios under ``limit``; what happened, and the proxy's measurements."""
    known.forget()
    LARGEST[0] = 0
    async with _played(limit) as (url, port, proxy):
        live = await _live(url, tmp, port, limit)
        three = await _three(url, tmp, port, limit)
        slow = await _slow(url, tmp, port, limit)
        private = await _private(url, tmp, port, limit)
        resume = await _resume(url, tmp, port, limit)
    return Outcome(live, three, slow, private, resume), proxy


def table(rows: list[tuple[Limit, Outcome]]) -> str:
    lines = [
        "| broker limit | live round, two peers | 3-seat round "
        "| slow round, never online together | private round, joined by code "
        "| resume after `kill -9` |",
        "|---|---|---|---|---|---|",
    ]
    for limit, outcome in rows:
        lines.append(f"| {limit.name} | {' | '.join(outcome.cells())} |")
    return "\n".join(lines)


def documented() -> dict[str, tuple[str, ...]]:
    """The rows of the table in ``docs/brokers.md``, by limit name."""
    text = DOC.read_text("utf-8")
    part = text[text.index(BEGIN) + len(BEGIN) : text.index(END)]
    rows: dict[str, tuple[str, ...]] = {}
    for line in part.strip().splitlines()[2:]:
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        rows[cells[0]] = tuple(cells[1:])
    return rows


async def main(write: bool) -> None:
    rows = []
    for limit in LIMITS:
        with tempfile.TemporaryDirectory() as tmp:
            outcome, _ = await run_limit(limit, Path(tmp))
        print(f"{limit.name}: {outcome.cells()}", file=sys.stderr)
        rows.append((limit, outcome))
    text = table(rows)
    print(text)
    if write:
        doc = DOC.read_text("utf-8")
        head, rest = doc.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        DOC.write_text(f"{head}{BEGIN}\n{text}\n{END}{tail}", "utf-8")


if __name__ == "__main__":
    asyncio.run(main("--write" in sys.argv[1:]))
