"""The round machine's conflict handling: clock waits, contested positions, equivocation.

Plain functions of the machine's ``ConflictHost`` (``p2p.protocol.round_hosts``:
what of ``RoundMachine`` they may touch, passed as ``m``),
kept apart because they are one concern: what a member does when an event claims a chain position it has filled, or
is dated ahead of its clock.  The rules themselves are pure functions and constants in
``p2p.protocol.conflicts``; this module applies them to the machine's state:

* ``wait_for_clock`` / ``retry_clock_waits``: chain events dated ahead of our clock,
  and forfeits our own clock has not seen the timeout of, wait (bounded) and are retried
  by ``tick``;
* ``contest``: an event for a filled position: checked on who signed it and its right to
  that position against the stored state before it (never a replay), then settled by
  the table (``p2p.protocol.conflicts.judge``) and replaced in (``replace``), at most
  ``MAX_REWIND`` events back; both claims are kept (``remember_pair``) and settled again
  whenever a new sign arrives (``rejudge``); ``evidence`` and ``disputes`` say what a
  log must keep beside the chain and which positions are disputed here;
* ``equivocation``: two events of one author for one position end the round by the
  fixed rule of ``RoundState.end_for_equivocation``, with the proof published.

They read and write the machine's ``state``, ``_snapshots``, ``_applied_at``,
``_observed_at``, ``_clock_wait``, ``_pairs``, ``_signs``, ``_told_disputes``,
``pending``, ``_orphans``, ``_verdict`` and ``phase_since``, and call its
``_receive_chain``, ``_applied``, ``_orphan``, ``_park`` and ``_remember`` (all typed, so
mypy follows every access).
"""

from __future__ import annotations

from p2p.protocol import round_notices, round_side
from p2p.protocol.admission import refusal
from p2p.protocol.conflicts import (
    MAX_AHEAD_MS,
    MAX_CLOCK_WAITS,
    MAX_REWIND,
    MAX_SIGNS,
    RACE_MS,
    Judgement,
    branch_ids,
    disputed,
    holder,
    holding_proof,
    judge,
    on_branch,
    self_held,
)
from p2p.protocol.effects import (
    Acknowledged,
    Effect,
    Equivocation,
    Notice,
    Publish,
    Rewound,
    dropped,
)
from p2p.protocol.events import Event
from p2p.protocol.round import ChainError, Phase, RoundError, RoundState, verify_chain
from p2p.protocol.round_hosts import ConflictHost

WHY_AHEAD = "it is dated ahead of our clock"
WHY_EARLY = "our clock has not seen the timeout"


def keep_snapshot(m: ConflictHost, seq: int, before: RoundState) -> None:
    """Remember the state before position ``seq`` (the last ``MAX_REWIND`` only)."""
    m._snapshots[seq] = before
    for old in [k for k in m._snapshots if k < seq - MAX_REWIND]:
        del m._snapshots[old]
        m._applied_at.pop(m.state.chain[old].id, None)
        m._observed_at.pop(m.state.chain[old].id, None)


def forfeit_fits(m: ConflictHost, event: Event) -> bool:
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


def forfeit_too_soon(m: ConflictHost, event: Event, now: int) -> bool:
    """Our own observation: we saw the event before it too recently for its timeout."""
    prev_id = m.state.chain[event.seq - 1].id  # type: ignore[operator]
    if prev_id == m._resumed_head:
        return False  # taken up from a log: we did not see it arrive, it tells nothing
    seen_at = m._observed_at.get(prev_id)
    limit = m.timeouts.limit(event.body["reason"])
    return seen_at is not None and now - seen_at < limit - MAX_AHEAD_MS


def moved_in_time_here(m: ConflictHost, rival: Event, prev: Event, forfeit: Event) -> bool:
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


def wait_for_clock(m: ConflictHost, event: Event, why: str, now: int) -> list[Effect]:
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


def retry_clock_waits(m: ConflictHost, now: int) -> list[Effect]:
    effects: list[Effect] = []
    for eid, event in list(m._clock_wait.items()):
        del m._clock_wait[eid]
        again = m._receive_chain(event, now)
        if eid not in m._clock_wait:
            m._remember(event, again)
            effects += [e for e in again if not isinstance(e, Notice)]
    return effects


# -- two signed events for one position --------------------------------------------


