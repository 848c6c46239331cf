"""Hostile input: each one is rejected with a reason and the round goes on."""

from __future__ import annotations

import random

import pytest

from p2p.protocol import canonical, draw, events
from p2p.protocol.effects import Applied, ChatLine, Dropped, Equivocation, Publish
from p2p.protocol.identity import Identity
from p2p.protocol.loopback import Loopback
from p2p.protocol.round import Phase, RoundState
from p2p.protocol.round_machine import RoundMachine

ALICE, BOB, CAROL, MALLORY = (
    Identity.from_seed(bytes([i]) * 32) for i in (11, 12, 13, 14)
)
ROUND = "c0" * 16
OTHER_ROUND = "d0" * 16


def nonce(i: int) -> bytes:
    return bytes([i]) * 32


def seats(*people: Identity) -> list[dict]:
    return [{"pk": p.pk_hex, "level": None} for p in people]


def started(
    round_id: str = ROUND, start: int | None = 0
) -> tuple[Loopback, RoundMachine, RoundMachine]:
    """A connect4 round between Alice (admin, seat 0) and Bob, in play."""
    net = Loopback()
    alice, effects = RoundMachine.open(
        ALICE, 0, round_id, "connect4", {}, seats(ALICE, BOB), start, nonce(1)
    )
    bob = RoundMachine(BOB, alice.state.genesis, nonce(2))
    net.add("alice", alice, effects)
    net.add("bob", bob, bob.accept(1))
    net.run()
    assert alice.phase is bob.phase is Phase.PLAY
    return net, alice, bob


def signed_move(
    who: Identity,
    state: RoundState,
    text: str,
    ply: int | None = None,
    state_hash: str | None = None,
) -> events.Event:
    """A move event signed by ``who`` at the head of ``state``, correct unless told otherwise."""
    assert state.game is not None
    if state_hash is None:
        trial = state.game.copy()
        try:
            trial.push(text)
            state_hash = trial.state_hash()
        except ValueError:
            state_hash = "00" * 32
    body = {"ply": state.ply if ply is None else ply, "move": text, "state": state_hash}
    return events.make(
        who,
        "move",
        state.head.ts,
        body,
        round=state.round_id,
        seq=len(state.chain),
        prev=state.head.id,
    )


def only_dropped(effects: list, reason: str) -> None:
    assert len(effects) == 1 and isinstance(effects[0], Dropped), effects
    assert reason in effects[0].reason, effects[0].reason


def finish(net: Loopback, alice: RoundMachine, bob: RoundMachine) -> None:
    """The round goes on: play it to the end and check both agree."""
    rng = random.Random(0)
    by_key = {ALICE.public_key: ("alice", alice), BOB.public_key: ("bob", bob)}
    while alice.phase is Phase.PLAY:
        name, mover = by_key[alice.state.owner()]  # type: ignore[index]
        net.post(name, mover.move(rng.choice(mover.state.game.legal_moves()), net.now))
        net.run()
    assert alice.phase is bob.phase is Phase.OVER
    assert alice.state.state_hash() == bob.state.state_hash()
    assert alice.state.head.id == bob.state.head.id


def test_forged_signature_is_rejected() -> None:
    net, alice, bob = started()
    good = signed_move(ALICE, alice.state, "4")
    value = good.value()
    value["body"]["move"] = "5"  # change the move, keep the signature
    head = bob.state.head.id
    only_dropped(bob.receive_bytes(canonical.encode(value), 10), "bad signature")
    assert bob.state.head.id == head
    finish(net, alice, bob)


def test_move_by_the_wrong_seat_is_rejected() -> None:
    net, alice, bob = started()
    assert alice.state.owner() == ALICE.public_key
    only_dropped(alice.receive(signed_move(BOB, bob.state, "4"), 10), "does not own")
    # a stranger's chain event is refused on who signed it, before anything else
    only_dropped(bob.receive(signed_move(MALLORY, bob.state, "4"), 10), "non-member")
    finish(net, alice, bob)


def test_illegal_move_and_wrong_state_hash_are_rejected() -> None:
    net, alice, bob = started()
    only_dropped(bob.receive(signed_move(ALICE, bob.state, "9"), 10), "move '9'")
    only_dropped(
        bob.receive(signed_move(ALICE, bob.state, "4", ply=3), 10), "expected ply 0"
    )
    only_dropped(
        bob.receive(signed_move(ALICE, bob.state, "4", state_hash="ab" * 32), 10),
        "state hash",
    )
    assert bob.state.game is not None and bob.state.game.history() == []
    # a full column is illegal
    for column in "444444":
        mover = alice if alice.state.owner() == ALICE.public_key else bob
        net.post("x", mover.move(column, net.now))
        net.run()
    owner = ALICE if alice.state.owner() == ALICE.public_key else BOB
    only_dropped(bob.receive(signed_move(owner, bob.state, "4"), 10), "illegal move")
    finish(net, alice, bob)


