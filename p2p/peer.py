"""The public async API of ``p2p``: one ``Peer`` per identity on one broker.

Scripted bots, the tests, the demo and the shell all use this module; it is the driver
of the pure state machines in ``p2p.protocol`` (it feeds them what arrives, runs their
timers with the real clock and carries out the effects they return) on top of the one
network connection of ``p2p.net.transport``.  A bot in a few lines::

    async with Peer(url, nick="bot") as peer:
        async for note in peer.events():
            if isinstance(note, InvitationReceived):
                await note.invitation.accept()
            elif isinstance(note, YourTurn):
                await note.round.play(choose_move(note.round.game, "normal"))

(``examples/bot.py`` is the complete version.)  The admin's peer plays the computer seats
of its rounds; every other member recomputes each computer move and refuses a different
one.  Everything a user can get wrong (an illegal move, not your turn, an unknown peer)
raises ``ActionError`` with a one-line reason and changes nothing.  Everything a stranger
sends is checked by the protocol layer; what fails is dropped with a log line and
reported as a ``Rejected`` notification, never as an exception.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import logging
import os
import random
import ssl
import stat
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from p2p.friends import Friends
from p2p.games import Game, game_class
from p2p.net.inbound import InboundQueues, Lane, Verdict
from p2p.net.multi import MultiTransport
from p2p.net.transport import (
    ConnectionState,
    Inbound,
    Transport,
    WillMessage,
    split_brokers,
)
from p2p.protocol import events as ev
from p2p.protocol import sealing
from p2p.protocol.chat import clean_line
from p2p.protocol.effects import (
    Acknowledged,
    Applied,
    ChatLine,
    Dropped,
    Effect,
    Equivocation,
    Notice,
    Publish,
    Rewound,
    dropped,
)
from p2p.protocol.events import Event, EventError
from p2p.protocol.identity import Identity, label, peer_id, sanitize_nickname, verify
from p2p.protocol.lobby import (
    DECLINED_CANCEL,
    LONGEST_INVITATION_MS,
    MAX_INVITATIONS,
    PRESENCE_TTL_S,
    Backoff,
    Lobby,
    PeerInfo,
)
from p2p.protocol.lobby import Invitation as LobbyInvitation
from p2p.protocol.round import (
    DEFAULT_TIMEOUTS,
    Phase,
    RoundState,
    TurnTimeouts,
    next_start,
)
from p2p.protocol.round_machine import ActionError, RoundMachine
from p2p.protocol.sealing import SealError
from p2p.protocol.topics import (
    TopicError,
    Topics,
    code_secret,
    make_code,
    normalize_code,
    private_key,
)

__all__ = [
    "ActionError",
    "ChatMessage",
    "ConnectionChanged",
    "Equivocated",
    "Invitation",
    "InvitationReceived",
    "Notification",
    "Peer",
    "PeerInfo",
    "PresenceChanged",
    "Rejected",
    "Resynced",
    "Round",
    "RoundNotice",
    "RoundOver",
    "RoundUpdate",
    "YourTurn",
]

log = logging.getLogger("p2p.peer")

TICK_S = 0.25
"""How often the round machines' timers run."""
RESYNC_AFTER_S = 2.0
"""A round with events parked (an earlier one is missing) asks for a sync after this long."""
OFFLOAD_COMPUTER_MOVES = True
"""Run machine steps of rounds with computer seats in a worker thread (see ``Peer._call``)."""
MAX_MEMBER_NICKS = 256
"""How many round members' nicknames a peer keeps for labels after they left the lobby."""
GENESIS_REPAIR_S = 0.2
"""The admin of a private round re-publishes its retained genesis this long after it saw
it deleted or overwritten (at most once per this interval, however fast a stranger is)."""


def now_ms() -> int:
    """The wall clock in integer milliseconds: the only clock the machines ever see."""
    return time.time_ns() // 1_000_000


# -- notifications --------------------------------------------------------------------


@dataclass(frozen=True)
class Notification:
    """Base class of everything ``Peer.events()`` yields."""


@dataclass(frozen=True)
class ChatMessage(Notification):
    sender: bytes
    nick: str
    text: str
    round_id: str | None  # None: lobby chat
    ts: int

    @property
    def label(self) -> str:
        return label(self.nick, self.sender)


@dataclass(frozen=True)
class PresenceChanged(Notification):
    peer: PeerInfo
    online: bool


@dataclass(frozen=True)
class InvitationReceived(Notification):
    invitation: Invitation


@dataclass(frozen=True)
class RoundUpdate(Notification):
    """A chain event became part of a round (``kind``: start, draw, move, seal ...)."""

    round: Round
    kind: str
    seq: int
    text: str
    seat: int | None = None  # for a move: the seat that made it


@dataclass(frozen=True)
class YourTurn(Notification):
    round: Round


@dataclass(frozen=True)
class RoundOver(Notification):
    round: Round
    winners: tuple[int, ...]
    reason: str


@dataclass(frozen=True)
class RoundNotice(Notification):
    """A protocol notice: ``text`` in English for logs, ``code`` and ``params`` for a UI
    (see ``p2p.protocol.effects.Notice``)."""

    round: Round | None
    text: str
    code: str = ""
    params: dict[str, object] = field(default_factory=dict, hash=False)


@dataclass(frozen=True)
class Rejected(Notification):
    """An incoming event was refused (who sent what, and why)."""

    text: str
    round_id: str | None = None
    reason: str = ""
    kind: str = ""
    sender: str = ""
    """Short fingerprint of the signer, ``"?"`` or empty when unknown."""


@dataclass(frozen=True)
class Equivocated(Notification):
    """One key signed two conflicting events; both are the evidence."""

    round: Round | None
    first: Event
    second: Event

    @property
    def text(self) -> str:
        return (
            f"equivocation by {self.first.pk.hex()[:8]}: {self.first.kind} {self.first.id[:12]}"
            f" and {self.second.kind} {self.second.id[:12]}"
        )


@dataclass(frozen=True)
class ConnectionChanged(Notification):
    state: str  # "connected", "lost", "reconnected", "closed"
    detail: str


@dataclass(frozen=True)
class Resynced(Notification):
    round: Round
    applied: int
    head: int


class Notifications:
    """An async iterator over notifications, registered the moment it is created.

    Bounded: if the consumer falls far behind, the oldest notifications are dropped.
    ``close()`` it (or use ``with peer.events() as notes:``) when you stop reading; the
    peer closes all of them when it closes.
    """

    def __init__(
        self,
        owner: Peer,
        accept: Callable[[Notification], bool] | None = None,
        maxsize: int = 10_000,
    ) -> None:
        self._owner = owner
        self._accept = accept
        self._queue: asyncio.Queue[Notification | None] = asyncio.Queue(maxsize)
        owner._listeners.append(self)

    def _push(self, note: Notification | None) -> None:
        if note is not None and self._accept is not None and not self._accept(note):
            return
        if self._queue.full():
            with contextlib.suppress(asyncio.QueueEmpty):
                self._queue.get_nowait()
        self._queue.put_nowait(note)

    def close(self) -> None:
        """Stop listening (the iteration ends)."""
        with contextlib.suppress(ValueError):
            self._owner._listeners.remove(self)
        self._push(None)

    def __aiter__(self) -> Notifications:
        return self

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __anext__(self) -> Notification:
        note = await self._queue.get()
        if note is None:
            raise StopAsyncIteration
        return note

    async def next(self, timeout: float | None = None) -> Notification:
        """The next notification; ``asyncio.TimeoutError`` after ``timeout`` seconds."""
        return await asyncio.wait_for(self.__anext__(), timeout)


# -- rounds ---------------------------------------------------------------------------