def state_before(m: ConflictHost, seq: int) -> RoundState | None:
    """The state before position ``seq``, if it is among the last ``MAX_REWIND``."""
    kept = m._snapshots.get(seq)
    if len(m.state.chain) - seq > MAX_REWIND:
        return None
    if kept is None or kept.head.id != m.state.chain[seq - 1].id:
        return None
    return kept


def add_sign(m: ConflictHost, event: Event) -> bool:
    """Keep ``event`` (a member's sync request, ack, or chain event off our chain) as a
    sign of the head it holds: the newest ``MAX_SIGNS`` per member.  True if new.

    A sign is what its signer held when it signed, whenever it reaches us (a replay of
    it tells the truth too), so it is kept before any freshness check."""
    kept = m._signs.setdefault((event.pk, event.seq is not None), [])  # chain events apart
    if any(e.id == event.id for e in kept):
        return False
    kept.append(event)
    kept.sort(key=lambda e: (e.ts, e.id))
    same = [e for e in kept if e.prev == event.prev]
    if len(same) > 2:  # of signs naming one head the first and the last tell it all
        kept.remove(same[1])  # (how long it held it): a flood of them evicts no other
    if len(kept) > MAX_SIGNS:
        del kept[1]  # the earliest stays: with the newest it shows how long it held
    return True


def signs(m: ConflictHost) -> list[Event]:
    """Every signed event we hold that names a head: our chain, parked chain events,
    acks and the kept signs (``add_sign``)."""
    chain = m.state.chain
    out = list(chain[max(1, len(chain) - MAX_REWIND - 1) :]) + list(m.pending.values())
    out += [e for (kind, _), e in m.side.items() if kind == "ack"]
    for kept in m._signs.values():
        out += kept
    seen: set[str] = set()
    unique = []
    latest = m._clock + MAX_AHEAD_MS  # a sign dated ahead of our clock waits for it,
    ours = {e.id for e in chain}  # (our own chain passed that check when applied)
    for e in out:
        if e.id in seen:
            continue
        if e.id in ours or e.ts <= latest or m.local_time(e.pk, e.ts) <= latest:
            seen.add(e.id)  # in its signer's frame: a clock that runs ahead is no lie
            unique.append(e)
    return unique


def turn_start(m: ConflictHost, seq: int) -> int | None:
    """R5: the turn at ``seq`` counts from the latest of its ``prev`` and a forfeit that
    a rival beat at ``seq - 1`` (a back-dated revival never makes the next seat late at
    once), or ``None`` if no conflict was settled there."""
    pair = m._pairs.get(seq - 1)
    chain = m.state.chain
    if pair is None or seq - 1 >= len(chain) or chain[seq - 1].id != pair[1].id:
        return None
    return max(pair[0].ts, pair[1].ts)


def status(
    m: ConflictHost, seq: int, forfeit: Event, rival: Event
) -> tuple[Event, Judgement, bool] | None:
    """What we keep at ``seq`` (the table, then our own per-member rows), the table's
    judgement and whether the position is disputed here; ``None`` if it is settled."""
    base = state_before(m, seq)
    if base is None:
        return None
    held = signs(m)
    fb = branch_ids(forfeit, held)
    rb = branch_ids(rival, held)
    trial = base.snapshot()
    try:
        trial.apply(rival)
    except RoundError:
        return forfeit, Judgement(forfeit, "late"), False
    ends = trial.phase is Phase.OVER
    prev = m.state.chain[seq - 1]
    j = judge(
        rival, forfeit, prev, ends, m.timeouts, held, fb, rb,
        next_owner=trial.owner(), turn_start=turn_start(m, seq), rules=m.rules,
    )
    keep = j.keep
    if (
        j.rule == "timely"
        and forfeit.pk == m.me.public_key
        and holder(held, rb, {rival.pk, forfeit.pk}) is None  # no third member holds it
        and self_held(held, forfeit, fb) is not None
    ):
        keep = forfeit  # R3: final for us, the forfeiter, only: disputed here
    elif (
        j.rule == "late"
        and moved_in_time_here(m, rival, prev, forfeit)
        and not any(s.pk == rival.pk for s in held if on_branch(s, fb))
    ):  # our own observation: a back-dated head (disputed here), unless the seat
        keep = rival  # itself left its move for the forfeit (honest/4659)
    return keep, j, disputed(keep, forfeit, j, held, rb, rival, fb)