def test_event_replayed_from_another_round_is_rejected() -> None:
    net, alice, bob = started()
    net2, alice2, _bob2 = started(OTHER_ROUND)
    net2.post("alice", alice2.move("4", 0))
    net2.run()
    foreign = alice2.state.head
    only_dropped(bob.receive(foreign, 10), "another round")
    # re-targeting it at our round breaks the signature
    value = foreign.value()
    value["round"] = ROUND
    only_dropped(bob.receive_bytes(canonical.encode(value), 10), "bad signature")
    finish(net, alice, bob)


def test_duplicate_is_dropped_without_effect() -> None:
    net, alice, bob = started()
    net.post("alice", alice.move("4", 1))
    net.run()
    move = bob.state.head
    before = len(bob.state.chain)
    only_dropped(bob.receive(move, 20), "duplicate")
    only_dropped(bob.receive_bytes(move.raw, 20), "duplicate")
    assert len(bob.state.chain) == before
    finish(net, alice, bob)


@pytest.mark.parametrize(
    "payload, reason",
    [
        (b"{" * 9000, "exceeds"),
        (b'{"v":1,"kind":"move"', "JSON"),
        (b"\x00\x01\x02", "JSON"),
        (b"", "empty"),
        (b'{"v":1}', "envelope"),
    ],
)
def test_oversize_and_malformed_payloads_are_rejected(
    payload: bytes, reason: str
) -> None:
    net, alice, bob = started()
    only_dropped(bob.receive_bytes(payload, 10), reason)
    finish(net, alice, bob)


def test_equivocating_mover_is_reported_and_loses() -> None:
    """Two moves signed for one position: the proof ends the round, the signer loses."""
    _net, alice, bob = started()
    first = signed_move(ALICE, alice.state, "4")
    second = signed_move(ALICE, alice.state, "3")
    assert any(isinstance(e, Applied) for e in bob.receive(first, 10))
    effects = bob.receive(second, 11)
    (proof,) = [e for e in effects if isinstance(e, Equivocation)]
    assert {proof.first.id, proof.second.id} == {first.id, second.id}
    # both signed events are published to the round so every member holds the proof
    # (and bob's closing ack of that end, issue 16 item 7)
    sent = [e.event for e in effects if isinstance(e, Publish)]
    assert {e.id for e in sent if e.kind != "ack"} == {first.id, second.id}
    assert [e.pk for e in sent if e.kind == "ack"] == [BOB.public_key]
    assert bob.state.phase is Phase.OVER and bob.state.winners() == (1,)
    assert bob.state.equivocators == [0] and "equivocation" in bob.state.end_reason


def test_equivocating_commitment_is_reported() -> None:
    """Since v5 a guest's commitment travels in its accept: two accepts by one guest
    with two commitments are an equivocation (the first is kept, both reported)."""
    alice, _effects = RoundMachine.open(
        ALICE, 0, ROUND, "connect4", {}, seats(ALICE, BOB), None, nonce(1)
    )
    genesis = alice.state.genesis
    real = events.make(
        BOB,
        "accept",
        3,
        {"seat": 1, "commit": draw.commitment(ROUND, BOB.public_key, nonce(2))},
        round=ROUND,
        prev=genesis.id,
    )
    twin = events.make(
        BOB, "accept", 3, {"seat": 1, "commit": "ee" * 32}, round=ROUND, prev=genesis.id
    )
    alice.receive(real, 4)
    effects = alice.receive(twin, 5)
    assert any(isinstance(e, Equivocation) for e in effects)
    sealed = alice.state.chain[1].sealed()  # alice started with the first one
    assert [e.id for e in sealed] == [real.id]


def test_admin_cannot_state_a_wrong_draw_result() -> None:
    net = Loopback(drop=lambda src, dst, e: e.kind == "draw")
    alice, effects = RoundMachine.open(
        ALICE, 0, ROUND, "connect4", {}, seats(ALICE, BOB), None, nonce(1)
    )
    bob = RoundMachine(BOB, alice.state.genesis, nonce(2))
    net.add("alice", alice, effects)
    net.add("bob", bob, bob.accept(1))
    net.run()
    honest = alice.state.head
    assert honest.kind == "draw" and bob.phase is Phase.REVEAL
    value = honest.value()
    body = dict(value["body"], starter=1 - value["body"]["starter"])
    forged = events.make(
        ALICE, "draw", 9, body, round=ROUND, seq=honest.seq, prev=honest.prev
    )
    only_dropped(bob.receive(forged, 10), "wrong result")
    assert bob.phase is Phase.REVEAL
    assert any(isinstance(e, Applied) for e in bob.receive(honest, 11))
    assert bob.state.starter == alice.state.starter


