"""The round machine's user actions: accept, decline, join, move, resign, leave,
take-back, cancel, chat and sync requests.  Each checks that it may be done now (else
``ActionError``, one line) and returns the effects.  Plain functions of the machine's ``ActionHost`` (``p2p.protocol.round_hosts``:
what of ``RoundMachine`` they may touch); pure."""

from __future__ import annotations

from typing import Any

from p2p.games.base import CodedError, MoveError
from p2p.protocol import draw, events, round_conflicts
from p2p.protocol.chat import clean_line
from p2p.protocol.effects import (
    Effect,
    Publish,
)
from p2p.protocol.events import Event
from p2p.protocol.identity import sanitize_nickname
from p2p.protocol.round import (
    PRE_PLAY,
    Phase,
)
from p2p.protocol.round_hosts import ActionHost
from p2p.protocol.topics import join_proof

CATCH_UP_MS = 30_000
"""After our own sync request, events we apply for this long are not "seen live"."""


class ActionError(CodedError):
    """A user action that cannot be done now: a one-line reason (English) and, where a
    user interface wants to say it in its own language, a ``code`` with ``params``."""



def accept(m: ActionHost, now: int) -> list[Effect]:
    """Accept the invitation to our seat."""
    m.check_acting()
    seat = m.my_seat
    if m.phase is not Phase.FORMING or seat is None or m.expired:
        raise ActionError("there is no open invitation to accept", "no_invitation")
    return m._side_event(
        "accept", with_commitment(m, {"seat": seat}), now, prev=m.state.genesis.id
    )


def with_commitment(m: ActionHost, body: dict[str, Any]) -> dict[str, Any]:
    """``body`` of our ``accept`` or ``join`` with our commitment to the draw, if the
    round draws and commits with the invitation (v5, docs/protocol.md §7)."""
    st = m.state
    if st.commits_with_invitation():
        body["commit"] = draw.commitment(st.round_id, m.me.public_key, m.nonce)
    return body



def decline(m: ActionHost, now: int) -> list[Effect]:
    """Decline the invitation (also what a busy peer answers automatically)."""
    m.check_acting()
    seat = m.my_seat
    if m.phase is not Phase.FORMING or seat is None:
        raise ActionError("there is no open invitation to decline", "no_invitation")
    return m._side_event(
        "decline", {"seat": seat}, now, prev=m.state.genesis.id
    )



def join(m: ActionHost, nick: str, now: int) -> list[Effect]:
    """Ask for an open seat of a private round (needs the code)."""
    m.check_acting()
    if not m.state.private or m.code is None:
        raise ActionError("only a private round can be joined with its code")
    if m.phase is not Phase.FORMING:
        raise ActionError("the round has already started", "code_closed")
    body = {
        "nick": sanitize_nickname(nick) or "?",
        "proof": join_proof(
            m.code, m.state.round_id, m.me.public_key, m._secret
        ),
    }
    return m._side_event("join", with_commitment(m, body), now, prev=m.state.genesis.id)



def move(m: ActionHost, text: str, now: int) -> list[Effect]:
    """Play ``text`` for our seat; ``ActionError`` if it is not our turn or illegal."""
    m.check_acting()
    st = m.state
    if m.phase is not Phase.PLAY or st.game is None:
        raise ActionError("the round is not in play", "not_in_play")
    if (
        st.owner() != m.me.public_key
        or st.seats[st.game.to_move() or 0].is_computer
    ):
        raise ActionError("it is not your turn", "not_your_turn")
    try:
        text = st.game.normalize(text)
        if text not in st.game.legal_moves():
            st.game.copy().push(text)  # the engine says why, with its code
            raise ActionError(f"{text} is not a legal move here")
        effects = m._append_move(text, now)
    except MoveError as err:  # the engine's code and params go up unchanged
        raise ActionError(str(err), err.code, **err.params) from None
    return effects + m._react(now)



def resign(m: ActionHost, now: int) -> list[Effect]:
    """Give up our seat (sealed by the owner of the next position)."""
    return give_up(m, "resign", now)



def leave(m: ActionHost, now: int) -> list[Effect]:
    """Leave the round; in play this resigns the seat (and hands on the admin role)."""
    if m.phase in PRE_PLAY:
        if m.is_admin:
            return cancel(m, "the admin left", now)
        if (
            m.phase is Phase.FORMING
            and ("accept", m.me.public_key) not in m.side
        ):
            return decline(m, now)
    return give_up(m, "leave", now)



