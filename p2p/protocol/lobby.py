"""Who is online, lobby chat and invitations, as a sans-I/O state machine.

How to drive it (``p2p.peer``):

* ``Lobby(me, nick, session, topics)``; ``session`` is 16 random bytes from the edge, new
  for every connection;
* when (re)connecting: connect with ``lobby.will(now)`` as the MQTT Last Will (topic
  ``lobby.will_route()``, retained), subscribe to ``topics.lobby_subscriptions(...)``, then
  carry out ``lobby.connect(now)`` (our presence plus a hello);
* feed every lobby message to ``receive(event, now, topic)`` (``receive_bytes`` for raw
  payloads; a retained message with an empty payload is a harmless deletion: ignore it);
* call ``tick(now)`` every second or so (heartbeat every ``HEARTBEAT_MS``, silent peers
  dropped after ``SILENCE_MS``, invitations expire);
* ``set_busy``, ``chat``, ``disconnect`` and ``decline_invitation`` are user actions.

Presence is a signed, self-expiring hint: ``ttl`` seconds after its ``ts`` it means
nothing.  The Last Will is a *pre-signed* ``offline`` presence naming this connection's
``session``; an ``offline`` presence counts only if it is newer than what we have and names
the session of the presence we hold, so an unsigned fake Will fails to parse, and a
replayed Will from an older session is ignored.

Invitations arrive in our inbox as a copy of the round's genesis.  While we are busy (in a
round) the lobby declines them at once; otherwise they wait in ``invitations`` until we
accept (the peer then builds a ``RoundMachine`` from the genesis), decline, the admin
cancels, or they expire.
"""

from __future__ import annotations

from dataclasses import dataclass

from p2p.games import game_class
from p2p.protocol import events
from p2p.protocol.chat import RateLimiter, clean_line
from p2p.protocol.conflicts import SeenIds
from p2p.protocol.effects import (
    ChatLine,
    Dropped,
    Effect,
    Notice,
    Publish,
    cancel_reason,
    dropped,
)
from p2p.protocol.events import Event, EventError
from p2p.protocol.identity import Identity, label, peer_id, sanitize_nickname
from p2p.protocol.round import RoundError, RoundState
from p2p.protocol.topics import Route, Topics

HEARTBEAT_MS = 20_000
"""We re-publish our presence this often."""
PRESENCE_TTL_S = 60
"""Our presence means nothing after this many seconds (also the retained message's expiry)."""
SILENCE_MS = 65_000
"""A peer we have not heard from for this long is dropped from the online list."""
MAX_SKEW_MS = 300_000
"""Presence stamped further than this in the future is refused."""
HELLO_ANSWER_MS = 2_000
"""We answer hellos with our presence at most this often."""
MAX_PEERS = 2_000
MAX_INVITATIONS = 16
MAX_DECLINED = 64
DECLINED_CANCEL = "cancel of an invitation we declined"
"""Drop reason of the admin's expected cancel after our decline (not worth a warning)."""


@dataclass
class PeerInfo:
    """A peer we believe is online."""

    pk: bytes
    nick: str
    busy: bool
    session: str
    ts: int
    last_heard: int

    @property
    def label(self) -> str:
        return label(self.nick, self.pk)


@dataclass
class Invitation:
    """A round someone invited us to; ``genesis`` is the signed round opening."""

    genesis: Event
    received: int

    @property
    def round_id(self) -> str:
        return self.genesis.round or ""

    @property
    def admin(self) -> bytes:
        return self.genesis.pk