def test_strangers_cannot_chat_accept_or_flood_a_round() -> None:
    net, alice, bob = started()
    chat = events.make(MALLORY, "chat", 1, {"text": "buy gold"}, round=ROUND)
    only_dropped(bob.receive(chat, 10), "non-member")
    accept = events.make(
        MALLORY, "accept", 1, {"seat": 1}, round=ROUND, prev=bob.state.genesis.id
    )
    only_dropped(bob.receive(accept, 10), "after the round was formed")
    far = events.make(
        MALLORY,
        "move",
        1,
        {"ply": 9, "move": "1", "state": "00" * 32},
        round=ROUND,
        seq=99,
        prev="11" * 32,
    )
    only_dropped(bob.receive(far, 10), "non-member")
    assert not bob.pending
    resign = events.make(MALLORY, "resign", 1, {}, round=ROUND, prev=bob.state.head.id)
    only_dropped(bob.receive(resign, 10), "non-member")
    sync = events.make(
        MALLORY, "sync_request", 1, {"from_seq": 0}, round=ROUND, prev=bob.state.head.id
    )
    only_dropped(bob.receive(sync, 10), "non-member")
    finish(net, alice, bob)


def test_round_chat_is_rate_limited_per_sender() -> None:
    net, alice, bob = started()
    lines = [alice.chat(f"line {i}", 1000)[0].event for i in range(7)]
    results = [bob.receive(e, 1000) for e in lines]
    shown = [r for r in results if r and isinstance(r[0], ChatLine)]
    limited = [
        r for r in results if r and isinstance(r[0], Dropped) and "rate" in r[0].reason
    ]
    assert len(shown) == 5 and len(limited) == 2
    later = alice.chat("after a pause", 5000)[0].event
    assert isinstance(bob.receive(later, 5000)[0], ChatLine)
    finish(net, alice, bob)


def test_a_sealed_forged_resignation_is_rejected() -> None:
    net, alice, bob = started()
    value = events.make(
        BOB, "resign", 1, {}, round=ROUND, prev=alice.state.head.id
    ).value()
    value["pk"] = BOB.pk_hex
    value["ts"] = 2  # tampered after signing
    with pytest.raises(events.EventError, match="sealed event: bad signature"):
        events.make(
            ALICE,
            "seal",
            3,
            {"sealed": [value]},
            round=ROUND,
            seq=len(alice.state.chain),
            prev=alice.state.head.id,
        )
    # a well-signed resignation sealed by someone who does not own the position
    resign = events.make(BOB, "resign", 1, {}, round=ROUND, prev=alice.state.head.id)
    seal = events.make(
        BOB,
        "seal",
        3,
        {"sealed": [resign.value()]},
        round=ROUND,
        seq=len(alice.state.chain),
        prev=alice.state.head.id,
    )
    only_dropped(alice.receive(seal, 5), "does not own")
    finish(net, alice, bob)


from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 200),
    st.text(max_size=8),
    st.sampled_from(["4", "a1", "00" * 32, "11" * 16, "ab" * 32]),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_fuzzed_signed_events_never_crash_or_corrupt_a_round(
    data: st.DataObject,
) -> None:
    """Random well-signed events from members and strangers: never an exception, and the
    round still ends with both members agreeing."""
    net, alice, bob = started()
    net.post("alice", alice.move("4", 1))
    net.run()
    for _ in range(data.draw(st.integers(1, 6))):
        kind = data.draw(st.sampled_from(sorted(events.KINDS)))
        who = data.draw(st.sampled_from([ALICE, BOB, MALLORY]))
        spec = events.KINDS[kind]
        body = {name: data.draw(_values) for name in spec.body}
        if "sealed" in body:
            body["sealed"] = []
        head = bob.state.head
        context = {
            "chain": {
                "round": ROUND,
                "seq": data.draw(st.integers(1, len(bob.state.chain) + 1)),
                "prev": head.id,
            },
            "side": {
                "round": ROUND,
                "prev": data.draw(st.sampled_from([head.id, bob.state.genesis.id])),
            },
            "any": {"round": data.draw(st.sampled_from([None, ROUND]))},
            "lobby": {},
        }[spec.shape]
        if kind == "sync_request":
            context.pop("prev", None)
        try:
            event = events.make(
                who, kind, data.draw(st.integers(0, 10**13)), body, **context
            )
        except events.EventError:
            continue  # not even well-formed: parse would refuse it before any machine
        for machine in (alice, bob):
            effects = machine.receive(event, net.now)
            assert all(
                not (isinstance(e, Dropped) and "internal error" in e.reason)
                for e in effects
            )
            net.post("alice" if machine is alice else "bob", effects)
        net.run()
    equivocations = [e for _, e in net.seen if isinstance(e, Equivocation)]
    if equivocations:  # the fuzzer signed as Alice or Bob: a reported, proven fork
        return
    assert alice.state.head.id == bob.state.head.id and alice.phase is bob.phase
    if alice.phase is Phase.PLAY:
        finish(net, alice, bob)
