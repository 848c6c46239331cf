"""Shared fixtures: a real Mosquitto on a free loopback port for the integration tests,
and ``peers``: started peers on it that already see each other.

The broker is started once per test session, and only if a test asks for it.  Without
``mosquitto`` installed those tests are skipped with a clear message -- except in CI
(env ``CI`` set), where ``.ci/run`` installs it and a missing broker is a failure.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from typing import Any, Protocol

import pytest

from p2p.net.broker import BrokerError, LocalBroker, mosquitto_path


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The longest tests first (``tests/schedule.py``)."""
    from schedule import longest_first

    longest_first(items)


def _require_mosquitto() -> None:
    if mosquitto_path() is not None:
        return
    message = "mosquitto is not installed (apt-get install mosquitto); integration tests need it"
    if os.environ.get("CI"):
        pytest.fail(message + " -- and CI is set, so this is an error", pytrace=False)
    pytest.skip(message)


def _started_broker() -> Iterator[LocalBroker]:
    """Start a local Mosquitto, hand it to the test, stop it afterwards."""
    _require_mosquitto()
    broker = LocalBroker()
    try:
        broker.start()
    except BrokerError as err:
        pytest.fail(f"local mosquitto did not start: {err}", pytrace=False)
    yield broker
    broker.close()


@pytest.fixture(scope="session")
def mosquitto() -> Iterator[LocalBroker]:
    """One local Mosquitto for the whole session (do not restart it: others share it)."""
    yield from _started_broker()


@pytest.fixture()
def private_mosquitto() -> Iterator[LocalBroker]:
    """A broker of the test's own, which it may stop, kill (``faults.broker_outage``) and
    restart on the same port without persistence (reconnect and broker-restart tests)."""
    yield from _started_broker()


@pytest.fixture()
def broker_url(mosquitto: LocalBroker) -> str:
    """URL of the shared session broker."""
    return mosquitto.url


class Peers(Protocol):
    """``async with peers("alice", "bob", **peer_options) as (alice, bob):``"""

    def __call__(
        self, *nicks: str, **options: Any
    ) -> contextlib.AbstractAsyncContextManager[list[Any]]: ...


@pytest.fixture()
def peers(broker_url: str) -> Peers:
    """Started peers on the session broker, one per nickname (``options`` go to every
    ``Peer``), that see each other in the lobby; closed in reverse order on leaving.
    ``log_root``: each peer writes its round logs to ``log_root / nick``."""
    from p2p.peer import Peer

    @contextlib.asynccontextmanager
    async def started(*nicks: str, **options: Any) -> AsyncIterator[list[Any]]:
        root = options.pop("log_root", None)
        async with contextlib.AsyncExitStack() as stack:
            met = [
                await stack.enter_async_context(Peer(
                    broker_url, nick=nick, **options,
                    **({"log_dir": root / nick} if root is not None else {}),
                ))
                for nick in nicks
            ]
            await meet(*met)
            yield met

    return started


# -- helpers for the integration tests (import them: ``from conftest import ...``) -------


def run(coro: Coroutine[Any, Any, Any], timeout: float = 60.0) -> Any:
    """Run one async test body on a fresh event loop, with an overall time limit."""
    return asyncio.run(asyncio.wait_for(coro, timeout))


async def eventually(
    check: Callable[[], bool], timeout: float = 10.0, what: str = "condition"
) -> None:
    """Poll ``check`` until it holds; fail the test with ``what`` after ``timeout`` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not check():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)


async def meet(*peers: Any, timeout: float = 10.0) -> None:
    """Wait until every peer sees every other one in its lobby."""
    for peer in peers:
        for other in peers:
            if other is not peer:
                await eventually(
                    lambda p=peer, o=other: o.public_key in p.lobby.peers,
                    timeout,
                    f"{peer.nick} to see {other.nick}",
                )


async def invitation(peer: Any, round_id: str, timeout: float = 10.0) -> Any:
    """The ``Invitation`` that ``peer`` is expected to receive for round ``round_id``."""
    await eventually(
        lambda: peer.invitation(round_id) is not None,
        timeout,
        f"{peer.nick} to get the invitation",
    )
    return peer.invitation(round_id)


async def autoplay(
    rnd: Any, choose: Callable[[Any], str], timeout: float = 30.0
) -> None:
    """Play every turn of ``rnd`` with ``choose(game)`` until the round is over."""
    while await rnd.wait_turn(timeout):
        await rnd.play(choose(rnd.game))


def assert_log_matches(*rounds: Any, same_end: bool = True) -> None:
    """Each member's round log on disk (``Round.log_path``) replays to that member's live
    verdict -- its head, phase and winners (a local end: the prefix it is); with
    ``same_end``, every member whose round ended by its chain holds one result (head,
    winners, state hash).  Issue 29: call it at the end of every live and fault test."""
    from round_files import replayed_verdict

    for r in rounds:
        assert r.log_path is not None, f"{r}: no log file"
        problem = replayed_verdict(r.log_path, r.machine)
        assert problem is None, problem
    if same_end:
        ends = {
            (r.chain_state.head.id, r.winners, r.state_hash)
            for r in rounds
            if r.is_over and not r.machine.ended_here
        }
        assert len(ends) <= 1, f"members hold different ends: {ends}"


def first_legal(game: Any) -> str:
    return game.legal_moves()[0]


async def play_out(rounds: list[Any], timeout: float = 10.0) -> None:
    """Every member plays its first legal move on each turn until the round is over."""
    await asyncio.gather(*(autoplay(r, first_legal) for r in rounds))
    for r in rounds:
        await r.wait_over(timeout)


def computer(level: str) -> Callable[[Any], str]:
    """A scripted human that plays like the computer at ``level`` (seeded by the ply)."""
    from p2p.ai import choose_move

    def choose(game: Any) -> str:
        return choose_move(game, level, len(game.history()).to_bytes(4, "big"))

    return choose


async def start_round(
    admin: Any, guests: list[Any], game: str, options: dict | None = None, **kw: Any
) -> list[Any]:
    """Admin invites ``guests``; each accepts; returns every member's ``Round`` (admin first)."""
    rnd = await admin.invite([g.peer_id for g in guests], game, options, **kw)
    rounds = [rnd]
    for guest in guests:
        pending = await invitation(guest, rnd.id)
        rounds.append(await pending.accept())
    for r in rounds:
        await r.wait_started(30)
    return rounds


@pytest.fixture(scope="session")
def ws_bridge(mosquitto: LocalBroker) -> Iterator[Any]:
    """``ws://127.0.0.1:PORT/mqtt`` in front of the session broker (``tests/ws_bridge.py``)."""
    from ws_bridge import WebsocketBridge

    with WebsocketBridge("127.0.0.1", mosquitto.port) as bridge:
        yield bridge


@pytest.fixture(scope="session")
def wss_bridge(mosquitto: LocalBroker) -> Iterator[Any]:
    """``wss://127.0.0.1:PORT/mqtt`` with a throwaway self-signed certificate."""
    from ws_bridge import WebsocketBridge

    with WebsocketBridge("127.0.0.1", mosquitto.port, tls=True) as bridge:
        yield bridge


@pytest.fixture()
def link_to(mosquitto: LocalBroker) -> Callable[..., Any]:
    """A factory of ``faults.LinkProxy`` in front of the session broker: one per peer whose
    link the test degrades (``async with link_to() as link: Peer(link.url, ...)``)."""
    from faults import LinkProxy

    def make(seed: int = 0) -> Any:
        return LinkProxy(mosquitto.port, seed=seed)

    return make
