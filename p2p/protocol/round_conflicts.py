"""The round machine's conflict handling: clock waits, contested positions, equivocation.

A mixin of ``RoundMachine`` (``p2p.protocol.round_machine``), kept apart because it is
one concern: what a member does when an event claims a chain position it has filled, or
is dated ahead of its clock.  The rules themselves are pure functions and constants in
``p2p.protocol.conflicts``; this module applies them to the machine's state:

* ``_wait_for_clock`` / ``_retry_clock_waits``: chain events dated ahead of our clock,
  and forfeits our own clock has not seen the timeout of, wait (bounded) and are retried
  by ``tick``;
* ``_contest``: an event for a filled position: checked on who signed it and its right to
  that position against the stored state before it (never a replay), then settled by
  ``rival_wins`` and replaced in (``_replace``), at most ``MAX_REWIND`` events back;
* ``_equivocation``: two events of one author for one position end the round by the
  fixed rule of ``RoundState.end_for_equivocation``, with the proof published.

The host class provides ``state``, ``timeouts``, ``route``, the ``_snapshots``,
``_applied_at``, ``_observed_at``, ``_clock_wait`` dicts, ``_verdict``, ``phase_since``,
and the methods ``_receive_chain``, ``_applied``, ``_orphan``, ``_park``,
``_remember`` and ``_phase_notices``.
"""

from __future__ import annotations

from typing import Any

from p2p.protocol.admission import refusal
from p2p.protocol.conflicts import (
    HELD_FINAL_MS,
    MAX_AHEAD_MS,
    MAX_CLOCK_WAITS,
    MAX_REWIND,
    RACE_MS,
    SETTLE_MS,
    SeenIds,
    rival_wins,
)
from p2p.protocol.effects import Effect, Equivocation, Notice, Publish, Rewound, dropped
from p2p.protocol.events import Event
from p2p.protocol.round import ChainError, Phase, RoundError, RoundState, verify_chain

WHY_AHEAD = "it is dated ahead of our clock"
WHY_EARLY = "our clock has not seen the timeout"


