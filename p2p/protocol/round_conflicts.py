"""The round machine's conflict handling: clock waits, contested positions, equivocation.

Plain functions of a ``RoundMachine`` (``p2p.protocol.round_machine``, passed as ``m``),
kept apart because they are one concern: what a member does when an event claims a chain position it has filled, or
is dated ahead of its clock.  The rules themselves are pure functions and constants in
``p2p.protocol.conflicts``; this module applies them to the machine's state:

* ``wait_for_clock`` / ``retry_clock_waits``: chain events dated ahead of our clock,
  and forfeits our own clock has not seen the timeout of, wait (bounded) and are retried
  by ``tick``;
* ``contest``: an event for a filled position: checked on who signed it and its right to
  that position against the stored state before it (never a replay), then settled by
  ``rival_wins`` and replaced in (``replace``), at most ``MAX_REWIND`` events back; ``answered`` and
  ``retry_refused`` make a forfeiter, or the forfeited seat, yield to what the others hold;
* ``equivocation``: two events of one author for one position end the round by the
  fixed rule of ``RoundState.end_for_equivocation``, with the proof published.

They read and write the machine's ``state``, ``_snapshots``, ``_applied_at``,
``_observed_at``, ``_clock_wait``, ``_beaten``, ``_refused``, ``pending``, ``_orphans``,
``_verdict`` and ``phase_since``, and call its ``_receive_chain``, ``_applied``,
``_orphan``, ``_park`` and ``_remember`` (all typed, so mypy follows every access).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from p2p.protocol.round_machine import RoundMachine

from p2p.protocol import round_notices, round_side
from p2p.protocol.admission import refusal
from p2p.protocol.conflicts import (
    HELD_FINAL_MS,
    MAX_AHEAD_MS,
    MAX_CLOCK_WAITS,
    MAX_REWIND,
    RACE_MS,
    SETTLE_MS,
    rival_wins,
)
from p2p.protocol.effects import Effect, Equivocation, Notice, Publish, Rewound, dropped
from p2p.protocol.events import Event
from p2p.protocol.round import ChainError, Phase, RoundError, RoundState, verify_chain

WHY_AHEAD = "it is dated ahead of our clock"
WHY_EARLY = "our clock has not seen the timeout"


def keep_snapshot(m: RoundMachine, seq: int, before: RoundState) -> None:
    """Remember the state before position ``seq`` (the last ``MAX_REWIND`` only)."""
    m._snapshots[seq] = before
    for old in [k for k in m._snapshots if k < seq - MAX_REWIND]:
        del m._snapshots[old]
        m._applied_at.pop(m.state.chain[old].id, None)
        m._observed_at.pop(m.state.chain[old].id, None)


def forfeit_fits(m: RoundMachine, event: Event) -> bool:
    """Cheap: the forfeit's signer, seat and signed gap fit the head (else ``apply``
    refuses it with the reason)."""
    st = m.state
    target = st.forfeit_target()
    return (
        target is not None
        and event.pk == target[1]
        and event.body["seat"] == target[0]
        and event.ts - st.head.ts >= m.timeouts.limit(event.body["reason"])
    )


def forfeit_too_soon(m: RoundMachine, event: Event, now: int) -> bool:
    """Our own observation: we saw the event before it too recently for its timeout."""
    prev_id = m.state.chain[event.seq - 1].id  # type: ignore[operator]
    if prev_id == m._resumed_head:
        return False  # taken up from a log: we did not see it arrive, it tells nothing
    seen_at = m._observed_at.get(prev_id)
    limit = m.timeouts.limit(event.body["reason"])
    return seen_at is not None and now - seen_at < limit - MAX_AHEAD_MS


def moved_in_time_here(m: RoundMachine, rival: Event, prev: Event, forfeit: Event) -> bool:
    """Our own observation: both ``prev`` and the seat's answer arrived live, within
    the forfeit's limit (less the clock allowance) of each other on our clock.

    So a head its signer dated back (to make the next turn look long by the signed
    timestamps) cannot cost the next seat a turn it answered in time; nobody has to
    back-date an event for that.
    """
    if prev.id == m._resumed_head:
        return False  # taken up from a log: we never saw it arrive
    seen_prev = m._observed_at.get(prev.id)
    seen_rival = m._observed_at.get(rival.id)
    if seen_prev is None or seen_rival is None:
        return False
    limit = m.timeouts.limit(forfeit.body["reason"])
    return seen_rival - seen_prev < limit - MAX_AHEAD_MS


def wait_for_clock(m: RoundMachine, event: Event, why: str, now: int) -> list[Effect]:
    """Hold an event until our clock allows it (retried by ``tick``; bounded)."""
    seq = min(event.seq or 0, len(m.state.chain))
    refused = refusal(m.state, event.pk, event.kind, seq)
    if refused:
        return [dropped(event, refused)]
    if event.id in m._clock_wait:
        return []
    if len(m._clock_wait) >= MAX_CLOCK_WAITS:
        m._clock_wait.pop(next(iter(m._clock_wait)))
    m._clock_wait[event.id] = event
    text = f"{event.kind} #{event.seq} waits: {why}"
    if event.kind != "forfeit":
        secs = (event.ts - now) // 1000
        return [Notice(text, "event_ahead", {"kind": event.kind, "secs": secs})]
    seat = event.body["seat"]
    if why == WHY_AHEAD:
        return [
            Notice(
                text,
                "forfeit_ahead",
                {"seat": seat, "secs": (event.ts - now) // 1000},
            )
        ]
    prev = m.state.chain[event.seq - 1]  # type: ignore[operator]
    secs = (now - m._observed_at.get(prev.id, now)) // 1000
    limit = m.timeouts.limit(event.body["reason"]) // 1000
    return [
        Notice(text, "forfeit_early", {"seat": seat, "secs": secs, "limit": limit})
    ]


def retry_clock_waits(m: RoundMachine, now: int) -> list[Effect]:
    effects: list[Effect] = []
    for eid, event in list(m._clock_wait.items()):
        del m._clock_wait[eid]
        again = m._receive_chain(event, now)
        if eid not in m._clock_wait:
            m._remember(event, again)
            effects += [e for e in again if not isinstance(e, Notice)]
    return effects


# -- two signed events for one position --------------------------------------------


def state_before(m: RoundMachine, seq: int) -> RoundState | None:
    """The state before position ``seq``, if it is among the last ``MAX_REWIND``."""
    kept = m._snapshots.get(seq)
    if len(m.state.chain) - seq > MAX_REWIND:
        return None
    if kept is None or kept.head.id != m.state.chain[seq - 1].id:
        return None
    return kept


def contest(m: RoundMachine, event: Event, now: int) -> list[Effect]:
    """``event`` claims a position we have filled: equivocation, a forfeit race, or junk.

    Who signed it and whether that key may claim this position are checked against
    the stored state before the position, before anything is replayed or replaced.
    """
    st = m.state
    seq = event.seq
    assert seq is not None
    there = st.chain[seq]
    if event.prev != st.chain[seq - 1].id:
        if seq >= len(st.chain) - MAX_REWIND:  # it may follow a branch we switch to
            return m._park(event, now)
        return [dropped(event, f"built on another branch at old position {seq}")]
    if there.pk == event.pk:
        return equivocation(m, there, event, now)
    if "forfeit" not in (event.kind, there.kind):
        return [dropped(event, f"position {seq} is already taken")]
    base = state_before(m, seq)
    if base is None:
        return [
            dropped(event, f"position {seq} is settled (older than {MAX_REWIND})")
        ]
    forfeit, rival = (event, there) if event.kind == "forfeit" else (there, event)
    target = base.forfeit_target()
    if target is None or forfeit.pk != target[1]:
        return [
            dropped(event, f"forfeit by a key that may not forfeit position {seq}")
        ]
    if rival.pk != base.owner() or forfeit.body["seat"] != target[0]:
        return [dropped(event, f"position {seq} is already taken")]
    own = there is rival and rival.pk == m.me.public_key
    final = held_final(m, forfeit, rival.pk, now)
    if event is rival and final is not None:
        m._orphan([event.id])  # a member shows it holds the forfeit as final
        return [
            dropped(
                event,
                f"the forfeit at {seq} is final (seat {base.seat_of(final.pk)} "
                f"held it {(final.ts - forfeit.ts) // 1000} s)",
            )
        ]
    if event is forfeit:  # a forfeit races the pending turn; it never reaches back
        # the pending turn: the rival and only what its own signer built on it (an
        # admin's computer seats); once another seat answered it, it is settled
        if any(e.pk != rival.pk for e in st.chain[seq + 1 :]):
            return [
                dropped(
                    event,
                    f"a forfeit may replace only the pending turn; position {seq} is settled",
                )
            ]
        # our own event that no other member has shown it holds is no answer once
        # a member shows it holds the forfeit as final: we yield to it
        held = now - m._applied_at.get(there.id, now - RACE_MS)
        if own and final is not None and there.id not in m._vouched:
            held = 0
        if held >= RACE_MS:
            if own and there.id not in m._vouched:
                refuse(m, forfeit)  # a sign of the others may still come
            return [
                dropped(
                    event,
                    f"the turn at {seq} was answered {held // 1000} s ago; "
                    "a forfeit may not replace it",
                )
            ]
    trial = base.snapshot()
    try:
        trial.apply(event)  # one event on a copy: bounded
    except RoundError as err:
        return [dropped(event, str(err))]
    if event is forfeit and forfeit_too_soon(m, event, now):
        return wait_for_clock(m, event, WHY_EARLY, now)
    if event is rival:
        ends = trial.phase is Phase.OVER
    else:
        ends = seq == len(st.chain) - 1 and st.phase is Phase.OVER
    prev = st.chain[seq - 1]
    keeps = rival_wins(rival, forfeit, prev, ends, m.timeouts)
    if not keeps:  # the shared rule gives the position to the forfeit: the log keeps
        m.note_rival(rival, forfeit)  # the rival beside it (if the forfeit stays)
    if event is forfeit and not keeps and moved_in_time_here(m, rival, prev, forfeit):
        keeps = True  # we saw the seat answer within the limit: a backdated head
    if event is forfeit and own and there.id not in m._vouched:
        if final is not None:
            keeps = False  # the others hold the forfeit, nobody our event: we yield
        elif keeps:
            refuse(m, forfeit)  # a sign of the others may still come
            why = "ends the game" if ends else "was signed within the turn limit"
            return [dropped(event, f"the forfeited seat's own event at {seq} {why}")]
    if keeps != (event is rival):
        if event is rival:
            follower = next(
                (e for e in m.pending.values() if e.prev == rival.id), None
            )
            if follower is not None:  # the turn was answered on top of it
                return answered(m, rival, follower, now)
            m._beaten[rival.id] = rival
            while len(m._beaten) > MAX_REWIND:
                m._beaten.pop(next(iter(m._beaten)))
        m._orphan([event.id])  # it lost: it and whatever was built on it
        if event is forfeit:
            why = "ends the game" if ends else "was signed within the turn limit"
            return [
                dropped(event, f"the forfeited seat's own event at {seq} {why}")
            ]
        return [
            dropped(event, f"position {seq} was forfeited (this event is late)")
        ]
    if event is rival:
        held = now - m._applied_at.get(there.id, now - SETTLE_MS)
        if held >= SETTLE_MS:
            m._orphan([event.id])
            return [
                dropped(event, f"the forfeit at {seq} is final ({held // 1000} s)")
            ]
    return replace(m, seq, base, trial, event, now)


def branch(m: RoundMachine, forfeit: Event) -> set[str]:
    """Ids of ``forfeit`` and of what we hold built on it (chain or parked)."""
    st = m.state
    seq = forfeit.seq
    assert seq is not None
    ids = {forfeit.id}
    if seq < len(st.chain) and st.chain[seq].id == forfeit.id:
        ids.update(e.id for e in st.chain[seq + 1 :])
    grew = True
    while grew:
        grew = False
        for event in m.pending.values():
            if event.prev in ids and event.id not in ids:
                ids.add(event.id)
                grew = True
    return ids


def held_final(m: RoundMachine, forfeit: Event, seat_pk: bytes, now: int) -> Event | None:
    """A member's signed sign that it holds ``forfeit`` as final, or ``None``.

    Any member but the forfeited seat (``seat_pk``) that signs an event built on the
    forfeit or on what follows it (a chain event, an ack, a sync request naming it as
    its head), dated at least ``HELD_FINAL_MS`` after the forfeit (and not ahead of
    our clock), had applied the forfeit ``SETTLE_MS`` before by its own clock (less
    the clock allowance): it keeps the forfeit whatever arrives.  Every member weighs
    the same signed events, so every member settles the same way (the forfeited seat
    too, whose own clock knows nothing of when the others applied the forfeit).
    """
    ids = branch(m, forfeit)
    st = m.state
    seq = forfeit.seq
    assert seq is not None
    signs: list[Event] = [m.pending[i] for i in ids if i in m.pending]
    if seq < len(st.chain) and st.chain[seq].id == forfeit.id:
        signs += st.chain[seq + 1 :]
    signs += [e for (kind, _), e in m.side.items() if kind == "ack"]
    signs += m._named_head.values()
    for sign in signs:
        if (
            sign.pk != seat_pk
            and sign.prev in ids
            and forfeit.ts + HELD_FINAL_MS <= sign.ts <= now + MAX_AHEAD_MS
        ):
            return sign
    return None


def refuse(m: RoundMachine, forfeit: Event) -> None:
    """We kept our own pending event against ``forfeit`` while no other member had
    shown it holds our event: remember the forfeit (the last ``MAX_REWIND``), so a
    sign that the others hold it as final makes us yield (``_retry_refused``)."""
    m._refused[forfeit.id] = forfeit
    while len(m._refused) > MAX_REWIND:
        m._refused.pop(next(iter(m._refused)))


def descends_from_refused(m: RoundMachine, event: Event) -> bool:
    """``event`` builds on a forfeit we refused (or on what is built on one)."""
    return any(event.prev in branch(m, f) for f in m._refused.values())


def retry_refused(m: RoundMachine, now: int) -> list[Effect]:
    """Yield to a refused forfeit of our own pending event once a member shows it
    holds the forfeit as final (``_held_final``): the mirror of ``_answered``."""
    for fid, forfeit in list(m._refused.items()):
        seq = forfeit.seq
        assert seq is not None
        chain = m.state.chain
        there = chain[seq] if seq < len(chain) else None
        if there is None or there.pk != m.me.public_key or there.prev != forfeit.prev:
            del m._refused[fid]  # our event there is gone: nothing to yield
            continue
        if held_final(m, forfeit, there.pk, now) is None:
            continue
        del m._refused[fid]
        m._orphans.discard(fid)
        effects = contest(m, forfeit, now)
        if any(isinstance(e, Rewound) for e in effects):
            return effects
    return []


def answered(m: RoundMachine, rival: Event, follower: Event, now: int) -> list[Effect]:
    """The forfeited seat's move that lost to our forfeit was answered by the next
    position's owner (``follower`` builds on it): the others hold it as settled (a
    forfeit may replace only the pending turn), so our forfeit yields to it, within
    ``SETTLE_MS`` of applying it and ``MAX_REWIND`` positions."""
    st = m.state
    seq = rival.seq
    assert seq is not None
    there = st.chain[seq] if seq < len(st.chain) else None
    base = state_before(m, seq)
    if there is None or there.kind != "forfeit" or there.prev != rival.prev or base is None:
        return [dropped(follower, "answers an event a forfeit replaced")]
    held = now - m._applied_at.get(there.id, now - SETTLE_MS)
    if held >= SETTLE_MS or follower.kind == "forfeit":
        m._orphan([rival.id, follower.id])
        return [dropped(follower, "answers an event a forfeit replaced")]
    trial = base.snapshot()
    try:
        trial.apply(rival)
        after = trial.snapshot()
        after.apply(follower)
    except RoundError as err:
        m._orphan([rival.id, follower.id])
        return [dropped(follower, str(err))]
    m._orphans.discard(rival.id)
    m._beaten.pop(rival.id, None)
    m.pending.pop(follower.id, None)
    effects = replace(m, seq, base, trial, rival, now, answered=True)
    return effects + m._receive_chain(follower, now)


def replace(m: RoundMachine,
    seq: int,
    base: RoundState,
    trial: RoundState,
    event: Event,
    now: int,
    answered: bool = False,
) -> list[Effect]:
    """Make ``trial`` (``base`` plus ``event`` at ``seq``) our state; report the rest."""
    replaced = m.state.chain[seq:]
    before = m.state.phase
    m.state = trial
    for old in [k for k in m._snapshots if k > seq]:
        del m._snapshots[old]
    m._snapshots[seq] = base
    m._orphan([e.id for e in replaced])
    if event.kind == "forfeit":
        why, code = "a late move lost to a forfeit", "rewound"
    elif answered:
        why, code = "the forfeited turn had been answered", "forfeit_replaced"
    else:
        why, code = "a timely move beat a forfeit", "forfeit_replaced"
    seat = m.state.seat_of(event.pk) if event.kind != "forfeit" else None
    mover = base.game.to_move() if event.kind == "move" and base.game is not None else None
    effects: list[Effect] = [
        Rewound(seq, tuple(replaced)),
        Notice(
            f"{len(replaced)} chain event(s) from position {seq} were replaced ({why})",
            code,
            {"count": len(replaced), "seq": seq, "seat": seat},
        ),
    ]
    effects += m._applied(event, before, now, mover)
    if m.state.phase in (Phase.OVER, Phase.CANCELLED):
        effects += round_side.acknowledge(m, now)  # the end changed: sign the new one
    return effects


def equivocation(m: RoundMachine, first: Event, second: Event, now: int) -> list[Effect]:
    """Two signed events of one author for one position: the proof ends the round.

    Both are published on the round topic so every member holds the proof, and every
    member ends the round the same way (``RoundState.end_for_equivocation``) on the
    state before the position.  A second proof changes nothing.
    """
    seq = first.seq
    assert seq is not None
    effects: list[Effect] = [
        Equivocation(first, second),
        Publish(m.route(), first),
        Publish(m.route(), second),
    ]
    if m._verdict or m.state.phase in (Phase.OVER, Phase.CANCELLED):
        return effects  # a finished round keeps its result; the proof is reported
    base = state_before(m, seq)
    if base is None:  # older than our snapshots: replay once (the round ends here)
        try:
            base = verify_chain(m.state.chain[:seq], m.timeouts)
        except ChainError as err:
            return effects + [dropped(second, f"cannot replay to {seq}: {err}")]
    else:
        base = base.snapshot()
    seat = base.seat_of(first.pk)
    assert seat is not None  # both signed at a position only a member can own
    replaced = m.state.chain[seq:]
    base.end_for_equivocation(seat, seq)
    before = m.state.phase
    m.state = base
    m._verdict = True
    m._proof = (first, second)
    m._snapshots.clear()
    m._orphan([e.id for e in replaced] + [second.id])
    effects += [Rewound(seq, tuple(replaced))]
    m.phase_since = now
    if base.phase is Phase.CANCELLED:
        text = f"the round was {base.end_reason}"
        effects += [Notice(text, "cancelled", {"reason": "void"})]
    else:
        effects += round_notices.phase_notices(m, before)
    return effects + round_side.acknowledge(m, now)  # the end by the proof is signed too