class Round:
    """One round this peer takes part in (as admin, invited member or code joiner).

    ``round.game`` is the rules engine of the round (``None`` until play starts), equal on
    every member; ``round.phase`` says where the round is; the action methods sign and
    publish our part and raise ``ActionError`` when the action is not possible now.
    """

    def __init__(self, peer: Peer, machine: RoundMachine) -> None:
        self._peer = peer
        self.machine = machine
        self.invited_by: bytes = machine.state.genesis.pk
        self._changed = asyncio.Condition()
        self._resync_count = 0
        self._resync_flush: asyncio.Handle | None = None
        self._parked_since: float | None = None
        self._last_sync_request = 0.0
        self._last_change = time.monotonic()
        self.log_path: Path | None = None
        self.code: str | None = machine.code
        self._shadow: Game | None = None  # follows the moves to tell who made each one
        self._lock = asyncio.Lock()  # one machine step at a time (see Peer._call)
        self._has_computers = any(seat.is_computer for seat in machine.state.seats)
        self._genesis_cleared = False
        self._told_over: tuple | None = None
        self.sealing_key: bytes = b""
        """The round key every payload on the round's topics is sealed with
        (``p2p.protocol.sealing``): chosen by the admin and sealed to each invitee in
        the invitation, or derived from the join code of a private round."""
        self._genesis_payload: bytes | None = None  # our retained genesis, as sealed
        self._genesis_repair: asyncio.TimerHandle | None = None
        self._members: tuple[int, frozenset[bytes]] = (-1, frozenset())

    # -- queries ---------------------------------------------------------------------

    @property
    def id(self) -> str:
        return self.machine.state.round_id

    @property
    def chain_state(self) -> RoundState:
        """The verified chain and everything derived from it."""
        return self.machine.state

    @property
    def game(self) -> Game | None:
        """The rules engine after the moves so far (``None`` before play)."""
        return self.machine.state.game

    state = game  # the brief's name for it: ``round.state`` is the engine

    @property
    def game_name(self) -> str:
        return self.machine.state.game_name

    @property
    def phase(self) -> Phase:
        return self.machine.state.phase

    @property
    def is_over(self) -> bool:
        return self.phase in (Phase.OVER, Phase.CANCELLED)

    @property
    def my_seat(self) -> int | None:
        return self.machine.my_seat

    @property
    def is_admin(self) -> bool:
        return self.machine.is_admin

    @property
    def admin(self) -> bytes:
        return self.machine.state.admin

    @property
    def seats(self) -> list[str]:
        """A label per seat: nickname with fingerprint, computer level, or ``open``."""
        out = []
        for seat in self.machine.state.seats:
            if seat.is_computer:
                out.append(f"computer ({seat.level})")
            elif seat.pk is None:
                out.append("open")
            else:
                out.append(self._peer.label_of(seat.pk, seat.nick))
        return out

    @property
    def is_my_turn(self) -> bool:
        st = self.machine.state
        if st.phase is not Phase.PLAY or st.game is None:
            return False
        seat = st.game.to_move()
        return (
            seat is not None and seat == self.my_seat and not st.seats[seat].is_computer
        )

    @property
    def state_hash(self) -> str:
        return self.machine.state.state_hash()

    @property
    def winners(self) -> tuple[int, ...]:
        return self.machine.state.winners()

    @property
    def seed(self) -> bytes | None:
        return self.machine.state.seed

    @property
    def starter(self) -> int | None:
        return self.machine.state.starter

    @property
    def agreed(self) -> bool:
        """True once every human seat signed the final head and state hash (``ack``)."""
        return self.machine.agreed()

    def log(self) -> list[Event]:
        """The verified chain, genesis first."""
        return self.machine.log()

    def topic(self, channel: str = "events") -> str:
        """The MQTT topic of one of the round's channels (events, sync, chat, genesis)."""
        key = self.machine.key
        routes = {
            "events": self._peer.topics.round_events,
            "sync": self._peer.topics.round_sync,
            "chat": self._peer.topics.round_chat,
            "genesis": self._peer.topics.round_genesis,
        }
        return routes[channel](key).topic

    def sealed(self, payload: bytes, channel: str = "events") -> bytes:
        """``payload`` sealed with the round key, as a member sends it on ``channel``.

        For tests and tools that publish a member's own bytes (e.g. a hostile member's
        signed event) through a client of their own.
        """
        return sealing.seal_round(
            self.sealing_key, os.urandom(sealing.NONCE_SIZE), channel, payload
        )

    def _has_member(self, public_key: bytes) -> bool:
        """True if ``public_key`` holds a seat (the edge's "known member key" check).

        Seats change only with the chain, so the set is rebuilt when the chain grows.
        """
        st = self.machine.state
        length = len(st.chain)
        if self._members[0] != length:
            self._members = (
                length,
                frozenset(seat.pk for seat in st.seats if seat.pk is not None),
            )
        return public_key in self._members[1]

    def __repr__(self) -> str:
        return f"Round({self.id[:8]} {self.game_name} {self.phase.value})"

    # -- actions ---------------------------------------------------------------------

    async def play(self, move: str) -> None:
        """Play ``move`` (canonical or as a person types it) for our seat."""
        await self._peer._act(self, lambda m, now: m.move(move, now))

    async def resign(self) -> None:
        """Give up our seat."""
        await self._peer._act(self, lambda m, now: m.resign(now))

    async def leave(self) -> None:
        """Leave the round (in play: resigns; the admin role passes on)."""
        await self._peer._act(self, lambda m, now: m.leave(now))

    async def request_takeback(self) -> None:
        """Ask the others to take back our last move (once per round, before it is answered)."""
        await self._peer._act(self, lambda m, now: m.request_takeback(now))

    async def accept_takeback(self) -> None:
        """As the player to move: agree to take back the last move its mover asked about."""
        await self._peer._act(self, lambda m, now: m.accept_takeback(now))

    @property
    def takeback_asked(self) -> int | None:
        """The seat asking to take back the last move (``None``: nobody asks)."""
        request = self.machine.takeback_request()
        return None if request is None else self.machine.state.seat_of(request.pk)

    async def cancel(self, reason: str = "cancelled by the admin") -> None:
        """The admin calls the round off before play."""
        await self._peer._act(self, lambda m, now: m.cancel(reason, now))

    async def say(self, text: str) -> None:
        """A round chat line."""
        line = clean_line(text)
        await self._peer._act(self, lambda m, now: m.chat(text, now))
        me = self._peer.identity
        self._peer._notify(
            ChatMessage(me.public_key, self._peer.nick, line, self.id, now_ms())
        )

    async def request_sync(self) -> None:
        """Ask the other members for the chain from our head on."""
        self._last_sync_request = time.monotonic()
        await self._peer._act(self, lambda m, now: m.request_sync(now))

    # -- waiting ---------------------------------------------------------------------

    async def _signal(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    async def wait_until(
        self, predicate: Callable[[Round], bool], timeout: float | None = None
    ) -> None:
        """Wait until ``predicate(round)`` holds; ``asyncio.TimeoutError`` after ``timeout``."""

        async def waiter() -> None:
            async with self._changed:
                await self._changed.wait_for(lambda: predicate(self))

        await asyncio.wait_for(waiter(), timeout)

    async def wait_started(self, timeout: float | None = 60) -> None:
        """Wait until play begins (or the round is cancelled)."""
        await self.wait_until(
            lambda r: r.phase in (Phase.PLAY, Phase.OVER, Phase.CANCELLED), timeout
        )

    async def wait_over(self, timeout: float | None = None) -> None:
        """Wait until the round is over or cancelled."""
        await self.wait_until(lambda r: r.is_over, timeout)

    async def wait_turn(self, timeout: float | None = None) -> bool:
        """Wait until it is our turn (``True``) or the round is over (``False``)."""
        await self.wait_until(lambda r: r.is_my_turn or r.is_over, timeout)
        return self.is_my_turn

    def events(self) -> Notifications:
        """Notifications about this round only."""
        return Notifications(self._peer, lambda n: getattr(n, "round", None) is self)


# -- invitations ----------------------------------------------------------------------


class Invitation:
    """A round someone invited us to, not answered yet: ``accept()`` or ``decline()``."""

    def __init__(self, peer: Peer, pending: LobbyInvitation) -> None:
        self._peer = peer
        self.genesis = pending.genesis
        body = pending.genesis.body
        self.round_id: str = pending.round_id
        self.admin: bytes = pending.admin
        self.game: str = body["game"]
        self.options: dict[str, Any] = dict(body["options"])
        self.expires: int = body["expires"]
        self.drawn: bool = body["start"] is None

    @property
    def admin_label(self) -> str:
        return self._peer.label_of(self.admin)

    async def accept(self) -> Round:
        """Take our seat; returns the round (play starts once every seat accepted)."""
        return await self._peer._accept_invitation(self.round_id)

    async def decline(self) -> None:
        """Say no; the admin then calls the round off."""
        await self._peer._decline_invitation(self.round_id)

    def __repr__(self) -> str:
        return f"Invitation({self.round_id[:8]} {self.game} from {self.admin_label})"


# -- the peer -------------------------------------------------------------------------


@dataclass
class PeerStats:
    """Counters for tests, the bench and the shell's status line."""

    dropped: dict[str, int] = field(default_factory=dict)
    received: int = 0
    applied: int = 0

    def count_drop(self, reason: str) -> None:
        key = reason.split(":")[0][:60]
        self.dropped[key] = self.dropped.get(key, 0) + 1


class Peer:
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
    ) -> None:
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
        try:
            if len(urls) == 1:
                self.transport: Transport | MultiTransport = Transport(
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
        self._invite_keys: dict[str, tuple[bytes, str]] = {}
        """Round id -> (round key, topic key), from invitations sealed to us (bounded)."""
        self._seed = self.identity.seed()  # opens what is sealed to us (sealing)
        self._listeners: list[Notifications] = []
        self._tasks: list[asyncio.Task[None]] = []
        self.stats = PeerStats()
        self._closed = False

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

    def online(self) -> list[PeerInfo]:
        """Everyone else online in our namespace, by nickname."""
        return self.lobby.online()

    def find_peer(self, who: str) -> PeerInfo | None:
        """An online peer by peer id, fingerprint prefix (4+), public key hex or nickname."""
        text = who.strip().lower()
        if not text:
            return None
        peers = list(self.lobby.peers.values())
        matches = [
            p
            for p in peers
            if p.pk.hex() == text
            or (len(text) >= 4 and p.pk.hex() != text and self._pid(p).startswith(text))
        ]
        if not matches:
            matches = [p for p in peers if p.nick.casefold() == text]
        return matches[0] if len(matches) == 1 else None

    @staticmethod
    def _pid(info: PeerInfo) -> str:
        from p2p.protocol.identity import peer_id

        return peer_id(info.pk)

    @property
    def busy(self) -> bool:
        """True while we hold a seat in a round that is not over and we have not left.

        A ``leave`` we sent counts at once, though it enters the chain only when the owner
        of the next position seals it: an opponent who vanished must not keep us "in a
        round" (the round still ends by its forfeit rule for everyone).
        """
        for rnd in self.rounds.values():
            seat = rnd.my_seat
            if (
                seat is not None
                and not rnd.is_over
                and seat not in rnd.chain_state.resigned
                and ("leave", self.public_key) not in rnd.machine.side
            ):
                return True
        return False

    @property
    def connected(self) -> bool:
        return self.transport.connected

    def brokers(self) -> list[tuple[str, bool]]:
        """Each broker's URL and whether it is connected now (several: ``--broker`` twice)."""
        if isinstance(self.transport, MultiTransport):
            return self.transport.brokers()
        return [(str(self.transport.address), self.transport.connected)]

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
            await self._run_effects(None, self.lobby.disconnect(now_ms()))
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

    # -- connection --------------------------------------------------------------------

    def _make_will(self) -> WillMessage:
        """A fresh session per connection, and its pre-signed offline presence as the Will."""
        event = self.lobby.will(now_ms(), session=os.urandom(16))
        route = self.lobby.will_route()
        return WillMessage(
            route.topic, event.raw, route.qos, route.retain, PRESENCE_TTL_S
        )

    async def _on_connected(self) -> None:
        """After every (re)connect: announce, ask the lobby to answer, catch up on rounds."""
        await self._run_effects(None, self.lobby.connect(now_ms()))
        broker = (
            self.transport.announcing()
            if isinstance(self.transport, MultiTransport)
            else self.transport
        )
        if broker is not None and broker.state is ConnectionState.RECONNECTED:
            for rnd in list(self.rounds.values()):
                if not rnd.is_over:
                    self._repair_genesis(rnd)  # a restarted broker may have lost it
                    await rnd.request_sync()

    def _on_connection_state(self, state: ConnectionState, detail: str) -> None:
        self._notify(ConnectionChanged(state.value, detail))

    def interrupt_connection(self, hold: float = 0.0) -> None:
        """Cut the network connection as a failure would (tests, demo); it comes back."""
        self.transport.interrupt(hold)

    # -- lobby actions -------------------------------------------------------------------

    async def say(self, text: str) -> None:
        """A lobby chat line to everyone online; ``ActionError`` if it is empty."""
        try:
            effects = self.lobby.chat(text, now_ms())
        except ValueError as err:
            raise ActionError(str(err)) from None
        await self._run_effects(None, effects)
        for effect in effects:
            if isinstance(effect, Publish):
                event = effect.event
                self._notify(
                    ChatMessage(
                        self.public_key, self.nick, event.body["text"], None, event.ts
                    )
                )

    @property
    def invitations(self) -> list[Invitation]:
        """Invitations waiting for our answer, oldest first."""
        return [
            Invitation(self, pending) for pending in self.lobby.invitations.values()
        ]

    def invitation(self, round_id: str) -> Invitation | None:
        pending = self.lobby.invitations.get(round_id)
        return Invitation(self, pending) if pending else None

    def _resolve(self, who: str | PeerInfo | bytes) -> bytes:
        if isinstance(who, PeerInfo):
            return who.pk
        if isinstance(who, bytes) and len(who) == 32:
            return who
        text = str(who)
        info = self.find_peer(text)
        if info is not None:
            return info.pk
        if len(text) == 64:
            with contextlib.suppress(ValueError):
                return bytes.fromhex(text)
        raise ActionError(f"no peer {text!r} online (use a fingerprint from the lobby)")

    async def invite(
        self,
        peers: Sequence[str | PeerInfo | bytes],
        game: str,
        options: Mapping[str, Any] | None = None,
        *,
        computers: Sequence[str] = (),
        start: int | None = None,
        seats: Sequence[str] | None = None,
    ) -> Round:
        """Open a round as its admin and invite ``peers`` to it.

        Seats are: us, the invited peers in the given order, then one computer seat per
        level in ``computers`` -- or ``seats``, a list naming each seat as ``"me"``, a
        peer (id, fingerprint or nickname) or ``"computer:LEVEL"``.  ``start`` names the
        starting seat; ``None`` draws it by commit-reveal.  For games with a ``players``
        option it defaults to the number of seats.
        """
        if seats is None:
            layout: list[dict[str, Any]] = [
                {"pk": self.public_key.hex(), "level": None}
            ]
            layout += [{"pk": self._resolve(p).hex(), "level": None} for p in peers]
            layout += [{"pk": None, "level": level} for level in computers]
        else:
            layout = []
            for spec in seats:
                if spec == "me":
                    layout.append({"pk": self.public_key.hex(), "level": None})
                elif isinstance(spec, str) and spec.startswith("computer:"):
                    layout.append({"pk": None, "level": spec.split(":", 1)[1]})
                else:
                    layout.append({"pk": self._resolve(spec).hex(), "level": None})
        return await self._open(game, options, layout, start, code=None)

    async def another_round(self, previous: Round) -> Round:
        """As admin of a finished round: invite the same seats again, the next seat starts.

        The starting seat rotates (``p2p.protocol.round.next_start``); every member gets a
        fresh invitation to accept.
        """
        st = previous.chain_state
        if not previous.is_over:
            raise ActionError("the round is still running", "still_running")
        if not previous.is_admin:
            raise ActionError("only the round's admin can start another round")
        layout = [
            {
                "pk": None if seat.pk is None or seat.is_computer else seat.pk.hex(),
                "level": seat.level,
            }
            for seat in st.seats
        ]
        if any(s["pk"] is None and s["level"] is None for s in layout):
            raise ActionError("a seat of that round was never taken")
        options = {k: v for k, v in st.options.items() if k != "first"}
        return await self._open(
            st.game_name, options, layout, next_start(st), code=None
        )

    async def open_private(
        self,
        game: str,
        options: Mapping[str, Any] | None = None,
        *,
        open_seats: int = 1,
        peers: Sequence[str | PeerInfo | bytes] = (),
        computers: Sequence[str] = (),
        start: int | None = None,
    ) -> Round:
        """Open a private round behind a join code (``round.code``, 6 characters).

        Seats: us, any ``peers`` invited directly, ``open_seats`` seats for whoever enters
        the code, then the ``computers``.  The code is hashed into the round's topics, so
        the round cannot be found by browsing the lobby.
        """
        if open_seats < 1:
            raise ActionError("a private round needs at least one open seat")
        layout: list[dict[str, Any]] = [{"pk": self.public_key.hex(), "level": None}]
        layout += [{"pk": self._resolve(p).hex(), "level": None} for p in peers]
        layout += [{"pk": None, "level": None} for _ in range(open_seats)]
        layout += [{"pk": None, "level": level} for level in computers]
        code = make_code(os.urandom(8))
        return await self._open(game, options, layout, start, code=code)

    async def join(self, code: str, timeout: float = 10.0) -> Round:
        """Join the private round behind ``code``; ``ActionError`` if there is none."""
        try:
            code = normalize_code(code)
        except TopicError as err:
            raise ActionError(str(err)) from None
        if self.busy:
            raise ActionError("you are already in a round; leave it first", "busy")
        secret = await asyncio.to_thread(
            code_secret, code
        )  # scrypt: keep the loop responsive
        key = private_key(code, secret)
        if key in self._by_key:
            raise ActionError("you are already in this round")
        round_key = sealing.private_round_key(secret)
        waiting: asyncio.Future[Event] = asyncio.get_running_loop().create_future()
        self._joining[key] = (waiting, round_key)
        try:
            await self._subscribe_round(key)
            try:
                genesis = await asyncio.wait_for(asyncio.shield(waiting), timeout)
            except TimeoutError:
                raise ActionError(f"no open round behind code {code}", "code_unknown") from None
        finally:
            self._joining.pop(key, None)
        try:
            machine = RoundMachine(
                self.identity,
                genesis,
                os.urandom(32),
                self.topics,
                code=code,
                now=now_ms(),
                timeouts=self.turn_timeouts,
            )
        except Exception as err:  # noqa: BLE001 - a planted or broken genesis
            await self._unsubscribe_round(key)
            self._warn(
                f"dropped genesis behind code {code}: {err}", None, str(err), "genesis"
            )
            raise ActionError(
                f"the round behind code {code} is not usable: {err}"
            ) from None
        if (
            machine.key != key
            or not machine.state.private
            or machine.state.phase is not Phase.FORMING
        ):
            await self._unsubscribe_round(key)
            raise ActionError(f"the round behind code {code} cannot be joined", "code_closed")
        rnd = await self._adopt(machine, round_key)
        await self._act(rnd, lambda m, now: m.join(self.nick, now))
        return rnd

    async def _unsubscribe_round(self, key: str) -> None:
        for topic, _ in self.topics.round_subscriptions(key):
            await self.transport.unsubscribe(topic)

    async def _open(
        self,
        game: str,
        options: Mapping[str, Any] | None,
        layout: list[dict[str, Any]],
        start: int | None,
        code: str | None,
    ) -> Round:
        try:
            engine = game_class(game)
        except KeyError as err:
            raise ActionError(str(err.args[0])) from None
        opts = dict(options or {})
        try:
            defaults = engine.create().options()
        except Exception as err:  # noqa: BLE001 - an engine that cannot even start
            raise ActionError(f"cannot create {game}: {err}") from None
        if "players" in defaults and "players" not in opts:
            opts["players"] = len(layout)
        for seat in layout:
            if seat["level"] is not None:
                from p2p import ai

                try:
                    known = ai.levels(game)
                except Exception:  # noqa: BLE001 - no computer player for this game yet
                    known = ()
                if seat["level"] not in known:
                    raise ActionError(
                        f"unknown computer level {seat['level']!r} for {game} (known: {', '.join(known) or 'none'})"
                    )
        if self.busy:
            raise ActionError("you are already in a round; leave it first", "busy")
        round_key = os.urandom(sealing.KEY_SIZE)  # a fresh key for each round
        if code is not None:  # a private round's traffic is keyed from its code
            secret = await asyncio.to_thread(code_secret, code)
            round_key = sealing.private_round_key(secret)
        machine, effects = RoundMachine.open(
            self.identity,
            now_ms(),
            os.urandom(16).hex(),
            game,
            opts,
            layout,
            start,
            os.urandom(32),
            topics=self.topics,
            code=code,
            timeouts=self.turn_timeouts,
        )
        rnd = await self._adopt(machine, round_key)
        await self._run_effects(rnd, effects)
        return rnd

    async def _accept_invitation(self, round_id: str) -> Round:
        if self.busy:
            raise ActionError("you are already in a round; leave it first", "busy")
        try:
            pending = self.lobby.take_invitation(round_id)
        except ValueError:
            raise ActionError(
                "no such invitation (it expired or was cancelled)", "no_invitation"
            ) from None
        if pending.genesis.body["expires"] <= now_ms():
            raise ActionError("the invitation has expired", "invitation_expired")
        if round_id not in self._invite_keys:
            raise ActionError("the invitation carried no round key")
        round_key, topic_key = self._invite_keys[round_id]
        machine = RoundMachine(
            self.identity,
            pending.genesis,
            os.urandom(32),
            self.topics,
            now=now_ms(),
            timeouts=self.turn_timeouts,
        )
        machine.key = topic_key  # a private round's: only the invitation tells it
        rnd = await self._adopt(machine, round_key)  # subscribed before our accept
        await self._act(rnd, lambda m, now: m.accept(now))
        return rnd

    async def _decline_invitation(self, round_id: str) -> None:
        try:
            effects = self.lobby.decline_invitation(round_id, now_ms())
        except ValueError:
            raise ActionError(
                "no such invitation (it expired or was cancelled)", "no_invitation"
            ) from None
        await self._run_effects(None, effects)

    async def _adopt(self, machine: RoundMachine, key: bytes) -> Round:
        """Track a round and subscribe to its topics (before we send anything in it).

        ``key``: the round key its payloads are sealed with (``Round.sealing_key``); it
        is kept next to the round log (mode 0600) so a restarted peer can resume.
        """
        rnd = Round(self, machine)
        rnd.sealing_key = key
        self._remember_members(rnd)
        self.rounds[rnd.id] = rnd
        self.lobby.keep(seat.pk for seat in machine.state.seats if seat.pk is not None)
        self._by_key[machine.key] = rnd
        if self.log_dir is not None:
            rnd.log_path = self.log_dir / f"round-{rnd.id}.log"
            try:
                self.log_dir.mkdir(parents=True, exist_ok=True)
                if not rnd.log_path.exists():  # a resumed round keeps its file
                    rnd.log_path.write_bytes(
                        b"".join(e.raw + b"\n" for e in machine.log())
                    )
                write_round_key(rnd.log_path.with_suffix(".key"), key, machine.key)
            except OSError as err:
                log.warning("cannot write the round log %s: %s", rnd.log_path, err)
        await self._subscribe_round(machine.key)
        return rnd

    async def resume(self, path: Path | str, code: str | None = None) -> Round:
        """Take up a round again from its log file (after a restart) and catch up.

        The chain in the file is verified and replayed, then the other members are asked
        for what happened since (``Resynced`` reports it).  ``code``: the join code of a
        private round.  A draw still open when we stopped cannot complete without our
        reveal (our nonce is gone): the admin cancels it (docs/protocol.md §7).
        """
        from p2p.protocol.replay import LogError, replay_log

        try:
            info = Path(path).stat()  # a missing file: "cannot read" below
            if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_LOG_BYTES:
                raise ActionError(f"{path}: not a round log (no regular file, or too large)")
            lines = Path(path).read_bytes().split(b"\n")
        except OSError as err:
            raise ActionError(f"cannot read {path}: {err.strerror or err}") from None
        try:
            replay = replay_log(lines)
        except LogError as err:
            raise ActionError(f"{path}: {err}") from None
        state = replay.state
        if state.genesis.v != ev.PROTOCOL_VERSION:
            raise ActionError(
                f"{path}: a round of protocol v{state.genesis.v} cannot be resumed"
                " (p2p replay still checks it)"
            )
        if state.seat_of(self.public_key) is None:
            raise ActionError("you hold no seat in that round")
        if state.round_id in self.rounds:
            return self.rounds[state.round_id]
        try:
            code = normalize_code(code) if code is not None else None
        except TopicError as err:
            raise ActionError(str(err)) from None
        machine = RoundMachine.from_log(
            self.identity,
            replay.chain,
            os.urandom(32),
            self.topics,
            code,
            now_ms(),
            self.turn_timeouts,
        )
        key_path = Path(path).with_suffix(".key")
        try:
            round_key, machine.key = read_round_key(key_path)
        except (OSError, ValueError) as err:
            if code is None:
                why = getattr(err, "strerror", None) or err
                hint = " (or give the join code)" if state.private else ""
                raise ActionError(
                    f"cannot read the round key {key_path}: {why}{hint}"
                ) from None
            secret = await asyncio.to_thread(code_secret, code)
            round_key = sealing.private_round_key(secret)
        if not state.private and machine.key != state.round_id:
            raise ActionError(  # a public round's topics are its id: never follow a file elsewhere
                f"{key_path} names the topics of another round"
            )
        rnd = await self._adopt(machine, round_key)
        for event in machine.log():
            _mover(
                rnd, event
            ) if event.kind == "move" else None  # the shadow catches up
        if not rnd.is_over:
            await rnd.request_sync()
        return rnd

    async def _subscribe_round(self, key: str) -> None:
        for topic, qos in self.topics.round_subscriptions(key):
            # only a private round's genesis is retained (for code joiners)
            await self.transport.subscribe(
                topic, qos, retained=topic.endswith("/genesis"), no_local=True
            )

    # -- driving the machines -----------------------------------------------------------

    async def _act(
        self, rnd: Round, action: Callable[[RoundMachine, int], list[Effect]]
    ) -> None:
        """Run a user action on a round's machine (``ActionError`` passes to the caller)."""
        if self._closed:
            raise ActionError("this peer is closed", "closed")
        effects = await self._call(rnd, lambda: action(rnd.machine, now_ms()))
        await self._run_effects(rnd, effects)

    async def _call(self, rnd: Round, step: Callable[[], list[Effect]]) -> list[Effect]:
        """Run one step of a round's machine, one at a time per round.

        In a round with computer seats a step may include a computer move (the admin
        plays it, every other member recomputes it to check it), which takes up to about
        a second at the strongest levels.  Such steps run in a worker thread so the event
        loop -- the shell's screen, the other rounds, the MQTT keepalive -- never stalls.
        The engines' computer players search on a copy of the position, so the round's
        state only changes in the short moment a move is applied.
        """
        async with rnd._lock:
            if OFFLOAD_COMPUTER_MOVES and rnd._has_computers:
                return await asyncio.to_thread(step)
            return step()

    async def _run_effects(
        self, rnd: Round | None, effects: list[Effect], source: str = ""
    ) -> None:
        """Carry out what a machine asked for, in order."""
        changed = noticed = False
        applied_from_sync = 0
        for effect in effects:
            if isinstance(effect, Publish):
                route = effect.route
                expiry = PRESENCE_TTL_S if effect.event.kind == "presence" else None
                topic = self._reroute(route.topic)
                payload = self._seal(topic, effect.payload, effect.event)
                if payload is None:
                    continue
                self.transport.publish_nowait(
                    topic,
                    payload,
                    qos=route.qos,
                    retain=route.retain,
                    expiry=expiry,
                )
            elif isinstance(effect, Applied):
                if rnd is not None:
                    changed = True
                    self.stats.applied += 1
                    self._on_applied(rnd, effect.event)
                    if source == "sync":
                        applied_from_sync += 1
            elif isinstance(effect, Dropped):
                self._warn(
                    effect.describe(),
                    rnd.id if rnd else None,
                    effect.reason,
                    effect.kind,
                    effect.sender,
                )
            elif isinstance(effect, Equivocation):
                log.warning("%s", effect.describe())
                self.stats.count_drop("equivocation")
                self._notify(Equivocated(rnd, effect.first, effect.second))
            elif isinstance(effect, ChatLine):
                info = self.lobby.peers.get(effect.sender)
                nick = effect.nick or (info.nick if info else "?")
                self._notify(
                    ChatMessage(
                        effect.sender, nick, effect.text, effect.round, effect.ts
                    )
                )
            elif isinstance(effect, Notice):
                log.info("%s", effect.text)
                self._notify(RoundNotice(rnd, effect.text, effect.code, effect.params))
                noticed = True  # e.g. a take-back request: ``wait_until`` may be waiting
            elif isinstance(effect, Rewound) and rnd is not None:
                changed = True
                self._on_rewound(rnd, effect)
            elif isinstance(effect, Acknowledged) and rnd is not None:
                changed = True
                self._append_log(rnd, effect.event)
        busy = self.busy
        if busy != self.lobby.busy:
            announce = self.lobby.set_busy(busy, now_ms())  # also what auto-declines
            if self.transport.connected:  # else the presence after reconnecting says it
                await self._run_effects(None, announce)
        if rnd is not None and rnd.is_over:
            changed = True  # a local end (expiry, equivocation) changes no chain
        if rnd is not None and changed:
            self._tell_over(rnd)
            rnd._last_change = time.monotonic()
            self._clear_private_genesis(rnd)
            if applied_from_sync:
                self._note_resync(rnd, applied_from_sync)
            await rnd._signal()
            if rnd.is_my_turn:
                self._notify(YourTurn(rnd))
        elif rnd is not None and noticed:
            await rnd._signal()

    def _clear_private_genesis(self, rnd: Round) -> None:
        """Once a private round has started, its retained genesis has done its job."""
        st = rnd.chain_state
        if (
            rnd._genesis_cleared
            or not st.private
            or not rnd.is_admin
            or st.phase is Phase.FORMING
        ):
            return
        rnd._genesis_cleared = True
        route = self.topics.round_genesis(rnd.machine.key)
        self.transport.publish_nowait(route.topic, b"", qos=route.qos, retain=True)

    def _round_topic(self, topic: str) -> tuple[str, str] | None:
        """``(topic key, channel)`` of a round topic of our namespace, else ``None``."""
        root = self.topics.root + "/round/"
        if not topic.startswith(root):
            return None
        parts = topic[len(root) :].split("/")
        return (parts[0], parts[1]) if len(parts) == 2 else None

    def _seal(self, topic: str, payload: bytes, event: Event) -> bytes | None:
        """``payload`` as it goes out on ``topic``; ``None``: do not send it.

        Round topics: sealed with the round key; our inbox copies of a round's events
        (invitations, cancels): sealed to the invitee with the round key inside; the
        lobby stays public.  Round traffic without a key is never sent in the clear.
        """
        if not payload:
            return payload  # clearing a retained message
        where = self._round_topic(topic)
        if where is not None:
            rnd = self._by_key.get(where[0])
            key = rnd.sealing_key if rnd is not None else self._invite_key(where[0])
            if not key:
                log.warning("no round key for %s: not sent", topic)
                return None
            sealed = sealing.seal_round(
                key, os.urandom(sealing.NONCE_SIZE), where[1], payload
            )
            if rnd is not None and where[1] == "genesis":
                rnd._genesis_payload = sealed
            return sealed
        inbox = self.topics.root + "/inbox/"
        if not topic.startswith(inbox):
            return payload
        rnd = self.rounds.get(event.round or "")
        them = topic[len(inbox) :]
        to = [
            seat.pk
            for seat in (rnd.chain_state.seats if rnd is not None else ())
            if seat.pk is not None and peer_id(seat.pk) == them
        ]
        if rnd is None or not to:
            log.warning("no member behind %s: not sent", topic)
            return None
        try:
            return sealing.seal_invitation(
                os.urandom(sealing.KEY_SIZE),
                self._seed,
                self.public_key,
                to[0],
                rnd.id,
                rnd.sealing_key,
                bytes.fromhex(rnd.machine.key),
                payload,
            )
        except SealError as err:  # a key nobody can seal to (a hostile genesis seat)
            log.warning("cannot seal to %s: %s; not sent", them[:8], err)
            return None

    def _invite_key(self, topic_key: str) -> bytes | None:
        """The round key of an invitation whose round uses ``topic_key``."""
        for key, topic in self._invite_keys.values():
            if topic == topic_key:
                return key
        return None

    def _reroute(self, topic: str) -> str:
        """The lobby answers an invitation on ``round/<round id>/…``; a private round's
        invitation named other topics (its code's key): use those."""
        where = self._round_topic(topic)
        if where is None or where[0] not in self._invite_keys:
            return topic
        topic_key = self._invite_keys[where[0]][1]
        prefix = self.topics.root + "/round/"
        return f"{prefix}{topic_key}/{where[1]}"

    def _unseal(self, key: str, channel: str, payload: bytes) -> bytes | None:
        """The event bytes of a payload on a round topic, ``None`` to drop it.

        A payload that does not open with the round's key comes from someone without
        the key (a stranger): dropped before it is even parsed.
        """
        rnd = self._by_key.get(key)
        if rnd is not None and channel == "genesis":
            self._watch_genesis(rnd, payload)
        if rnd is not None:
            round_key = rnd.sealing_key
        else:
            round_key = self._joining[key][1] if key in self._joining else b""
        if not payload:
            return payload
        try:
            return sealing.open_round(round_key, channel, payload)
        except SealError:
            rid = rnd.id if rnd is not None else None
            reason = "not sealed with the round key"
            self._warn(f"dropped payload on round/{key[:8]}…/{channel}: {reason}", rid, reason, "payload")
            return None

    def _remember_invite_key(self, round_id: str, key: bytes, topic_key: str) -> None:
        """Keep the keys of an invitation until we accept or decline it (bounded)."""
        if round_id in self._invite_keys:
            return
        if len(self._invite_keys) >= 4 * MAX_INVITATIONS:
            self._invite_keys.pop(next(iter(self._invite_keys)))
        self._invite_keys[round_id] = (key, topic_key)

    def _watch_genesis(self, rnd: Round, payload: bytes) -> None:
        """Someone deleted or overwrote our private round's retained genesis: repair it."""
        if (
            not rnd.is_admin
            or rnd._genesis_payload is None
            or rnd._genesis_cleared  # our own clearing, echoed (a broker without noLocal)
            or rnd.phase is not Phase.FORMING
            or payload == rnd._genesis_payload  # our own copy, echoed
        ):
            return
        what = "deleted" if not payload else "overwritten"
        self.stats.count_drop(f"retained genesis {what}")
        if rnd._genesis_repair is None:  # one log line and one repair per interval
            log.warning("round %s: the retained genesis was %s", rnd.id[:8], what)
            rnd._genesis_repair = asyncio.get_running_loop().call_later(
                GENESIS_REPAIR_S, self._repair_genesis, rnd
            )

    def _repair_genesis(self, rnd: Round) -> None:
        """Publish our private round's genesis again, retained, while joiners may come."""
        rnd._genesis_repair = None
        if (
            rnd._genesis_payload is None
            or rnd._genesis_cleared
            or not rnd.is_admin
            or rnd.phase is not Phase.FORMING
            or self._closed
        ):
            return
        route = self.topics.round_genesis(rnd.machine.key)
        self.transport.publish_nowait(
            route.topic, rnd._genesis_payload, qos=route.qos, retain=True
        )

    def _warn(
        self, text: str, round_id: str | None, reason: str, kind: str, sender: str = ""
    ) -> None:
        self.stats.count_drop(reason)
        if reason in _BENIGN:
            log.debug("%s", text)  # QoS 1 redelivery, a retained copy again: normal
            return
        if not self._warn_budget.take():
            log.debug("%s", text)  # a flood: counted, not shouted
            return
        log.warning("%s", text)
        self._notify(Rejected(text, round_id, reason, kind, sender))

    def _append_log(self, rnd: Round, event: Event) -> None:
        """Append one event to the round's log file (chain events, closing acks)."""
        if rnd.log_path is None:
            return
        try:
            with rnd.log_path.open("ab") as handle:
                handle.write(event.raw + b"\n")
        except OSError as err:
            log.warning("cannot write the round log %s: %s", rnd.log_path, err)

    def _on_applied(self, rnd: Round, event: Event) -> None:
        if event.kind == "start":
            self._remember_members(rnd)
        if event.seq:
            self._append_log(rnd, event)
        st = rnd.machine.state
        text = event.kind
        seat = None
        if event.kind == "move":
            seat = _mover(rnd, event)
            text = f"ply {event.body['ply']}: {event.body['move']} (seat {seat}, signed by {self.label_of(event.pk)})"
        elif event.kind in ("seal", "forfeit"):
            if rnd._shadow is not None:
                _follow(rnd._shadow, st, event)
            if event.kind == "forfeit":
                text = f"seat {event.body['seat']} forfeited ({event.body['reason']})"
        elif event.kind == "draw":
            text = (
                f"starter seat {event.body['starter']} (seed {event.body['seed'][:12]})"
            )
        self._notify(RoundUpdate(rnd, event.kind, event.seq or 0, text, seat))
        self._tell_over(rnd)

    def _tell_over(self, rnd: Round) -> None:
        """``RoundOver`` once per outcome (a chain event, a local end, an equivocation)."""
        st = rnd.machine.state
        outcome = (st.phase, st.end_reason, st.winners())
        if rnd.is_over and rnd._told_over != outcome:
            rnd._told_over = outcome
            self._notify(RoundOver(rnd, st.winners(), st.end_reason))

    def _on_rewound(self, rnd: Round, effect: Rewound) -> None:
        """A forfeit replaced the end of our chain: the log file and the shadow follow."""
        rnd._shadow = None  # rebuilt from the chain on the next move
        log.warning(
            "round %s: a forfeit replaced %d chain events from position %d",
            rnd.id[:8],
            len(effect.replaced),
            effect.seq,
        )
        if rnd.log_path is None:
            return
        chain = rnd.machine.log()[: effect.seq]
        try:
            rnd.log_path.write_bytes(b"".join(e.raw + b"\n" for e in chain))
        except OSError as err:
            log.warning("cannot write the round log %s: %s", rnd.log_path, err)

    def _note_resync(self, rnd: Round, applied: int) -> None:
        rnd._resync_count += applied
        if rnd._resync_flush is not None:
            return

        def flush() -> None:
            rnd._resync_flush = None
            count, rnd._resync_count = rnd._resync_count, 0
            self._notify(Resynced(rnd, count, len(rnd.machine.state.chain) - 1))

        rnd._resync_flush = asyncio.get_running_loop().call_later(0.2, flush)

    # -- incoming ------------------------------------------------------------------------

    async def _receive_loop(self) -> None:
        async for message in self.transport.messages():
            self.stats.received += 1
            try:
                await self._dispatch(message)
            except Exception:
                log.exception(
                    "internal error while handling a message on %s", message.topic
                )
            # Let the network reader run between two messages: the edge's cheap checks
            # must keep up with the socket, or a move waits in the socket behind a flood.
            await asyncio.sleep(0)

    def _classify(self, topic: str, payload: bytes) -> Verdict:
        """The cheap checks of the network edge (``p2p.net.inbound``): which lane, or drop.

        Runs for every message in the network read path, so it only looks at the topic
        and the key the payload claims (no JSON parse), except for one case: a message on
        our round's topic that claims a member's key has its signature checked here
        (``_signed_id``), so a forger can neither jump the queue nor use up that member's
        budget, and a replay of an event we hold costs one hash and one verification.
        """
        root = self.topics.root + "/"
        if not topic.startswith(root):
            return Verdict(None, reason="foreign topic")
        rest = topic[len(root) :]
        if rest.startswith("round/"):
            return self._classify_round(rest, payload)
        sender = _claimed_key(payload)
        if rest == f"inbox/{self.peer_id}":
            return Verdict(Lane.INBOX, sender)
        if rest.startswith("lobby/"):
            known = sender is not None and (
                sender in self.lobby.peers
                or sender == self.public_key
                or any(r._has_member(sender) for r in self.rounds.values())
            )
            if not known:
                return Verdict(Lane.STRANGER, sender)
            # A known key's budget must not be used up by someone who only writes that
            # key into junk (its presences would be lost, and a round member would look
            # silent): its signature is checked before its budget is charged.
            if sender is None or _signed_id(payload, sender) is None:
                return Verdict(None, reason="forged")
            return Verdict(Lane.KNOWN, sender)
        return Verdict(None, reason="unknown topic")

    def _classify_round(self, rest: str, payload: bytes) -> Verdict:
        """A message on a round topic: members' signed events of our rounds go first.

        The retained genesis channel is watched here and goes no further once we hold
        the round (a joiner still waiting gets it through the small ``ROUND_OTHER`` lane,
        like anything from a non-member).  On a sealed (private) round
        the payload is opened here (an AEAD check costs microseconds) and handed on
        opened; one that does not open is dropped unread.
        """
        parts = rest.split("/")
        if len(parts) != 3:
            return Verdict(None, reason="unknown topic")
        rnd = self._by_key.get(parts[1])
        if rnd is None:
            if parts[1] in self._joining:
                return Verdict(Lane.ROUND_OTHER, _claimed_key(payload))
            return Verdict(None, reason="not our round")
        if parts[2] == "genesis":
            # We hold the round, so we need no genesis from the topic; but as its admin
            # we watch it here, where a flood cannot hide the overwrite that counts
            # (the repair is rate-limited by ``_watch_genesis`` itself).
            self._watch_genesis(rnd, payload)
            return Verdict(None, reason="genesis of a round we hold")
        if not payload:
            return Verdict(Lane.ROUND_OTHER, None)
        try:
            opened = sealing.open_round(rnd.sealing_key, parts[2], payload)
        except SealError:
            return Verdict(None, reason="not sealed with the round key")
        sender = _claimed_key(opened)
        if sender is None or not rnd._has_member(sender):
            return Verdict(Lane.ROUND_OTHER, sender, parsed=opened)
        event_id = _signed_id(opened, sender)
        if event_id is None:
            self._warn(
                f"dropped payload on {rest} from {sender.hex()[:8]}: bad signature",
                rnd.id,
                "bad signature",
                "payload",
            )
            return Verdict(None, reason="forged")
        if event_id in rnd.machine.seen:  # a replay of an event we have
            return Verdict(None, reason="duplicate")
        return Verdict(Lane.ROUND, sender, parsed=opened)

    def _edge_drop(self, reason: str) -> None:
        self.stats.count_drop(reason)

    async def _dispatch(self, message: Inbound) -> None:
        topic = message.topic
        root = self.topics.root + "/"
        if not topic.startswith(root):
            return
        rest = topic[len(root) :]
        if topic == self.lobby.will_route().topic:  # what the broker holds as ours
            effects = self.lobby.receive_bytes(
                message.payload, now_ms(), topic, message.retain
            )
            await self._run_lobby_effects(effects)
            return
        payload: bytes | None = message.payload
        where = self._round_topic(topic)
        if isinstance(message.parsed, bytes):
            payload = message.parsed  # opened at the edge (``_classify``)
        elif where is not None:
            payload = self._unseal(where[0], where[1], message.payload)
        if not payload:
            return  # an emptied retained message: harmless by design
        inbox = rest == f"inbox/{self.peer_id}"
        if inbox:  # sealed to us: (round key, its proof, event)
            try:
                invite_key, auth, topic_key, payload = sealing.open_invitation(
                    self._seed, self.public_key, payload
                )
            except SealError as err:
                self._warn(f"dropped payload on {rest}: {err}", None, str(err), "payload")
                return
        try:
            event = ev.parse(payload)
        except EventError as err:
            self._warn(
                f"dropped payload on {rest} from ?: {err}", None, str(err), "payload"
            )
            return
        if inbox:
            if event.round is None or not sealing.check_key_auth(
                self._seed,
                self.public_key,
                event.pk,
                event.round,
                invite_key,
                topic_key,
                auth,
            ):
                reason = "round key not sealed by the event's signer"
                self._warn(f"dropped {event.describe()}: {reason}", event.round, reason, event.kind)
                return
            if event.kind == "genesis" and not event.body["private"] and topic_key.hex() != event.round:
                # a public round's topics are its id: an inviter naming other topics would
                # send us onto another round's topics (and take their place in ``_by_key``)
                reason = "a public round's topics are not its id"
                self._warn(f"dropped {event.describe()}: {reason}", event.round, reason, event.kind)
                return
            if event.kind == "genesis":
                self._remember_invite_key(event.round, invite_key, topic_key.hex())
        if rest.startswith("round/"):
            parts = rest.split("/")
            rnd = self._by_key.get(parts[1]) if len(parts) == 3 else None
            joining = self._joining.get(parts[1]) if len(parts) == 3 else None
            if (
                rnd is None
                and joining is not None
                and parts[2] == "genesis"
                and event.kind == "genesis"
            ):
                why = _unjoinable(event, self.turn_timeouts)
                if why:  # e.g. a holder of the code planted a round of its own
                    self._warn(f"ignored genesis behind a code: {why}", None, why, "genesis")
                elif not joining[0].done():
                    joining[0].set_result(event)
                return
            if rnd is not None:
                effects = await self._call(
                    rnd, lambda: rnd.machine.receive(event, now_ms())
                )
                await self._run_effects(rnd, effects, source=parts[2])
            return
        if rest.startswith("inbox/"):
            # an inbox carries invitations (genesis) and their cancels, nothing else: a
            # round event sent to one member's inbox must not fork it off the round
            problem = _inbox_problem(event, self.rounds)
            if problem:
                text = dropped(event, problem).describe()
                self._warn(text, event.round, problem, event.kind)
                return
            if event.kind == "cancel" and event.round in self.rounds:
                rnd = self.rounds[event.round]  # a cancel copied to our inbox
                effects = await self._call(
                    rnd, lambda: rnd.machine.receive(event, now_ms())
                )
                await self._run_effects(
                    rnd, [e for e in effects if not _is_duplicate(e)]
                )
                return
        await self._lobby_receive(event, topic)

    async def _lobby_receive(self, event: Event, topic: str) -> None:
        known = event.round in self.lobby.invitations
        effects = self.lobby.receive(event, now_ms(), topic)
        await self._run_lobby_effects(effects)
        pending = self.lobby.invitations.get(event.round or "")
        if event.kind == "genesis" and not known and pending is not None:
            self._notify(InvitationReceived(Invitation(self, pending)))

    async def _run_lobby_effects(self, effects: list[Effect]) -> None:
        """Run lobby effects and turn the change of the online list into notifications.

        O(changes), not O(peers): the lobby reports who came, changed or left.
        """
        await self._run_effects(
            None, [e for e in effects if not isinstance(e, (Notice, Backoff))]
        )
        for note in effects:
            if isinstance(note, Notice) and note.code not in (
                "peer_online",
                "peer_left",
                "peer_silent",
            ):
                self._notify(RoundNotice(None, note.text, note.code, note.params))
            elif isinstance(note, Backoff):
                self._schedule_answer(note.max_ms)
        for info, online in self.lobby.take_changes():
            self._notify(PresenceChanged(info, online))

    def _schedule_answer(self, max_ms: int) -> None:
        """Re-publish our presence after a random back-off, unless it became unnecessary."""
        if self._answer_timer is not None or self._closed:
            return

        def due() -> None:
            self._answer_timer = None
            if self._closed or not self.transport.connected:
                return
            for effect in self.lobby.answer_due(now_ms()):
                if isinstance(effect, Publish):
                    route = effect.route
                    self.transport.publish_nowait(
                        route.topic,
                        effect.payload,
                        qos=route.qos,
                        retain=route.retain,
                        expiry=PRESENCE_TTL_S,
                    )

        delay = random.uniform(0, max_ms) / 1000
        self._answer_timer = asyncio.get_running_loop().call_later(delay, due)

    # -- timers --------------------------------------------------------------------------

    async def _timer_loop(self) -> None:
        while True:
            await asyncio.sleep(TICK_S)
            try:
                now = now_ms()
                for rnd in list(self.rounds.values()):
                    if rnd.is_over:
                        continue
                    self.lobby.keep(
                        s.pk for s in rnd.chain_state.seats if s.pk is not None
                    )  # e.g. a joiner who entered the code
                    step = functools.partial(
                        rnd.machine.tick, now, self._offline_members(rnd)
                    )
                    await self._run_effects(rnd, await self._call(rnd, step))
                    await self._maybe_resync(rnd)
                effects = self.lobby.tick(now)
                if not self.transport.connected:
                    effects = [e for e in effects if not isinstance(e, Publish)]
                await self._run_lobby_effects(effects)
            except Exception:
                log.exception("internal error in the timer loop")

    def _offline_members(self, rnd: Round) -> frozenset[bytes]:
        """Members of ``rnd`` whose own Last Will or goodbye, or whose silence, took them
        out of the lobby -- never members a lobby flood kept out of the list."""
        return frozenset(
            seat.pk
            for seat in rnd.chain_state.seats
            if seat.pk is not None
            and seat.pk != self.public_key
            and self.lobby.is_offline(seat.pk)
        )

    async def _maybe_resync(self, rnd: Round) -> None:
        """Events parked for long mean we missed one: ask the members for the chain."""
        if not rnd.machine.pending:  # (the machine's tick exchanges heads every 15 s)
            rnd._parked_since = None
            return
        if rnd._parked_since is None:
            rnd._parked_since = time.monotonic()
            return
        quiet = time.monotonic() - rnd._last_sync_request
        if (
            time.monotonic() - rnd._parked_since >= RESYNC_AFTER_S
            and quiet >= RESYNC_AFTER_S
        ):
            await rnd.request_sync()


def _unjoinable(genesis: Event, timeouts: TurnTimeouts) -> str:
    """Why a genesis found behind a join code is not one to join ("" if it is)."""
    from p2p.protocol.round import RoundError

    try:
        state = RoundState.from_genesis(genesis, timeouts)
    except RoundError as err:
        return f"unusable genesis: {err}"
    if not state.private:
        return "not a private round"
    if state.expires <= now_ms():
        return "an expired private round"
    if state.expires > now_ms() + LONGEST_INVITATION_MS:
        return "a private round that expires too far ahead"
    if not any(seat.pk is None and not seat.is_computer for seat in state.seats):
        return "a private round without an open seat"
    return ""


def _mover(rnd: Round, event: Event) -> int | None:
    """The seat that made ``event`` (a move), from a shadow engine that follows the chain.

    The shadow is built on first use from the chain before ``event`` (a round taken up
    from a log or a sync), then follows every move and seal as it is applied.
    """
    st = rnd.machine.state
    try:
        if rnd._shadow is None:
            if st.starter is None:
                return None
            shadow = game_class(st.game_name).create(
                {**st.options, "first": st.starter}
            )
            for earlier in st.chain:
                if earlier.id == event.id:
                    break
                _follow(shadow, st, earlier)
            rnd._shadow = shadow
        seat = rnd._shadow.to_move()
        rnd._shadow.push(event.body["move"])
        return seat
    except Exception:  # noqa: BLE001 - only a label for display; the chain is verified
        rnd._shadow = None
        return None


def _follow(shadow: Game, st: RoundState, event: Event) -> None:
    """Apply a chain event's effect on the position to the shadow engine."""
    if event.kind == "move":
        shadow.push(event.body["move"])
    elif event.kind == "seal":
        if any(inner.kind == "takeback" for inner in event.sealed()):
            shadow.pop()
            return
        for inner in event.sealed():
            seat = st.seat_of(inner.pk)
            if seat is not None:
                with contextlib.suppress(Exception):
                    shadow.resign(seat)
    elif event.kind == "forfeit":
        with contextlib.suppress(Exception):
            shadow.resign(event.body["seat"])


def _claimed_key(payload: bytes) -> bytes | None:
    """The public key an event claims to be signed by, without parsing it (unverified).

    In the canonical encoding the envelope's keys are sorted and ``body`` comes before
    ``pk``, while nothing after ``pk`` holds one: the last ``"pk":"`` is the envelope's.
    """
    at = payload.rfind(b'"pk":"')
    if at < 0:
        return None
    try:
        key = bytes.fromhex(payload[at + 6 : at + 70].decode("ascii"))
    except ValueError:
        return None
    return key if len(key) == 32 else None


def _signed_id(payload: bytes, public_key: bytes) -> str | None:
    """The event id if ``payload`` carries a valid signature by ``public_key``, else None.

    The cheap half of ``events.parse``: in the canonical encoding the envelope's ``sig``
    is the last ``"sig":"`` (only ``ts`` and ``v`` follow it), so the signed bytes are the
    payload without that field, and the id is their SHA-256.  A payload that is not
    canonical fails here or in the full parse that follows for everything accepted.
    """
    at = payload.rfind(b'"sig":"')
    end = at + 7 + 128
    if at < 1 or payload[end : end + 2] != b'",':
        return None
    try:
        signature = bytes.fromhex(payload[at + 7 : end].decode("ascii"))
    except ValueError:
        return None
    digest = hashlib.sha256(payload[:at] + payload[end + 2 :]).digest()
    if not verify(public_key, signature, digest):
        return None
    return digest.hex()


class _WarnBudget:
    """At most ``burst`` warnings at once, ``rate`` per second after: a flood is counted,
    not written to the log line by line."""

    def __init__(self, rate: float = 10.0, burst: float = 50.0) -> None:
        self._rate, self._burst = rate, burst
        self._tokens, self._last = burst, time.monotonic()

    def take(self) -> bool:
        now = time.monotonic()
        self._tokens = min(self._burst, self._tokens + (now - self._last) * self._rate)
        self._last = now
        if self._tokens < 1:
            return False
        self._tokens -= 1
        return True


_BENIGN = frozenset(
    {
        "duplicate",
        "older than the presence we hold",
        "not sealed with the round key",
        "not sealed to us",
        # several brokers: each connection has a session of its own, so the Will of a
        # connection to one broker arrives while we hold the session of another
        "offline presence of another session",
        DECLINED_CANCEL,
    }
)
"""Drop reasons that honest traffic (or a stranger's noise we drop unread) produces:
logged at debug level and counted, not reported."""


MAX_LOG_BYTES = 64 * 1024 * 1024
"""A round log larger than this (``p2p replay``'s limit) is not read to resume it."""

ROUND_KEY_HEADER = "p2p-round-key-v1"


def write_round_key(path: Path, key: bytes, topic_key: str) -> None:
    """Keep a round key (and its topic key) next to its log, for us only (mode 0600)."""
    if path.exists() and not path.is_file():  # opening a FIFO for writing would block
        raise OSError(f"{path} is no regular file")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(f"{ROUND_KEY_HEADER} {key.hex()} {topic_key}\n")
    os.chmod(path, 0o600)


def read_round_key(path: Path) -> tuple[bytes, str]:
    """``(round key, topic key)`` kept by ``write_round_key``; ``ValueError`` if the
    file is not one."""
    if not stat.S_ISREG(path.stat().st_mode):  # a FIFO would block the event loop
        raise ValueError("not a round key file")
    with path.open("rb") as handle:
        raw = handle.read(256)  # the file has ~120 bytes: never read a hostile giant
    words = raw.split()
    hexdigits = set(b"0123456789abcdef")
    if (
        len(words) != 3
        or words[0] != ROUND_KEY_HEADER.encode()
        or len(words[1]) != 64
        or len(words[2]) != 32
        or not set(words[1] + words[2]) <= hexdigits
    ):
        raise ValueError("not a round key file")
    return bytes.fromhex(words[1].decode()), words[2].decode()


def _inbox_problem(event: Event, rounds: Mapping[str, Round]) -> str:
    """Why ``event`` does not belong in an inbox ('' if it does)."""
    if event.kind not in ("genesis", "cancel"):
        return f"a {event.kind} does not belong in an inbox (invitations and cancels only)"
    if event.kind == "genesis" and event.round in rounds:
        return "genesis of a round we already hold (not an invitation)"
    return ""


def _is_duplicate(effect: Effect) -> bool:
    return isinstance(effect, Dropped) and effect.reason == "duplicate"
