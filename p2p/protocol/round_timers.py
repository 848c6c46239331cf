"""The round machine's local timers (``RoundMachine.tick``): invitation expiry, the
draw's commit and reveal timeouts, turn timeouts and forfeits, the local end of a round
nobody can move on, and asking for missing acks.  Plain functions of the machine's ``TimerHost`` (``p2p.protocol.round_hosts``:
what of ``RoundMachine`` they may touch); pure: ``now`` is the caller's clock."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from p2p.protocol import round_conflicts, round_side
from p2p.protocol.effects import (
    CANCEL_EXPIRED,
    Applied,
    Effect,
    Notice,
)
from p2p.protocol.events import Event
from p2p.protocol.outcome import RoundEnd
from p2p.protocol.phases import LocalEnd
from p2p.protocol.round import (
    Phase,
    evidence_error,
)
from p2p.protocol.round_hosts import TimerHost
from p2p.protocol.round_side import (
    MAX_SYNC_ANSWER,
    SYNC_INTERVAL_MS,
)

COMMIT_TIMEOUT_MS = 20_000
"""v1-v4 rounds: a commitment still missing this long after start: the admin cancels (v1:
it closed the set without it).  A v5 round has no commit round (§7)."""
REVEAL_TIMEOUT_MS = 20_000
"""A reveal still missing this long after the commit set closed (v5: after the start,
which closes it): the admin cancels (v1: it drew without it)."""
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





def tick(m: TimerHost,
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
    st = m.state
    m._clock = max(m._clock, now)
    m.offline = frozenset(offline)
    m.evidence = dict(evidence or {})
    effects: list[Effect] = round_conflicts.retry_clock_waits(m, now)
    effects += round_conflicts.rejudge(m, now)
    was, m._was_acting = m._was_acting, m.acting
    if (
        any(isinstance(e, Applied) for e in effects)
        or (m._was_acting and not was)
        or m.duties_left
    ):  # (acting again, or our last step stopped at its cap: what is due is ours to do)
        effects += m._react(now)
    st = m.state  # a conflict may have replaced it
    if m.local_end is not None:
        return effects
    if st.phase in (Phase.OVER, Phase.CANCELLED):
        return effects + ask_for_acks(m, now)
    ended = end_if_stuck(m, now)
    if ended:
        return effects + ended
    if st.phase is Phase.PLAY and now - m._last_head_sent >= HEAD_EXCHANGE_MS:
        m._last_head_sent = now
        effects += m.request_sync(now, catch_up=False)
    elif (  # a full (capped) sync answer came in: ask for the rest
        len(st.chain) - m._asked_len >= MAX_SYNC_ANSWER
        and now - m._last_asked >= SYNC_INTERVAL_MS
    ):
        effects += m.request_sync(now)
    forfeit = due_forfeit(m, now)
    if forfeit is not None:
        return effects + m._append("forfeit", forfeit, now) + m._react(now)
    if st.phase is Phase.FORMING and now >= m.expires_here:
        if m.is_admin:
            return m._append("cancel", {"reason": CANCEL_EXPIRED}, now)
        if not m.expired:
            m.expired = True
            effects.append(Notice("the invitation expired", "expired"))
    if not m.is_admin:
        waited = now - m.phase_since
        limit = 3 * (
            COMMIT_TIMEOUT_MS if st.phase is Phase.COMMIT else REVEAL_TIMEOUT_MS
        )
        if (
            st.phase in (Phase.COMMIT, Phase.REVEAL)
            and waited >= limit
            and not m.expired
        ):
            m.expired = (
                True  # told once; the round still goes on if the admin returns
            )
            effects.append(
                Notice("the admin has not closed the draw for a long time", "draw_stalled")
            )
        return effects
    waited = now - m.phase_since
    if (
        st.phase is Phase.COMMIT
        and waited >= COMMIT_TIMEOUT_MS
        and m.my_seat in m.pooled_seats("commit")
    ):
        effects += m._close_commits(now)
    elif st.phase is Phase.REVEAL and waited >= REVEAL_TIMEOUT_MS:
        # (also without our own reveal: an admin restarted since its start has lost its
        # nonce, and its draw cancels, naming its seat, instead of stalling the round)
        effects += m._draw(now)
    return effects



def asks_for_acks(m: TimerHost, now: int) -> bool:
    """True while the round has ended here by its chain (or a proof), we hold a seat,
    a human seat's ack of the final head is missing, and the end is less than
    ``ACK_ASK_MS`` old: ``tick`` then asks the members for their acks."""
    return (
        m.state.phase in (Phase.OVER, Phase.CANCELLED)
        and m.local_end is None
        and m.my_seat is not None
        and not round_side.agreed(m)
        and now - m.phase_since < ACK_ASK_MS
    )



def ask_for_acks(m: TimerHost, now: int) -> list[Effect]:
    """A sync request naming our final head, at most every ``HEAD_EXCHANGE_MS``,
    while an ack is missing; members that hold this head answer with their acks."""
    if not asks_for_acks(m, now) or now - m._last_head_sent < HEAD_EXCHANGE_MS:
        return []
    m._last_head_sent = now
    return m.request_sync(now, catch_up=False)



def end_if_stuck(m: TimerHost, now: int) -> list[Effect]:
    """End the round here by a fixed local rule when nobody can move it on any more.

    * Not in play ``FORMING_GRACE_MS`` after ``expires`` (still forming) or
      ``START_DEADLINE_MS`` after it (the draw never finished): the round expired.
    * In play, the key that must act (the owner of the position) and the key that may
      forfeit it are both offline in our lobby view (or nobody may forfeit), for
      twice the offline timeout: the round is abandoned.
    Nobody wins; every member applies the same rule with its own clock.
    """
    st = m.state
    expires = m.expires_here  # the admin's clock, judged in its frame
    if st.phase is Phase.FORMING and now >= expires + FORMING_GRACE_MS:
        return end_here(m, RoundEnd.EXPIRED, "the round did not start in time", now)
    if st.phase in (Phase.COMMIT, Phase.REVEAL) and now >= expires + START_DEADLINE_MS:
        return end_here(m, RoundEnd.EXPIRED, "the draw did not finish in time", now)
    if st.phase is not Phase.PLAY:
        return []
    owner = st.owner()
    target = st.forfeit_target()
    mine = m.me.public_key
    if owner is None or owner == mine or target is not None and target[1] == mine:
        return []
    if owner not in m.offline or target is not None and target[1] not in m.offline:
        return []
    since = max(m._applied_at.get(st.head.id, st.head.ts), st.head.ts)
    if now - since < 2 * m.timeouts.offline_ms:
        return []
    return end_here(
        m, RoundEnd.ABANDONED, "the player to move and whoever may forfeit it are gone", now
    )



def end_here(m: TimerHost, kind: RoundEnd, detail: str, now: int) -> list[Effect]:
    """A local end (no chain event): the round is over for us, nobody wins.  A verdict
    of ours beside the chain (``RoundMachine.local_end``); the chain's state is left as
    the chain made it."""
    end = LocalEnd(kind, detail)
    m.local_end = end
    m.phase_since = now
    return [Notice(f"the round ended here: {end.reason}", "cancelled", {"reason": kind.value})]



def due_forfeit(m: TimerHost, now: int) -> dict[str, Any] | None:
    """The body of the forfeit we may sign now, or ``None``.

    Due once both our clock since we saw the head and the signed ``ts`` gap from the
    head reach the timeout (so our event satisfies the chain rule).
    """
    target = m.state.forfeit_target()
    if target is None or target[1] != m.me.public_key:
        return None
    seat = target[0]
    pk = m.state.seats[seat].pk
    head = m.state.head
    since = max(m._observed_at.get(head.id, head.ts), head.ts)
    start = round_conflicts.turn_start(m, len(m.state.chain))
    if start is not None:  # R5: a rival beat a forfeit at the head
        since = max(since, start)
    held = m.evidence.get(pk)  # type: ignore[arg-type]
    limit = m.timeouts.offline_ms
    if (
        held is not None
        and now - held[1] >= limit  # it stood the whole grace period here
        and evidence_error(m.state, seat, held[0], m._chain_ts(now)) is None
        and now - since >= limit
    ):
        return {"seat": seat, "reason": "offline", "evidence": held[0].value()}
    if now - since < m.timeouts.silent_ms:
        return None
    return {"seat": seat, "reason": "silent"}
