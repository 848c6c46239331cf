"""Invitations to us, as the lobby keeps them (``p2p.protocol.lobby``): the genesis copies
in our inbox, the automatic decline while we are busy, the admin's cancel, our own
decline, and expiry.  ``Invitations`` holds only what it needs (our identity, the topics,
its own tables and decline budget); whatever it must know of the lobby (the inviter's
rank, whether we are busy, the inviter's clock) the lobby passes in.  Pure."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from p2p.games import game_class
from p2p.protocol import events
from p2p.protocol.chat import TokenBucket
from p2p.protocol.conflicts import SeenIds
from p2p.protocol.effects import Effect, Notice, Publish, cancel_reason, dropped
from p2p.protocol.events import Event
from p2p.protocol.identity import Identity
from p2p.protocol.round import RoundError, RoundState
from p2p.protocol.round_machine import PRIVATE_TTL_MS
from p2p.protocol.topics import Topics

MAX_INVITATIONS = 16
MAX_DECLINED = 64
LONGEST_INVITATION_MS = PRIVATE_TTL_MS + 300_000
"""The latest ``expires`` an invitation may name, from our clock: the longest a round may
form (a private round's 10 min) plus 5 min for an inviter whose clock runs ahead (refusing
the invitation is harsher than the wait a chain event dated ahead gets)."""
DECLINED_CANCEL = "cancel of an invitation we declined"
"""Drop reason of the admin's expected cancel after our decline (not worth a warning)."""
DECLINE_BUDGET = (4, 5_000)
"""Automatic declines while busy for invitations from strangers (burst, ms per one)."""


@dataclass
class Invitation:
    """A round someone invited us to; ``genesis`` is the signed round opening."""

    genesis: Event
    received: int
    rank: int = 3
    round_key: bytes = field(default=b"", repr=False)
    """The round key the invitation was sealed with (``p2p.protocol.sealing``)."""
    topic_key: str = ""
    """The round's topic key as the invitation named it (a public round's: its id)."""

    @property
    def route_key(self) -> str:
        """Where this round's topics are: the invitation's topic key, else the round id."""
        return self.topic_key or self.round_id

    @property
    def round_id(self) -> str:
        return self.genesis.round or ""

    @property
    def admin(self) -> bytes:
        return self.genesis.pk


