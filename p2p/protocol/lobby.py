"""Who is online, lobby chat and invitations, as a sans-I/O state machine.

How to drive it (``p2p.peer``):

* ``Lobby(me, nick, session, topics, is_friend=...)``; ``session`` is 16 random bytes from
  the edge, new for every connection; ``is_friend`` (optional) says which keys the user
  counts as friends (kept first, like the people we play with);
* when (re)connecting: connect with ``lobby.will(now)`` as the MQTT Last Will (topic
  ``lobby.will_route()``, retained), subscribe to ``topics.lobby_subscriptions(...)``, then
  carry out ``lobby.connect(now)`` (our presence; the retained presences of the others
  tell us who is online, nobody has to answer);
* feed every lobby message to ``receive(event, now, topic)``, and every message on our
  own presence topic (empty or not) to ``receive_bytes(payload, now, topic, retained)``:
  the lobby notices when our retained presence was deleted or overwritten;
* a ``Backoff(max_ms)`` effect asks the driver to call ``answer_due(now)`` after a random
  delay of at most ``max_ms`` (the randomness lives in the driver);
* call ``tick(now)`` every second or so (heartbeat every ``heartbeat_ms()``, silent peers
  dropped after the silence their presence announced, invitations expire);
  ``tick(now, listening=False)`` while our own connection is down: the others' silence is
  then not counted (docs/protocol.md, "Time and faults"); ``keep(keys)`` with the members
  of our rounds, and drain ``take_changes()`` after each call (who came, changed or left);
* ``set_busy``, ``chat``, ``hello``, ``disconnect``, ``decline_invitation`` and
  ``take_over`` are user actions; ``sessions`` (``p2p.protocol.sessions``) says whether
  this session acts for our key or another session of it does (this one then watches).

The rules (presence and its ``ttl``, the heartbeat that grows with the lobby, the
one-shot Last Will, who is kept and by which rank, lobby chat, invitations) are
docs/protocol.md §5; the online list is ``p2p.protocol.lobby_online``, hello and chat
``p2p.protocol.lobby_chat``, invitations ``p2p.protocol.lobby_invitations``.  The
settings below live here and are read from here when used (budgets when built).
"""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from p2p.protocol import events, lobby_clocks
from p2p.protocol.chat import TokenBucket, clean_line
from p2p.protocol.clocks import (
    ROUND_TOLERANCE_MS,
    ClockOffsets,
)
from p2p.protocol.conflicts import SeenIds
from p2p.protocol.effects import Backoff as Backoff  # the lobby's own effect
from p2p.protocol.effects import (
    Dropped,
    Effect,
    Notice,
    Publish,
    dropped,
)
from p2p.protocol.events import Event, EventError
from p2p.protocol.identity import Identity, label, peer_id, sanitize_nickname
from p2p.protocol.lobby_chat import LobbyChat
from p2p.protocol.lobby_clocks import MAX_FAR as MAX_FAR
from p2p.protocol.lobby_invitations import DECLINE_BUDGET as DECLINE_BUDGET
from p2p.protocol.lobby_invitations import DECLINED_CANCEL as DECLINED_CANCEL
from p2p.protocol.lobby_invitations import LONGEST_INVITATION_MS as LONGEST_INVITATION_MS
from p2p.protocol.lobby_invitations import MAX_DECLINED as MAX_DECLINED
from p2p.protocol.lobby_invitations import MAX_INVITATIONS as MAX_INVITATIONS
from p2p.protocol.lobby_invitations import Invitation as Invitation
from p2p.protocol.lobby_invitations import Invitations
from p2p.protocol.lobby_invitations import plan_seats as plan_seats
from p2p.protocol.lobby_online import OnlineList
from p2p.protocol.sessions import Sessions
from p2p.protocol.topics import Route, Topics

HEARTBEAT_MS = 20_000
"""We re-publish our presence this often (the only idle traffic: 1 message per 20 s)."""
PRESENCE_TTL_S = 60
"""Our presence means nothing after this many seconds (also the retained message's expiry)
while we beat every ``HEARTBEAT_MS``; in a bigger lobby ``presence_ttl_s`` says."""
SILENCE_MS = 65_000
"""A peer we have not heard from for this long is dropped from the online list."""
MAX_SKEW_MS = 300_000
"""Presence stamped further than this ahead of its signer's clock (as we estimate it) is
refused; one that expired longer than this ago, too."""
MAX_PEERS = 4_096
"""Strangers in the online list at most (friends and people we play with come on top)."""
ESTABLISHED_MS = 15_000
"""A stranger heard over at least this long (our clock) is established: new keys cannot
evict it."""
STALE_MS = HEARTBEAT_MS + 5_000
"""An established stranger not heard for this long missed its heartbeat: evictable."""
MAX_KEPT = 64
"""People we play with, most recent first, kept whatever the lobby holds."""