def remember_pair(m: ConflictHost, seq: int, forfeit: Event, rival: Event) -> None:
    """Keep a forfeit and the forfeited seat's own event at ``seq`` (evidence; the last
    ``MAX_REWIND`` positions)."""
    m._pairs[seq] = (forfeit, rival)
    while len(m._pairs) > MAX_REWIND:
        m._pairs.pop(min(m._pairs))


def disputes(m: ConflictHost) -> list[tuple[int, Event, Event]]:
    """``(seq, kept, other)`` for every contested position disputed here."""
    out = []
    chain = m.state.chain
    for seq in sorted(m._pairs):
        forfeit, rival = m._pairs[seq]
        if seq >= len(chain) or chain[seq].id not in (forfeit.id, rival.id):
            continue
        found = status(m, seq, forfeit, rival)
        kept = chain[seq]
        other = rival if kept.id == forfeit.id else forfeit
        if found is None:  # settled: disputed if it was when it settled, unless
            if seq in m._told_disputes and (  # the other claimant yielded since
                seq in m._told_own or not yielded(m, seq, other)
            ):
                out.append((seq, kept, other))
            continue
        if found[2]:
            out.append((seq, kept, other))
    return out


def yielded(m: ConflictHost, seq: int, other: Event) -> bool:
    """The signer of ``other`` (the claim we do not keep at ``seq``) has a sign on our
    chain from ``seq`` on: it holds what we keep (T7; what replay weighs, §8.1)."""
    held = signs(m)
    ours = {e.id for e in m.state.chain[seq:]} | branch_ids(m.state.chain[seq], held)
    return any(s.pk == other.pk and on_branch(s, ours) for s in held)


def dispute_notices(m: ConflictHost) -> list[Effect]:
    """One ``disputed`` notice per position that became disputed here (a position the
    table settled since, e.g. answered by the next seat, T1, is no longer disputed: so
    a settled position counts as disputed only if it was at its last judgement, as
    replay of the log says)."""
    effects: list[Effect] = []
    st = m.state
    for seq in sorted(m._told_disputes):
        pair = m._pairs.get(seq)
        if pair is None:
            continue
        found = status(m, seq, *pair)
        if found is not None and not found[2]:
            m._told_disputes.discard(seq)
        if found is not None:  # a row of our own (T4, T5), or the other's silence
            if found[0].id != found[1].keep.id:
                m._told_own.add(seq)
            else:
                m._told_own.discard(seq)
    for seq, kept, other in disputes(m):
        if seq in m._told_disputes:
            continue
        m._told_disputes.add(seq)
        found = status(m, seq, *m._pairs[seq])
        if found is not None and found[0].id != found[1].keep.id:
            m._told_own.add(seq)
        forfeit = kept if kept.kind == "forfeit" else other
        rival = other if forfeit is kept else kept
        params = {
            "seq": seq,
            "forfeiter": st.seat_of(forfeit.pk),
            "seat": forfeit.body["seat"],
            "kept": "forfeit" if kept is forfeit else rival.kind,
        }
        effects.append(
            Notice(
                f"position {seq} is disputed: seat {params['forfeiter']} forfeited seat "
                f"{params['seat']}, whose own {rival.kind} there was signed within the "
                f"limit; this member keeps the {params['kept']}",
                "disputed",
                params,
            )
        )
    return effects


def rejudge(m: ConflictHost, now: int) -> list[Effect]:
    """New signs arrived: settle every contested position again by the table, replacing
    the event we keep where the verdict changed (one at a time), and tell new disputes."""
    if not m._pairs:
        return []
    if m._verdict:  # ended by a proof: it keeps that end; disputes are still told
        return dispute_notices(m)
    chain = m.state.chain
    for seq in sorted(m._pairs):
        forfeit, rival = m._pairs[seq]
        if seq >= len(chain) or chain[seq].id not in (forfeit.id, rival.id):
            continue
        found = status(m, seq, forfeit, rival)
        if found is None or found[0].id == chain[seq].id:
            continue
        effects: list[Effect] = []
        if (
            found[1].rule == "held"
            and chain[seq].id == rival.id
            and rival.pk != m.me.public_key
            and m.my_seat is not None
            and m.acting
        ):  # we hold the rival ourselves: say so with a signed sign, then weigh again
            effects = m.request_sync(now, catch_up=False)
            found = status(m, seq, forfeit, rival)
            if found is None or found[0].id == chain[seq].id:
                return effects + dispute_notices(m)
        keep = found[0]
        base = state_before(m, seq)
        assert base is not None
        trial = base.snapshot()
        try:
            trial.apply(keep)
        except RoundError:
            continue
        m._orphans.discard(keep.id)
        m.seen.discard(keep.id)
        m.pending.pop(keep.id, None)
        effects += replace(m, seq, base, trial, keep, now)
        readmit(m, keep)
        return effects + dispute_notices(m)
    return dispute_notices(m)