class ChainConflicts:
    """Mixin: the conflict handling of ``RoundMachine`` (see the module docstring)."""

    state: RoundState
    _snapshots: dict[int, RoundState]
    _applied_at: dict[str, int]
    _observed_at: dict[str, int]
    _clock_wait: dict[str, Event]
    _beaten: dict[str, Event]
    _refused: dict[str, Event]
    _vouched: SeenIds
    _named_head: dict[bytes, Event]
    _resumed_head: str | None
    pending: dict[str, Event]
    _orphans: SeenIds
    _verdict: bool
    phase_since: int
    timeouts: Any

    def _keep_snapshot(self, seq: int, before: RoundState) -> None:
        """Remember the state before position ``seq`` (the last ``MAX_REWIND`` only)."""
        self._snapshots[seq] = before
        for old in [k for k in self._snapshots if k < seq - MAX_REWIND]:
            del self._snapshots[old]
            self._applied_at.pop(self.state.chain[old].id, None)
            self._observed_at.pop(self.state.chain[old].id, None)

    def _forfeit_fits(self, event: Event) -> bool:
        """Cheap: the forfeit's signer, seat and signed gap fit the head (else ``apply``
        refuses it with the reason)."""
        st = self.state
        target = st.forfeit_target()
        return (
            target is not None
            and event.pk == target[1]
            and event.body["seat"] == target[0]
            and event.ts - st.head.ts >= self.timeouts.limit(event.body["reason"])
        )

    def _forfeit_too_soon(self, event: Event, now: int) -> bool:
        """Our own observation: we saw the event before it too recently for its timeout."""
        prev_id = self.state.chain[event.seq - 1].id  # type: ignore[operator]
        if prev_id == self._resumed_head:
            return False  # taken up from a log: we did not see it arrive, it tells nothing
        seen_at = self._observed_at.get(prev_id)
        limit = self.timeouts.limit(event.body["reason"])
        return seen_at is not None and now - seen_at < limit - MAX_AHEAD_MS

    def _moved_in_time_here(self, rival: Event, prev: Event, forfeit: Event) -> bool:
        """Our own observation: both ``prev`` and the seat's answer arrived live, within
        the forfeit's limit (less the clock allowance) of each other on our clock.

        So a head its signer dated back (to make the next turn look long by the signed
        timestamps) cannot cost the next seat a turn it answered in time; nobody has to
        back-date an event for that.
        """
        if prev.id == self._resumed_head:
            return False  # taken up from a log: we never saw it arrive
        seen_prev = self._observed_at.get(prev.id)
        seen_rival = self._observed_at.get(rival.id)
        if seen_prev is None or seen_rival is None:
            return False
        limit = self.timeouts.limit(forfeit.body["reason"])
        return seen_rival - seen_prev < limit - MAX_AHEAD_MS

    def _wait_for_clock(self, event: Event, why: str, now: int) -> list[Effect]:
        """Hold an event until our clock allows it (retried by ``tick``; bounded)."""
        seq = min(event.seq or 0, len(self.state.chain))
        refused = refusal(self.state, event.pk, event.kind, seq)
        if refused:
            return [dropped(event, refused)]
        if event.id in self._clock_wait:
            return []
        if len(self._clock_wait) >= MAX_CLOCK_WAITS:
            self._clock_wait.pop(next(iter(self._clock_wait)))
        self._clock_wait[event.id] = event
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
        prev = self.state.chain[event.seq - 1]  # type: ignore[operator]
        secs = (now - self._observed_at.get(prev.id, now)) // 1000
        limit = self.timeouts.limit(event.body["reason"]) // 1000
        return [
            Notice(text, "forfeit_early", {"seat": seat, "secs": secs, "limit": limit})
        ]

    def _retry_clock_waits(self, now: int) -> list[Effect]:
        effects: list[Effect] = []
        for eid, event in list(self._clock_wait.items()):
            del self._clock_wait[eid]
            again = self._receive_chain(event, now)
            if eid not in self._clock_wait:
                self._remember(event, again)
                effects += [e for e in again if not isinstance(e, Notice)]
        return effects

    # -- two signed events for one position --------------------------------------------

    def _state_before(self, seq: int) -> RoundState | None:
        """The state before position ``seq``, if it is among the last ``MAX_REWIND``."""
        kept = self._snapshots.get(seq)
        if len(self.state.chain) - seq > MAX_REWIND:
            return None
        if kept is None or kept.head.id != self.state.chain[seq - 1].id:
            return None
        return kept

    def _contest(self, event: Event, now: int) -> list[Effect]:
        """``event`` claims a position we have filled: equivocation, a forfeit race, or junk.

        Who signed it and whether that key may claim this position are checked against
        the stored state before the position, before anything is replayed or replaced.
        """
        st = self.state
        seq = event.seq
        assert seq is not None
        there = st.chain[seq]
        if event.prev != st.chain[seq - 1].id:
            if seq >= len(st.chain) - MAX_REWIND:  # it may follow a branch we switch to
                return self._park(event, now)
            return [dropped(event, f"built on another branch at old position {seq}")]
        if there.pk == event.pk:
            return self._equivocation(there, event, now)
        if "forfeit" not in (event.kind, there.kind):
            return [dropped(event, f"position {seq} is already taken")]
        base = self._state_before(seq)
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
        own = there is rival and rival.pk == self.me.public_key
        final = self._held_final(forfeit, rival.pk, now)
        if event is rival and final is not None:
            self._orphan([event.id])  # a member shows it holds the forfeit as final
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
            held = now - self._applied_at.get(there.id, now - RACE_MS)
            if own and final is not None and there.id not in self._vouched:
                held = 0
            if held >= RACE_MS:
                if own and there.id not in self._vouched:
                    self._refuse(forfeit)  # a sign of the others may still come
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
        if event is forfeit and self._forfeit_too_soon(event, now):
            return self._wait_for_clock(event, WHY_EARLY, now)
        if event is rival:
            ends = trial.phase is Phase.OVER
        else:
            ends = seq == len(st.chain) - 1 and st.phase is Phase.OVER
        prev = st.chain[seq - 1]
        keeps = rival_wins(rival, forfeit, prev, ends, self.timeouts)
        if event is forfeit and not keeps and self._moved_in_time_here(rival, prev, forfeit):
            keeps = True  # we saw the seat answer within the limit: a backdated head
        if event is forfeit and own and there.id not in self._vouched:
            if final is not None:
                keeps = False  # the others hold the forfeit, nobody our event: we yield
            elif keeps:
                self._refuse(forfeit)  # a sign of the others may still come
                why = "ends the game" if ends else "was signed within the turn limit"
                return [dropped(event, f"the forfeited seat's own event at {seq} {why}")]
        if keeps != (event is rival):
            if event is rival:
                follower = next(
                    (e for e in self.pending.values() if e.prev == rival.id), None
                )
                if follower is not None:  # the turn was answered on top of it
                    return self._answered(rival, follower, now)
                self._beaten[rival.id] = rival
                while len(self._beaten) > MAX_REWIND:
                    self._beaten.pop(next(iter(self._beaten)))
            self._orphan([event.id])  # it lost: it and whatever was built on it
            if event is forfeit:
                why = "ends the game" if ends else "was signed within the turn limit"
                return [
                    dropped(event, f"the forfeited seat's own event at {seq} {why}")
                ]
            return [
                dropped(event, f"position {seq} was forfeited (this event is late)")
            ]
        if event is rival:
            held = now - self._applied_at.get(there.id, now - SETTLE_MS)
            if held >= SETTLE_MS:
                self._orphan([event.id])
                return [
                    dropped(event, f"the forfeit at {seq} is final ({held // 1000} s)")
                ]
        return self._replace(seq, base, trial, event, now)

    def _branch(self, forfeit: Event) -> set[str]:
        """Ids of ``forfeit`` and of what we hold built on it (chain or parked)."""
        st = self.state
        seq = forfeit.seq
        assert seq is not None
        ids = {forfeit.id}
        if seq < len(st.chain) and st.chain[seq].id == forfeit.id:
            ids.update(e.id for e in st.chain[seq + 1 :])
        grew = True
        while grew:
            grew = False
            for event in self.pending.values():
                if event.prev in ids and event.id not in ids:
                    ids.add(event.id)
                    grew = True
        return ids

    def _held_final(self, forfeit: Event, seat_pk: bytes, now: int) -> Event | None:
        """A member's signed sign that it holds ``forfeit`` as final, or ``None``.

        Any member but the forfeited seat (``seat_pk``) that signs an event built on the
        forfeit or on what follows it (a chain event, an ack, a sync request naming it as
        its head), dated at least ``HELD_FINAL_MS`` after the forfeit (and not ahead of
        our clock), had applied the forfeit ``SETTLE_MS`` before by its own clock (less
        the clock allowance): it keeps the forfeit whatever arrives.  Every member weighs
        the same signed events, so every member settles the same way (the forfeited seat
        too, whose own clock knows nothing of when the others applied the forfeit).
        """
        ids = self._branch(forfeit)
        st = self.state
        seq = forfeit.seq
        assert seq is not None
        signs: list[Event] = [self.pending[i] for i in ids if i in self.pending]
        if seq < len(st.chain) and st.chain[seq].id == forfeit.id:
            signs += st.chain[seq + 1 :]
        signs += [e for (kind, _), e in self.side.items() if kind == "ack"]
        signs += self._named_head.values()
        for sign in signs:
            if (
                sign.pk != seat_pk
                and sign.prev in ids
                and forfeit.ts + HELD_FINAL_MS <= sign.ts <= now + MAX_AHEAD_MS
            ):
                return sign
        return None

    def _refuse(self, forfeit: Event) -> None:
        """We kept our own pending event against ``forfeit`` while no other member had
        shown it holds our event: remember the forfeit (the last ``MAX_REWIND``), so a
        sign that the others hold it as final makes us yield (``_retry_refused``)."""
        self._refused[forfeit.id] = forfeit
        while len(self._refused) > MAX_REWIND:
            self._refused.pop(next(iter(self._refused)))

    def _descends_from_refused(self, event: Event) -> bool:
        """``event`` builds on a forfeit we refused (or on what is built on one)."""
        return any(event.prev in self._branch(f) for f in self._refused.values())

    def _retry_refused(self, now: int) -> list[Effect]:
        """Yield to a refused forfeit of our own pending event once a member shows it
        holds the forfeit as final (``_held_final``): the mirror of ``_answered``."""
        for fid, forfeit in list(self._refused.items()):
            seq = forfeit.seq
            assert seq is not None
            chain = self.state.chain
            there = chain[seq] if seq < len(chain) else None
            if there is None or there.pk != self.me.public_key or there.prev != forfeit.prev:
                del self._refused[fid]  # our event there is gone: nothing to yield
                continue
            if self._held_final(forfeit, there.pk, now) is None:
                continue
            del self._refused[fid]
            self._orphans.discard(fid)
            effects = self._contest(forfeit, now)
            if any(isinstance(e, Rewound) for e in effects):
                return effects
        return []

    def _answered(self, rival: Event, follower: Event, now: int) -> list[Effect]:
        """The forfeited seat's move that lost to our forfeit was answered by the next
        position's owner (``follower`` builds on it): the others hold it as settled (a
        forfeit may replace only the pending turn), so our forfeit yields to it, within
        ``SETTLE_MS`` of applying it and ``MAX_REWIND`` positions."""
        st = self.state
        seq = rival.seq
        assert seq is not None
        there = st.chain[seq] if seq < len(st.chain) else None
        base = self._state_before(seq)
        if there is None or there.kind != "forfeit" or there.prev != rival.prev or base is None:
            return [dropped(follower, "answers an event a forfeit replaced")]
        held = now - self._applied_at.get(there.id, now - SETTLE_MS)
        if held >= SETTLE_MS or follower.kind == "forfeit":
            self._orphan([rival.id, follower.id])
            return [dropped(follower, "answers an event a forfeit replaced")]
        trial = base.snapshot()
        try:
            trial.apply(rival)
            after = trial.snapshot()
            after.apply(follower)
        except RoundError as err:
            self._orphan([rival.id, follower.id])
            return [dropped(follower, str(err))]
        self._orphans.discard(rival.id)
        self._beaten.pop(rival.id, None)
        self.pending.pop(follower.id, None)
        effects = self._replace(seq, base, trial, rival, now, answered=True)
        return effects + self._receive_chain(follower, now)

    def _replace(
        self,
        seq: int,
        base: RoundState,
        trial: RoundState,
        event: Event,
        now: int,
        answered: bool = False,
    ) -> list[Effect]:
        """Make ``trial`` (``base`` plus ``event`` at ``seq``) our state; report the rest."""
        replaced = self.state.chain[seq:]
        before = self.state.phase
        self.state = trial
        for old in [k for k in self._snapshots if k > seq]:
            del self._snapshots[old]
        self._snapshots[seq] = base
        self._orphan([e.id for e in replaced])
        if event.kind == "forfeit":
            why, code = "a late move lost to a forfeit", "rewound"
        elif answered:
            why, code = "the forfeited turn had been answered", "forfeit_replaced"
        else:
            why, code = "a timely move beat a forfeit", "forfeit_replaced"
        seat = self.state.seat_of(event.pk) if event.kind != "forfeit" else None
        mover = base.game.to_move() if event.kind == "move" and base.game is not None else None
        effects: list[Effect] = [
            Rewound(seq, tuple(replaced)),
            Notice(
                f"{len(replaced)} chain event(s) from position {seq} were replaced ({why})",
                code,
                {"count": len(replaced), "seq": seq, "seat": seat},
            ),
        ]
        effects += self._applied(event, before, now, mover)
        if self.state.phase in (Phase.OVER, Phase.CANCELLED):
            effects += self._acknowledge(now)  # the end changed: sign the new one
        return effects

    def _equivocation(self, first: Event, second: Event, now: int) -> list[Effect]:
        """Two signed events of one author for one position: the proof ends the round.

        Both are published on the round topic so every member holds the proof, and every
        member ends the round the same way (``RoundState.end_for_equivocation``) on the
        state before the position.  A second proof changes nothing.
        """
        seq = first.seq
        assert seq is not None
        effects: list[Effect] = [
            Equivocation(first, second),
            Publish(self.route(), first),
            Publish(self.route(), second),
        ]
        if self._verdict or self.state.phase in (Phase.OVER, Phase.CANCELLED):
            return effects  # a finished round keeps its result; the proof is reported
        base = self._state_before(seq)
        if base is None:  # older than our snapshots: replay once (the round ends here)
            try:
                base = verify_chain(self.state.chain[:seq], self.timeouts)
            except ChainError as err:
                return effects + [dropped(second, f"cannot replay to {seq}: {err}")]
        else:
            base = base.snapshot()
        seat = base.seat_of(first.pk)
        assert seat is not None  # both signed at a position only a member can own
        replaced = self.state.chain[seq:]
        base.end_for_equivocation(seat, seq)
        before = self.state.phase
        self.state = base
        self._verdict = True
        self._snapshots.clear()
        self._orphan([e.id for e in replaced] + [second.id])
        effects += [Rewound(seq, tuple(replaced))]
        self.phase_since = now
        if base.phase is Phase.CANCELLED:
            text = f"the round was {base.end_reason}"
            effects += [Notice(text, "cancelled", {"reason": "void"})]
        else:
            effects += self._phase_notices(before)
        return effects + self._acknowledge(now)  # the end by the proof is signed too