WILL_REPLAYED = "a replayed Last Will (it already took this key out once)"
"""Drop reason of an offline presence we applied before: Wills are one-shot."""
REPLAY_WINDOW_MS = 120_000
"""``hello`` and lobby ``chat`` stamped further than this from our clock are stale."""
MAX_SEEN = 4_096
"""Ids remembered per kind (hello, chat) for the duplicate check."""
CHAT_BUDGETS = {1: (10, 500), 2: (5, 2_000)}
"""Global lobby chat budget per rank, (burst, ms per line): established strangers share
one bucket, new and unknown keys another; friends and partners only have their own."""
HELLO_BUDGET = (5, 2_000)
"""Hellos we look at, all senders together (burst, ms per hello)."""
ANSWER_BACKOFF_MS = 1_000
"""Longest random delay before we re-publish a presence that is missing on the broker."""
REPAIR_BUDGET = (3, 10_000)
"""Re-publications of our presence outside the heartbeat (burst, ms per one)."""
ASK_BUDGET = (3, 10_000)
"""Answers to ``hello``s that ask everyone present (``all``), whoever sent them (burst,
ms per one): a stranger's flood of them costs each peer at most one presence per 10 s."""
MAX_CHANGES = 8_192
"""Online-list changes kept for ``take_changes`` (oldest forgotten if nobody drains)."""
PRESENCE_RATE = 5
"""R: heartbeats a second a peer receives at most from the lobby (up to
``MAX_HEARTBEAT_MS * R / 1000`` peers): each peer beats every ``N / R`` seconds, never
more often than every ``HEARTBEAT_MS``.  5 keeps the 20 s heartbeat up to 100 peers and
stays at half the strictest published per-client limit of a hosted broker (10 packets a
second, Cloudflare Pub/Sub), leaving the other half to rounds and chat; at about 0.5 ms of
receive CPU per presence it costs a peer 2.5 ms of CPU a second (docs/performance.md)."""
MAX_HEARTBEAT_MS = 300_000
"""The longest heartbeat (from 1,500 peers on): a silent peer whose Will never comes is
listed at most ``TTL_BEATS`` of these (plus the margin) after it was last heard."""
TTL_BEATS = 3
"""Heartbeats per ``ttl`` (60 s / 20 s): a peer is dropped after missing three."""
MAX_STALE_SCAN = 64
"""Established strangers looked at, least recently heard first, for one that missed its
own heartbeat when a new key wants a place in a full list."""


