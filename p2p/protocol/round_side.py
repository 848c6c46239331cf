"""The round machine's side events (not in the chain): their checks, the closing
acknowledgement, round chat and sync answers. Plain functions of the machine's ``SideHost`` (``p2p.protocol.round_hosts``:
what of ``RoundMachine`` they may touch); pure."""

from __future__ import annotations

from p2p.protocol import draw, round_notices
from p2p.protocol.admission import refusal
from p2p.protocol.conflicts import MAX_REWIND
from p2p.protocol.effects import (
    Acknowledged,
    ChatLine,
    Effect,
    Equivocation,
    Notice,
    Publish,
    dropped,
)
from p2p.protocol.events import Event
from p2p.protocol.round import (
    PRE_PLAY,
    Phase,
)
from p2p.protocol.round_hosts import SideHost
from p2p.protocol.topics import join_proof

SYNC_INTERVAL_MS = 5_000
"""We answer one sync request per member at most this often (and ask at most this often)."""
MAX_SYNC_ANSWER = 32
"""Chain events one sync answer re-publishes at most (the requester asks on for more)."""
SYNC_EVENTS_PER_INTERVAL = 2 * MAX_SYNC_ANSWER
"""Chain events we re-publish in sync answers per ``SYNC_INTERVAL_MS``, all requesters
together: however many members ask, and however often, a member's answers cost everyone
at most this many messages per interval."""
ROUND_CHAT_WINDOW_MS = 120_000
"""Round chat is taken only within this much of its signed ``ts`` (as lobby chat, §5)."""
MAX_ROUND_CHAT_SEEN = 1024
"""Round chat ids remembered per round; beyond, a floor refuses anything older."""
MAX_JOINS = 64
"""Join requests (a private round's code holders) the admin keeps in its pool; more are
dropped (the admin seats the first ones anyway)."""


def receive_side(m: SideHost, event: Event, now: int) -> list[Effect]:
    st = m.state
    known = {e.id for e in st.chain}
    if event.prev not in known:
        return m._park(event, now)
    if event.kind == "takeback_decline":
        return receive_takeback_decline(m, event)
    key = (event.kind, event.pk)
    first = m.side.get(key)
    if first is not None and first.id == event.id:
        return [dropped(event, "duplicate")]  # the same event twice: never a proof
    if (
        event.kind == "ack"
        and first is not None
        and first.prev != st.head.id
        and not side_problem(m, event)
    ):  # a rewind changed the end: the ack of the new end replaces the old one
        del m.side[key]
        first = None
    if (
        first is not None
    ):  # one accept, commit, reveal, resign ... per member and round
        m.seen.add(event.id)
        return [Equivocation(first, event)]
    if event.kind == "join" and sum(k == "join" for k, _ in m.side) >= MAX_JOINS:
        return [dropped(event, "too many join requests")]
    reason = side_problem(m, event)
    if reason == "join is for the admin to decide":
        return []  # other members ignore joins silently: the admin's start decides
    if reason:
        return [dropped(event, reason)]
    m.seen.add(event.id)
    m.side[key] = event
    m.side_accepted += 1
    if event.prev is not None and event.pk != m.me.public_key:
        m._vouched.add(event.prev)  # its ack or request answers that event
    if event.kind == "ack":
        return [Acknowledged(event, st.seat_of(event.pk))] + round_notices.agreed_notice(m)  # type: ignore[arg-type]
    if event.kind == "takeback" and m.takeback_request() is event:
        seat = m.state.seat_of(event.pk)
        return [Notice(f"seat {seat} asks to take back its last move", "takeback_asked", {"seat": seat})]
    return []


def takeback_decline_problem(m: SideHost, event: Event) -> str:
    """Why a ``takeback_decline`` says nothing here ('' if it answers the request on the
    board): it must name the chain head, a move whose mover asked to take it back, and
    come from the owner of the position after it (the one who could agree), once."""
    st = m.state
    why = refusal(st, event.pk, event.kind)
    if why:
        return why
    head = st.head
    if st.phase is not Phase.PLAY or event.prev != head.id or head.kind != "move":
        return "takeback_decline of a move that is no longer the last"
    if event.body["ply"] != head.body["ply"]:
        return "takeback_decline names another ply"
    if event.pk != st.owner() or event.pk == head.pk:
        return "takeback_decline by a key that does not answer take-backs here"
    if m.declined_at == head.id:
        return "takeback_decline again"
    request = m.side.get(("takeback", head.pk))
    if request is None or request.prev != head.id:
        return "takeback_decline of no request we hold"
    return ""