class Invitations:
    """The invitations waiting for our answer, and the rounds offered or declined before."""

    def __init__(self, me: Identity, topics: Topics) -> None:
        self.me = me
        self.topics = topics
        self.pending: dict[str, Invitation] = {}
        """By round id, at most ``MAX_INVITATIONS`` (the lowest-ranked evicted first)."""
        self.declined: dict[str, None] = {}
        """Round ids of invitations we declined (newest last, at most ``MAX_DECLINED``):
        the admin's cancel that follows is expected, not an error to show."""
        self.known_rounds = SeenIds(limit=1024)
        """Round ids offered to us before: their genesis is never an invitation again."""
        self._decline_budget = TokenBucket(*DECLINE_BUDGET)

    def offer(
        self,
        event: Event,
        now: int,
        sealed_with: tuple[bytes, str] | None,
        *,
        rank: int,
        busy: bool,
        local_time: Callable[[bytes, int], int],
        inviter: str,
    ) -> list[Effect]:
        """A genesis in our inbox.  ``rank``: the inviter's (``Lobby.rank``); ``busy``: we
        are in a live round and this session acts; ``local_time``: a key's signed time on
        our clock (``Lobby.local_time``); ``inviter``: how to name the inviter."""
        try:
            state = RoundState.from_genesis(event)
        except RoundError as err:
            return [dropped(event, f"unusable invitation: {err}")]
        seat = state.seat_of(self.me.public_key)
        if seat is None or event.pk == self.me.public_key:
            return [dropped(event, "invitation without a seat for us")]
        if event.round in self.pending:
            return [dropped(event, "duplicate")]
        if event.round in self.known_rounds:  # a replayed genesis of a known round
            return [dropped(event, "genesis of a round we already know")]
        # the admin's clock, as its presences show it (never the genesis's own ts: an old
        # genesis replayed to a fresh lobby would look new)
        expires = local_time(event.pk, event.body["expires"])
        if expires <= now:
            return [dropped(event, "the invitation has expired")]
        if expires > now + LONGEST_INVITATION_MS:
            # else the admin keeps an invitee that accepted waiting (busy) as long as it
            # likes, and starts (then forfeits it) when the invitee has long gone
            return [dropped(event, "the invitation expires too far ahead")]
        self.known_rounds.add(state.round_id)
        slow = event.body.get("turn") is not None  # a slow round never finds us busy (§6.7)
        if busy and not slow:  # (a watcher never declines: the lobby says not busy)
            if rank and not self._decline_budget.take(now):
                return [dropped(event, "invitation while busy (decline budget)")]
            decline = events.make(
                self.me,
                "decline",
                now,
                {"seat": seat},
                round=event.round,
                prev=event.id,
            )
            self.remember_declined(state.round_id)
            key, topic_key = sealed_with or (b"", "")
            return [
                Publish(
                    self.topics.round_events(topic_key or state.round_id),
                    decline,
                    sealed_with=key or None,
                ),
                Notice("declined an invitation: busy", "auto_declined"),
            ]
        for rid, older in list(self.pending.items()):
            if older.admin == event.pk:  # one open invitation per inviter: the newest
                if older.genesis.ts > event.ts:
                    return [dropped(event, "older than this inviter's open invitation")]
                del self.pending[rid]
        if len(self.pending) >= MAX_INVITATIONS:
            # evict the lowest-ranked (then oldest) invitation, never a better one
            worst = max(
                self.pending.values(),
                key=lambda inv: (inv.rank, -inv.received),
            )
            if worst.rank < rank:
                return [dropped(event, "invitation list full")]
            del self.pending[worst.round_id]
        key, topic_key = sealed_with or (b"", "")
        self.pending[state.round_id] = Invitation(event, now, rank, key, topic_key)
        return [
            Notice(
                f"{inviter} invites you to {state.game_name}",
                "invited",
                {"nick": inviter, "game": state.game_name},
            )
        ]

    def cancelled(self, event: Event) -> list[Effect]:
        """The admin's ``cancel`` in our inbox: the invitation is gone."""
        invitation = self.pending.get(event.round or "")
        if (
            invitation is None
            or event.pk != invitation.admin
            or event.seq != 1
            or event.prev != invitation.genesis.id
        ):
            if event.round in self.declined:
                return [dropped(event, DECLINED_CANCEL)]
            return [dropped(event, "cancel of no invitation of ours")]
        del self.pending[invitation.round_id]
        why, seat = cancel_reason(event.body["reason"])
        return [
            Notice(
                f"the invitation was cancelled: {event.body['reason']}",
                "invitation_cancelled",
                {"reason": why, "seat": seat},
            )
        ]

    def decline(self, round_id: str, now: int) -> list[Effect]:
        """Decline and forget an invitation (``ValueError`` if there is none)."""
        invitation = self.pending.pop(round_id, None)
        if invitation is None:
            raise ValueError("no such invitation")
        self.remember_declined(round_id)
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
        route = self.topics.round_events(invitation.route_key)
        return [Publish(route, decline, sealed_with=invitation.round_key or None)]

    def remember_declined(self, round_id: str) -> None:
        self.declined[round_id] = None
        while len(self.declined) > MAX_DECLINED:
            del self.declined[next(iter(self.declined))]

    def take(self, round_id: str) -> Invitation:
        """Remove an invitation we are about to accept (``ValueError`` if there is none)."""
        invitation = self.pending.pop(round_id, None)
        if invitation is None:
            raise ValueError("no such invitation")
        return invitation

    def expire(self, now: int, local_time: Callable[[bytes, int], int]) -> list[Effect]:
        """Forget the invitations whose ``expires`` (the admin's clock) has passed."""
        effects: list[Effect] = []
        for rid, invitation in list(self.pending.items()):
            if now >= local_time(invitation.admin, invitation.genesis.body["expires"]):
                del self.pending[rid]
                self.remember_declined(rid)  # the admin's cancel that follows is expected
                effects.append(Notice("an invitation expired", "invitation_expired"))
        return effects


def plan_seats(
    game: str,
    options: dict[str, Any],
    admin: bytes,
    invitees: list[bytes],
    level: str | None = None,
) -> list[dict[str, Any]]:
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