def heartbeat_interval_ms(n: int) -> int:
    """How often a peer beats in a lobby of ``n`` (itself included): ``n / R`` seconds,
    at least ``HEARTBEAT_MS``, at most ``MAX_HEARTBEAT_MS`` (settings read at use).

    >>> heartbeat_interval_ms(2), heartbeat_interval_ms(100), heartbeat_interval_ms(101)
    (20000, 20000, 20200)
    >>> heartbeat_interval_ms(1_000), heartbeat_interval_ms(10_000)
    (200000, 300000)
    """
    return max(HEARTBEAT_MS, min(n * 1000 // PRESENCE_RATE, MAX_HEARTBEAT_MS))


def presence_ttl_s(beat_ms: int) -> int:
    """The ``ttl`` a presence signs for a heartbeat of ``beat_ms``: ``PRESENCE_TTL_S`` up
    to ``HEARTBEAT_MS`` (the presence of before), else ``TTL_BEATS`` beats, rounded up.

    >>> presence_ttl_s(20_000), presence_ttl_s(20_200), presence_ttl_s(200_000)
    (60, 61, 600)
    """
    if beat_ms <= HEARTBEAT_MS:
        return PRESENCE_TTL_S
    return max(PRESENCE_TTL_S, -(-beat_ms * TTL_BEATS // 1000))


def max_ttl_s() -> int:
    """The longest ``ttl`` a receiver honours (a longer one counts as this long)."""
    return max(PRESENCE_TTL_S, MAX_HEARTBEAT_MS * TTL_BEATS // 1000)


def honoured_ttl_s(ttl: int) -> int:
    """The ``ttl`` a receiver goes by: as signed, but at most ``max_ttl_s()`` (a stranger
    stretches only its own presence, and not past that)."""
    return min(ttl, max_ttl_s())


def announced_beat_ms(ttl: int) -> int:
    """The heartbeat a presence with this ``ttl`` promises: ``HEARTBEAT_MS`` up to
    ``PRESENCE_TTL_S``, else a ``TTL_BEATS``-th of the honoured ttl.

    >>> announced_beat_ms(60), announced_beat_ms(600), announced_beat_ms(3_600)
    (20000, 200000, 300000)
    """
    if ttl <= PRESENCE_TTL_S:
        return HEARTBEAT_MS
    return max(HEARTBEAT_MS, honoured_ttl_s(ttl) * 1000 // TTL_BEATS)


def silence_ms(ttl: int) -> int:
    """After how long without a presence (our clock) a peer whose latest presence signed
    ``ttl`` is dropped: ``SILENCE_MS`` up to ``PRESENCE_TTL_S``, else the honoured ttl
    plus the same margin (``SILENCE_MS - PRESENCE_TTL_S``, 5 s).

    >>> silence_ms(60), silence_ms(600), silence_ms(3_600)
    (65000, 605000, 905000)
    """
    if ttl <= PRESENCE_TTL_S:
        return SILENCE_MS
    margin = max(0, SILENCE_MS - PRESENCE_TTL_S * 1000)
    return max(SILENCE_MS, honoured_ttl_s(ttl) * 1000 + margin)


def stale_ms(ttl: int) -> int:
    """After how long without a presence (our clock) a peer whose latest presence signed
    ``ttl`` missed its heartbeat (evictable when established): ``STALE_MS`` up to
    ``PRESENCE_TTL_S``, else its announced heartbeat plus the same margin.

    >>> stale_ms(60), stale_ms(600)
    (25000, 205000)
    """
    if ttl <= PRESENCE_TTL_S:
        return STALE_MS
    return max(STALE_MS, announced_beat_ms(ttl) + max(0, STALE_MS - HEARTBEAT_MS))


@dataclass
class PeerInfo:
    """A peer we believe is online."""

    pk: bytes
    nick: str
    busy: bool
    session: str
    ts: int
    last_heard: int
    first_heard: int = 0
    """When we first heard this key in its current stay (our clock)."""
    established: bool = False
    ttl: int = PRESENCE_TTL_S
    """The ``ttl`` its latest presence signed: how long we wait for its next one."""
    silent_at: int = 0
    """When (our clock) it counts as silent unless heard again: ``last_heard`` plus
    ``silence_ms(ttl)``."""

    @property
    def label(self) -> str:
        return label(self.nick, self.pk)


@functools.lru_cache(maxsize=MAX_PEERS + MAX_KEPT)
def _presence_topic(root: str, pk: bytes) -> str:
    """The presence topic of key ``pk`` in the namespace ``root`` (kept for the keys
    heard most recently: each of them is checked once per heartbeat)."""
    return f"{root}/lobby/presence/{peer_id(pk)}"


class Lobby:
    """Our presence, everybody else's, lobby chat and pending invitations."""

    def __init__(
        self,
        me: Identity,
        nick: str,
        session: bytes,
        topics: Topics | None = None,
        *,
        is_friend: Callable[[bytes], bool] | None = None,
        max_peers: int = MAX_PEERS,
    ) -> None:
        if len(session) != 16:
            raise ValueError("a session id has 16 bytes")
        self.me = me
        self.nick = sanitize_nickname(nick) or me.short_id
        self.session = session.hex()
        self.topics = topics or Topics()
        self._will_route = self.topics.presence(me.peer_id)
        self.is_friend = is_friend
        self.max_peers = max_peers
        self._online: OnlineList[PeerInfo] = OnlineList(
            me.public_key, lambda pk: self.is_friend is not None and self.is_friend(pk), MAX_CHANGES
        )
        """Who is online: ranks, the silence heap, eviction (``p2p.protocol.lobby_online``)."""
        self.peers = self._online.peers
        self.busy = False
        self._last_presence: int | None = None
        self._beat_ms = HEARTBEAT_MS
        """The heartbeat our latest presence announced (its ``ttl``): the next is due by
        then, however the lobby grew meanwhile."""
        self._repair_budget = TokenBucket(*REPAIR_BUDGET)
        self._ask_budget = TokenBucket(*ASK_BUDGET)
        self.answers_everyone = False
        """Answer a ``hello`` that asks everyone (``all``): set by the peer while one of
        its brokers hands retained messages to no wildcard filter (RabbitMQ), so a
        newcomer there cannot read our retained presence through ``presence/+``."""
        self._asked_at: int | None = None
        """When an ``all`` hello we mean to answer arrived (our clock), else None."""
        self._invitations = Invitations(me, self.topics)
        self._connected_at = 0
        self.clocks = ClockOffsets()
        """Other peers' clock offsets, from their live presences (and, fed by the driver,
        their live round side events): their timestamps are judged in their own frame."""
        self._far = lobby_clocks.FarClocks()
        """Keys whose live presence was too far off our clock (told once two agree)."""
        self._chat = LobbyChat(
            self.topics.root,
            self.clocks,
            window_ms=REPLAY_WINDOW_MS,
            max_seen=MAX_SEEN,
            chat_budgets=CHAT_BUDGETS,
            hello_budget=HELLO_BUDGET,
        )
        """Freshness and budgets of lobby hellos and chat (``p2p.protocol.lobby_chat``)."""
        # our own retained presence: what we published last, and whether the broker has it
        self._sent: deque[bytes] = deque(maxlen=8)
        self._echoed = False
        self._answer_pending = False
        self._deaf_since: int | None = None
        """When our own connection went down (``tick(now, listening=False)``), else None."""
        self.sessions = Sessions(me.public_key, self.session, 0)
        """Other sessions of our own key and whether this one acts (``take_over``);
        its ``since`` is set by the first ``will``."""

    # -- our own presence ---------------------------------------------------------------

    def heartbeat_ms(self) -> int:
        """Our heartbeat now: ``heartbeat_interval_ms`` of the lobby we see (us included);
        ``HEARTBEAT_MS`` while another session of our key is online (each must keep
        seeing the other fresh, ``p2p.protocol.sessions``)."""
        if self.sessions.others:
            return HEARTBEAT_MS
        return heartbeat_interval_ms(self.online_count)

    def _presence(self, status: str, now: int, ttl: int | None = None) -> Event:
        body = {
            "nick": self.nick,
            "status": status,
            "busy": self.busy,
            "session": self.session,
            "ttl": presence_ttl_s(self._beat_ms) if ttl is None else ttl,
            "since": self.sessions.since,
            "lead": self.sessions.lead,
        }
        return events.make(self.me, "presence", now, body)

    def _announce(self, status: str, now: int) -> Publish:
        """Our presence, published retained; remembered to recognise its echo.  Its
        ``ttl`` announces our heartbeat from now on (and is the retained message's
        expiry: a newcomer finds it until our next one replaces it)."""
        self._beat_ms = self.heartbeat_ms()
        event = self._presence(status, now)
        self._last_presence = now
        self._sent.append(event.raw)
        self._echoed = False
        return Publish(self.will_route(), event)

    def will_route(self) -> Route:
        """Our presence's topic (and the Last Will's): built once, asked per message."""
        return self._will_route

    def _on_its_topic(self, topic: str | None, pk: bytes) -> bool:
        """Whether a presence signed by ``pk`` came on ``pk``'s own presence topic (or
        on none given): that topic exactly, so nobody's presence stands in for another's."""
        return topic is None or topic == _presence_topic(self.topics.root, pk)

    def will(self, now: int, session: bytes | None = None) -> Event:
        """The pre-signed ``offline`` presence to register as this connection's Last Will.

        Call it just before connecting, with 16 fresh random bytes as ``session`` for every
        reconnection (the Will names it, so an old Will cannot remove the new connection).
        """
        if session is not None:
            if len(session) != 16:
                raise ValueError("a session id has 16 bytes")
            self.session = session.hex()
            self.sessions.reconnected(self.session)
        if not self.sessions.since:
            self.sessions.since = now  # this session began: kept across reconnects
        self._connected_at = now
        return self._presence("offline", now)

    def connect(self, now: int) -> list[Effect]:
        """After (re)connecting: announce ourselves.

        No hello: a newcomer learns who is online from the retained presences, so a join
        costs one publication, delivered once to each peer.
        """
        return [self._announce("online", now)]

    def take_over(self, now: int) -> list[Effect]:
        """Act for our key in this session (another session of it then watches): our
        presence with the raised ``lead`` goes out at once (``p2p.protocol.sessions``)."""
        effects = self.sessions.take_over(now)
        if self._last_presence is None:
            return effects  # not connected yet: the presence on connecting says it
        return [*effects, self._announce("online", now)]

    def hello(self, now: int, everyone: bool = False) -> list[Effect]:
        """Ask the peers whose retained presence is missing to publish it again;
        ``everyone``: ask every present peer (a newcomer on a broker that hands retained
        presences to no wildcard filter, §5)."""
        body: dict[str, object] = {"nick": self.nick, "ns": self.topics.root}
        if everyone:
            body["all"] = True
        return [Publish(self.topics.hello(), events.make(self.me, "hello", now, body))]

    def disconnect(self, now: int) -> list[Effect]:
        """Leaving on purpose: say so (the retained presence is replaced by ``offline``)."""
        return [self._announce("offline", now)]

    def set_busy(self, busy: bool, now: int) -> list[Effect]:
        """We joined or left a round: tell the lobby."""
        self.busy = busy
        return [self._announce("online", now)]

    def chat(self, text: str, now: int) -> list[Effect]:
        """A lobby chat line from us (``ValueError`` if empty after cleaning; an
        ``ActionError`` ``other_session`` while another session of our key acts: a
        watching window signs nothing)."""
        self.sessions.check()
        line = clean_line(text)
        if not line:
            raise ValueError("an empty chat line")
        body = {"text": line, "ns": self.topics.root}
        return [
            Publish(self.topics.lobby_chat(), events.make(self.me, "chat", now, body))
        ]

    def answer_due(self, now: int) -> list[Effect]:
        """The random back-off after a ``Backoff`` is over: re-publish if still needed.

        Suppressed when our presence reached the broker in the meantime (a heartbeat or
        another answer was echoed back), and limited by ``REPAIR_BUDGET``.
        """
        self._answer_pending = False
        asked, self._asked_at = self._asked_at, None
        if self._last_presence is None:
            return []
        if asked is not None:  # an ``all`` hello: answered unless a presence went out since
            if self._last_presence < asked and self._ask_budget.take(now):
                return [self._announce("online", now)]
            return []  # (a deletion meanwhile: the heartbeat repairs it)
        if self._echoed:
            return []
        if not self._repair_budget.take(now):
            return []  # the next heartbeat repairs it
        return [self._announce("online", now)]

    def _answer_later(self) -> list[Effect]:
        if self._answer_pending or self._last_presence is None:
            return []
        self._answer_pending = True
        return [Backoff(ANSWER_BACKOFF_MS)]

    # -- who matters -------------------------------------------------------------------

    def keep(self, keys: Iterable[bytes]) -> None:
        """Keys of people we play with: kept first, watched for going offline."""
        self._online.keep(keys, MAX_KEPT)

    def rank(self, pk: bytes) -> int:
        """0 partner or friend, 1 established stranger, 2 new stranger, 3 not online."""
        return self._online.rank(pk)

    def offline_since(self, pk: bytes) -> int | None:
        """When (our clock) a partner's offline presence or its silence removed it, or
        ``None`` while it is online or merely missing from the list (see ``is_offline``)."""
        return self._online.gone.get(pk) if self.is_offline(pk) else None

    def is_offline(self, pk: bytes) -> bool:
        """True once a partner's own signed offline presence or its silence removed it.

        A key that is merely missing from the list (never seen, or refused while the
        list was full) is not offline: only its silence on the round can cost it a seat.
        """
        return self._online.is_offline(pk)

    def offline_evidence(self, pk: bytes) -> tuple[Event, int] | None:
        """A partner's own signed offline presence (Last Will or goodbye) that took it out
        and that no later presence has revoked, with when it arrived (our clock).

        Silence, a flood or a replayed Will never produce one: only this is evidence for
        an offline forfeit (docs/protocol.md §6.6); the round machine checks how long it
        has stood.
        """
        return None if pk in self.peers else self._online.evidence.get(pk)

    def take_changes(self) -> list[tuple[PeerInfo, bool]]:
        """Who came online or changed (``True``) or left (``False``) since the last call."""
        changes = list(self._online.changes)
        self._online.changes.clear()
        return changes

    # -- the others ------------------------------------------------------------------

    def online(self) -> list[PeerInfo]:
        """Peers online, by nickname then fingerprint (we are not in the list)."""
        return sorted(self.peers.values(), key=lambda p: (p.nick.casefold(), p.pk))

    def ranked(self) -> list[PeerInfo]:
        """Peers online, friends and partners first, then established strangers."""
        return sorted(
            self.peers.values(),
            key=lambda p: (self.rank(p.pk), p.nick.casefold(), p.pk),
        )

    @property
    def online_count(self) -> int:
        """How many are online, us included."""
        return len(self.peers) + 1

    def receive_bytes(
        self, payload: bytes, now: int, topic: str | None = None, retained: bool = False
    ) -> list[Effect]:
        if topic is not None and topic == self.will_route().topic:
            return self._on_own_topic(payload, now, retained)
        if not payload:
            return []  # a deleted retained message: presence is only a hint
        try:
            event = events.parse(payload)
        except EventError as err:
            return [Dropped(None, "?", "payload", str(err))]
        return self.receive(event, now, topic, retained)  # (own topic: age unknown)

    def _on_own_topic(self, payload: bytes, now: int, retained: bool) -> list[Effect]:
        """What the broker holds as our presence: our echo, another session of our key
        (``sessions``), or a deletion or forgery."""
        if self._sent and payload == self._sent[-1]:
            self._echoed = True
            return []
        if payload in self._sent:
            return []  # the echo of an earlier one, the latest is on its way
        other: list[Effect] = []
        twin_online = False
        if payload:
            try:
                event = events.parse(payload)
            except EventError:
                event = None
            if event is not None and event.pk == self.me.public_key and event.kind == "presence":
                slack = announced_beat_ms(event.body["ttl"]) - HEARTBEAT_MS
                other = self.sessions.observe(event, now, retained, slack)
                twin_online = (
                    event.body["status"] == "online"
                    and event.body["session"] != self.session
                    and str(event.body.get("since", event.ts)) in self.sessions.others
                )
        if retained:
            return other  # left before we came; our connect() presence replaces it
        if twin_online:
            return other  # the broker holds a live presence of our key: nothing to repair
        self._echoed = False  # someone emptied or overwrote our retained presence
        return other + self._answer_later()

    def replayed(self, event: Event, now: int, topic: str | None = None) -> str | None:
        """Why ``receive`` would drop this lobby event as stale or a replay, or ``None``.

        Pure and without side effects: the network edge asks it for a known key's
        validly signed event *before* charging that key's budget, so that a stranger
        replaying the key's old bytes (or the same presence on other topics) cannot use
        the budget up and make a real peer (a round member) look silent.
        """
        if event.kind == "presence":
            if not self._on_its_topic(topic, event.pk):
                return "presence on another peer's topic"
            if event.pk == self.me.public_key:
                return None  # another session of ours: ``sessions`` judges it
            local = self._presence_local(event, now, 0)
            if local > now + MAX_SKEW_MS:
                return "presence from the future"
            known = self.peers.get(event.pk)
            if event.body.get("status") == "offline":
                if known is None or known.session != event.body.get("session"):
                    return "offline presence of another session"
                if self._online.wills_used.get(event.pk) == event.id:
                    return WILL_REPLAYED
                return None
            if local + honoured_ttl_s(event.body.get("ttl", 0)) * 1000 < now - MAX_SKEW_MS:
                return "expired presence"
            if known is not None and event.ts <= known.ts:
                return "older than the presence we hold"
            return None
        if event.kind == "hello":
            return self._chat.fresh_reason(event, now, self._chat.hello_seen)
        if event.kind == "chat" and event.round is None:
            return self._chat.fresh_reason(event, now, self._chat.chat_seen)
        return None

    def receive(
        self,
        event: Event,
        now: int,
        topic: str | None = None,
        retained: bool = False,
        expiry: int | None = None,
        *,
        sealed_with: tuple[bytes, str] | None = None,
    ) -> list[Effect]:
        """Handle one lobby or inbox event; never raises.

        ``sealed_with``: ``(round key, topic key)`` an invitation was sealed to us with
        (checked by the driver: the inviter chose them).  They live and die with the
        pending invitation, so they are bounded by the invitation rules below, and they
        are never consulted for a round we already hold.

        ``retained``: the broker kept it (a retained presence): it may be up to its ``ttl``
        old.  ``expiry`` (MQTT v5): the seconds the broker would still have kept it, so
        its age is ``ttl - expiry``; without it a retained presence says nothing about
        its signer's clock and is judged by our estimate of it.
        """
        age: int | None = 0
        """How long ago (ms) the event was published: 0 live, ``None`` when unknown (a
        retained one, on a broker that does not say)."""
        if retained:
            ttl = event.body.get("ttl") if event.kind == "presence" else None
            left = ttl - expiry if isinstance(ttl, int) and expiry is not None else -1
            longest = honoured_ttl_s(ttl) if isinstance(ttl, int) else 0
            age = left * 1000 if 0 <= left <= max(longest, PRESENCE_TTL_S) else None
        try:
            if event.kind == "genesis":
                return self._on_invitation(event, now, sealed_with)
            return self._receive(event, now, topic, age)
        except Exception as err:  # noqa: BLE001 - a bug must not let a stranger crash a peer
            return [dropped(event, f"internal error: {type(err).__name__}: {err}")]

    # -- clocks (of presences and round rules; ``p2p.protocol.lobby_clocks``) ----------

    def _presence_local(self, event: Event, now: int, age: int | None) -> int:
        return lobby_clocks.presence_local(self.clocks, event, now, age)

    def local_time(self, pk: bytes, ts: int) -> int:
        """``pk``'s signed time ``ts`` on our clock, for round rules (corrected at most by
        ``ROUND_TOLERANCE_MS``: past it, the rule sees the difference and we say so)."""
        return self.clocks.local(pk, ts, ROUND_TOLERANCE_MS)

    def their_now(self, pk: bytes, now: int) -> int:
        """Our time ``now`` on ``pk``'s clock, as round rules judge it (``local_time``)."""
        return now - self.local_time(pk, 0)

    def _clock_notices(self, event: Event, now: int, age: int) -> list[Effect]:
        return lobby_clocks.clock_notices(self.clocks, event, now, age)

    def _too_far(self, event: Event, now: int, age: int | None) -> list[Effect]:
        return self._far.too_far(self.clocks, event, now, age)

    # -- incoming: presence, hello, chat -------------------------------------------

    def _receive(
        self, event: Event, now: int, topic: str | None, age: int | None = 0
    ) -> list[Effect]:
        if event.pk == self.me.public_key and event.kind in ("presence", "hello", "chat"):
            return []  # our own echo
        if event.kind == "presence":
            return self._on_presence(event, now, topic, age)
        handler = {"hello": self._on_hello, "chat": self._on_chat, "cancel": self._on_cancel}.get(
            event.kind
        )
        if handler is None:
            return [dropped(event, f"{event.kind} does not belong in the lobby")]
        return handler(event, now, topic)

    def _on_presence(
        self, event: Event, now: int, topic: str | None, age: int | None
    ) -> list[Effect]:
        if not self._on_its_topic(topic, event.pk):
            return [dropped(event, "presence on another peer's topic")]
        body = event.body
        local = self._presence_local(event, now, age)
        if local > now + MAX_SKEW_MS:
            return [dropped(event, "presence from the future"), *self._too_far(event, now, age)]
        known = self.peers.get(event.pk)
        if body["status"] == "offline":
            # a Will is signed at connect time: session, not ts, binds it
            if known is None:
                return []  # a Will of someone we never saw online: nothing to remove
            if known.session != body["session"]:
                return [dropped(event, "offline presence of another session")]
            if self._online.wills_used.get(event.pk) == event.id:
                # one-shot: a heartbeat after this Will revoked it; its replay is void
                return [dropped(event, WILL_REPLAYED)]
            self._online.went_offline(event, now, MAX_PEERS + MAX_KEPT, MAX_KEPT * 4)
            return [Notice(f"{known.label} left", "peer_left", {"nick": known.label})]
        if local + honoured_ttl_s(body["ttl"]) * 1000 < now - MAX_SKEW_MS:
            return [dropped(event, "expired presence"), *self._too_far(event, now, age)]
        if known is not None and event.ts <= known.ts:
            return [dropped(event, "older than the presence we hold")]
        self._online.evidence.pop(event.pk, None)  # a sign of life revokes its offline presence
        clock = [] if age is None else self._clock_notices(event, now, age)
        if known is None:
            if not self._online.make_room(
                event.pk, now, self.max_peers, STALE_MS, stale_ms, MAX_STALE_SCAN
            ):
                return [dropped(event, "lobby full")]
            info = PeerInfo(event.pk, body["nick"], body["busy"], body["session"], event.ts,
                            now, now, ttl=body["ttl"])
            self._online.add(info, silence_ms(info.ttl))
            self._online.changes.append((replace(info), True))
            return [
                Notice(f"{info.label} is online", "peer_online", {"nick": info.label}),
                *clock,
            ]
        changed = known.nick != body["nick"] or known.busy != body["busy"]
        known.nick, known.busy, known.session = body["nick"], body["busy"], body["session"]
        known.ts, known.last_heard, known.ttl = event.ts, now, body["ttl"]
        self._online.expect(known, silence_ms(known.ttl))
        self._online.heard(known, now, ESTABLISHED_MS)
        if changed:
            self._online.changes.append((replace(known), True))
        return clock

    def _on_hello(self, event: Event, now: int, topic: str | None) -> list[Effect]:
        refused = self._chat.admit_hello(event, now)
        if refused:
            return refused
        if event.body.get("all") and self.answers_everyone and event.pk != self.me.public_key:
            if self._asked_at is None:
                self._asked_at = now
            return self._answer_later()
        if self._echoed:
            return []  # the broker holds our latest presence: the newcomer has it
        return self._answer_later()

    def _on_chat(self, event: Event, now: int, topic: str | None) -> list[Effect]:
        return self._chat.on_chat(event, now, self.rank, self._nick)

    def _nick(self, pk: bytes) -> str:
        return known.nick if (known := self.peers.get(pk)) else ""

    # -- invitations (``p2p.protocol.lobby_invitations``) --------------------------------

    @property
    def invitations(self) -> dict[str, Invitation]:
        """The invitations waiting for our answer, by round id."""
        return self._invitations.pending

    @property
    def declined(self) -> dict[str, None]:
        """Round ids of invitations we declined (newest last, at most ``MAX_DECLINED``):
        the admin's cancel that follows is expected, not an error to show."""
        return self._invitations.declined

    @property
    def known_rounds(self) -> SeenIds:
        """Round ids offered to us before: their genesis is never an invitation again."""
        return self._invitations.known_rounds

    def _on_invitation(
        self, event: Event, now: int, sealed_with: tuple[bytes, str] | None
    ) -> list[Effect]:
        who = self.peers.get(event.pk)
        return self._invitations.offer(
            event,
            now,
            sealed_with,
            rank=self.rank(event.pk),
            busy=self.busy and self.sessions.acting,
            local_time=self.local_time,
            inviter=who.label if who else label("?", event.pk),
        )

    def _on_cancel(self, event: Event, now: int, topic: str | None) -> list[Effect]:
        return self._invitations.cancelled(event)

    def decline_invitation(self, round_id: str, now: int) -> list[Effect]:
        """Decline and forget an invitation."""
        self.sessions.check()  # the session of our key that acts answers invitations
        return self._invitations.decline(round_id, now)

    def take_invitation(self, round_id: str) -> Invitation:
        """Remove an invitation we are about to accept (the peer then builds its round)."""
        self.sessions.check()
        return self._invitations.take(round_id)

    # -- time --------------------------------------------------------------------------

    def tick(self, now: int, listening: bool = True) -> list[Effect]:
        """Heartbeat, drop silent peers, expire invitations (O(1) when nothing is due).

        ``listening=False`` while our own connection is down: silence we cannot hear is no
        one's silence, so nobody is dropped for it; when we listen again every peer's
        ``last_heard`` moves on by the time we were deaf (their retained presences and next
        heartbeats then tell who is really gone).
        """
        effects: list[Effect] = self.sessions.tick(now, listening)
        if not listening:
            if self._deaf_since is None:
                self._deaf_since = now
        elif self._deaf_since is not None:
            deaf = max(0, now - self._deaf_since)
            self._deaf_since = None
            self._online.deaf(deaf)
        if self._last_presence is not None and now - self._last_presence >= min(
            self._beat_ms, self.heartbeat_ms()
        ):
            # due by what our last presence announced, earlier if the lobby shrank
            effects.append(self._announce("online", now))
        for silent in self._online.silent(now, MAX_KEPT * 4) if listening else []:
            effects.append(
                Notice(f"{silent.label} went silent", "peer_silent", {"nick": silent.label})
            )
        effects += self._invitations.expire(now, self.local_time)
        return effects

