"""The round machine's incoming chain and side events: the checks in order, applying
a chain event at the head, parking events that do not fit yet, and draining the parked
ones once they do.  Plain functions of the machine's ``ReceiveHost`` (``p2p.protocol.round_hosts``:
what of ``RoundMachine`` they may touch);
pure."""

from __future__ import annotations

from p2p.protocol import round_conflicts, round_notices, round_side
from p2p.protocol.admission import WHY_UNKNOWN_NON_MEMBER, out_of_phase, refusal
from p2p.protocol.conflicts import MAX_AHEAD_MS, MAX_PENDING
from p2p.protocol.effects import (
    Applied,
    Dropped,
    Effect,
    Notice,
    Rewound,
    dropped,
)
from p2p.protocol.events import Event
from p2p.protocol.outcome import LOCAL_ENDS, RoundEnd
from p2p.protocol.phases import ENDED
from p2p.protocol.round import (
    Phase,
    RoundError,
    RoundState,
)
from p2p.protocol.round_conflicts import WHY_AHEAD, WHY_EARLY
from p2p.protocol.round_hosts import ReceiveHost
from p2p.protocol.round_timers import FORMING_GRACE_MS, START_DEADLINE_MS

_MAY_FIT_LATER = frozenset({WHY_UNKNOWN_NON_MEMBER})  # a joiner before its start


def _mover(state: RoundState, event: Event) -> int | None:
    """The seat that makes ``event`` if it is a move: the seat to move before it."""
    if event.kind != "move" or state.game is None:
        return None
    return state.game.to_move()


def receive(m: ReceiveHost, event: Event, now: int) -> list[Effect]:
    signs: list[Effect] = []
    if event.kind == "sync_request":
        refused = refusal(m.state, event.pk, event.kind)
        if refused:
            return [dropped(event, refused)]  # no memory for strangers
        if (
            event.pk != m.me.public_key
            and event.prev is not None
            and event.round == m.state.round_id
            and round_conflicts.add_sign(m, event)  # a sign, even if old (§8)
            and m._pairs
        ):
            signs = round_conflicts.rejudge(m, now)
            if any(isinstance(e, Applied) for e in signs):
                signs += m._react(now)
    why = m.replayed(event, now)
    if why:
        return signs + [dropped(event, why)]
    if event.kind == "chat":
        return round_side.receive_chat(m, event, now)
    if event.kind == "sync_request":
        m._sync_floor[event.pk] = (event.ts, event.id)  # members only: bounded
        if event.pk != m.me.public_key and event.prev is not None:
            m._vouched.add(event.prev)  # it names its head: it holds that event
        return signs + round_side.answer_sync(m, event, now)
    effects: list[Effect] = []
    if event.seq is not None and m.local_end is not None:
        lifted = m.local_end.kind
        if not goes_on(m, event):
            return [dropped(event, f"the round has ended here ({m.local_end.reason})")]
        if lifted is RoundEnd.ABANDONED:
            effects.append(Notice("the round we took as abandoned goes on", "goes_on"))
    accepted_before = m.side_accepted
    if event.seq is not None:
        effects += receive_chain(m, event, now)
    else:
        if event.kind == "ack" and m.state.is_member(event.pk):
            round_conflicts.add_sign(m, event)  # also an ack of another end
        effects += round_side.receive_side(m, event, now)
    if m._pairs and not any(isinstance(e, Rewound) for e in effects):
        effects += round_conflicts.rejudge(m, now)
    remember(m, event, effects)
    if any(isinstance(e, Applied) for e in effects) or m.side_accepted != accepted_before:
        effects += m._react(now)
    return effects



def remember(m: ReceiveHost, event: Event, effects: list[Effect]) -> None:
    """Each event id is processed once: remember it unless it waits or may fit later."""
    if event.id in m.pending or event.id in m._clock_wait:
        return
    if any(
        isinstance(e, Dropped) and e.reason in _MAY_FIT_LATER for e in effects
    ):
        return
    m.seen.add(event.id)



