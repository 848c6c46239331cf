"""The broker-limits harness (issue 25): key scenarios under limits that hosted and public
brokers set, each limit played by a Mosquitto configuration or by ``faults.MqttLimits``
(an MQTT-aware proxy) where Mosquitto has no switch.

Scenarios per limit: a live Connect Four round between two peers to the end, a slow
round between two peers who are never online together after the invitation, and a
private round that the second peer joins by its code.  Each ends
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
    slow: str
    private: str

    def cells(self) -> tuple[str, str, str]:
        return self.live, self.slow, self.private


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
        verdicts, heads = _verdicts([r.log_path for r in rounds])
        if rounds[0].phase is Phase.OVER and verdicts == ["agreed", "agreed"] and len(heads) == 1:
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
    verdicts, heads = _verdicts([r.log_path for r in rounds])
    return AGREED if verdicts == ["agreed", "agreed"] and len(heads) == 1 else f"FAILS: {verdicts}"


@contextlib.asynccontextmanager
async def _played(limit: Limit) -> AsyncIterator[tuple[str, int, MqttLimits | None]]:
    async with LocalBroker(extra_config=limit.mosquitto) as broker:
        if limit.proxy is None:
            yield broker.url, broker.port, None
            return
        async with MqttLimits(broker.port, **limit.proxy) as proxy:  # type: ignore[arg-type]
            dropper = (
                asyncio.create_task(proxy.reset_every(limit.drop_every_s))
                if limit.drop_every_s else None
            )
            try:
                yield proxy.url, broker.port, proxy
            finally:
                if dropper is not None:
                    dropper.cancel()


async def run_limit(limit: Limit, tmp: Path) -> tuple[Outcome, MqttLimits | None]:
    """Both scenarios under ``limit``; what happened, and the proxy's measurements."""
    known.forget()
    async with _played(limit) as (url, port, proxy):
        live = await _live(url, tmp, port, limit)
        slow = await _slow(url, tmp, port, limit)
        private = await _private(url, tmp, port, limit)
    return Outcome(live, slow, private), proxy


def table(rows: list[tuple[Limit, Outcome]]) -> str:
    lines = [
        "| broker limit | live round, two peers | slow round, never online together "
        "| private round, joined by code |",
        "|---|---|---|---|",
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