class Lobby:
    """Our presence, everybody else's, lobby chat and pending invitations."""

    def __init__(
        self, me: Identity, nick: str, session: bytes, topics: Topics | None = None
    ) -> None:
        if len(session) != 16:
            raise ValueError("a session id has 16 bytes")
        self.me = me
        self.nick = sanitize_nickname(nick) or me.short_id
        self.session = session.hex()
        self.topics = topics or Topics()
        self.busy = False
        self.peers: dict[bytes, PeerInfo] = {}
        self.invitations: dict[str, Invitation] = {}
        self.declined: dict[str, None] = {}
        """Round ids of invitations we declined (newest last, at most ``MAX_DECLINED``):
        the admin's cancel that follows is expected, not an error to show."""
        self.known_rounds = SeenIds(limit=1024)
        """Round ids offered to us before: their genesis is never an invitation again."""
        self._last_presence: int | None = None
        self._last_hello_answer: int | None = None
        self._chat_limit = RateLimiter()
        self._connected_at = 0

    # -- our own presence ---------------------------------------------------------------

    def _presence(self, status: str, now: int) -> Event:
        body = {
            "nick": self.nick,
            "status": status,
            "busy": self.busy,
            "session": self.session,
            "ttl": PRESENCE_TTL_S,
        }
        return events.make(self.me, "presence", now, body)

    def will_route(self) -> Route:
        return self.topics.presence(self.me.peer_id)

    def will(self, now: int, session: bytes | None = None) -> Event:
        """The pre-signed ``offline`` presence to register as this connection's Last Will.

        Call it just before connecting, with 16 fresh random bytes as ``session`` for every
        reconnection (the Will names it, so an old Will cannot remove the new connection).
        """
        if session is not None:
            if len(session) != 16:
                raise ValueError("a session id has 16 bytes")
            self.session = session.hex()
        self._connected_at = now
        return self._presence("offline", now)

    def connect(self, now: int) -> list[Effect]:
        """After (re)connecting: announce ourselves and ask everyone to announce."""
        self._last_presence = now
        hello = events.make(self.me, "hello", now, {"nick": self.nick})
        return [
            Publish(self.will_route(), self._presence("online", now)),
            Publish(self.topics.hello(), hello),
        ]

    def disconnect(self, now: int) -> list[Effect]:
        """Leaving on purpose: say so (the retained presence is replaced by ``offline``)."""
        return [Publish(self.will_route(), self._presence("offline", now))]

    def set_busy(self, busy: bool, now: int) -> list[Effect]:
        """We joined or left a round: tell the lobby."""
        self.busy = busy
        self._last_presence = now
        return [Publish(self.will_route(), self._presence("online", now))]

    def chat(self, text: str, now: int) -> list[Effect]:
        """A lobby chat line from us (``ValueError`` if empty after cleaning)."""
        line = clean_line(text)
        if not line:
            raise ValueError("an empty chat line")
        return [
            Publish(
                self.topics.lobby_chat(),
                events.make(self.me, "chat", now, {"text": line}),
            )
        ]

    # -- the others ------------------------------------------------------------------

    def online(self) -> list[PeerInfo]:
        """Peers online, by nickname then fingerprint (we are not in the list)."""
        return sorted(self.peers.values(), key=lambda p: (p.nick.casefold(), p.pk))

    @property
    def online_count(self) -> int:
        """How many are online, us included."""
        return len(self.peers) + 1

    def receive_bytes(
        self, payload: bytes, now: int, topic: str | None = None
    ) -> list[Effect]:
        if not payload:
            return []  # a deleted retained message: presence is only a hint
        try:
            event = events.parse(payload)
        except EventError as err:
            return [Dropped(None, "?", "payload", str(err))]
        return self.receive(event, now, topic)

    def receive(self, event: Event, now: int, topic: str | None = None) -> list[Effect]:
        """Handle one lobby or inbox event; never raises."""
        try:
            return self._receive(event, now, topic)
        except Exception as err:  # noqa: BLE001 - a bug must not let a stranger crash a peer
            return [dropped(event, f"internal error: {type(err).__name__}: {err}")]

    def _receive(self, event: Event, now: int, topic: str | None) -> list[Effect]:
        if event.pk == self.me.public_key and event.kind in (
            "presence",
            "hello",
            "chat",
        ):
            return []  # our own echo
        handler = {
            "presence": self._on_presence,
            "hello": self._on_hello,
            "chat": self._on_chat,
            "genesis": self._on_invitation,
            "cancel": self._on_cancel,
        }.get(event.kind)
        if handler is None:
            return [dropped(event, f"{event.kind} does not belong in the lobby")]
        return handler(event, now, topic)

    def _on_presence(self, event: Event, now: int, topic: str | None) -> list[Effect]:
        if topic is not None and self.topics.parse_presence(topic) != peer_id(event.pk):
            return [dropped(event, "presence on another peer's topic")]
        body = event.body
        if event.ts > now + MAX_SKEW_MS:
            return [dropped(event, "presence from the future")]
        known = self.peers.get(event.pk)
        if (
            body["status"] == "offline"
        ):  # a Will is signed at connect time: session, not ts, binds it
            if known is None:
                return []  # a Will of someone we never saw online: nothing to remove
            if known.session != body["session"]:
                return [dropped(event, "offline presence of another session")]
            del self.peers[event.pk]
            return [Notice(f"{known.label} left", "peer_left", {"nick": known.label})]
        if event.ts + body["ttl"] * 1000 < now - MAX_SKEW_MS:
            return [dropped(event, "expired presence")]
        if known is not None and event.ts <= known.ts:
            return [dropped(event, "older than the presence we hold")]
        if known is None:
            if len(self.peers) >= MAX_PEERS:
                return [dropped(event, "lobby full")]
            self.peers[event.pk] = PeerInfo(
                event.pk, body["nick"], body["busy"], body["session"], event.ts, now
            )
            return [Notice(f"{self.peers[event.pk].label} is online", "peer_online", {"nick": self.peers[event.pk].label})]
        known.nick, known.busy, known.session = (
            body["nick"],
            body["busy"],
            body["session"],
        )
        known.ts, known.last_heard = event.ts, now
        return []

    def _on_hello(self, event: Event, now: int, topic: str | None) -> list[Effect]:
        if (
            self._last_hello_answer is not None
            and now - self._last_hello_answer < HELLO_ANSWER_MS
        ):
            return []
        self._last_hello_answer = now
        self._last_presence = now
        return [Publish(self.will_route(), self._presence("online", now))]

    def _on_chat(self, event: Event, now: int, topic: str | None) -> list[Effect]:
        if event.round is not None:
            return [dropped(event, "round chat in the lobby")]
        if not self._chat_limit.allow(event.pk, now):
            return [dropped(event, "chat rate limit")]
        known = self.peers.get(event.pk)
        nick = known.nick if known else ""
        return [ChatLine(event.pk, nick, event.body["text"], None, event.ts)]

    def _on_invitation(self, event: Event, now: int, topic: str | None) -> list[Effect]:
        try:
            state = RoundState.from_genesis(event)
        except RoundError as err:
            return [dropped(event, f"unusable invitation: {err}")]
        seat = state.seat_of(self.me.public_key)
        if seat is None or event.pk == self.me.public_key:
            return [dropped(event, "invitation without a seat for us")]
        if event.round in self.invitations:
            return [dropped(event, "duplicate")]
        if event.round in self.known_rounds:  # a replayed genesis of a known round
            return [dropped(event, "genesis of a round we already know")]
        if event.body["expires"] <= now:
            return [dropped(event, "the invitation has expired")]
        self.known_rounds.add(state.round_id)
        if self.busy:
            decline = events.make(
                self.me,
                "decline",
                now,
                {"seat": seat},
                round=event.round,
                prev=event.id,
            )
            self._remember_declined(state.round_id)
            return [
                Publish(self.topics.round_events(state.round_id), decline),
                Notice("declined an invitation: busy", "auto_declined"),
            ]
        effects: list[Effect] = []
        for rid, older in list(self.invitations.items()):
            if older.admin == event.pk:  # one open invitation per admin: the newest
                del self.invitations[rid]
        if (
            len(self.invitations) >= MAX_INVITATIONS
        ):  # a flood evicts the oldest, not the new
            self.invitations.pop(next(iter(self.invitations)))
        self.invitations[state.round_id] = Invitation(event, now)
        who = self.peers.get(event.pk)
        name = who.label if who else label("?", event.pk)
        return effects + [Notice(f"{name} invites you to {state.game_name}", "invited", {"nick": name, "game": state.game_name})]

    def _on_cancel(self, event: Event, now: int, topic: str | None) -> list[Effect]:
        invitation = self.invitations.get(event.round or "")
        if (
            invitation is None
            or event.pk != invitation.admin
            or event.seq != 1
            or event.prev != invitation.genesis.id
        ):
            if event.round in self.declined:
                return [dropped(event, DECLINED_CANCEL)]
            return [dropped(event, "cancel of no invitation of ours")]
        del self.invitations[invitation.round_id]
        why, seat = cancel_reason(event.body["reason"])
        return [
            Notice(
                f"the invitation was cancelled: {event.body['reason']}",
                "invitation_cancelled",
                {"reason": why, "seat": seat},
            )
        ]

    def decline_invitation(self, round_id: str, now: int) -> list[Effect]:
        """Decline and forget an invitation."""
        invitation = self.invitations.pop(round_id, None)
        if invitation is None:
            raise ValueError("no such invitation")
        self._remember_declined(round_id)
        state = RoundState.from_genesis(invitation.genesis)
        seat = state.seat_of(self.me.public_key)
        decline = events.make(
            self.me,
            "decline",
            now,
            {"seat": seat},
            round=round_id,
            prev=invitation.genesis.id,
        )
        return [Publish(self.topics.round_events(round_id), decline)]

    def _remember_declined(self, round_id: str) -> None:
        self.declined[round_id] = None
        while len(self.declined) > MAX_DECLINED:
            del self.declined[next(iter(self.declined))]

    def take_invitation(self, round_id: str) -> Invitation:
        """Remove an invitation we are about to accept (the peer then builds its round)."""
        invitation = self.invitations.pop(round_id, None)
        if invitation is None:
            raise ValueError("no such invitation")
        return invitation

    # -- time --------------------------------------------------------------------------

    def tick(self, now: int) -> list[Effect]:
        """Heartbeat, drop silent peers, expire invitations."""
        effects: list[Effect] = []
        if (
            self._last_presence is not None
            and now - self._last_presence >= HEARTBEAT_MS
        ):
            self._last_presence = now
            effects.append(Publish(self.will_route(), self._presence("online", now)))
        for pk, info in list(self.peers.items()):
            if now - info.last_heard >= SILENCE_MS:
                del self.peers[pk]
                effects.append(Notice(f"{info.label} went silent", "peer_silent", {"nick": info.label}))
        for rid, invitation in list(self.invitations.items()):
            if now >= invitation.genesis.body["expires"]:
                del self.invitations[rid]
                self._remember_declined(rid)  # the admin's cancel that follows is expected
                effects.append(Notice("an invitation expired", "invitation_expired"))
        return effects


def plan_seats(
    game: str,
    options: dict,
    admin: bytes,
    invitees: list[bytes],
    level: str | None = None,
) -> list[dict]:
    """Seats for a new round: the admin first, then the invitees, computers fill the rest.

    Connect Four takes 1 invitee, Viergewinnt 3D 1 or 2 (``players`` 2 or 3), four-player
    chess up to 3; ``ValueError`` (one line) if the numbers do not fit.
    """
    players = game_class(game).create(options).players
    if len(set(invitees)) != len(invitees) or admin in invitees:
        raise ValueError("each player can hold one seat only")
    free = players - 1 - len(invitees)
    if free < 0:
        raise ValueError(f"{game} has room for {players - 1} invitee(s)")
    if free and level is None:
        raise ValueError(f"{game} needs {players - 1} invitee(s) or computer players")
    seats = [{"pk": admin.hex(), "level": None}]
    seats += [{"pk": pk.hex(), "level": None} for pk in invitees]
    seats += [{"pk": None, "level": level} for _ in range(free)]
    return seats
