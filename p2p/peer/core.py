"""``Peer``: one identity on one or several brokers, composed of a few parts with one
job each (see docs/architecture.md):

* ``edge`` (``p2p.peer.edge.Edge``): the broker connection, inbound lanes and their
  classification, sealing and unsealing, the inbox replay filter, dispatch;
* ``lobby_link`` (``p2p.peer.lobby_link.LobbyLink``): the lobby machine, its
  notifications and our presence answer;
* ``links`` (``p2p.peer.round_link.RoundLinks``): one ``RoundLink`` per held round (its
  machine, topic key, round key, log, timers, lock and publishing), created once.

``Peer`` itself keeps what spans them: identity, notifications, the timer loop, the busy
flag, and the public API (``p2p.peer``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import ssl
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from p2p.friends import Friends
from p2p.net.face import Broker, Service
from p2p.net.inbound import InboundQueues
from p2p.net.transport import ConnectionState, Refused
from p2p.peer import opening
from p2p.peer.checks import _BENIGN, _WarnBudget, is_routine
from p2p.peer.config import (
    MAX_MEMBER_NICKS,
    SETTLE_S,
    TICK_S,
    now_ms,
)
from p2p.peer.edge import Edge
from p2p.peer.handles import Invitation, Round
from p2p.peer.lobby_link import LobbyLink
from p2p.peer.notifications import (
    ConnectionChanged,
    Notification,
    Notifications,
    Rejected,
    RoundNotice,
)
from p2p.peer.round_link import RoundLink, RoundLinks
from p2p.peer.runs import Runs
from p2p.protocol.effects import Publish
from p2p.protocol.identity import Identity, label, sanitize_nickname
from p2p.protocol.lobby import Lobby, PeerInfo
from p2p.protocol.round import (
    DEFAULT_TIMEOUTS,
    RoundState,
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


class Peer(Service):
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
    ``runs_dir`` (optional; the shell passes the config dir's ``runs/``, next to the key):
    where this key's runs on this machine are remembered, so that a restarted client
    never takes its own earlier run for another session of its key (``p2p.peer.runs``).

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
        runs_dir: Path | str | None = None,
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
        self.broker_url = broker_url
        self.log_dir = Path(log_dir) if log_dir is not None else None
        self._member_nicks: dict[bytes, str] = {}
        """Nicknames of our round members as the lobby showed them (newest last, at most
        ``MAX_MEMBER_NICKS``): a member who has gone offline keeps its name."""
        self._connect_timeout = connect_timeout
        self.turn_timeouts = turn_timeouts or DEFAULT_TIMEOUTS
        """Chain rules every member of a round must share (tests pass shorter ones)."""
        self._warn_budget = _WarnBudget()
        self.links = RoundLinks()
        """The rounds we hold, one link each (by id and topic key), and code joins."""
        self.lobby_link = LobbyLink(self, self.lobby, self)
        self.edge = Edge(
            self,
            self.identity,
            self.topics,
            self.links,
            broker_url,
            on_connected=self._on_connected,
            will=self.lobby_link.make_will,
            tls_context=tls_context,
        )
        self.edge.transport.on_state(self._on_connection_state)
        self.edge.transport.on_refused(self._on_refused)
        self._told_refused: set[tuple[str, str, str]] = set()
        self.listeners: list[Notifications] = []
        self._tasks: list[asyncio.Task[None]] = []
        self.stats = PeerStats()
        self._closed = False
        self._runs = Runs(Path(runs_dir)) if runs_dir is not None else None
        """Our runs of this key on this machine (``p2p.peer.runs``), if remembered."""
        self._settle_until = 0.0
        """``time.monotonic()`` before which the round timers decide nothing (we just
        came back online and resync first)."""

    # -- the parts' faces ------------------------------------------------------------

    @property
    def transport(self) -> Broker:
        """The broker connection (``p2p.net.face.Broker``), owned by the edge."""
        return self.edge.transport

    @property
    def inbound(self) -> InboundQueues:
        """The inbound lanes and budgets, owned by the edge."""
        return self.edge.inbound

    @property
    def rounds(self) -> dict[str, Round]:
        """The rounds we hold, by round id."""
        return {rid: link.handle for rid, link in self.links.by_id.items()}

    @property
    def closed(self) -> bool:
        """``close()`` ran: we said goodbye, the tasks are stopped and the broker
        connection is closed (a second ``close()`` does nothing)."""
        return self._closed

    # -- identity --------------------------------------------------------------------

    @property
    def nick(self) -> str:
        """Our nickname as the lobby link announces it (``set_nick`` changes it; a
        nickname is not an identity, the key is)."""
        return self.lobby.nick

    @property
    def public_key(self) -> bytes:
        """Our raw 32-byte Ed25519 public key: who we are to every other peer (each
        event we sign names it)."""
        return self.identity.public_key

    @property
    def peer_id(self) -> str:
        """32 hex characters of our public key's hash (its start is the fingerprint shown
        to people; ``p2p.protocol.identity``)."""
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

    def remember_members(self, state: RoundState) -> None:
        """Keep the lobby nicknames of a round's members for when they are gone."""
        for seat in state.seats:
            info = self.lobby.peers.get(seat.pk) if seat.pk is not None else None
            if info is not None and seat.pk is not None:
                self._member_nicks.pop(seat.pk, None)
                self._member_nicks[seat.pk] = info.nick
        while len(self._member_nicks) > MAX_MEMBER_NICKS:
            del self._member_nicks[next(iter(self._member_nicks))]

    @property
    def connected(self) -> bool:
        return self.edge.transport.connected

    def brokers(self) -> list[tuple[str, bool]]:
        """Each broker's URL and whether it is connected now (several: ``--broker`` twice)."""
        return self.edge.transport.brokers()

    # -- the lobby ---------------------------------------------------------------------

    def online(self) -> list[PeerInfo]:
        """Everyone else online in our namespace, by nickname."""
        return self.lobby_link.online()

    def find_peer(self, who: str) -> PeerInfo | None:
        """An online peer by peer id, fingerprint prefix (4+), public key hex or nickname."""
        return self.lobby_link.find_peer(who)

    async def take_over(self) -> None:
        """Act for our key in this session: another session of it (another window or
        machine) steps back and watches (``p2p.protocol.sessions``)."""
        await self.lobby_link.run_effects(self.lobby.take_over(self.now_ms()))

    @property
    def acting(self) -> bool:
        """False while another session of our key plays for it (this one watches)."""
        return self.lobby.sessions.acting

    async def say(self, text: str) -> None:
        """A lobby chat line to everyone online; ``ActionError`` if it is empty."""
        await self.lobby_link.say(text)

    @property
    def invitations(self) -> list[Invitation]:
        """Invitations waiting for our answer, oldest first."""
        return self.lobby_link.invitations

    def invitation(self, round_id: str) -> Invitation | None:
        return self.lobby_link.invitation(round_id)

    @property
    def busy(self) -> bool:
        """True while we hold a seat in a live round that is not over and we have not left.

        A slow round (a genesis with ``turn``, docs/protocol.md §6.7) never makes us busy:
        we may hold many of them (and one live round) at once.  A ``leave`` we sent counts
        at once, though it enters the chain only when the owner of the next position seals
        it: an opponent who vanished must not keep us "in a round" (the round still ends by
        its forfeit rule for everyone).
        """
        for link in self.links:
            machine = link.machine
            seat = machine.my_seat
            if (
                seat is not None
                and not link.store.enabled  # a slow round: not "busy"
                and not link.is_over
                and seat not in machine.state.resigned
                and ("leave", self.public_key) not in machine.side
            ):
                return True
        return False

    # -- holding rounds (p2p.peer.opening) -------------------------------------------------

    # The public calls that hold a round are the functions of p2p/peer/opening.py, bound
    # as methods (``peer.invite(...)`` is ``opening.invite(peer, ...)``): their signatures
    # and docstrings are written once, there.
    invite = opening.invite
    another_round = opening.another_round
    open_private = opening.open_private
    join = opening.join
    resume = opening.resume

    async def accept_invitation(self, round_id: str) -> Round:
        """Accept the pending invitation to ``round_id`` (``Invitation.accept``)."""
        return await opening.accept_invitation(self, round_id)

    async def decline_invitation(self, round_id: str) -> None:
        """Decline the pending invitation to ``round_id`` (``Invitation.decline``)."""
        self.lobby.sessions.check()  # another session of our key acts: it answers
        await self.lobby_link.decline(round_id)

    # -- what the parts ask of the peer (RoundHost, LobbyHost, EdgeHost) -------------------

    def publish_for(self, link: RoundLink, effect: Publish) -> None:
        """Seal a round's ``effect`` with that round's own key and topics, and send it."""
        self._send(effect, link)

    def publish_lobby(self, effect: Publish) -> None:
        """Send a lobby effect (public; a decline sealed with its invitation's key)."""
        self._send(effect, None)

    def _send(self, effect: Publish, link: RoundLink | None) -> None:
        route = effect.route
        # a presence is kept as long as its own ttl says (it grows with the lobby)
        expiry = effect.event.body["ttl"] if effect.event.kind == "presence" else None
        payload = self.edge.seal(route.topic, effect.payload, effect.event, link, effect.sealed_with)
        if payload is None:
            return
        self.edge.publish(route.topic, payload, route.qos, route.retain, expiry)

    def follow_stores(self, key: str, owners: Iterable[str]) -> None:
        self.edge.follow_stores(key, owners)

    def retained_to(self) -> str | None:
        return self.edge.transport.retained_to()

    def publish_raw(
        self, topic: str, payload: bytes, qos: int, retain: bool, expiry: int | None = None
    ) -> asyncio.Future[None]:
        return self.edge.publish(topic, payload, qos, retain, expiry)

    def notify(self, note: Notification) -> None:
        for listener in list(self.listeners):
            listener.put(note)

    def warn(
        self, text: str, round_id: str | None, reason: str, kind: str, sender: str = ""
    ) -> None:
        """A refused input: counted; reported (``Rejected``) unless benign or a flood."""
        self.stats.count_drop(reason)
        if reason in _BENIGN:
            log.debug("%s", text)  # QoS 1 redelivery, a retained copy again: normal
            return
        if is_routine(reason):  # everyday traffic: told, but not worth a warning
            log.info("%s", text)
            self.notify(Rejected(text, round_id, reason, kind, sender, routine=True))
            return
        if not self._warn_budget.take():
            log.debug("%s", text)  # a flood: counted, not shouted
            return
        log.warning("%s", text)
        self.notify(Rejected(text, round_id, reason, kind, sender))

    def count_drop(self, reason: str) -> None:
        self.stats.count_drop(reason)

    def count_applied(self) -> None:
        self.stats.applied += 1

    def count_received(self) -> None:
        self.stats.received += 1

    async def after_step(self) -> None:
        """After any machine step: our busy flag in the lobby follows our rounds (the
        lobby also declines invitations for us while we are busy)."""
        busy = self.busy
        if busy != self.lobby.busy:
            announce = self.lobby.set_busy(busy, self.now_ms())
            if self.connected:  # else the presence after reconnecting says it
                await self.lobby_link.run(announce)

    # -- lifecycle ---------------------------------------------------------------------

    async def start(self) -> None:
        """Connect, subscribe to the lobby and announce ourselves."""
        if self._runs is not None and not self.lobby.sessions.since:
            since = self.now_ms()  # this run began: its presences name it
            self.lobby.sessions.since = since
            self.lobby.sessions.earlier_runs(self._runs.begin(since))
        transport = self.edge.transport
        for topic, qos in self.topics.lobby_subscriptions(self.peer_id):
            retained = topic == self.topics.presence_filter()
            await transport.subscribe(topic, qos, retained=retained, no_local=not retained)
        await transport.start(wait=self._connect_timeout)
        self._tasks = [
            asyncio.create_task(
                self.edge.receive_loop(), name=f"p2p-peer-{self.short_id}-receive"
            ),
            asyncio.create_task(self._timer_loop(), name=f"p2p-peer-{self.short_id}-timers"),
        ]

    async def close(self) -> None:
        """Say goodbye (offline presence), send what is pending and disconnect."""
        if self._closed:
            return
        for link in self.links:
            link.store.flush()  # a slow round's store held back a moment goes now
        self._closed = True
        self.lobby_link.stop()
        if self.connected:
            await self.lobby_link.run(self.lobby.disconnect(self.now_ms()))
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        await self.edge.transport.close()
        if self._runs is not None:
            self._runs.end()
        for listener in list(self.listeners):
            listener.close()

    def events(self) -> Notifications:
        """All notifications from now on (chat, presence, invitations, rounds, warnings)."""
        return Notifications(self)

    async def _on_connected(self) -> None:
        """After every (re)connect: announce our presence (the retained presences say who is
        online; nobody has to answer), and after a reconnect catch up on our rounds."""
        await self.lobby_link.run(self.lobby.connect(self.now_ms()))
        if self.edge.transport.retained_to() in ("exact", "none"):
            # this broker hands our wildcard filter no retained presence (RabbitMQ):
            # ask the peers present to answer, and answer such a newcomer ourselves
            self.lobby.answers_everyone = True
            await self.lobby_link.run(self.lobby.hello(self.now_ms(), everyone=True))
        for link in self.links:
            link.store.republish()  # a slow round's store: the broker may have lost it
        if self.edge.transport.is_reconnect():
            self._settle_until = time.monotonic() + SETTLE_S  # resync before deciding
            for link in self.links:
                if not link.is_over:
                    link.repair_genesis()  # a restarted broker may have lost it
                    await link.request_sync()

    def _on_connection_state(self, state: ConnectionState, detail: str) -> None:
        self.notify(ConnectionChanged(state.value, detail))

    def _on_refused(self, refused: Refused) -> None:
        """A message larger than the broker takes was not sent (``p2p.net.transport``):
        tell the user once per broker, round and kind of message (notice
        ``broker_too_large``; what was not sent stays in our log)."""
        place = self.topics.parse(refused.topic)
        key = place.key if place is not None and place.is_round else ""
        what = "store" if place is not None and place.channel == "store" else (
            "round" if key else "lobby"
        )
        told = (refused.broker, key, what)
        if told in self._told_refused or len(self._told_refused) >= 64:
            return
        self._told_refused.add(told)
        link = self.links.by_key.get(key)
        self.notify(RoundNotice(
            None,
            f"the broker {refused.broker} takes messages of at most {refused.limit} bytes: "
            f"a {what} message of {refused.size} bytes was not sent through it",
            "broker_too_large",
            {"what": what, "size": refused.size, "limit": refused.limit,
             "broker": refused.broker, "round_id": link.id if link is not None else None},
        ))

    def interrupt_connection(self, hold: float = 0.0) -> None:
        """Cut the network connection as a failure would (tests, demo); it comes back."""
        self.edge.transport.interrupt(hold)

    async def _timer_loop(self) -> None:
        """Every ``TICK_S``: each round's timers, then the lobby's."""
        while True:
            await asyncio.sleep(TICK_S)
            try:
                now = self.now_ms()
                listening = self.connected
                deciding = listening and time.monotonic() >= self._settle_until
                for link in self.links:
                    await link.tick(now, deciding)
                effects = self.lobby.tick(now, listening)
                if not listening:
                    effects = [e for e in effects if not isinstance(e, Publish)]
                await self.lobby_link.run_effects(effects)
            except Exception:
                log.exception("internal error in the timer loop")