def readmit(m: ConflictHost, keep: Event) -> None:
    """We switched to ``keep``: the chain events built on it that we held only as signs
    wait among the pending events again (``round_receive.drain_pending`` applies those that fit)."""
    held = [e for kept in m._signs.values() for e in kept if e.seq is not None]
    ids = branch_ids(keep, held)
    for event in sorted(held, key=lambda e: (e.seq or 0, e.id)):
        if event.prev in ids and event.id != keep.id:
            m._orphans.discard(event.id)
            m.seen.discard(event.id)
            m.pending.setdefault(event.id, event)


def evidence(m: ConflictHost) -> list[Event]:
    """The signed events beside our chain that our verdicts rest on: at each contested
    position the claim we do not keep, and the signs that decided (a holding proof, the
    forfeiter's sign that it holds the rival, the forfeited seat's that it yielded).
    A log keeps them; ``p2p replay`` weighs them by the same table (docs/protocol.md
    §8, §9)."""
    out: dict[str, Event] = {}
    chain = m.state.chain
    in_chain = {e.id for e in chain}
    held = signs(m)
    for seq in sorted(m._pairs):
        forfeit, rival = m._pairs[seq]
        if seq >= len(chain) or chain[seq].id not in (forfeit.id, rival.id):
            continue
        loser = rival if chain[seq].id == forfeit.id else forfeit
        out[loser.id] = loser
        fb = branch_ids(forfeit, held)
        rb = branch_ids(rival, held)
        extra = list(self_held(held, forfeit, fb) or ())
        extra += list(holding_proof(held, fb, {forfeit.pk, rival.pk}) or ())
        extra += [s for s in held if s.pk != rival.pk and on_branch(s, rb)][:4]
        yielded = [s for s in held if s.pk == rival.pk and s.seq is None and on_branch(s, fb)]
        extra += sorted(yielded, key=lambda s: (s.ts, s.id))[:1]  # the seat yielded (T7)
        for sign in extra:
            if sign.id not in in_chain and sign.seq is None:
                out[sign.id] = sign
    return list(out.values())