def receive_takeback_decline(m: SideHost, event: Event) -> list[Effect]:
    """The player to move said no to a take-back: every member (the asker first) is told
    at once.  Nothing in the chain or the pool changes; the request is answered
    (``RoundMachine.takeback_request`` no longer returns it)."""
    why = takeback_decline_problem(m, event)
    if why:
        return [dropped(event, why)]
    m.seen.add(event.id)
    m.declined_at = event.prev
    st = m.state
    asker = st.seat_of(st.head.pk)
    by = st.seat_of(event.pk)
    return [Notice(f"seat {by} declines to take back seat {asker}'s last move", "takeback_declined",
                   {"seat": asker, "by": by})]


def decline_takeback(m: SideHost, now: int) -> list[Effect]:
    """Sign and publish our ``takeback_decline`` of the pending request (the machine's
    ``decline_takeback``)."""
    from p2p.protocol import events
    from p2p.protocol.round_machine import ActionError

    request = m.takeback_request()
    if request is None:
        raise ActionError("nobody asks to take back the last move", "no_takeback")
    st = m.state
    if st.owner() != m.me.public_key:
        raise ActionError("only the player to move can answer a take-back", "not_your_turn")
    if not m.acting:
        return []
    event = events.make(m.me, "takeback_decline", now, m._signed_body({"ply": st.head.body["ply"]}),
                        round=st.round_id, prev=st.head.id)
    m.seen.add(event.id)
    m.declined_at = st.head.id
    return [Publish(m.route(), event)]


def acks(m: SideHost) -> dict[int, Event]:
    """The members' closing acknowledgements of our final head we hold, by seat (an ack
    of an end a rewind replaced is kept, but no longer counts)."""
    found = {}
    head = m.state.head.id
    for (kind, pk), event in m.side.items():
        seat = m.state.seat_of(pk)
        if kind == "ack" and seat is not None and event.prev == head:
            found[seat] = event
    return found


def agreed(m: SideHost) -> bool:
    """True once every human seat signed the final head and state hash."""
    return m.state.phase in (Phase.OVER, Phase.CANCELLED) and set(
        acks(m)
    ) >= set(m.state.human_seats())


def acknowledge(m: SideHost, now: int) -> list[Effect]:
    """Sign our ``ack`` of the final head and state hash (docs/protocol.md §9)."""
    if not m.acting:
        return []  # the session of our key that acts signs the ack
    seat = m.my_seat
    st = m.state
    mine = m.side.get(("ack", m.me.public_key))
    if mine is not None and mine.prev == st.head.id:
        return []
    if seat is None or st.phase not in (Phase.OVER, Phase.CANCELLED):
        return []
    m.side.pop(("ack", m.me.public_key), None)  # an end a rewind replaced
    published = m._side_event(
        "ack", {"state": st.state_hash()}, now, prev=st.head.id
    )
    event = m.side[("ack", m.me.public_key)]
    return published + [Acknowledged(event, seat)] + round_notices.agreed_notice(m)


def side_problem(m: SideHost, event: Event) -> str:
    """Why a side event is useless or hostile here ('' if it may go into the pool)."""
    st = m.state
    seat = st.seat_of(event.pk)
    kind = event.kind
    if kind in ("accept", "decline"):
        if st.phase is not Phase.FORMING:
            return f"{kind} after the round was formed"
        if event.prev != st.genesis.id:
            return f"{kind} does not answer the genesis"
        target = event.body["seat"]
        if target >= len(st.seats) or st.seats[target].pk != event.pk:
            return f"{kind} for seat {target} by a key not invited to it"
        return st.commitment_error(event) if kind == "accept" else ""
    if kind == "join":
        if not m.is_admin:
            return "join is for the admin to decide"
        if event.prev != st.genesis.id:
            return "join does not answer the genesis"
        if not st.private:
            return "join in a public round"
        if seat is not None:
            return "join by a key that already holds a seat"
        if m.is_admin and m.code is not None:
            expected = join_proof(m.code, st.round_id, event.pk, m._secret)
            if event.body["proof"] != expected:
                return "join without the right code"
        return st.commitment_error(event)
    why = refusal(st, event.pk, kind)
    if why:
        return why
    if kind == "commit":
        if st.phase is not Phase.COMMIT:
            return "commit outside the commit phase"
        if event.prev != st.chain[1].id:
            return "commit does not answer the start"
        return ""
    if kind == "reveal":
        if st.phase is not Phase.REVEAL:
            return "reveal outside the reveal phase"
        if event.prev != st.head.id:  # the start (v5) or the commit_close (v4)
            return "reveal does not answer the commit set"
        commit = None if seat is None else st.commits.get(seat)
        nonce = bytes.fromhex(event.body["nonce"])
        if (
            commit is None
            or draw.commitment(st.round_id, event.pk, nonce) != commit
        ):
            return "reveal does not match a commitment in the closed set"
        return ""
    if kind == "ack":
        if st.phase not in (Phase.OVER, Phase.CANCELLED):
            return "ack of a round that has not ended here"
        if event.prev != st.head.id or event.body["state"] != st.state_hash():
            return "ack of another end of the round"
        return ""
    if kind in ("resign", "leave"):
        if seat in st.left or kind == "resign" and seat in st.resigned:
            return f"seat {seat} is already out"
        return ""
    if kind == "takeback":
        answered = next((e for e in reversed(st.chain) if e.id == event.prev), None)
        if st.phase is not Phase.PLAY or answered is None or answered.kind != "move" \
                or answered.pk != event.pk:
            return "takeback of no move of its sender"
        return ""
    return f"{kind} is not a side event"


