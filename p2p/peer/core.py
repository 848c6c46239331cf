"""``Peer``: one identity on one or several brokers (state, lifecycle, connection)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import ssl
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Self

from p2p.friends import Friends
from p2p.net.face import Broker
from p2p.net.inbound import InboundQueues
from p2p.net.multi import MultiTransport
from p2p.net.transport import (
    ConnectionState,
    Transport,
    split_brokers,
)
from p2p.peer.checks import _WarnBudget
from p2p.peer.config import (
    MAX_MEMBER_NICKS,
    SETTLE_S,
    now_ms,
)
from p2p.peer.driving import Driving
from p2p.peer.handles import Round
from p2p.peer.inbound import Receiving
from p2p.peer.lobby_glue import LobbyGlue
from p2p.peer.notifications import (
    ConnectionChanged,
    Notification,
    Notifications,
)
from p2p.peer.opening import Opening
from p2p.peer.publishing import Publishing
from p2p.peer.timers import Timers
from p2p.protocol.conflicts import SeenIds
from p2p.protocol.events import Event
from p2p.protocol.identity import Identity, label, sanitize_nickname
from p2p.protocol.lobby import Lobby
from p2p.protocol.round import (
    DEFAULT_TIMEOUTS,
    TurnTimeouts,
)
from p2p.protocol.round_machine import ActionError
from p2p.protocol.topics import (
    TopicError,
    Topics,
)

log = logging.getLogger("p2p.peer")


@dataclass
class PeerStats:
    """Counters for tests, the bench and the shell's status line."""

    dropped: dict[str, int] = field(default_factory=dict)
    received: int = 0
    applied: int = 0

    def count_drop(self, reason: str) -> None:
        key = reason.split(":")[0][:60]
        self.dropped[key] = self.dropped.get(key, 0) + 1


