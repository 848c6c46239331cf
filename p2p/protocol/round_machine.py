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

The machine acts by itself where the protocol says so: members commit and reveal as soon
as the phase opens; the admin starts when every seat has accepted, closes the commit set
when every human seat's commitment is in and draws when every reveal is in (a seat still
missing at ``COMMIT_TIMEOUT_MS`` / ``REVEAL_TIMEOUT_MS`` cancels the round), cancels when an invitee declines or the invitation expires,
and plays the computer seats; the owner of the next position seals pending resignations;
the admin forfeits a human seat that has not moved for the turn timeout (the admin's
successor forfeits the admin's seat the same way).  Two events for one position are
settled by ``p2p.protocol.conflicts`` (``Rewound`` when our chain changes; a proven
equivocation ends the round); in play members exchange chain heads every
``HEAD_EXCHANGE_MS``; a round that never starts, or whose player to move and forfeiter
both vanished, ends here by ``_end_if_stuck``.
Computer moves are computed inside ``receive``/``tick`` (``p2p.ai.choose_move``); a slow
level blocks the caller for that long.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from p2p.games.base import CodedError, Game
from p2p.protocol import draw, events, round_conflicts, round_notices, round_side
from p2p.protocol.admission import WHY_UNKNOWN_NON_MEMBER, refusal
from p2p.protocol.chat import RateLimiter, clean_line
from p2p.protocol.clocks import ROUND_TOLERANCE_MS, ClockOffsets
from p2p.protocol.conflicts import (
    MAX_AHEAD_MS,
    MAX_PENDING,
    MAX_REWIND,
    MAX_VOUCHED,
    RULES_VERSION,
    SeenIds,
)
from p2p.protocol.effects import (
    CANCEL_EXPIRED,
    CANCEL_NO_COMMIT,
    CANCEL_NO_REVEAL,
    Applied,
    Dropped,
    Effect,
    Notice,
    Publish,
    Rewound,
    dropped,
)
from p2p.protocol.events import Event, EventError
from p2p.protocol.freshness import ReplayGuard
from p2p.protocol.identity import Identity, peer_id, sanitize_nickname
from p2p.protocol.round import (
    DEFAULT_TIMEOUTS,
    PRE_PLAY,
    ChainError,
    Phase,
    RoundError,
    RoundState,
    TurnTimeouts,
    evidence_error,
    seats_text,
    verify_chain,
)
from p2p.protocol.round_conflicts import WHY_AHEAD, WHY_EARLY
from p2p.protocol.round_side import (
    MAX_ROUND_CHAT_SEEN,
    MAX_SYNC_ANSWER,
    ROUND_CHAT_WINDOW_MS,
    SYNC_INTERVAL_MS,
)
from p2p.protocol.topics import Route, Topics, code_secret, join_proof, private_key

COMMIT_TIMEOUT_MS = 20_000
"""A commitment still missing this long after start: the admin cancels (v1: it closed the
set without it)."""
REVEAL_TIMEOUT_MS = 20_000
"""A reveal still missing this long after the commit set closed: the admin cancels (v1: it
drew without it)."""
INVITE_TTL_MS = 60_000
"""An invitation (genesis) expires this long after it was made."""
PRIVATE_TTL_MS = 600_000
"""A private round waits this long for people typing its join code (read aloud, passed on)."""
CATCH_UP_MS = 30_000
"""After our own sync request, events we apply for this long are not "seen live"."""
HEAD_EXCHANGE_MS = 15_000
"""In play, members name their chain head to each other this often (``tick``)."""
ACK_ASK_MS = 900_000
"""After the end, a member that lacks a human seat's ack of the final head asks the others
for their acks every ``HEAD_EXCHANGE_MS``, for at most this long (an ack lost while a
member was offline, or signed again after a rewind, is fetched; a seat that never
returns costs at most 60 small requests)."""
FORMING_GRACE_MS = 30_000
"""A round still forming this long after its ``expires`` ends for every member."""
START_DEADLINE_MS = 120_000
"""A round not in play this long after its ``expires`` ends for every member."""
MAX_ORPHANS = 4096
"""Ids of replaced chain events (and events built on them) remembered; oldest forgotten."""


_MAY_FIT_LATER = frozenset({WHY_UNKNOWN_NON_MEMBER})  # a joiner before its start


def _mover(state: RoundState, event: Event) -> int | None:
    """The seat that makes ``event`` if it is a move: the seat to move before it."""
    if event.kind != "move" or state.game is None:
        return None
    return state.game.to_move()


class ActionError(CodedError):
    """A user action that cannot be done now: a one-line reason (English) and, where a
    user interface wants to say it in its own language, a ``code`` with ``params``."""


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
    ) -> None:
        if len(nonce) != draw.NONCE_SIZE:
            raise ValueError("the draw nonce has 32 bytes")
        self.me = me
        self.state = RoundState.from_genesis(genesis, timeouts or DEFAULT_TIMEOUTS)
        self.timeouts = self.state.timeouts  # a slow round's genesis names its own (§6.7)
        self.topics = topics or Topics()
        self.code = code
        self._secret = code_secret(code) if code else None
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
        self._catch_up_until = now
        """Until then we catch up after our own sync request: no observation times."""
        self._last_head_sent = now
        self._last_asked = now - SYNC_INTERVAL_MS
        self._local_end = False
        self.sessions: Any = None
        """Our key's sessions (the driver shares its lobby's ``p2p.protocol.sessions``):
        while another session of our key acts, this machine signs nothing (no chain or
        side event: no move, ack, commit, forfeit ...), and user actions raise
        ``ActionError`` with code ``other_session``.  ``None``: we always act."""
        self._was_acting = True
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
        try:
            genesis = events.make(me, "genesis", now, body, round=round_id, seq=0)
            machine = cls(me, genesis, nonce, topics, code, now, timeouts)
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
        machine = cls(me, chain[0], nonce, topics, code, now, timeouts)
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
            machine._proof = proof
            machine._snapshots.clear()
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

    # -- queries -------------------------------------------------------------------------

    @property
    def phase(self) -> Phase:
        return self.state.phase

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
        says so, so its log shows the prefix it is (``_end_here``)."""
        return self._local_end

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
        if st.phase in (Phase.OVER, Phase.CANCELLED) and not self._local_end:
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
            return self._receive(event, now)
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

    def _receive(self, event: Event, now: int) -> list[Effect]:
        signs: list[Effect] = []
        if event.kind == "sync_request":
            refused = refusal(self.state, event.pk, event.kind)
            if refused:
                return [dropped(event, refused)]  # no memory for strangers
            if (
                event.pk != self.me.public_key
                and event.prev is not None
                and event.round == self.state.round_id
                and round_conflicts.add_sign(self, event)  # a sign, even if old (§8)
                and self._pairs
            ):
                signs = round_conflicts.rejudge(self, now)
                if any(isinstance(e, Applied) for e in signs):
                    signs += self._react(now)
        why = self.replayed(event, now)
        if why:
            return signs + [dropped(event, why)]
        if event.kind == "chat":
            return round_side.receive_chat(self, event, now)
        if event.kind == "sync_request":
            self._sync_floor[event.pk] = (event.ts, event.id)  # members only: bounded
            if event.pk != self.me.public_key and event.prev is not None:
                self._vouched.add(event.prev)  # it names its head: it holds that event
            return signs + round_side.answer_sync(self, event, now)
        effects: list[Effect] = []
        if event.seq is not None and self._local_end:
            if not self._goes_on(event):
                return [dropped(event, f"the round has ended here ({self.state.end_reason})")]
            effects.append(Notice("the round we took as abandoned goes on", "goes_on"))
        self._accepted_side = False
        if event.seq is not None:
            effects += self._receive_chain(event, now)
        else:
            if event.kind == "ack" and self.state.is_member(event.pk):
                round_conflicts.add_sign(self, event)  # also an ack of another end
            effects += round_side.receive_side(self, event, now)
        if self._pairs and not any(isinstance(e, Rewound) for e in effects):
            effects += round_conflicts.rejudge(self, now)
        self._remember(event, effects)
        if any(isinstance(e, Applied) for e in effects) or self._accepted_side:
            effects += self._react(now)
        return effects

    def _remember(self, event: Event, effects: list[Effect]) -> None:
        """Each event id is processed once: remember it unless it waits or may fit later."""
        if event.id in self.pending or event.id in self._clock_wait:
            return
        if any(
            isinstance(e, Dropped) and e.reason in _MAY_FIT_LATER for e in effects
        ):
            return
        self.seen.add(event.id)

    _accepted_side = False
    """Set when a side event entered the pool (so ``receive`` knows to react)."""

    rules = RULES_VERSION
    """The conflict table this machine judges by (docs §8.1).  Only the simulator sets
    2 (``python -m p2p.sim --rules 2``), to show the hole of the old table."""

    def _receive_chain(self, event: Event, now: int) -> list[Effect]:
        """A chain event: cheap checks first (position, member, clock), then apply."""
        st = self.state
        chain = st.chain
        seq = event.seq
        assert seq is not None
        if seq < len(chain) and chain[seq].id == event.id:
            return [dropped(event, "duplicate")]
        if event.prev in self._orphans and self._pairs:
            return self._park(event, now)  # built on a claim we did not keep: a sign (§8.1)
        why = refusal(st, event.pk, event.kind, seq)
        if why and seq <= len(chain):
            return [dropped(event, why)]
        if st.version >= 2 and self._dated_ahead(event, now):
            return round_conflicts.wait_for_clock(self, event, WHY_AHEAD, now)
        if seq < len(chain):
            return round_conflicts.contest(self, event, now)
        if event.prev == st.head.id and seq != len(chain):
            return [dropped(event, f"position {seq} does not follow its prev")]
        if seq > len(chain) or event.prev != st.head.id:
            return self._park(event, now)
        if (  # the signed rules hold (else apply says why): what does our clock say?
            event.kind == "forfeit"
            and round_conflicts.forfeit_fits(self, event)
            and round_conflicts.forfeit_too_soon(self, event, now)
        ):
            return round_conflicts.wait_for_clock(self, event, WHY_EARLY, now)
        before = st.phase
        snapshot = st.snapshot()
        mover = _mover(st, event)
        try:
            st.apply(event, self._advanced if event.pk == self.me.public_key else None)
            self._advanced = None
        except RoundError as err:
            return [dropped(event, str(err)), *round_notices.draw_dispute(self, event)]
        round_conflicts.keep_snapshot(self, seq, snapshot)
        return self._applied(event, before, now, mover)

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

    def _dated_ahead(self, event: Event, now: int) -> bool:
        """A chain event dated more than ``MAX_AHEAD_MS`` ahead of every clock that could
        explain its ``ts``: ours, its signer's (estimated offset), and the chain's (its
        ``prev``'s ``ts`` plus the time since we saw ``prev``; a chain event is never
        dated before its ``prev``, so a signer whose clock is behind signs the head's).

        A local decision (the event waits, ``tick`` retries it): never a chain rule, so
        replay needs no clock.
        """
        limit = now + MAX_AHEAD_MS
        if event.ts <= limit or self.local_time(event.pk, event.ts) <= limit:
            return False
        chain = self.state.chain
        seq = event.seq or 0
        if 0 < seq <= len(chain) and chain[seq - 1].id == event.prev:
            prev = chain[seq - 1]
            seen = self._observed_at.get(prev.id, self._applied_at.get(prev.id, now))
            return event.ts > prev.ts + max(0, now - seen) + MAX_AHEAD_MS
        return True

    def _applied(
        self, event: Event, before: Phase, now: int, mover: int | None = None
    ) -> list[Effect]:
        """Bookkeeping and notices once ``event`` is the new head."""
        self.seen.add(event.id)
        self._applied_at[event.id] = now
        if now >= self._catch_up_until:
            self._observed_at[event.id] = now
        for (
            inner
        ) in event.sealed():  # late copies are duplicates; the sealed one counts
            self.seen.add(inner.id)
            self.side[(inner.kind, inner.pk)] = inner
        effects: list[Effect] = [Applied(event, mover)]
        if event.kind == "forfeit":
            effects += round_notices.forfeit_notices(self, event, now)
        if self.state.phase is not before:
            self.phase_since = now
            effects += round_notices.phase_notices(self, before)
            if self.state.phase in (Phase.OVER, Phase.CANCELLED):
                effects += round_side.acknowledge(self, now)
        return effects

    def _orphan(self, ids: list[str]) -> None:
        """Forget a losing branch: these ids and every parked event built on them."""
        self._orphans.update(ids)
        self.seen.update(ids)
        found = True
        while found:
            found = False
            for eid, parked in list(self.pending.items()):
                if parked.prev in self._orphans:
                    del self.pending[eid]
                    self._orphans.add(eid)
                    self.seen.add(eid)
                    found = True

    def _park(self, event: Event, now: int | None = None) -> list[Effect]:
        if event.prev in self._orphans and self._pairs and now is not None:
            # built on a claim we did not keep: a member's sign of the head it holds,
            # which the table weighs (§8); it may make us switch to that claim
            if refusal(self.state, event.pk, event.kind, event.seq, known=False):
                return [dropped(event, "answers an event a forfeit replaced")]
            round_conflicts.add_sign(self, event)
            self.pending[event.id] = event  # a sign while it waits (signs(): pending)
            effects = round_conflicts.rejudge(self, now)
            if any(isinstance(e, Rewound) for e in effects):
                self._orphans.discard(event.id)
                self.seen.discard(event.id)
                if len(self.pending) > MAX_PENDING:
                    self.pending.pop(next(iter(self.pending)))
                return effects
            self.pending.pop(event.id, None)
            self._orphans.add(event.id)
            self.seen.add(event.id)
            return effects + [dropped(event, "answers an event a forfeit replaced")]
        if event.prev in self._orphans:
            self._orphans.add(event.id)
            self.seen.add(event.id)
            return [dropped(event, "answers an event a forfeit replaced")]
        why = refusal(self.state, event.pk, event.kind, event.seq, known=False)
        if why:
            return [dropped(event, why)]
        if event.id not in self.pending:
            if len(self.pending) >= MAX_PENDING:
                self.pending.pop(next(iter(self.pending)))
            self.pending[event.id] = event
        return []

    def _drain_pending(self, now: int) -> list[Effect]:
        effects: list[Effect] = []
        progress = True
        while progress and self.pending:
            progress = False
            known = {e.id for e in self.state.chain}
            head = self.state.head
            for eid, event in list(self.pending.items()):
                if event.seq is None:
                    ready = event.prev in known
                else:
                    ready = event.prev == head.id and event.seq == len(self.state.chain)
                if ready:
                    del self.pending[eid]
                    if event.seq is None:
                        step = round_side.receive_side(self, event, now)
                    else:
                        step = self._receive_chain(event, now)
                    self._remember(event, step)
                    effects += step
                    progress = (
                        eid not in self.pending
                    )  # never loop on an event parked again
                    break
        return effects

    # -- timers ----------------------------------------------------------------------

    def tick(
        self,
        now: int,
        offline: frozenset[bytes] = frozenset(),
        evidence: Mapping[bytes, tuple[Event, int]] | None = None,
    ) -> list[Effect]:
        """Local timers: invitation expiry, commit, reveal and turn timeouts.

        ``offline``: the members whose lobby presence we see offline (notices, and the
        abandoned-round rule).  ``evidence``: per member, its own signed offline presence
        (Last Will or goodbye) that took it out of our lobby unrevoked, and when it
        arrived (our clock): once it has stood ``TurnTimeouts.offline_ms`` we may forfeit
        the seat as ``offline`` with it; silence alone never shortens a turn.
        """
        st = self.state
        self._clock = max(self._clock, now)
        self.offline = frozenset(offline)
        self.evidence = dict(evidence or {})
        effects: list[Effect] = round_conflicts.retry_clock_waits(self, now)
        effects += round_conflicts.rejudge(self, now)
        was, self._was_acting = self._was_acting, self.acting
        if any(isinstance(e, Applied) for e in effects) or (self._was_acting and not was):
            effects += self._react(now)  # (acting again: what is due is ours to do)
        st = self.state  # a conflict may have replaced it
        if self._local_end:
            return effects
        if st.phase in (Phase.OVER, Phase.CANCELLED):
            return effects + self._ask_for_acks(now)
        ended = self._end_if_stuck(now)
        if ended:
            return effects + ended
        if st.phase is Phase.PLAY and now - self._last_head_sent >= HEAD_EXCHANGE_MS:
            self._last_head_sent = now
            effects += self.request_sync(now, catch_up=False)
        elif (  # a full (capped) sync answer came in: ask for the rest
            len(st.chain) - self._asked_len >= MAX_SYNC_ANSWER
            and now - self._last_asked >= SYNC_INTERVAL_MS
        ):
            effects += self.request_sync(now)
        forfeit = self._due_forfeit(now)
        if forfeit is not None:
            return effects + self._append("forfeit", forfeit, now) + self._react(now)
        if st.phase is Phase.FORMING and now >= self.expires_here:
            if self.is_admin:
                return self._append("cancel", {"reason": CANCEL_EXPIRED}, now)
            if not self.expired:
                self.expired = True
                effects.append(Notice("the invitation expired", "expired"))
        if not self.is_admin:
            waited = now - self.phase_since
            limit = 3 * (
                COMMIT_TIMEOUT_MS if st.phase is Phase.COMMIT else REVEAL_TIMEOUT_MS
            )
            if (
                st.phase in (Phase.COMMIT, Phase.REVEAL)
                and waited >= limit
                and not self.expired
            ):
                self.expired = (
                    True  # told once; the round still goes on if the admin returns
                )
                effects.append(
                    Notice("the admin has not closed the draw for a long time", "draw_stalled")
                )
            return effects
        waited = now - self.phase_since
        if (
            st.phase is Phase.COMMIT
            and waited >= COMMIT_TIMEOUT_MS
            and self.my_seat in self._pooled_seats("commit")
        ):
            effects += self._close_commits(now)
        elif (
            st.phase is Phase.REVEAL
            and waited >= REVEAL_TIMEOUT_MS
            and self.my_seat in self._pooled_seats("reveal")
        ):
            effects += self._draw(now)
        return effects

    def asks_for_acks(self, now: int) -> bool:
        """True while the round has ended here by its chain (or a proof), we hold a seat,
        a human seat's ack of the final head is missing, and the end is less than
        ``ACK_ASK_MS`` old: ``tick`` then asks the members for their acks."""
        return (
            self.state.phase in (Phase.OVER, Phase.CANCELLED)
            and not self._local_end
            and self.my_seat is not None
            and not round_side.agreed(self)
            and now - self.phase_since < ACK_ASK_MS
        )

    def _ask_for_acks(self, now: int) -> list[Effect]:
        """A sync request naming our final head, at most every ``HEAD_EXCHANGE_MS``,
        while an ack is missing; members that hold this head answer with their acks."""
        if not self.asks_for_acks(now) or now - self._last_head_sent < HEAD_EXCHANGE_MS:
            return []
        self._last_head_sent = now
        return self.request_sync(now, catch_up=False)

    def _missing(self, kind: str, seats: Iterable[int]) -> list[int]:
        """The ``seats`` whose ``kind`` side event we do not hold."""
        held = self._pooled_seats(kind)
        return [s for s in seats if s not in held]

    def _end_if_stuck(self, now: int) -> list[Effect]:
        """End the round here by a fixed local rule when nobody can move it on any more.

        * Not in play ``FORMING_GRACE_MS`` after ``expires`` (still forming) or
          ``START_DEADLINE_MS`` after it (the draw never finished): the round expired.
        * In play, the key that must act (the owner of the position) and the key that may
          forfeit it are both offline in our lobby view (or nobody may forfeit), for
          twice the offline timeout: the round is abandoned.
        Nobody wins; every member applies the same rule with its own clock.
        """
        st = self.state
        expires = self.expires_here  # the admin's clock, judged in its frame
        if st.phase is Phase.FORMING and now >= expires + FORMING_GRACE_MS:
            return self._end_here("expired: the round did not start in time", now)
        if st.phase in (Phase.COMMIT, Phase.REVEAL) and now >= expires + START_DEADLINE_MS:
            return self._end_here("expired: the draw did not finish in time", now)
        if st.phase is not Phase.PLAY:
            return []
        owner = st.owner()
        target = st.forfeit_target()
        mine = self.me.public_key
        if owner is None or owner == mine or target is not None and target[1] == mine:
            return []
        if owner not in self.offline or target is not None and target[1] not in self.offline:
            return []
        since = max(self._applied_at.get(st.head.id, st.head.ts), st.head.ts)
        if now - since < 2 * self.timeouts.offline_ms:
            return []
        return self._end_here(
            "abandoned: the player to move and whoever may forfeit it are gone", now
        )

    def _end_here(self, reason: str, now: int) -> list[Effect]:
        """A local end (no chain event): the round is over for us, nobody wins."""
        self.state.phase = Phase.CANCELLED
        self.state.end_reason = reason
        self._local_end = True
        self.phase_since = now
        code = reason.split(":")[0]  # expired / abandoned
        return [Notice(f"the round ended here: {reason}", "cancelled", {"reason": code})]

    def _goes_on(self, event: Event) -> bool:
        """A round we ended here as *abandoned* moves on after all: ``event`` is a valid
        next chain event (its forfeiter came back and signed).  The local end is lifted
        (True; ``_receive_chain`` applies it), as every member that waited longer
        applies it: a local end never outlives the chain it was a guess about (§15.6)."""
        st = self.state
        if (
            not st.end_reason.startswith("abandoned")
            or event.seq != len(st.chain)
            or event.prev != st.head.id
        ):
            return False
        trial = st.snapshot()
        trial.phase, trial.end_reason = Phase.PLAY, ""
        try:
            trial.apply(event)
        except RoundError:
            return False
        st.phase, st.end_reason = Phase.PLAY, ""
        self._local_end = False
        return True

    def _due_forfeit(self, now: int) -> dict[str, Any] | None:
        """The body of the forfeit we may sign now, or ``None``.

        Due once both our clock since we saw the head and the signed ``ts`` gap from the
        head reach the timeout (so our event satisfies the chain rule).
        """
        target = self.state.forfeit_target()
        if target is None or target[1] != self.me.public_key:
            return None
        seat = target[0]
        pk = self.state.seats[seat].pk
        head = self.state.head
        since = max(self._observed_at.get(head.id, head.ts), head.ts)
        start = round_conflicts.turn_start(self, len(self.state.chain))
        if start is not None:  # R5: a rival beat a forfeit at the head
            since = max(since, start)
        held = self.evidence.get(pk)  # type: ignore[arg-type]
        limit = self.timeouts.offline_ms
        if (
            held is not None
            and now - held[1] >= limit  # it stood the whole grace period here
            and evidence_error(self.state, seat, held[0], self._chain_ts(now)) is None
            and now - since >= limit
        ):
            return {"seat": seat, "reason": "offline", "evidence": held[0].value()}
        if now - since < self.timeouts.silent_ms:
            return None
        return {"seat": seat, "reason": "silent"}

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

    def _pooled(self, kind: str) -> list[Event]:
        """Pooled side events of ``kind``, in seat order."""
        found = [e for (k, _), e in self.side.items() if k == kind]
        return sorted(
            found,
            key=lambda e: (
                self.state.seat_of(e.pk) is None,
                self.state.seat_of(e.pk) or 0,
            ),
        )

    def _pooled_seats(self, kind: str) -> set[int | None]:
        return {self.state.seat_of(e.pk) for e in self._pooled(kind)}

    @property
    def acting(self) -> bool:
        """True unless another session of our key acts for us (``sessions``)."""
        return self.sessions is None or bool(self.sessions.acting)

    def _check_acting(self) -> None:
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
        """Do whatever the protocol says we do now; repeat until nothing changes."""
        effects: list[Effect] = []
        for _ in range(64):
            effects += self._drain_pending(now)
            step = self._react_once(now)
            if not step:
                break
            effects += step
        self._accepted_side = False
        return effects

    def _react_once(self, now: int) -> list[Effect]:
        st = self.state
        mine = self.me.public_key
        seat = self.my_seat
        if st.phase in PRE_PLAY and self.is_admin:
            gone = self._pooled("leave") + self._pooled("resign")
            if gone:
                return self._append(
                    "cancel", {"reason": f"seat {st.seat_of(gone[0].pk)} left"}, now
                )
        if st.phase is Phase.FORMING and self.is_admin:
            declined = self._pooled("decline")
            if declined:
                return self._append(
                    "cancel",
                    {"reason": f"seat {st.seat_of(declined[0].pk)} declined"},
                    now,
                )
            return self._try_start(now)
        if st.phase is Phase.COMMIT:
            if seat is not None and ("commit", mine) not in self.side:
                commit = draw.commitment(st.round_id, mine, self.nonce)
                return self._side_event(
                    "commit", {"commit": commit}, now, prev=st.chain[1].id
                )
            if self.is_admin and self._pooled_seats("commit") >= set(st.human_seats()):
                return self._close_commits(now)
        if st.phase is Phase.REVEAL:
            if (
                seat in st.commits
                and ("reveal", mine) not in self.side
                # a commitment another session of our key made is not ours to reveal
                and st.commits[seat] == draw.commitment(st.round_id, mine, self.nonce)
            ):
                return self._side_event(
                    "reveal", {"nonce": self.nonce.hex()}, now, prev=st.head.id
                )
            if self.is_admin and self._pooled_seats("reveal") >= set(st.commits):
                return self._draw(now)
        if st.phase is Phase.PLAY and st.owner() == mine:
            to_seal = [
                e
                for (k, _), e in self.side.items()
                if k == "resign"
                and st.seat_of(e.pk) not in st.resigned
                or k == "leave"
                and st.seat_of(e.pk) not in st.left
            ]
            if to_seal:
                return self._append(
                    "seal", {"sealed": [e.value() for e in to_seal]}, now
                )
            assert st.game is not None
            to_move = st.game.to_move()
            if to_move is not None and st.seats[to_move].is_computer:
                text = st.computer_move()
                return self._append_move(text, now)
        return []

    def _try_start(self, now: int) -> list[Effect]:
        st = self.state
        sealed: list[Event] = []
        for s in st.seats:
            if s.is_computer or s.pk == self.me.public_key or s.pk is None:
                continue
            accept = self.side.get(("accept", s.pk))
            if accept is None:
                return []
            sealed.append(accept)
        open_count = sum(1 for s in st.seats if s.pk is None and not s.is_computer)
        if open_count:
            joins = [
                e for (k, _), e in self.side.items() if k == "join"
            ]  # arrival order
            if len(joins) < open_count:
                return []
            sealed += joins[:open_count]
        return self._append("start", {"sealed": [e.value() for e in sealed]}, now)

    def _close_commits(self, now: int) -> list[Effect]:
        """Seal the commitments; under the fair-draw rules a missing one cancels (§7)."""
        missing = self._missing("commit", self.state.human_seats())
        if missing and self.state.fair_draw:
            reason = f"{seats_text(missing)} {CANCEL_NO_COMMIT}"
            return self._append("cancel", {"reason": reason}, now)
        commits = self._pooled("commit")
        return self._append(
            "commit_close", {"sealed": [e.value() for e in commits]}, now
        )

    def _draw(self, now: int) -> list[Effect]:
        """Seal the reveals; under the fair-draw rules a missing one cancels (§7)."""
        st = self.state
        missing = self._missing("reveal", sorted(st.commits))
        if missing and st.fair_draw:
            reason = f"{seats_text(missing)} {CANCEL_NO_REVEAL}"
            return self._append("cancel", {"reason": reason}, now)
        reveals = [e for e in self._pooled("reveal") if st.seat_of(e.pk) in st.commits]
        by_seat = {st.seat_of(e.pk): bytes.fromhex(e.body["nonce"]) for e in reveals}
        seed, starter = st.draw_result(by_seat)  # type: ignore[arg-type]
        body = {
            "sealed": [e.value() for e in reveals],
            "seed": seed.hex(),
            "starter": starter,
        }
        return self._append("draw", body, now)

    def _append_move(self, text: str, now: int) -> list[Effect]:
        st = self.state
        assert st.game is not None
        trial = st.game.copy()
        trial.push(text)
        digest = trial.state_hash()
        self._advanced = (trial, digest)  # applied as it is: not played and hashed twice
        try:
            return self._append("move", {"ply": st.ply, "move": text, "state": digest}, now)
        finally:
            self._advanced = None

    # -- user actions -----------------------------------------------------------------

    def accept(self, now: int) -> list[Effect]:
        """Accept the invitation to our seat."""
        self._check_acting()
        seat = self.my_seat
        if self.state.phase is not Phase.FORMING or seat is None or self.expired:
            raise ActionError("there is no open invitation to accept", "no_invitation")
        return self._side_event(
            "accept", {"seat": seat}, now, prev=self.state.genesis.id
        )

    def decline(self, now: int) -> list[Effect]:
        """Decline the invitation (also what a busy peer answers automatically)."""
        self._check_acting()
        seat = self.my_seat
        if self.state.phase is not Phase.FORMING or seat is None:
            raise ActionError("there is no open invitation to decline", "no_invitation")
        return self._side_event(
            "decline", {"seat": seat}, now, prev=self.state.genesis.id
        )

    def join(self, nick: str, now: int) -> list[Effect]:
        """Ask for an open seat of a private round (needs the code)."""
        self._check_acting()
        if not self.state.private or self.code is None:
            raise ActionError("only a private round can be joined with its code")
        if self.state.phase is not Phase.FORMING:
            raise ActionError("the round has already started", "code_closed")
        body = {
            "nick": sanitize_nickname(nick) or "?",
            "proof": join_proof(
                self.code, self.state.round_id, self.me.public_key, self._secret
            ),
        }
        return self._side_event("join", body, now, prev=self.state.genesis.id)

    def move(self, text: str, now: int) -> list[Effect]:
        """Play ``text`` for our seat; ``ActionError`` if it is not our turn or illegal."""
        self._check_acting()
        st = self.state
        if st.phase is not Phase.PLAY or st.game is None:
            raise ActionError("the round is not in play", "not_in_play")
        if (
            st.owner() != self.me.public_key
            or st.seats[st.game.to_move() or 0].is_computer
        ):
            raise ActionError("it is not your turn", "not_your_turn")
        from p2p.games import MoveError

        try:
            text = st.game.normalize(text)
            if text not in st.game.legal_moves():
                st.game.copy().push(text)  # the engine says why, with its code
                raise ActionError(f"{text} is not a legal move here")
            effects = self._append_move(text, now)
        except MoveError as err:  # the engine's code and params go up unchanged
            raise ActionError(str(err), err.code, **err.params) from None
        return effects + self._react(now)

    def resign(self, now: int) -> list[Effect]:
        """Give up our seat (sealed by the owner of the next position)."""
        return self._give_up("resign", now)

    def leave(self, now: int) -> list[Effect]:
        """Leave the round; in play this resigns the seat (and hands on the admin role)."""
        if self.state.phase in PRE_PLAY:
            if self.is_admin:
                return self.cancel("the admin left", now)
            if (
                self.state.phase is Phase.FORMING
                and ("accept", self.me.public_key) not in self.side
            ):
                return self.decline(now)
        return self._give_up("leave", now)

    def _give_up(self, kind: str, now: int) -> list[Effect]:
        self._check_acting()
        st = self.state
        if self.my_seat is None:
            raise ActionError("you hold no seat in this round", "no_seat_here")
        if st.phase in (Phase.OVER, Phase.CANCELLED):
            raise ActionError(f"the round is already {st.phase.value}")
        if (kind, self.me.public_key) in self.side:
            raise ActionError(f"you already sent {kind}")
        return self._side_event(kind, {}, now) + self._react(now)

    def request_takeback(self, now: int) -> list[Effect]:
        """Ask the others to take back our last move (once per round; it must be the head)."""
        self._check_acting()
        st = self.state
        head = st.head
        seat = self.my_seat
        if st.phase is not Phase.PLAY or st.game is None or seat is None or head.kind != "move" \
                or head.pk != self.me.public_key:
            raise ActionError("only your own last move can be taken back, before it is answered")
        trial = st.game.copy()
        trial.pop()
        if trial.to_move() != seat:
            raise ActionError("only your own last move can be taken back, before it is answered")
        if ("takeback", self.me.public_key) in self.side:
            raise ActionError("you have already asked for a take-back in this round")
        return self._side_event("takeback", {"ply": head.body["ply"]}, now)

    def takeback_request(self) -> Event | None:
        """Another member's pooled request to take back the last move, if any."""
        head = self.state.head
        for (kind, pk), event in self.side.items():
            if kind == "takeback" and pk != self.me.public_key and event.prev == head.id:
                return event
        return None

    def accept_takeback(self, now: int) -> list[Effect]:
        """As the owner of the position: agree to the pending take-back (a ``seal``)."""
        self._check_acting()
        request = self.takeback_request()
        if request is None:
            raise ActionError("nobody asks to take back the last move")
        if self.state.owner() != self.me.public_key:
            raise ActionError("only the player to move can agree to a take-back")
        return self._append("seal", {"sealed": [request.value()]}, now) + self._react(now)

    def cancel(self, reason: str, now: int) -> list[Effect]:
        """The admin calls the round off before play."""
        self._check_acting()
        if not self.is_admin:
            raise ActionError("only the admin can cancel the round", "only_admin")
        if self.state.phase not in PRE_PLAY:
            raise ActionError("a round in play cannot be cancelled; resign instead", "cancel_in_play")
        return self._append(
            "cancel", {"reason": clean_line(reason)[:80] or "cancelled"}, now
        )

    def chat(self, text: str, now: int) -> list[Effect]:
        """A round chat line from us."""
        line = clean_line(text)
        if not line:
            raise ActionError("an empty chat line", "empty_chat")
        event = events.make(
            self.me, "chat", now, {"text": line}, round=self.state.round_id
        )
        self._chat_seen.add(event.id, event.ts, now)  # our own echo is a duplicate
        return [Publish(self.topics.round_chat(self.key), event)]

    def request_sync(self, now: int, catch_up: bool = True) -> list[Effect]:
        """Ask the members for the chain from our head on, naming our head.

        ``catch_up``: we know we missed events (a reconnect, a restart, parked events):
        for ``CATCH_UP_MS`` the events we apply are not taken as seen live (our clock
        says nothing about when they were made).  ``False``: a periodic head exchange;
        members whose head is ours do not answer.
        """
        if catch_up:
            self._catch_up_until = now + CATCH_UP_MS
        return self._ask_sync(now, len(self.state.chain))

    def _ask_sync(self, now: int, from_seq: int) -> list[Effect]:
        self._last_asked = now
        self._asked_len = len(self.state.chain)
        head = self.state.chain[min(from_seq, len(self.state.chain)) - 1]
        body = {"from_seq": head.seq + 1}  # type: ignore[operator]
        event = events.make(
            self.me, "sync_request", now, body, round=self.state.round_id, prev=head.id
        )
        # not into ``seen``: sync requests must not flush the memory of chain events
        self._sync_floor[self.me.public_key] = (event.ts, event.id)
        round_conflicts.add_sign(self, event)  # our own sign of the head we hold
        return [Publish(self.topics.round_sync(self.key), event)]

    def receive_all(self, items: Iterable[Event], now: int) -> list[Effect]:
        """Receive several events in the given order (e.g. a sync answer)."""
        effects: list[Effect] = []
        for event in items:
            effects += self.receive(event, now)
        return effects