def receive_chat(m: SideHost, event: Event, now: int) -> list[Effect]:
    seat = m.state.seat_of(event.pk)
    why = refusal(m.state, event.pk, event.kind)
    if why or seat is None:
        return [dropped(event, why)]
    if not m._chat_limit.allow(event.pk, now):
        return [dropped(event, "chat rate limit")]
    m._chat_seen.add(event.id, m.local_time(event.pk, event.ts), now)
    nick = m.state.seats[seat].nick
    return [
        ChatLine(event.pk, nick, event.body["text"], m.state.round_id, event.ts)
    ]


def answer_sync(m: SideHost, event: Event, now: int) -> list[Effect]:
    """Answer a member's sync request, which names its chain head (``prev``).

    Same head: nothing to send in play; after the end, our acks of that head (the
    asker lacks one, ``RoundMachine.asks_for_acks``), and the equivocation proof if
    the round ended by one (its end keeps the head: the asker may have missed it).  Its head is on our chain: the
    events after it.  Its head is not on our chain (it is on another branch, or
    ahead of us): our last ``MAX_REWIND`` events, so it meets the position where we
    part, and we ask for its chain too.  The conflict rules then bring both to the
    same chain.
    """
    if event.pk == m.me.public_key:
        return [dropped(event, "our own sync request")]
    chain = m.state.chain
    from_seq, head = event.body["from_seq"], event.prev
    ours = 0 < from_seq <= len(chain) and chain[from_seq - 1].id == head
    same = ours and from_seq == len(chain) and m.phase not in PRE_PLAY
    ended = m.phase in (Phase.OVER, Phase.CANCELLED)
    if same and not ended:
        return []  # same head: the usual answer of a head exchange
    last = m._sync_answered.get(event.pk)
    if last is not None and now - last < SYNC_INTERVAL_MS:
        return [dropped(event, "sync request too soon")]
    if same:  # the asker ended where we did and lacks an ack: ours of this head
        m._sync_answered[event.pk] = now
        route = m.topics.round_sync(m.key)
        acks = [
            Publish(route, e)
            for (kind, _), e in m.side.items()
            if kind == "ack" and e.prev == head
        ]
        # a round ended by a proof keeps the chain's head: an asker that missed the
        # proof holds the same head and plays on, so the proof goes with the acks
        proof: list[Effect] = [Publish(route, e) for e in m._proof or ()]
        return proof + acks
    if ours:
        start = from_seq
    else:
        start = max(1, min(from_seq, len(chain)) - MAX_REWIND - 1)
    count = min(len(chain) - start, MAX_SYNC_ANSWER)
    since, sent = m._sync_sent
    if now - since >= SYNC_INTERVAL_MS or now < since:
        since, sent = now, 0
    if count and sent + count > SYNC_EVENTS_PER_INTERVAL:
        return [dropped(event, "sync answers over budget")]  # it asks again
    m._sync_sent = (since, sent + count)
    m._sync_answered[event.pk] = now
    route = m.topics.round_sync(m.key)
    answer: list[Effect] = []
    if not ours and (now - m._last_asked >= SYNC_INTERVAL_MS or now < m._last_asked):
        answer += m._ask_sync(now, from_seq=start)
    answer += [Publish(route, e) for e in chain[start : start + count]]
    if not ours:  # another branch: the claims we did not keep and the signs that decided
        answer += [Publish(route, e) for e in m.conflict_evidence()]
    if m._proof is not None:  # the equivocation proof that ended the round here (an
        answer += [Publish(route, e) for e in m._proof]  # asker behind us needs it too)
    sealed = {inner.id for e in chain for inner in e.sealed()}
    answer += [Publish(route, e) for e in m.side.values() if e.id not in sealed]
    return answer