class Peer(LobbyGlue, Opening, Driving, Publishing, Receiving, Timers):
    """One identity on one or several brokers: lobby, chat, invitations and rounds.

    ``async with Peer(url, nick="alice") as peer`` connects (raises ``ConnectionError``
    with one line if the broker cannot be reached); ``url`` may also be a list of broker
    URLs (or one string of them separated by spaces): the peer then uses every broker it
    can reach at once (``p2p.net.multi``), announces us in the lobby and keeps
    the connection alive until the block ends.  ``identity`` defaults to a fresh random
    key; the shell passes the one from ``p2p.keystore``.  ``log_dir`` (optional) gets one
    file per round with its signed chain, one event per line, as it grows (the format
    ``p2p replay FILE`` reads).  ``turn_timeouts``: when a silent seat may be forfeited
    (``p2p.protocol.round.TurnTimeouts``; the defaults are the protocol's, and every
    member of a round must use the same).  ``tls_context`` replaces the default TLS
    context for ``mqtts://`` and ``wss://`` brokers (e.g. to trust a private CA).
    ``friends`` (``p2p.friends.Friends``): the keys the user marked as friends
    (``peer.friends``; the shell passes the ones from the config dir); the lobby keeps
    them first, like the people we play with (``p2p.protocol.lobby``).
    ``clock`` (optional): the wall clock in integer ms this peer signs and judges with
    (``peer.now_ms()``; default ``p2p.peer.config.now_ms``). Tests give each in-process peer
    its own, e.g. shifted by minutes (``tests/faults.py``), without touching a global.

    ``peer.lobby`` is the pure lobby machine (``p2p.protocol.lobby.Lobby``): who is
    online (``peer.lobby.online()``), their fingerprints and busy flags.
    """

    def __init__(
        self,
        broker_url: str | Sequence[str],
        *,
        nick: str,
        identity: Identity | None = None,
        namespace: str = "public",
        log_dir: Path | str | None = None,
        connect_timeout: float = 10.0,
        turn_timeouts: TurnTimeouts | None = None,
        tls_context: ssl.SSLContext | None = None,
        friends: Friends | None = None,
        clock: Callable[[], int] | None = None,
    ) -> None:
        self.now_ms: Callable[[], int] = clock if clock is not None else now_ms
        """This peer's wall clock in integer ms: every timestamp it signs and every time
        it hands the machines comes from here (one per peer: tests shift it)."""
        self.friends = friends if friends is not None else Friends()
        """The keys the user marked as friends (an impostor of one stands out)."""
        try:
            self.topics = Topics(namespace)
        except TopicError as err:
            raise ActionError(str(err)) from None
        self.identity = identity or Identity.from_seed(os.urandom(32))
        self.lobby = Lobby(
            self.identity,
            sanitize_nickname(nick),
            os.urandom(16),
            self.topics,
            is_friend=self.friends.is_friend,
        )
        self._answer_timer: asyncio.TimerHandle | None = None
        self.broker_url = broker_url
        self.log_dir = Path(log_dir) if log_dir is not None else None
        self._member_nicks: dict[bytes, str] = {}
        """Nicknames of our round members as the lobby showed them (newest last, at most
        ``MAX_MEMBER_NICKS``): a member who has gone offline keeps its name."""
        self._connect_timeout = connect_timeout
        self.turn_timeouts = turn_timeouts or DEFAULT_TIMEOUTS
        """Chain rules every member of a round must share (tests pass shorter ones)."""
        self.inbound = InboundQueues(self._classify, on_drop=self._edge_drop)
        """Inbound lanes and budgets (``p2p.net.inbound``): our rounds first."""
        self._warn_budget = _WarnBudget()
        urls = split_brokers(broker_url)
        self.transport: Broker
        try:
            if len(urls) == 1:
                self.transport = Transport(
                    urls[0],
                    on_connected=self._on_connected,
                    will=self._make_will,
                    tls_context=tls_context,
                    inbound=self.inbound,
                )
            else:  # several brokers at once: one view (p2p.net.multi)
                self.transport = MultiTransport(
                    urls,
                    on_connected=self._on_connected,
                    will=self._make_will,
                    tls_context=tls_context,
                    inbound=self.inbound,
                )
        except ValueError as err:
            raise ActionError(str(err) or "no broker URL given") from None
        self.transport.on_state(self._on_connection_state)
        self.rounds: dict[str, Round] = {}  # by round id
        self._by_key: dict[str, Round] = {}  # by topic key
        self._joining: dict[str, tuple[asyncio.Future[Event], bytes]] = {}
        """Topic key -> (the retained genesis we wait for, the code's round key)."""
        self._seed = self.identity.seed()  # opens what is sealed to us (sealing)
        self._inbox_seen = SeenIds(limit=1024)
        """Ids of inbox events we took: their replays are dropped at the edge."""
        self._listeners: list[Notifications] = []
        self._tasks: list[asyncio.Task[None]] = []
        self.stats = PeerStats()
        self._closed = False
        self._settle_until = 0.0
        """``time.monotonic()`` before which the round timers decide nothing (we just
        came back online and resync first)."""

    # -- identity --------------------------------------------------------------------

    @property
    def nick(self) -> str:
        return self.lobby.nick

    @property
    def public_key(self) -> bytes:
        return self.identity.public_key

    @property
    def peer_id(self) -> str:
        return self.identity.peer_id

    @property
    def short_id(self) -> str:
        return self.identity.short_id

    @property
    def label(self) -> str:
        return label(self.nick, self.public_key)

    def label_of(self, public_key: bytes, nick: str = "") -> str:
        """How to show a key: its lobby nickname (or ``nick``) with its fingerprint."""
        if public_key == self.public_key:
            return self.label
        info = self.lobby.peers.get(public_key)
        if info is not None:
            return label(info.nick, public_key)
        return label(nick or self._member_nicks.get(public_key) or "?", public_key)

    def _remember_members(self, rnd: Round) -> None:
        """Keep the lobby nicknames of a round's members for when they are gone."""
        for seat in rnd.machine.state.seats:
            info = self.lobby.peers.get(seat.pk) if seat.pk is not None else None
            if info is not None and seat.pk is not None:
                self._member_nicks.pop(seat.pk, None)
                self._member_nicks[seat.pk] = info.nick
        while len(self._member_nicks) > MAX_MEMBER_NICKS:
            del self._member_nicks[next(iter(self._member_nicks))]

    @property
    def connected(self) -> bool:
        return self.transport.connected

    def brokers(self) -> list[tuple[str, bool]]:
        """Each broker's URL and whether it is connected now (several: ``--broker`` twice)."""
        return self.transport.brokers()

    # -- lifecycle ---------------------------------------------------------------------

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def start(self) -> None:
        """Connect, subscribe to the lobby and announce ourselves."""
        for topic, qos in self.topics.lobby_subscriptions(self.peer_id):
            retained = topic == self.topics.presence_filter()
            await self.transport.subscribe(
                topic, qos, retained=retained, no_local=not retained
            )
        await self.transport.start(wait=self._connect_timeout)
        self._tasks = [
            asyncio.create_task(
                self._receive_loop(), name=f"p2p-peer-{self.short_id}-receive"
            ),
            asyncio.create_task(
                self._timer_loop(), name=f"p2p-peer-{self.short_id}-timers"
            ),
        ]

    async def close(self) -> None:
        """Say goodbye (offline presence), send what is pending and disconnect."""
        if self._closed:
            return
        self._closed = True
        if self._answer_timer is not None:
            self._answer_timer.cancel()
        if self.transport.connected:
            await self._run_effects(None, self.lobby.disconnect(self.now_ms()))
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        await self.transport.close()
        for listener in list(self._listeners):
            listener.close()

    def events(self) -> Notifications:
        """All notifications from now on (chat, presence, invitations, rounds, warnings)."""
        return Notifications(self)

    def _notify(self, note: Notification) -> None:
        for listener in list(self._listeners):
            listener._push(note)

    async def _on_connected(self) -> None:
        """After every (re)connect: announce our presence (the retained presences say who is
        online; nobody has to answer), and after a reconnect catch up on our rounds."""
        await self._run_effects(None, self.lobby.connect(self.now_ms()))
        if self.transport.is_reconnect():
            self._settle_until = time.monotonic() + SETTLE_S  # resync before deciding
            for rnd in list(self.rounds.values()):
                if not rnd.is_over:
                    self._repair_genesis(rnd)  # a restarted broker may have lost it
                    await rnd.request_sync()

    def _on_connection_state(self, state: ConnectionState, detail: str) -> None:
        self._notify(ConnectionChanged(state.value, detail))

    def interrupt_connection(self, hold: float = 0.0) -> None:
        """Cut the network connection as a failure would (tests, demo); it comes back."""
        self.transport.interrupt(hold)
