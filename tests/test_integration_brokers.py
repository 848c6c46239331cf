"""Every feature on brokers nobody here wrote (issue 25): Mosquitto, aedes (Node.js) and
RabbitMQ's MQTT plugin (3.1.1 only; retained messages reach exact subscriptions only).

Per broker, one test runs every scenario on one broker process (RabbitMQ takes about
10 s to start, so it is started once): a newcomer sees everyone online within 2 s of its
connection; a live Connect Four round to the end; a 3-seat Viergewinnt 3D round; a
private round joined by code; a slow round between two peers who are never online
together after the invitation.  Both logs of each round replay
"complete and agreed" with one state hash.  A broker that cannot run here is skipped with
its reason (in CI, where the README's test command installs both, that is a failure).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from broker_limits import AGREED, Limit, _private
from brokers import AedesBroker, RabbitBroker, Unavailable
from conftest import eventually, invitation, meet, play_out, run, start_round
from test_integration_slow_rounds import DAY_S, _session

from p2p.net import known
from p2p.peer import Peer
from p2p.protocol.identity import Identity
from p2p.protocol.replay import replay_log
from p2p.protocol.round import Phase


def _started(broker: AedesBroker | RabbitBroker) -> Iterator[str]:
    try:
        broker.start()
    except Unavailable as err:
        if os.environ.get("CI"):
            pytest.fail(f"{err} -- and CI is set, so this is an error", pytrace=False)
        pytest.skip(str(err))
    try:
        yield broker.url
    finally:
        broker.stop()


@pytest.fixture(params=["mosquitto", "aedes", "rabbitmq"])
def any_broker(request: pytest.FixtureRequest) -> Iterator[str]:
    """The URL of a running broker of each kind."""
    if request.param == "mosquitto":
        yield request.getfixturevalue("private_mosquitto").url
    elif request.param == "aedes":
        yield from _started(AedesBroker())
    else:
        yield from _started(RabbitBroker())


NO_LIMIT = Limit("none")


def _verdicts(*logs: Path) -> list[object]:
    results = [replay_log(p.read_bytes().split(b"\n")) for p in logs]
    assert len({r.state.state_hash() for r in results}) == 1, "the logs disagree"
    return [r.verdict for r in results]


async def _newcomer_sees_everyone(url: str) -> tuple[float, str, str | None]:
    async with Peer(url, nick="alice") as alice, Peer(url, nick="bob") as bob:
        await meet(alice, bob)
        carol = Peer(url, nick="carol")
        async with carol:
            up = time.monotonic()  # start() returned: carol's connection is up
            await eventually(lambda: len(carol.online()) == 2, 10, "carol to see both")
            took = time.monotonic() - up
            return took, carol.transport.protocol_version, carol.transport.retained_to()


EXPECTED = {
    "mosquitto": ("5", "wildcard"),
    "aedes": ("3.1.1", "wildcard"),
    "rabbitmq": ("3.1.1", "exact"),
}
"""What the transport finds out about each broker (``p2p.net.known``)."""


async def _live_round(url: str, tmp: Path) -> list[object]:
    async with Peer(url, nick="alice", log_dir=tmp / "a") as alice, \
            Peer(url, nick="bob", log_dir=tmp / "b") as bob:
        await meet(alice, bob)
        rounds = await start_round(alice, [bob], "connect4", start=0)
        await play_out(rounds, 30)
        for r in rounds:
            await r.wait_until(lambda r: r.agreed, 10)
        assert rounds[0].phase is Phase.OVER
        return _verdicts(*(r.log_path for r in rounds))


async def _three_seats(url: str, tmp: Path) -> list[object]:
    async with Peer(url, nick="alice", log_dir=tmp / "3a") as alice, \
            Peer(url, nick="bob", log_dir=tmp / "3b") as bob, \
            Peer(url, nick="carol", log_dir=tmp / "3c") as carol:
        await meet(alice, bob, carol)
        rounds = await start_round(alice, [bob, carol], "cube", {"players": 3}, start=0)
        await play_out(rounds, 60)
        for r in rounds:
            await r.wait_until(lambda r: r.agreed, 10)
        return _verdicts(*(r.log_path for r in rounds))


async def _slow_round(url: str, tmp: Path) -> tuple[list[object], list[tuple[str, str]]]:
    ids = {"alice": Identity.from_seed(b"\x31" * 32), "bob": Identity.from_seed(b"\x32" * 32)}
    dirs = {name: tmp / f"slow-{name}" for name in ids}
    async with Peer(url, nick="alice", identity=ids["alice"], log_dir=dirs["alice"]) as alice, \
            Peer(url, nick="bob", identity=ids["bob"], log_dir=dirs["bob"]) as bob:
        await meet(alice, bob)
        rnd = await alice.invite([bob.peer_id], "connect4", start=0, turn_limit=DAY_S)
        theirs = await (await invitation(bob, rnd.id)).accept()
        await rnd.wait_started(10)
        await theirs.wait_started(10)
        logs = {"alice": rnd.log_path, "bob": theirs.log_path}
    columns = {"alice": 0, "bob": 1}
    other = {"alice": ids["bob"], "bob": ids["alice"]}
    history: list[tuple[str, str]] = []
    for visit in range(24):  # never online together from here on
        name = "alice" if visit % 2 == 0 else "bob"
        log = logs[name]
        assert log is not None
        what = await _session(url, name, ids[name], dirs[name], log, other[name], columns[name])
        history.append((name, what))
        verdicts = [replay_log(p.read_bytes().split(b"\n")).verdict for p in logs.values()]  # type: ignore[union-attr]
        if verdicts == ["agreed", "agreed"]:
            break
    return _verdicts(*logs.values()), history  # type: ignore[arg-type]


@pytest.mark.slow
def test_live_every_feature_on_each_broker(
    any_broker: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    known.forget()  # probe this broker as a first-time user would
    kind = request.node.callspec.params["any_broker"]

    async def body() -> None:
        seen_in, version, retained = await _newcomer_sees_everyone(any_broker)
        print(f"{kind}: MQTT {version}, retained to {retained}, newcomer saw all in {seen_in:.3f} s")
        assert (version, retained) == EXPECTED[kind]
        assert seen_in <= 2.0, f"the newcomer saw everyone only after {seen_in:.2f} s"
        assert await _live_round(any_broker, tmp_path) == ["agreed", "agreed"]
        assert await _three_seats(any_broker, tmp_path) == ["agreed"] * 3
        assert await _private(any_broker, tmp_path, 0, NO_LIMIT) == AGREED
        verdicts, history = await _slow_round(any_broker, tmp_path)
        assert verdicts == ["agreed", "agreed"], history
        assert sum(1 for _, w in history if w == "moved") == 7, history

    run(body(), 150)
