"""What the round machine does by itself (``RoundMachine._react``): the admin starts
(from v5 the start closes the commitments the genesis and the accepts carried) and
draws, cancels when an invitee declines or leaves; members reveal as soon as the start
(v1-v4: the ``commit_close``) fixed every commitment -- the commit round of a v1-v4
round is kept for such a round's machine, never entered by a v5 one; the owner of the position seals pending
resignations and plays the computer seats.  Plain functions of the machine's ``DutyHost`` (``p2p.protocol.round_hosts``:
what of ``RoundMachine`` they may touch); pure."""

from __future__ import annotations

from p2p.protocol import draw
from p2p.protocol.effects import CANCEL_NO_COMMIT, CANCEL_NO_REVEAL, Effect
from p2p.protocol.events import Event
from p2p.protocol.round import PRE_PLAY, Phase, seats_text
from p2p.protocol.round_hosts import DutyHost


def react_once(m: DutyHost, now: int) -> list[Effect]:
    if m.local_end is not None:
        return []  # ended here: nothing is ours to do (``goes_on`` may lift it)
    st = m.state
    mine = m.me.public_key
    seat = m.my_seat
    if st.phase in PRE_PLAY and m.is_admin:
        gone = m.pooled("leave") + m.pooled("resign")
        if gone:
            return m._append(
                "cancel", {"reason": f"seat {st.seat_of(gone[0].pk)} left"}, now
            )
    if st.phase is Phase.FORMING and m.is_admin:
        declined = m.pooled("decline")
        if declined:
            return m._append(
                "cancel",
                {"reason": f"seat {st.seat_of(declined[0].pk)} declined"},
                now,
            )
        return try_start(m, now)
    if st.phase is Phase.COMMIT:
        if seat is not None and ("commit", mine) not in m.side:
            commit = draw.commitment(st.round_id, mine, m.nonce)
            return m._side_event(
                "commit", {"commit": commit}, now, prev=st.chain[1].id
            )
        if m.is_admin and m.pooled_seats("commit") >= set(st.human_seats()):
            return m._close_commits(now)
    if st.phase is Phase.REVEAL:
        if (
            seat in st.commits
            and ("reveal", mine) not in m.side
            # a commitment another session of our key made is not ours to reveal
            and st.commits[seat] == draw.commitment(st.round_id, mine, m.nonce)
        ):
            return m._side_event(
                "reveal", {"nonce": m.nonce.hex()}, now, prev=st.head.id
            )
        if m.is_admin and m.pooled_seats("reveal") >= set(st.commits):
            return m._draw(now)
    if st.phase is Phase.PLAY and st.owner() == mine:
        to_seal = [
            e
            for (k, _), e in m.side.items()
            if k == "resign"
            and st.seat_of(e.pk) not in st.resigned
            or k == "leave"
            and st.seat_of(e.pk) not in st.left
        ]
        if to_seal:
            return m._append(
                "seal", {"sealed": [e.value() for e in to_seal]}, now
            )
        assert st.game is not None
        to_move = st.game.to_move()
        if to_move is not None and st.seats[to_move].is_computer:
            text = st.computer_move()
            return m._append_move(text, now)
    return []



def try_start(m: DutyHost, now: int) -> list[Effect]:
    st = m.state
    sealed: list[Event] = []
    for s in st.seats:
        if s.is_computer or s.pk == m.me.public_key or s.pk is None:
            continue
        accept = m.side.get(("accept", s.pk))
        if accept is None:
            return []
        sealed.append(accept)
    open_count = sum(1 for s in st.seats if s.pk is None and not s.is_computer)
    if open_count:
        joins = [
            e for (k, _), e in m.side.items() if k == "join"
        ]  # arrival order
        if len(joins) < open_count:
            return []
        sealed += joins[:open_count]
    return m._append("start", {"sealed": [e.value() for e in sealed]}, now)



def close_commits(m: DutyHost, now: int) -> list[Effect]:
    """Seal the commitments; under the fair-draw rules a missing one cancels (§7)."""
    missing = m.missing_seats("commit", m.state.human_seats())
    if missing and m.state.fair_draw:
        reason = f"{seats_text(missing)} {CANCEL_NO_COMMIT}"
        return m._append("cancel", {"reason": reason}, now)
    commits = m.pooled("commit")
    return m._append(
        "commit_close", {"sealed": [e.value() for e in commits]}, now
    )



def draw_starter(m: DutyHost, now: int) -> list[Effect]:
    """Seal the reveals; under the fair-draw rules a missing one cancels (§7)."""
    st = m.state
    missing = m.missing_seats("reveal", sorted(st.commits))
    if missing and st.fair_draw:
        reason = f"{seats_text(missing)} {CANCEL_NO_REVEAL}"
        return m._append("cancel", {"reason": reason}, now)
    reveals = [e for e in m.pooled("reveal") if st.seat_of(e.pk) in st.commits]
    by_seat = {st.seat_of(e.pk): bytes.fromhex(e.body["nonce"]) for e in reveals}
    seed, starter = st.draw_result(by_seat)  # type: ignore[arg-type]
    body = {
        "sealed": [e.value() for e in reveals],
        "seed": seed.hex(),
        "starter": starter,
    }
    return m._append("draw", body, now)



def append_move(m: DutyHost, text: str, now: int) -> list[Effect]:
    st = m.state
    assert st.game is not None
    trial = st.game.copy()
    trial.push(text)
    digest = trial.state_hash()
    m._advanced = (trial, digest)  # applied as it is: not played and hashed twice
    try:
        return m._append("move", {"ply": st.ply, "move": text, "state": digest}, now)
    finally:
        m._advanced = None
