"""One member's view of a round, as a sans-I/O state machine.

How to drive it (``p2p.peer`` does exactly this):

* create it with ``RoundMachine.open(...)`` (the admin opens a round) or
  ``RoundMachine(me, genesis, nonce=..., topics=...)`` (an invitee or code-joiner that got
  the genesis); ``nonce`` is 32 random bytes from the edge, used for the draw;
* feed every event that arrives on the round's topics (events, sync, chat) to
  ``receive(event, now)`` (or raw bytes to ``receive_bytes``), call ``tick(now)`` every
  second or so, and call the user actions (``accept``, ``decline``, ``join``, ``move``,
  ``resign``, ``leave``, ``chat``, ``cancel``, ``request_sync``);
* every call returns a list of effects (``p2p.protocol.effects``): publish what it says,
  log ``Dropped``/``Equivocation``, show ``ChatLine``/``Notice``; after every call make
  the round log hold ``log_events()`` (a pure function of the machine).  User actions
  raise ``ActionError`` (one line) on bad input.

``now`` is the caller's clock in integer milliseconds; it drives local timers
(invitation expiry, commit and reveal timeouts, turn timeouts, chat and sync rate limits)
and the ``ts`` of our own events, and it bounds what we accept: a chain event dated more
than ``MAX_AHEAD_MS`` ahead of it waits (``p2p.protocol.conflicts``).  ``tick`` also
takes ``offline``: the members' keys whose lobby presence the driver sees offline.

The machine acts by itself where the protocol says so: members reveal as soon as the
start closed the commitments (from v5 each member's travels in its accept or join, the
admin's in the genesis; a v4 round committed after the start and the admin closed the
set); the admin starts when every seat has accepted and draws when every reveal is in (a
seat still missing at ``REVEAL_TIMEOUT_MS`` cancels the round), cancels when an invitee declines or the invitation expires,
and plays the computer seats; the owner of the next position seals pending resignations;
the admin forfeits a human seat that has not moved for the turn timeout (the admin's
successor forfeits the admin's seat the same way).  Two events for one position are
settled by ``p2p.protocol.conflicts`` (``Rewound`` when our chain changes; a proven
equivocation ends the round); in play members exchange chain heads every
``HEAD_EXCHANGE_MS``; a round that never starts, or whose player to move and forfeiter
both vanished, ends here by ``round_timers.end_if_stuck``.
Computer moves are computed inside ``receive``/``tick`` (``p2p.ai.choose_move``); a slow
level blocks the caller for that long.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from p2p.games.base import Game
from p2p.protocol import (
    draw,
    events,
    round_actions,
    round_conflicts,
    round_duties,
    round_receive,
    round_side,
    round_timers,
)
from p2p.protocol.chat import RateLimiter
from p2p.protocol.clocks import ROUND_TOLERANCE_MS, ClockOffsets
from p2p.protocol.conflicts import MAX_PENDING as MAX_PENDING
from p2p.protocol.conflicts import MAX_REWIND, MAX_VOUCHED, RULES_VERSION, SeenIds
from p2p.protocol.effects import (
    Applied,
    Dropped,
    Effect,
    Publish,
    dropped,
)
from p2p.protocol.events import Event, EventError
from p2p.protocol.freshness import ReplayGuard
from p2p.protocol.identity import Identity, peer_id
from p2p.protocol.outcome import RoundOutcome
from p2p.protocol.phases import ENDED, LocalEnd
from p2p.protocol.round import (
    DEFAULT_TIMEOUTS,
    ChainError,
    Phase,
    RoundError,
    RoundState,
    TurnTimeouts,
    verify_chain,
)
from p2p.protocol.round_actions import CATCH_UP_MS as CATCH_UP_MS
from p2p.protocol.round_actions import ActionError as ActionError
from p2p.protocol.round_side import (
    MAX_ROUND_CHAT_SEEN,
    ROUND_CHAT_WINDOW_MS,
    SYNC_INTERVAL_MS,
)
from p2p.protocol.round_timers import ACK_ASK_MS as ACK_ASK_MS
from p2p.protocol.round_timers import COMMIT_TIMEOUT_MS as COMMIT_TIMEOUT_MS
from p2p.protocol.round_timers import FORMING_GRACE_MS as FORMING_GRACE_MS
from p2p.protocol.round_timers import HEAD_EXCHANGE_MS as HEAD_EXCHANGE_MS
from p2p.protocol.round_timers import REVEAL_TIMEOUT_MS as REVEAL_TIMEOUT_MS
from p2p.protocol.round_timers import START_DEADLINE_MS as START_DEADLINE_MS
from p2p.protocol.topics import Route, Topics, code_secret, private_key

INVITE_TTL_MS = 60_000
"""An invitation (genesis) expires this long after it was made."""
PRIVATE_TTL_MS = 600_000
"""A private round waits this long for people typing its join code (read aloud, passed on)."""
MAX_ORPHANS = 4096
"""Ids of replaced chain events (and events built on them) remembered; oldest forgotten."""
REACT_STEPS = 64
"""Duties (a seal, a computer move ...) one machine step does at most: a step holds the
round's lock (and, with computer seats, a worker thread), so a long run of computer moves
is cut into steps; the rest follows on the next ``tick`` (``duties_left``)."""


class RoundMachine:
    """A member's round: the verified chain plus pools of side events and local timers."""

    def __init__(
        self,
        me: Identity,
        genesis: Event,
        nonce: bytes,
        topics: Topics | None = None,
        code: str | None = None,
        now: int = 0,
        timeouts: TurnTimeouts | None = None,
        *,
        secret: bytes | None = None,
    ) -> None:
        """``secret``: the code's scrypt secret (``code_secret(code)``) when the caller
        has it already; scrypt is slow on purpose, so it is computed once per join."""
        if len(nonce) != draw.NONCE_SIZE:
            raise ValueError("the draw nonce has 32 bytes")
        self.me = me
        self.state = RoundState.from_genesis(genesis, timeouts or DEFAULT_TIMEOUTS)
        self.timeouts = self.state.timeouts  # a slow round's genesis names its own (§6.7)
        self.topics = topics or Topics()
        self.code = code
        if code and secret is None:
            secret = code_secret(code)
        self._secret = secret if code else None
        self.key = private_key(code, self._secret) if code else self.state.round_id
        """The topic key: the round id, or the code-derived key of a private round."""
        self.nonce = nonce
        self.seen = SeenIds([genesis.id])
        """Ids processed once already (bounded); chain positions are checked by id too."""
        self.pending: dict[str, Event] = {}
        self.side: dict[tuple[str, bytes], Event] = {}
        self._advanced: tuple[Game, str] | None = None
        """Our move's game and state hash while we sign it (``_append_move``)."""
        self.phase_since = now
        self.expired = False
        self._chat_limit = RateLimiter()
        self._chat_seen = ReplayGuard(ROUND_CHAT_WINDOW_MS, MAX_ROUND_CHAT_SEEN)
        """Round chat counts once: signed ``ts`` window, seen ids and a floor (as lobby chat)."""
        self._sync_answered: dict[bytes, int] = {}
        self._sync_floor: dict[bytes, tuple[int, str]] = {}
        """Per member: ``ts`` and id of the newest sync request we took from it; an older
        one (or that one again) is a replay, whatever ``seen`` still holds."""
        self._sync_sent: tuple[int, int] = (now, 0)
        """Start of the current sync interval and chain events we re-published in it."""
        self._asked_len = 0
        """Our chain length when we last asked for a sync (a full answer: ask on)."""
        self.offline: frozenset[bytes] = frozenset()
        """Members whose lobby presence the driver last reported offline (``tick``)."""
        self.evidence: dict[bytes, tuple[Event, int]] = {}
        """Members' unrevoked signed offline presences and when they arrived (``tick``)."""
        self._applied_at: dict[str, int] = {genesis.id: now}
        """When we applied each of the last chain events (a forfeit settles after it)."""
        self._observed_at: dict[str, int] = {genesis.id: now}
        """When we saw each of the last chain events arrive live (not while catching up)."""
        self._orphans = SeenIds(limit=MAX_ORPHANS)
        """Ids of chain events a forfeit replaced, and of events built on them (bounded: a
        forgotten one only waits among the pending events, which are bounded too)."""
        self._resumed_head: str | None = None
        """The head we took up from a log: our clock never saw it arrive, so it does not
        delay a forfeit of it (a restarted, forfeited player sees the forfeit at once)."""
        self._pairs: dict[int, tuple[Event, Event]] = {}
        """Per contested position (the last ``MAX_REWIND``): a forfeit and the forfeited
        seat's own event there, both kept as evidence and settled again by the table
        whenever a new sign arrives (``round_conflicts.rejudge``)."""
        self._signs: dict[tuple[bytes, bool], list[Event]] = {}
        """Per member (bounded by the seats), its newest ``MAX_SIGNS`` sync requests and
        acks, and apart from them its chain events off our chain: signs of the head it
        holds (§8.1); a member's flood of one kind never evicts the other."""
        self._clock = now
        """The latest ``now`` we were called with: signs dated further ahead of it than
        ``MAX_AHEAD_MS`` do not count yet (``round_conflicts.signs``)."""
        self._told_disputes: set[int] = set()
        """Positions whose dispute we have told (one notice each)."""
        self._told_own: set[int] = set()
        """Of those, the ones disputed by a row of our own (we keep what the table does
        not, T4, T5): they stay disputed once settled (``round_conflicts.disputes``)."""
        self._vouched = SeenIds(limit=MAX_VOUCHED)
        """Ids of our own chain events another member showed it holds."""
        self._snapshots: dict[int, RoundState] = {}
        """The state before each of the last ``MAX_REWIND`` chain positions."""
        self._clock_wait: dict[str, Event] = {}
        """Chain events our clock does not allow yet (dated ahead, forfeit too soon)."""
        self._verdict = False
        """The round ended by the equivocation rule (a later proof changes nothing)."""
        self._proof: tuple[Event, Event] | None = None
        """The equivocation proof the round ended by (``_verdict``): its log ends with it,
        and sync answers to another branch carry it."""
        self.declined_at: str | None = None
        """Id of the move whose take-back the player to move declined (a signed
        ``takeback_decline``, ``round_side.receive_takeback_decline``): no longer asked."""
        self._catch_up_until = now
        """Until then we catch up after our own sync request: no observation times."""
        self._last_head_sent = now
        self._last_asked = now - SYNC_INTERVAL_MS
        self.local_end: LocalEnd | None = None
        """Our verdict that the round ended here by a local rule (expired, abandoned;
        ``round_timers.end_here``): beside the chain, which says nothing of it, so
        ``state`` stays what the chain made it and the log replays to it."""
        self.sessions: Any = None
        """Our key's sessions (the driver shares its lobby's ``p2p.protocol.sessions``):
        while another session of our key acts, this machine signs nothing (no chain or
        side event: no move, ack, commit, forfeit ...), and user actions raise
        ``ActionError`` with code ``other_session``.  ``None``: we always act."""
        self._was_acting = True
        self.duties_left = False
        """Our last ``_react`` stopped at its cap (``REACT_STEPS``) with duties still due
        -- a long run of computer moves once no human seat is left to move: ``tick``
        goes on with them (else the round would stall until some event came in)."""
        self.clocks = ClockOffsets()
        """The members' clock offsets (the driver shares its lobby's): a member's signed
        times are judged in its own frame where we compare them with our clock (the
        invitation's expiry, "dated ahead"); never in a chain rule."""

    # -- construction -----------------------------------------------------------------

    @classmethod
    def open(
        cls,
        me: Identity,
        now: int,
        round_id: str,
        game: str,
        options: dict[str, Any],
        seats: Sequence[dict[str, Any]],
        start: int | None,
        nonce: bytes,
        topics: Topics | None = None,
        code: str | None = None,
        ttl_ms: int | None = None,
        timeouts: TurnTimeouts | None = None,
        turn_s: int | None = None,
        secret: bytes | None = None,
    ) -> tuple[RoundMachine, list[Effect]]:
        """The admin opens a round: signs the genesis, publishes it and invites the seats.

        ``seats``: one ``{"pk": hex | None, "level": str | None}`` per seat in seat order
        (the admin's own key in one of them; ``pk`` and ``level`` both ``None`` is an open
        seat of a private round, which needs ``code``).  ``start``: the starting seat, or
        ``None`` to draw it.  ``ttl_ms``: how long the round may stay forming; default
        ``PRIVATE_TTL_MS`` behind a code, else ``INVITE_TTL_MS``.  Raises ``ActionError`` if
        the round is not possible.  ``turn_s``: a slow round's turn limit in seconds.
        """
        if ttl_ms is None:
            ttl_ms = PRIVATE_TTL_MS if code is not None else INVITE_TTL_MS
        body = {
            "game": game,
            "options": dict(options),
            "seats": [dict(s) for s in seats],
            "start": start,
            "expires": now + ttl_ms,
            "private": code is not None,
        }
        if turn_s is not None:  # a slow round: its turn limit is a chain rule (§6.7)
            body["turn"] = turn_s
        if draw.draws(start, [s.get("level") for s in seats]):
            # the draw starts with the invitation: our commitment travels in it (§7)
            with contextlib.suppress(ValueError):  # a bad round id or nonce: refused below
                body["commit"] = draw.commitment(round_id, me.public_key, nonce)
        try:
            genesis = events.make(me, "genesis", now, body, round=round_id, seq=0)
            machine = cls(me, genesis, nonce, topics, code, now, timeouts, secret=secret)
        except (EventError, RoundError) as err:
            raise ActionError(str(err)) from None
        effects: list[Effect] = [Applied(genesis)]
        # Invitations first: a public round's id shows in its topics, and whoever read it
        # there before an invitee got its invitation could pre-empt it with a genesis of
        # its own for that id (the invitee would drop the real one as a duplicate).
        for seat in machine.state.seats:
            if seat.pk is not None and seat.pk != me.public_key:
                effects.append(Publish(machine.topics.inbox(peer_id(seat.pk)), genesis))
        effects.append(Publish(machine.route(), genesis))
        if (
            code is not None
        ):  # code joiners subscribe later: they find the genesis retained
            effects.append(Publish(machine.topics.round_genesis(machine.key), genesis))
        effects += machine._react(now)
        return machine, effects

    @classmethod
    def from_log(
        cls,
        me: Identity,
        chain: Sequence[Event],
        nonce: bytes,
        topics: Topics | None = None,
        code: str | None = None,
        now: int = 0,
        timeouts: TurnTimeouts | None = None,
        proof: tuple[Event, Event] | None = None,
        evidence: Sequence[Event] = (),
        acks: Iterable[Event] = (),
        secret: bytes | None = None,
    ) -> RoundMachine:
        """Resume a round from its chain (a saved log or a sync answer), fully verified.

        Raises ``p2p.protocol.round.ChainError`` naming the first bad event.  The draw
        nonce only matters if the draw is still open; pass the one used before.
        ``proof``: the equivocation proof the log ends with (``Replay.proof``): the round
        ended by it and is resumed as over, never as a running round.  ``evidence``:
        the log's evidence lines (``Replay.evidence()``): the claims beside the chain at
        contested positions and the signs that decided them (docs/protocol.md §8.1 T8),
        taken up again so the resumed member weighs what it weighed before.  ``acks``:
        the log's closing acks of the final head (``Replay.acks``, checked by replay):
        held again, so the log written from the machine (``log_events``) keeps them.
        """
        # one replay; the states before the last MAX_REWIND positions are kept for
        # conflicts to come (so a conflict never replays the chain)
        tail = max(1, len(chain) - MAX_REWIND)
        state = verify_chain(list(chain[:tail]), timeouts or DEFAULT_TIMEOUTS)
        machine = cls(me, chain[0], nonce, topics, code, now, timeouts, secret=secret)
        for index, event in enumerate(chain[tail:], start=tail):
            machine._snapshots[index] = state.snapshot()
            try:
                state.apply(event)
            except RoundError as err:
                raise ChainError(index, event, str(err)) from None
        machine.state = state
        if proof is not None:
            seat = state.seat_of(proof[0].pk)
            if seat is None or proof[0].seq != len(chain) or proof[0].prev != state.head.id:
                raise ChainError(len(chain), proof[0], "no proof of equivocation here")
            if state.phase not in (Phase.OVER, Phase.CANCELLED):
                state.end_for_equivocation(seat, len(chain))
            machine._verdict = True
            machine._proof = proof  # (the states before its last positions stay, for
            # the disputes there; nothing replaces them: rejudge keeps an end by a proof)
            machine.seen.update(e.id for e in proof)
        for event in chain:
            machine.seen.add(event.id)
            for inner in event.sealed():
                machine.seen.add(inner.id)
                machine.side[(inner.kind, inner.pk)] = inner
        # we take the round up now: the turn to move counts for us from here (a resumed
        # admin does not forfeit a seat whose move it may simply not have heard of yet)
        machine._applied_at[state.head.id] = now
        machine._observed_at[state.head.id] = now
        machine._resumed_head = state.head.id
        machine._take_up_evidence(evidence)
        for ack in acks:
            if ack.prev == state.head.id and state.seat_of(ack.pk) is not None:
                machine.side[("ack", ack.pk)] = ack
                machine.seen.add(ack.id)
        return machine

    def _take_up_evidence(self, evidence: Sequence[Event]) -> None:
        """Contested positions and signs from a log (``from_log``), bounded as live."""
        chain = self.state.chain
        for event in evidence:
            if event.round != self.state.round_id or not self.state.is_member(event.pk):
                continue
            if event.seq is None:
                if event.kind in ("ack", "sync_request") and event.prev is not None:
                    round_conflicts.add_sign(self, event)
                continue
            seq = event.seq
            if not 0 < seq < len(chain) or chain[seq].id == event.id:
                continue
            there = chain[seq]
            if event.prev != there.prev or "forfeit" not in (event.kind, there.kind):
                continue
            if event.kind == there.kind:
                continue
            forfeit, rival = (event, there) if event.kind == "forfeit" else (there, event)
            round_conflicts.remember_pair(self, seq, forfeit, rival)
            self._orphan([event.id])
            round_conflicts.add_sign(self, event)  # as live: a claim names its prev

    # -- queries -------------------------------------------------------------------------

    @property
    def phase(self) -> Phase:
        """The round's phase as this member takes it: the chain's (``state.phase``), or
        ``CANCELLED`` while our verdict says it ended here (``local_end``)."""
        return Phase.CANCELLED if self.local_end is not None else self.state.phase

    @property
    def is_over(self) -> bool:
        """The round is over for us: by its chain, by a proof, or by a local end."""
        return self.phase in ENDED

    @property
    def outcome(self) -> RoundOutcome | None:
        """How the round ended for us, typed: the chain's (``state.outcome()``), or our
        local end's (nobody wins); ``None`` while it runs."""
        return self.local_end.outcome if self.local_end is not None else self.state.outcome()

    @property
    def end_reason(self) -> str:
        """Why the round ended (the chain's reason, or our local end's), else ``''``."""
        outcome = self.outcome
        return "" if outcome is None else outcome.reason

    @property
    def my_seat(self) -> int | None:
        return self.state.seat_of(self.me.public_key)

    @property
    def ended_by_proof(self) -> bool:
        """The round ended by the equivocation rule (its log ends with the proof)."""
        return self._verdict

    @property
    def ended_here(self) -> bool:
        """The round ended here by a local rule (expired, abandoned): no chain event
        says so, so its log shows the prefix it is (``round_timers.end_here``)."""
        return self.local_end is not None

    @property
    def is_admin(self) -> bool:
        return self.state.admin == self.me.public_key

    def route(self) -> Route:
        """Where our chain and side events go: this round's own events topic."""
        return self.topics.round_events(self.key)

    def acks(self) -> dict[int, Event]:
        """The members' closing acknowledgements we hold, by seat."""
        return round_side.acks(self)

    def agreed(self) -> bool:
        """True once every human seat signed the final head and state hash."""
        return round_side.agreed(self)

    def log(self) -> list[Event]:
        """The verified chain (what a sync answer holds; the log file holds more,
        ``log_events``)."""
        return list(self.state.chain)

    def conflict_evidence(self) -> list[Event]:
        """Signed events beside the chain that a log keeps as evidence (docs §9): at
        each contested position of the last ``MAX_REWIND`` the claim we did not keep
        (a forfeit or the forfeited seat's own event), and the acks and sync requests
        that decided it by the table of §8.  ``p2p replay`` weighs them the same way."""
        return round_conflicts.evidence(self)

    def disputes(self, now: int = 0) -> list[tuple[int, Event, Event]]:
        """``(position, kept, other)`` for each position disputed here: we keep one
        claim while the table or another member keeps the other (docs §8, R3)."""
        return round_conflicts.disputes(self)

    def log_events(self) -> list[Event]:
        """What our round log holds, in this order: the chain, the equivocation proof the
        round ended by (if so), the evidence beside the chain (``conflict_evidence``), and
        once the round is over the closing acks of its final head and state hash, by
        seat.  A pure function of the machine: the driver writes exactly this after
        every step, so the file replays (``p2p.protocol.replay``) to our head, phase and
        result -- except a local end (expired, abandoned: no chain event), which the log
        shows as the prefix it is.
        """
        found = list(self.state.chain)
        if self._verdict and self._proof is not None:
            found += self._proof
        found += self.conflict_evidence()
        st = self.state
        if st.phase in ENDED and self.local_end is None:
            digest = st.state_hash()
            for _, ack in sorted(self.acks().items()):
                if ack.prev == st.head.id and ack.body["state"] == digest:
                    found.append(ack)
        return found

    # -- incoming ------------------------------------------------------------------------

    def receive_bytes(self, payload: bytes, now: int) -> list[Effect]:
        """Parse and receive raw bytes from the broker."""
        try:
            event = events.parse(payload)
        except EventError as err:
            return [Dropped(None, "?", "payload", str(err))]
        return self.receive(event, now)

    def receive(self, event: Event, now: int) -> list[Effect]:
        """Handle one incoming, already parsed event; never raises."""
        self._clock = max(self._clock, now)
        try:
            return round_receive.receive(self, event, now)
        except Exception as err:  # noqa: BLE001 - a bug must not let a stranger crash a peer
            return [dropped(event, f"internal error: {type(err).__name__}: {err}")]

    def replayed(self, event: Event, now: int) -> str | None:
        """Why ``receive`` would drop ``event`` as one it has already taken, or ``None``.

        Pure, without side effects: the network edge asks it before charging the
        sender's budget.  Judged by position and id, not only by the bounded ``seen``
        memory, so that flushing that memory (4,096 ordinary events) lets no replay
        through: a chain event is a duplicate if its position holds that very id; a side
        event if the pool holds that very id for its (kind, sender) (one per member and
        round: a different id there is an equivocation, the same id never is); round
        chat is refused outside its signed ``ts`` window, or at or below the floor of a
        full memory (``ReplayGuard``); a sync request at or below the newest one we took
        from that member.
        """
        if event.round != self.state.round_id:
            return "event of another round"
        if event.id in self.seen:
            return "duplicate"
        if event.kind == "chat":  # the window in the sender's frame (clock offsets)
            return self._chat_seen.check(event.id, self.local_time(event.pk, event.ts), now)
        if event.kind == "sync_request":
            floor = self._sync_floor.get(event.pk)
            if floor is not None and (event.ts < floor[0] or event.id == floor[1]):
                return "older than this member's last sync request"
            return None
        chain = self.state.chain
        if event.seq is not None:
            if event.seq < len(chain) and chain[event.seq].id == event.id:
                return "duplicate"
            return None
        first = self.side.get((event.kind, event.pk))
        if first is not None and first.id == event.id:
            return "duplicate"
        return None

    def _receive_chain(self, event: Event, now: int) -> list[Effect]:
        """A chain event: cheap checks first, then apply (``round_receive.receive_chain``)."""
        return round_receive.receive_chain(self, event, now)

    def _remember(self, event: Event, effects: list[Effect]) -> None:
        round_receive.remember(self, event, effects)

    def _applied(
        self, event: Event, before: Phase, now: int, mover: int | None = None
    ) -> list[Effect]:
        return round_receive.applied(self, event, before, now, mover)

    def _orphan(self, ids: list[str]) -> None:
        round_receive.orphan(self, ids)

    def _park(self, event: Event, now: int | None = None) -> list[Effect]:
        return round_receive.park(self, event, now)
    side_accepted = 0
    """How many side events from others entered the pool so far (``round_side.receive_side``
    counts them; ``receive`` reacts when an event added one)."""

    rules = RULES_VERSION
    """The conflict table this machine judges by (docs §8.1).  Only the simulator sets
    2 (``python -m p2p.sim --rules 2``), to show the hole of the old table."""

    def local_time(self, pk: bytes, ts: int) -> int:
        """``pk``'s signed time ``ts`` on our clock: corrected by its estimated offset, at
        most by ``ROUND_TOLERANCE_MS`` (docs/protocol.md, "Time")."""
        if pk == self.me.public_key:
            return ts
        return self.clocks.local(pk, ts, ROUND_TOLERANCE_MS)

    @property
    def expires_here(self) -> int:
        """The invitation's ``expires`` (the admin's clock) on our clock."""
        return self.local_time(self.state.genesis.pk, self.state.expires)

    # -- timers (``p2p.protocol.round_timers``) ----------------------------------------

    def tick(
        self,
        now: int,
        offline: frozenset[bytes] = frozenset(),
        evidence: Mapping[bytes, tuple[Event, int]] | None = None,
    ) -> list[Effect]:
        """Local timers: invitation expiry, commit, reveal and turn timeouts (what
        ``offline`` and ``evidence`` mean: ``p2p.protocol.round_timers.tick``)."""
        return round_timers.tick(self, now, offline, evidence)

    def asks_for_acks(self, now: int) -> bool:
        """True while the round has ended here by its chain (or a proof), we hold a seat,
        a human seat's ack of the final head is missing, and the end is less than
        ``ACK_ASK_MS`` old: ``tick`` then asks the members for their acks."""
        return round_timers.asks_for_acks(self, now)

    def missing_seats(self, kind: str, seats: Iterable[int]) -> list[int]:
        """The ``seats`` whose ``kind`` side event we do not hold."""
        held = self.pooled_seats(kind)
        return [s for s in seats if s not in held]

    # -- acting on our own -------------------------------------------------------------

    def held(self, value: object) -> Event | None:
        """The pooled side event that an embedded envelope ``value`` claims to be (same
        kind and key), if we hold one; ``events.parse`` compares the bytes, so a sealed
        copy of it needs no second signature check."""
        if not isinstance(value, dict) or not isinstance(value.get("pk"), str):
            return None
        try:
            return self.side.get((value.get("kind"), bytes.fromhex(value["pk"])))  # type: ignore[arg-type]
        except ValueError:
            return None

    def pooled(self, kind: str) -> list[Event]:
        """Pooled side events of ``kind``, in seat order."""
        found = [e for (k, _), e in self.side.items() if k == kind]
        return sorted(
            found,
            key=lambda e: (
                self.state.seat_of(e.pk) is None,
                self.state.seat_of(e.pk) or 0,
            ),
        )

    def pooled_seats(self, kind: str) -> set[int | None]:
        return {self.state.seat_of(e.pk) for e in self.pooled(kind)}

    @property
    def acting(self) -> bool:
        """True unless another session of our key acts for us (``sessions``)."""
        return self.sessions is None or bool(self.sessions.acting)

    def check_acting(self) -> None:
        """A user action: refused (``other_session``) while another session acts."""
        if self.sessions is not None:
            self.sessions.check()

    def _append(self, kind: str, body: dict[str, Any], now: int) -> list[Effect]:
        """Sign a chain event at the head, apply it locally and publish it (nothing
        while another session of our key acts: it signs for the seat)."""
        if not self.acting:
            return []
        head = self.state.head
        event = events.make(
            self.me,
            kind,
            self._chain_ts(now),
            self._signed_body(body),
            round=self.state.round_id,
            seq=(head.seq or 0) + 1,
            prev=head.id,
        )
        effects = self._receive_chain(event, now)
        if not (effects and isinstance(effects[0], Applied)):
            return effects  # a bug of ours: surfaces as Dropped, nothing published
        published: list[Effect] = [Publish(self.route(), event)]
        if (
            kind == "cancel"
        ):  # invitees who have not subscribed yet learn it in their inbox
            for seat in self.state.seats:
                if seat.pk is not None and seat.pk != self.me.public_key:
                    published.append(
                        Publish(self.topics.inbox(peer_id(seat.pk)), event)
                    )
        return published + effects

    def _signed_body(self, body: dict[str, Any]) -> dict[str, Any]:
        """``body`` naming our session (``since``, as our presences name it), so that
        only a Will of this session is evidence against our seat (§6.6)."""
        since = getattr(self.sessions, "since", 0)
        return {**body, events.SINCE: since} if since else body

    def _chain_ts(self, now: int) -> int:
        """The ``ts`` of our next chain event: what our clock says now.

        Never back-dated (a restarted client that only now sees the head would otherwise
        date its move as if made in time and undo a forfeit, issue 16); never before the
        head either (a v2 chain rule): a clock behind the head clamps forward.  A head its
        signer dated back is answered by the receivers' own observation
        (``round_conflicts.moved_in_time_here``), not by dating our event back.
        """
        return max(now, self.state.head.ts)

    def _side_event(
        self, kind: str, body: dict[str, Any], now: int, prev: str | None = None
    ) -> list[Effect]:
        """Sign a side event, pool it locally and publish it (not while watching)."""
        if not self.acting:
            return []
        prev = self.state.head.id if prev is None else prev
        event = events.make(
            self.me, kind, now, self._signed_body(body), round=self.state.round_id, prev=prev
        )
        self.seen.add(event.id)
        self.side.setdefault((kind, self.me.public_key), event)
        return [Publish(self.route(), event)]

    def _react(self, now: int) -> list[Effect]:
        """Do whatever the protocol says we do now; repeat until nothing changes, at most
        ``REACT_STEPS`` times in one step (``duties_left``: ``tick`` goes on)."""
        effects: list[Effect] = []
        for _ in range(REACT_STEPS):
            effects += round_receive.drain_pending(self, now)
            step = self._react_once(now)
            if not step:
                self.duties_left = False
                break
            effects += step
        else:  # (a step that only failed -- a bug of ours, surfaced as Dropped -- is
            # not tried again on every tick)
            self.duties_left = any(isinstance(e, Publish) for e in step)
        return effects

    def _react_once(self, now: int) -> list[Effect]:
        return round_duties.react_once(self, now)

    def _close_commits(self, now: int) -> list[Effect]:
        """Seal the commitments; under the fair-draw rules a missing one cancels (§7)."""
        return round_duties.close_commits(self, now)

    def _draw(self, now: int) -> list[Effect]:
        """Seal the reveals; under the fair-draw rules a missing one cancels (§7)."""
        return round_duties.draw_starter(self, now)

    def _append_move(self, text: str, now: int) -> list[Effect]:
        return round_duties.append_move(self, text, now)

    # -- user actions (``p2p.protocol.round_actions``) ---------------------------------

    def accept(self, now: int) -> list[Effect]:
        """Accept the invitation to our seat."""
        return round_actions.accept(self, now)

    def decline(self, now: int) -> list[Effect]:
        """Decline the invitation (also what a busy peer answers automatically)."""
        return round_actions.decline(self, now)

    def join(self, nick: str, now: int) -> list[Effect]:
        """Ask for an open seat of a private round (needs the code)."""
        return round_actions.join(self, nick, now)

    def move(self, text: str, now: int) -> list[Effect]:
        """Play ``text`` for our seat; ``ActionError`` if it is not our turn or illegal."""
        return round_actions.move(self, text, now)

    def resign(self, now: int) -> list[Effect]:
        """Give up our seat (sealed by the owner of the next position)."""
        return round_actions.resign(self, now)

    def leave(self, now: int) -> list[Effect]:
        """Leave the round; in play this resigns the seat (and hands on the admin role)."""
        return round_actions.leave(self, now)

    def request_takeback(self, now: int) -> list[Effect]:
        """Ask the others to take back our last move (once per round; it must be the head)."""
        return round_actions.request_takeback(self, now)

    def takeback_request(self) -> Event | None:
        """Another member's pooled request to take back the last move, if any."""
        return round_actions.takeback_request(self)

    def decline_takeback(self, now: int) -> list[Effect]:
        """As the owner of the position: say no to the pending take-back at once (a signed
        ``takeback_decline``; it changes no state, docs/protocol.md §6.3)."""
        self.check_acting()
        return round_side.decline_takeback(self, now)

    def accept_takeback(self, now: int) -> list[Effect]:
        """As the owner of the position: agree to the pending take-back (a ``seal``)."""
        return round_actions.accept_takeback(self, now)

    def cancel(self, reason: str, now: int) -> list[Effect]:
        """The admin calls the round off before play."""
        return round_actions.cancel(self, reason, now)

    def chat(self, text: str, now: int) -> list[Effect]:
        """A round chat line from us."""
        return round_actions.chat(self, text, now)

    def request_sync(self, now: int, catch_up: bool = True) -> list[Effect]:
        """Ask the members for the chain from our head on, naming our head.

        ``catch_up``: we know we missed events (a reconnect, a restart, parked events):
        for ``CATCH_UP_MS`` the events we apply are not taken as seen live (our clock
        says nothing about when they were made).  ``False``: a periodic head exchange;
        members whose head is ours do not answer.
        """
        return round_actions.request_sync(self, now, catch_up)

    def _ask_sync(self, now: int, from_seq: int) -> list[Effect]:
        return round_actions.ask_sync(self, now, from_seq)
    def receive_all(self, items: Iterable[Event], now: int) -> list[Effect]:
        """Receive several events in the given order (e.g. a sync answer)."""
        effects: list[Effect] = []
        for event in items:
            effects += self.receive(event, now)
        return effects