def give_up(m: ActionHost, kind: str, now: int) -> list[Effect]:
    m.check_acting()
    if m.my_seat is None:
        raise ActionError("you hold no seat in this round", "no_seat_here")
    if m.phase in (Phase.OVER, Phase.CANCELLED):
        raise ActionError(f"the round is already {m.phase.value}")
    if (kind, m.me.public_key) in m.side:
        raise ActionError(f"you already sent {kind}")
    return m._side_event(kind, {}, now) + m._react(now)



def request_takeback(m: ActionHost, now: int) -> list[Effect]:
    """Ask the others to take back our last move (once per round; it must be the head)."""
    m.check_acting()
    st = m.state
    head = st.head
    seat = m.my_seat
    if m.phase is not Phase.PLAY or st.game is None or seat is None or head.kind != "move" \
            or head.pk != m.me.public_key:
        raise ActionError("only your own last move can be taken back, before it is answered")
    trial = st.game.copy()
    trial.pop()
    if trial.to_move() != seat:
        raise ActionError("only your own last move can be taken back, before it is answered")
    if ("takeback", m.me.public_key) in m.side:
        raise ActionError("you have already asked for a take-back in this round")
    return m._side_event("takeback", {"ply": head.body["ply"]}, now)



def takeback_request(m: ActionHost) -> Event | None:
    """Another member's pooled request to take back the last move, if any."""
    head = m.state.head
    if m.declined_at == head.id:
        return None  # the player to move said no (signed); the request is answered
    for (kind, pk), event in m.side.items():
        if kind == "takeback" and pk != m.me.public_key and event.prev == head.id:
            return event
    return None



def accept_takeback(m: ActionHost, now: int) -> list[Effect]:
    """As the owner of the position: agree to the pending take-back (a ``seal``)."""
    m.check_acting()
    request = takeback_request(m)
    if request is None:
        raise ActionError("nobody asks to take back the last move")
    if m.state.owner() != m.me.public_key:
        raise ActionError("only the player to move can agree to a take-back")
    return m._append("seal", {"sealed": [request.value()]}, now) + m._react(now)



def cancel(m: ActionHost, reason: str, now: int) -> list[Effect]:
    """The admin calls the round off before play."""
    m.check_acting()
    if not m.is_admin:
        raise ActionError("only the admin can cancel the round", "only_admin")
    if m.phase not in PRE_PLAY:
        raise ActionError("a round in play cannot be cancelled; resign instead", "cancel_in_play")
    return m._append(
        "cancel", {"reason": clean_line(reason)[:80] or "cancelled"}, now
    )



def chat(m: ActionHost, text: str, now: int) -> list[Effect]:
    """A round chat line from us."""
    line = clean_line(text)
    if not line:
        raise ActionError("an empty chat line", "empty_chat")
    event = events.make(
        m.me, "chat", now, {"text": line}, round=m.state.round_id
    )
    m._chat_seen.add(event.id, event.ts, now)  # our own echo is a duplicate
    return [Publish(m.topics.round_chat(m.key), event)]



def request_sync(m: ActionHost, now: int, catch_up: bool = True) -> list[Effect]:
    """Ask the members for the chain from our head on, naming our head.

    ``catch_up``: we know we missed events (a reconnect, a restart, parked events):
    for ``CATCH_UP_MS`` the events we apply are not taken as seen live (our clock
    says nothing about when they were made).  ``False``: a periodic head exchange;
    members whose head is ours do not answer.
    """
    if catch_up:
        m._catch_up_until = now + CATCH_UP_MS
    return ask_sync(m, now, len(m.state.chain))



def ask_sync(m: ActionHost, now: int, from_seq: int) -> list[Effect]:
    m._last_asked = now
    m._asked_len = len(m.state.chain)
    head = m.state.chain[min(from_seq, len(m.state.chain)) - 1]
    body = {"from_seq": head.seq + 1}  # type: ignore[operator]
    event = events.make(
        m.me, "sync_request", now, body, round=m.state.round_id, prev=head.id
    )
    # not into ``seen``: sync requests must not flush the memory of chain events
    m._sync_floor[m.me.public_key] = (event.ts, event.id)
    round_conflicts.add_sign(m, event)  # our own sign of the head we hold
    return [Publish(m.topics.round_sync(m.key), event)]
