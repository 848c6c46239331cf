"""Who may send what into a round, answered once: "may this signer send this kind at
this position now?"  Pure; the network edge (``p2p.peer.edge``, which lane a payload
takes) and the round machine (``p2p.protocol.round_machine``, what it drops) both ask
here, so the rule cannot drift apart between them.

The rule (docs/protocol.md §15): a round's events come from its members, the keys that
hold a seat.  A non-member may send exactly one thing, a ``join`` (a private round's code
holder asks for an open seat); whatever else it signs is refused with a reason that names
the kind.  A chain event ahead of our chain, or a side event answering an event we do not
know, is the exception: a joiner seated by a ``start`` we have not seen yet is a member
there, so such an event "answers an event we do not know" and may fit later.

>>> from p2p.protocol.identity import Identity
>>> from p2p.protocol import events
>>> admin = Identity.from_seed(b"\\x01" * 32)
>>> genesis = events.make(admin, "genesis", 0, {"game": "connect4", "options": {},
...     "seats": [{"pk": admin.pk_hex, "level": None}, {"pk": None, "level": "neuling"}],
...     "start": 0, "expires": 60_000, "private": False, "commit": "11" * 32},
...     round="5a" * 16, seq=0)
>>> from p2p.protocol.round import RoundState
>>> state = RoundState.from_genesis(genesis)
>>> refusal(state, admin.public_key, "move", 1)
''
>>> stranger = Identity.from_seed(b"\\x02" * 32).public_key
>>> refusal(state, stranger, "chat"), refusal(state, stranger, "move", 1)
('round chat by a non-member', 'chain event by a non-member')
>>> refusal(state, stranger, "join"), refusal(state, stranger, "move", 5)
('', 'answers an event we do not know, from a non-member')
>>> refusal(state, stranger, "join", known=False)
'answers an event we do not know, from a non-member'

"""

from __future__ import annotations

from p2p.protocol import phases
from p2p.protocol.round import RoundState

WHY_UNKNOWN_NON_MEMBER = "answers an event we do not know, from a non-member"
"""A non-member's event beyond what we hold: it may fit once a ``start`` seats its signer."""


def refusal(
    state: RoundState, signer: bytes, kind: str, seq: int | None = None, *, known: bool = True
) -> str:
    """Why ``signer`` may not send a ``kind`` event (chain position ``seq``, ``None`` for a
    side event, chat or sync request) into the round of ``state`` now; ``''`` if it may.

    ``known``: the event answers something we hold (a side event's ``prev`` is on our
    chain); ``False`` for one that answers an event we have not seen.
    """
    if state.is_member(signer) or kind == "join" and seq is None and known:
        return ""
    if kind == "chat":
        return "round chat by a non-member"
    if kind == "sync_request":
        return "sync request by a non-member"
    if seq is not None:
        if seq > len(state.chain):
            return WHY_UNKNOWN_NON_MEMBER
        return "chain event by a non-member"
    if not known:
        return WHY_UNKNOWN_NON_MEMBER
    return f"{kind} by a non-member"


def out_of_phase(state: RoundState, kind: str) -> str:
    """Why a chain event of ``kind`` cannot be appended at the head of ``state`` now, by
    the round's transition table (``p2p.protocol.phases``), or ``''``: the phase half of
    "may this kind come now", asked by the machine before it applies an event at its head.
    """
    return phases.out_of_phase(state.phase, kind)


class Members:
    """The member keys of a round, rebuilt only when its chain changes (the edge asks for
    every payload, so the set is kept, not recomputed per message)."""

    def __init__(self) -> None:
        self._at: tuple[int, str] = (-1, "")
        self._keys: frozenset[bytes] = frozenset()

    def of(self, state: RoundState) -> frozenset[bytes]:
        """The keys holding a seat in ``state``."""
        at = (len(state.chain), state.head.id)
        if at != self._at:
            self._at = at
            self._keys = frozenset(s.pk for s in state.seats if s.pk is not None)
        return self._keys

    def admits(self, state: RoundState, signer: bytes) -> bool:
        """True if ``signer`` may send every kind into the round (a member): the edge's
        "known member" check, for which such a payload takes the round lane.  Anyone
        else's payload is charged to the shared lane and judged by ``refusal`` in the
        machine (a join, or a refusal the sender is told of)."""
        return signer in self.of(state)