def receive_chain(m: ReceiveHost, event: Event, now: int) -> list[Effect]:
    """A chain event: cheap checks first (position, member, clock), then apply."""
    st = m.state
    chain = st.chain
    seq = event.seq
    assert seq is not None
    if seq < len(chain) and chain[seq].id == event.id:
        return [dropped(event, "duplicate")]
    if event.prev in m._orphans and m._pairs:
        return park(m, event, now)  # built on a claim we did not keep: a sign (§8.1)
    why = refusal(st, event.pk, event.kind, seq)
    if why and seq <= len(chain):
        return [dropped(event, why)]
    if st.version >= 2 and dated_ahead(m, event, now):
        return round_conflicts.wait_for_clock(m, event, WHY_AHEAD, now)
    if seq < len(chain):
        return round_conflicts.contest(m, event, now)
    if event.prev == st.head.id and seq != len(chain):
        return [dropped(event, f"position {seq} does not follow its prev")]
    if seq > len(chain) or event.prev != st.head.id:
        return park(m, event, now)
    if (  # the signed rules hold (else apply says why): what does our clock say?
        event.kind == "forfeit"
        and round_conflicts.forfeit_fits(m, event)
        and round_conflicts.forfeit_too_soon(m, event, now)
    ):
        return round_conflicts.wait_for_clock(m, event, WHY_EARLY, now)
    why = out_of_phase(st, event.kind)  # the transition table, as the chain rules read it
    if why:
        return [dropped(event, why), *round_notices.draw_dispute(m, event)]
    if m.local_end is not None:  # ended here (``goes_on`` lifts an abandoned end first)
        return [dropped(event, f"the round has ended here ({m.local_end.reason})")]
    before = st.phase
    snapshot = st.snapshot()
    mover = _mover(st, event)
    try:
        st.apply(event, m._advanced if event.pk == m.me.public_key else None)
        m._advanced = None
    except RoundError as err:
        return [dropped(event, str(err)), *round_notices.draw_dispute(m, event)]
    round_conflicts.keep_snapshot(m, seq, snapshot)
    return applied(m, event, before, now, mover)



def dated_ahead(m: ReceiveHost, event: Event, now: int) -> bool:
    """A chain event dated more than ``MAX_AHEAD_MS`` ahead of every clock that could
    explain its ``ts``: ours, its signer's (estimated offset), and the chain's (its
    ``prev``'s ``ts`` plus the time since we saw ``prev``; a chain event is never
    dated before its ``prev``, so a signer whose clock is behind signs the head's).

    A local decision (the event waits, ``tick`` retries it): never a chain rule, so
    replay needs no clock.
    """
    limit = now + MAX_AHEAD_MS
    if event.ts <= limit or m.local_time(event.pk, event.ts) <= limit:
        return False
    chain = m.state.chain
    seq = event.seq or 0
    if 0 < seq <= len(chain) and chain[seq - 1].id == event.prev:
        prev = chain[seq - 1]
        seen = m._observed_at.get(prev.id, m._applied_at.get(prev.id, now))
        return event.ts > prev.ts + max(0, now - seen) + MAX_AHEAD_MS
    return True



def applied(m: ReceiveHost, event: Event, before: Phase, now: int, mover: int | None = None
) -> list[Effect]:
    """Bookkeeping and notices once ``event`` is the new head."""
    m.seen.add(event.id)
    m._applied_at[event.id] = now
    if now >= m._catch_up_until:
        m._observed_at[event.id] = now
    for (
        inner
    ) in event.sealed():  # late copies are duplicates; the sealed one counts
        m.seen.add(inner.id)
        m.side[(inner.kind, inner.pk)] = inner
    effects: list[Effect] = [Applied(event, mover)]
    if event.kind == "forfeit":
        effects += round_notices.forfeit_notices(m, event, now)
    if m.state.phase is not before:
        m.phase_since = now
        effects += round_notices.phase_notices(m, before)
        if m.state.phase in (Phase.OVER, Phase.CANCELLED):
            effects += round_side.acknowledge(m, now)
    return effects



