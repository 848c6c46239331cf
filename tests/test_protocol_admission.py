"""``p2p.protocol.admission``: one answer to "may this signer send this kind here now?",
the same for the round machine and the network edge."""

from __future__ import annotations

from p2p.protocol import events
from p2p.protocol.admission import WHY_UNKNOWN_NON_MEMBER, Members, refusal
from p2p.protocol.effects import Dropped
from p2p.protocol.identity import Identity
from p2p.protocol.round_machine import RoundMachine

ADMIN = Identity.from_seed(b"\x01" * 32)
GUEST = Identity.from_seed(b"\x02" * 32)
STRANGER = Identity.from_seed(b"\x03" * 32)
ROUND = "5a" * 16


def _round() -> RoundMachine:
    seats = [{"pk": ADMIN.pk_hex, "level": None}, {"pk": GUEST.pk_hex, "level": None}]
    admin, _ = RoundMachine.open(ADMIN, 0, ROUND, "connect4", {}, seats, 0, bytes(32))
    guest = RoundMachine(GUEST, admin.state.genesis, bytes(32))
    for effect in guest.accept(1):
        admin.receive(effect.event, 2)  # type: ignore[union-attr]
    return admin


def test_the_machine_drops_a_strangers_events_with_the_admission_rules_reason() -> None:
    admin = _round()
    st = admin.state
    head = st.head
    sent = {
        "chat": events.make(STRANGER, "chat", 3, {"text": "hi"}, round=ROUND),
        "sync_request": events.make(
            STRANGER, "sync_request", 3, {"from_seq": len(st.chain)}, round=ROUND, prev=head.id
        ),
        "resign": events.make(STRANGER, "resign", 3, {}, round=ROUND, prev=head.id),
        "forfeit": events.make(
            STRANGER, "forfeit", 3, {"seat": 1, "reason": "silent"}, round=ROUND,
            seq=len(st.chain), prev=head.id,
        ),
    }
    for kind, event in sent.items():
        why = refusal(st, STRANGER.public_key, kind, event.seq)
        assert why and why != WHY_UNKNOWN_NON_MEMBER
        (effect,) = admin.receive(event, 4)
        assert isinstance(effect, Dropped) and effect.reason == why, (kind, effect)
    ahead = events.make(
        STRANGER, "move", 3, {"ply": 9, "move": "1", "state": "0" * 64}, round=ROUND,
        seq=len(st.chain) + 3, prev="ab" * 32,
    )
    (effect,) = admin.receive(ahead, 4)
    assert isinstance(effect, Dropped) and effect.reason == WHY_UNKNOWN_NON_MEMBER
    assert not admin.pending  # a stranger's event never waits among the parked ones


def test_members_admit_exactly_the_seated_keys_and_follow_the_chain() -> None:
    admin = _round()
    members = Members()
    assert members.admits(admin.state, GUEST.public_key)
    assert members.admits(admin.state, ADMIN.public_key)
    assert not members.admits(admin.state, STRANGER.public_key)
    assert refusal(admin.state, STRANGER.public_key, "join") == ""  # a code holder may ask
    assert refusal(admin.state, STRANGER.public_key, "join", known=False) == WHY_UNKNOWN_NON_MEMBER
