"""The round machine's notices: what a member is told when the phase changes, a forfeit
lands, a draw is disputed or cancelled, or every seat acknowledged the end. Plain functions of the machine's ``NoticeHost`` (``p2p.protocol.round_hosts``:
what of ``RoundMachine`` they may touch); pure."""

from __future__ import annotations

from p2p.protocol.effects import (
    Effect,
    Notice,
    cancel_reason,
)
from p2p.protocol.events import Event
from p2p.protocol.round import (
    Phase,
    seats_text,
)
from p2p.protocol.round_hosts import NoticeHost

CLOCK_GRACE_MS = 5_000
"""A forfeit that comes this much sooner than the timeout by our own clock is reported."""


def forfeit_notices(m: NoticeHost, event: Event, now: int) -> list[Effect]:
    """Tell the user about a forfeit, and what our own clock and lobby say about it."""
    st = m.state
    seat, reason = event.body["seat"], event.body["reason"]
    prev = st.chain[-2]
    waited = (event.ts - prev.ts) // 1000
    notices: list[Effect] = [
        Notice(
            f"seat {seat} was forfeited ({reason}, {waited} s without a move) "
            f"by {event.pk.hex()[:8]}",
            "forfeit",
            {"seat": seat, "reason": reason, "waited": waited, "by": event.pk.hex()[:8]},
        )
    ]
    if event.id not in m._observed_at:
        # learnt after the fact (a restart, a catch-up): our clock and lobby saw neither
        # the head nor the forfeit arrive, so they say nothing about either
        return notices
    pk = st.seats[seat].pk
    if reason == "offline" and pk != m.me.public_key and pk not in m.offline:
        notices.append(
            Notice(
                f"the forfeit says seat {seat} went offline; we saw it online",
                "forfeit_seen_online",
                {"seat": seat},
            )
        )
    # the head we took up from a log is marked "seen" at our resume (so we do not forfeit
    # its next seat at once), but our clock never saw it arrive: it tells nothing here
    seen_at = None if prev.id == m._resumed_head else m._observed_at.get(prev.id)
    limit = m.timeouts.limit(reason)
    if seen_at is not None and now - seen_at < limit - CLOCK_GRACE_MS:
        notices.append(
            Notice(
                f"the forfeit of seat {seat} came {(now - seen_at) // 1000} s after "
                f"the previous event by our clock ({limit // 1000} s is the rule)",
                "forfeit_early",
                {"seat": seat, "secs": (now - seen_at) // 1000, "limit": limit // 1000},
            )
        )
    return notices


def draw_dispute(m: NoticeHost, event: Event) -> list[Effect]:
    """A refused ``commit_close``/``draw`` that left out what reached us: say whose."""
    if event.kind not in ("commit_close", "draw"):
        return []
    kind, what = (
        ("commit", "commitment")
        if event.kind == "commit_close"
        else ("reveal", "reveal")
    )
    sealed = {m.state.seat_of(inner.pk) for inner in event.sealed()}
    left_out = sorted(s for s in m.pooled_seats(kind) - sealed if s is not None)
    if not left_out:
        return []
    return [
        Notice(
            f"the admin's {event.kind} left out the {what} of {seats_text(left_out)} "
            "that reached us; the draw does not go ahead",
            "draw_left_out",
            {"what": kind, "seats": left_out},
        )
    ]


def cancelled_draw_notices(m: NoticeHost, before: Phase) -> list[Effect]:
    """The admin cancelled during the draw: what the draw held on our side (§7)."""
    st = m.state
    if before is Phase.COMMIT:
        if not m.missing_seats("commit", st.human_seats()):
            return [
                Notice(
                    "the draw was cancelled although every seat's commitment reached us",
                    "draw_cancelled_commits",
                )
            ]
        return []
    if m.missing_seats("reveal", sorted(st.commits)):
        return []
    revealed = {
        st.seat_of(e.pk): bytes.fromhex(e.body["nonce"])
        for e in m.pooled("reveal")
    }
    seed, starter = st.draw_result(revealed)  # type: ignore[arg-type]
    outcome = (
        f"seat {starter} would have started"
        if st.start_seat is None
        else f"the seed would have been {seed.hex()[:12]}"
    )
    return [
        Notice(
            f"the draw was cancelled after every reveal reached us; {outcome}",
            "draw_cancelled_reveals",
            {"seat": starter if st.start_seat is None else None, "seed": seed.hex()[:12]},
        )
    ]


def phase_notices(m: NoticeHost, before: Phase) -> list[Effect]:
    st = m.state
    if st.phase is Phase.PLAY:
        how = "drawn" if st.start_seat is None else "named by the admin"
        notices: list[Effect] = [
            Notice(
                f"the round starts; seat {st.starter} moves first ({how})",
                "starts",
                {"seat": st.starter, "how": "drawn" if st.start_seat is None else "named"},
            )
        ]
        if before is Phase.REVEAL:
            for kind, pk in m.side:
                seat = st.seat_of(pk)
                if (
                    kind == "reveal"
                    and seat in st.commits
                    and seat not in st.revealed
                ):
                    notices.append(
                        Notice(
                            f"the admin's draw left out the reveal of seat {seat} that we received",
                            "reveal_left_out",
                            {"seat": seat},
                        )
                    )
        return notices
    if st.phase in (Phase.COMMIT, Phase.REVEAL) and before is Phase.FORMING:
        # the start: the draw begins (v5: straight to the reveals, v1-v4: the commit round)
        if st.start_seat is not None:
            return [
                Notice(
                    "all seats taken; drawing the seed of the computer moves",
                    "drawing_seed",
                )
            ]
        return [Notice("all seats taken; drawing the starting seat", "drawing")]
    if st.phase is Phase.OVER:
        return [
            Notice(
                f"the round is over ({st.end_reason}); winners: {list(st.winners())}",
                "over",
                {"reason": st.end_reason},
            )
        ]
    if st.phase is Phase.CANCELLED:
        why, seat = cancel_reason(st.end_detail)
        notices = [
            Notice(
                f"the round was {st.end_reason}",
                "cancelled",
                {"reason": why, "seat": seat},
            )
        ]
        if before in (Phase.COMMIT, Phase.REVEAL) and st.fair_draw:
            notices += cancelled_draw_notices(m, before)
        return notices
    return []


def agreed_notice(m: NoticeHost) -> list[Effect]:
    """The notice that the round is closed for everyone, once it is (``m.agreed()``)."""
    if not m.agreed():
        return []
    return [
        Notice("every member signed the result (closing acknowledgement)", "agreed")
    ]