def orphan(m: ReceiveHost, ids: list[str]) -> None:
    """Forget a losing branch: these ids and every parked event built on them."""
    m._orphans.update(ids)
    m.seen.update(ids)
    found = True
    while found:
        found = False
        for eid, parked in list(m.pending.items()):
            if parked.prev in m._orphans:
                del m.pending[eid]
                m._orphans.add(eid)
                m.seen.add(eid)
                if parked.seq is not None:  # still a sign of the head its signer
                    round_conflicts.add_sign(m, parked)  # held, as ``park`` keeps it
                found = True



def park(m: ReceiveHost, event: Event, now: int | None = None) -> list[Effect]:
    if event.prev in m._orphans and m._pairs and now is not None:
        # built on a claim we did not keep: a member's sign of the head it holds,
        # which the table weighs (§8); it may make us switch to that claim
        if refusal(m.state, event.pk, event.kind, event.seq, known=False):
            return [dropped(event, "answers an event a forfeit replaced")]
        round_conflicts.add_sign(m, event)
        m.pending[event.id] = event  # a sign while it waits (signs(): pending)
        effects = round_conflicts.rejudge(m, now)
        if any(isinstance(e, Rewound) for e in effects):
            m._orphans.discard(event.id)
            m.seen.discard(event.id)
            if len(m.pending) > MAX_PENDING:
                m.pending.pop(next(iter(m.pending)))
            return effects
        m.pending.pop(event.id, None)
        m._orphans.add(event.id)
        m.seen.add(event.id)
        return effects + [dropped(event, "answers an event a forfeit replaced")]
    if event.prev in m._orphans:
        m._orphans.add(event.id)
        m.seen.add(event.id)
        return [dropped(event, "answers an event a forfeit replaced")]
    why = refusal(m.state, event.pk, event.kind, event.seq, known=False)
    if why:
        return [dropped(event, why)]
    if event.id not in m.pending:
        if len(m.pending) >= MAX_PENDING:
            m.pending.pop(next(iter(m.pending)))
        m.pending[event.id] = event
    return []



def drain_pending(m: ReceiveHost, now: int) -> list[Effect]:
    effects: list[Effect] = []
    progress = True
    while progress and m.pending:
        progress = False
        known = {e.id for e in m.state.chain}
        head = m.state.head
        for eid, event in list(m.pending.items()):
            if event.seq is None:
                ready = event.prev in known
            else:
                ready = event.prev == head.id and event.seq == len(m.state.chain)
            if ready:
                del m.pending[eid]
                if event.seq is None:
                    step = round_side.receive_side(m, event, now)
                else:
                    step = receive_chain(m, event, now)
                remember(m, event, step)
                effects += step
                progress = (
                    eid not in m.pending
                )  # never loop on an event parked again
                break
    return effects


def goes_on(m: ReceiveHost, event: Event) -> bool:
    """A round we ended here by a local rule follows its chain after all: ``event`` is a
    valid next chain event.  A round taken as *abandoned* moves on (its forfeiter came
    back and signed); a round taken as *expired* (never in play in time) takes the
    chain's own end of it (the admin's ``cancel``), so it ends as every other member's
    does, and takes up a next event the admin signed before the deadline it expired
    at (the round was on time; we had not heard of it).  The local end is lifted (True; ``receive_chain`` applies the event), as every
    member that waited longer applies it: a local end never outlives the chain it was a
    guess about (§15.6)."""
    st = m.state
    if m.local_end is None or event.seq != len(st.chain) or event.prev != st.head.id:
        return False
    after = st.snapshot()
    try:
        after.apply(event)  # the chain never said it ended: it is still in play
    except RoundError:
        return False
    if m.local_end.kind is RoundEnd.EXPIRED and after.phase not in ENDED:
        # the admin signed it before the deadline we expired the round at (its own
        # clock, as ``expires``): the round was on time after all, we had not heard
        # (mixed/2576); a later one leaves the guess standing
        grace = FORMING_GRACE_MS if st.phase is Phase.FORMING else START_DEADLINE_MS
        if event.ts >= st.expires + grace:
            return False
    if m.local_end.kind not in LOCAL_ENDS:
        return False
    m.local_end = None
    return True