def contest(m: ConflictHost, event: Event, now: int) -> list[Effect]:
    """``event`` claims a position we have filled: equivocation, a forfeit race, or junk.

    Who signed it and whether that key may claim this position are checked against
    the stored state before the position, before anything is replayed or replaced;
    a forfeit and the forfeited seat's own event are then settled by the table
    (``p2p.protocol.conflicts.judge``, docs/protocol.md §8) and kept as evidence.
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
    pair = m._pairs.get(seq)
    if pair is not None and there.id == pair[1].id and pair[0].pk == event.pk \
            and pair[0].prev == event.prev and pair[0].id != event.id:
        # the forfeiter's other forfeit here is kept beside our chain: if the table
        # (T1-T3) keeps it and only our own row (T4, T5) keeps the seat's event here,
        # the two forfeits are the proof they would be had we kept it in the chain, as
        # the members that follow the table did (§15.4; the simulator's mixed/1209 under
        # protocol v5: such a member played on while they ended the round by the proof)
        found = status(m, seq, pair[0], pair[1])
        if found is not None and found[1].keep.id == pair[0].id:
            return equivocation(m, pair[0], event, now)
    if m._verdict:  # a round ended by a proof keeps that end (§15.4)
        return [dropped(event, "the round ended by an equivocation proof")]
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
    trial = base.snapshot()
    if event is forfeit and any(e.pk != rival.pk for e in st.chain[seq + 1 :]):
        # a forfeit races the pending turn; once another seat answered it, it is settled
        # (T1), but a valid one is kept beside the chain: the turn after counts from it
        # (T6) for every member that holds it, so every member weighs it, whenever it came
        try:
            trial.apply(event)  # one event on a copy: bounded
        except RoundError:
            pass
        else:
            if seq not in m._pairs:
                remember_pair(m, seq, forfeit, rival)
                m._orphan([event.id])
        return [
            dropped(
                event,
                f"a forfeit may replace only the pending turn; position {seq} is settled",
            )
        ]
    try:
        trial.apply(event)  # one event on a copy: bounded
    except RoundError as err:
        return [dropped(event, str(err))]
    if event is forfeit and forfeit_too_soon(m, event, now):
        return wait_for_clock(m, event, WHY_EARLY, now)
    remember_pair(m, seq, forfeit, rival)
    found = status(m, seq, forfeit, rival)
    assert found is not None  # state_before(seq) is there
    signed: list[Effect] = []
    if (
        found[1].rule == "held"
        and there is rival
        and rival.pk != m.me.public_key
        and m.my_seat is not None
        and m.acting
    ):  # we hold the rival ourselves: say so with a signed sign, then weigh again
        signed = m.request_sync(now, catch_up=False)
        found = status(m, seq, forfeit, rival)
        assert found is not None
    keep, j, _ = found
    if keep.id == there.id:
        m._orphan([event.id])  # it lost: it and whatever was built on it (kept as evidence)
        add_sign(m, event)  # and it still shows its signer held its prev (§8.1 signs)
        held = now - m._applied_at.get(there.id, now)
        if event is forfeit and held >= RACE_MS:
            text = (
                f"the turn at {seq} was answered {held // 1000} s ago; "
                "a forfeit may not replace it"
            )
        elif event is forfeit:
            if j.rule == "answered":
                why = "was answered by the next seat"
            elif _ends(base, rival):
                why = "ends the game"
            else:
                why = "was signed within the turn limit"
            text = f"the forfeited seat's own event at {seq} {why}"
        elif j.rule == "held":
            final = j.proof[-1]
            text = (
                f"the forfeit at {seq} is final (seat {base.seat_of(final.pk)} "
                f"held it {(final.ts - j.proof[0].ts) // 1000} s)"
            )
        elif j.rule == "late":
            text = f"position {seq} was forfeited (this event is late)"
        else:
            text = f"the forfeit at {seq} is final here; position {seq} is disputed"
        return signed + [dropped(event, text)] + dispute_notices(m)
    return signed + replace(m, seq, base, trial, event, now) + dispute_notices(m)


def _ends(base: RoundState, rival: Event) -> bool:
    trial = base.snapshot()
    try:
        trial.apply(rival)
    except RoundError:
        return False
    return trial.phase is Phase.OVER


def replace(m: ConflictHost,
    seq: int,
    base: RoundState,
    trial: RoundState,
    event: Event,
    now: int,
) -> list[Effect]:
    """Make ``trial`` (``base`` plus ``event`` at ``seq``) our state; report the rest."""
    replaced = m.state.chain[seq:]
    before = m.state.phase
    m.state = trial
    for old in [k for k in m._snapshots if k > seq]:
        del m._snapshots[old]
    m._snapshots[seq] = base
    for gone in replaced:
        add_sign(m, gone)  # what a member built there still shows the head it held
    m._orphan([e.id for e in replaced])
    if event.kind == "forfeit":
        why, code = "a late move lost to a forfeit", "rewound"
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
        head = m.state.head.id
        told: set[str] = set()
        for kept in list(m._signs.values()):
            for sign in kept:  # the members' acks of this end that we held as signs
                if sign.kind == "ack" and sign.prev == head and m.side.get(
                    ("ack", sign.pk)
                ) is not sign:
                    again = round_side.receive_side(m, sign, now)
                    told.update(e.event.id for e in again if isinstance(e, Acknowledged))
                    effects += again
        for (kind, pk), ack in list(m.side.items()):  # the log was rewritten: again
            if kind == "ack" and ack.prev == head and ack.id not in told:
                effects.append(Acknowledged(ack, m.state.seat_of(pk)))  # type: ignore[arg-type]
    return effects


def equivocation(m: ConflictHost, first: Event, second: Event, now: int) -> list[Effect]:
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
    m._proof = (first, second)  # its log ends with it (RoundMachine.log_events); sync answers carry it to members still on another branch
    for old in [k for k in m._snapshots if k >= seq]:  # the states before the earlier
        del m._snapshots[old]  # positions stay: their disputes are weighed as replay does
    m._orphan([e.id for e in replaced] + [second.id])
    effects += [Rewound(seq, tuple(replaced))]
    m.phase_since = now
    if base.phase is Phase.CANCELLED:
        text = f"the round was {base.end_reason}"
        effects += [Notice(text, "cancelled", {"reason": "void"})]
    else:
        effects += round_notices.phase_notices(m, before)
    return effects + round_side.acknowledge(m, now)  # the end by the proof is signed too
