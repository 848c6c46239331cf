"""Issue 9 (finality, one chain, cheap hostile events, rounds that end), played as attacks.

Every attack here uses validly signed events of a real member or a stranger, fed to the
pure round and lobby machines (no broker); ``test_integration_fair_chain.py`` plays the
same attacks against live peers on Mosquitto.
"""

from __future__ import annotations

import pytest
from test_protocol_forfeit import OFFLINE, SILENT, acts, drops, published, will_of
from test_protocol_round import PEOPLE, ROUND, assert_agree, human, nonce, open_round

from p2p.protocol import canonical, events, round_machine
from p2p.protocol.conflicts import MAX_AHEAD_MS, MAX_SEEN, SETTLE_MS
from p2p.protocol.effects import Applied, Equivocation, Notice, Publish, Rewound
from p2p.protocol.events import MAX_TS
from p2p.protocol.identity import Identity
from p2p.protocol.lobby import Lobby
from p2p.protocol.loopback import Loopback
from p2p.protocol.replay import replay_log
from p2p.protocol.round import Phase, RoundState
from p2p.protocol.round_machine import (
    FORMING_GRACE_MS,
    HEAD_EXCHANGE_MS,
    MAX_PENDING,
    START_DEADLINE_MS,
    RoundMachine,
)
from p2p.protocol.topics import Topics

STRANGER = Identity.from_seed(b"\x66" * 32)
ANSWERED = "the turn at {seq} was answered"
"""Issue 16: a forfeit that would replace a turn answered more than ``RACE_MS`` ago."""


def offline(seat: int) -> dict:
    """An offline forfeit's body, with seat ``seat``'s (``PEOPLE[seat]``) signed Will."""
    return {"seat": seat, "reason": "offline", "evidence": will_of(seat).value()}


def signed(
    who: Identity, state: RoundState, kind: str, body: dict, ts: int
) -> events.Event:
    """A chain event by ``who`` at the head of ``state``."""
    head = state.head
    return events.make(
        who, kind, ts, body, round=state.round_id, seq=len(state.chain), prev=head.id
    )


def signed_move(who: Identity, state: RoundState, text: str, ts: int) -> events.Event:
    """A correct move event by ``who`` at the head of ``state``, dated ``ts``."""
    trial = state.game.copy()
    trial.push(text)
    body = {"ply": state.ply, "move": text, "state": trial.state_hash()}
    return signed(who, state, "move", body, ts)


def owner_of(machines: list[RoundMachine]) -> RoundMachine:
    return next(m for m in machines if m.state.owner() == m.me.public_key)


def applied(effects: list) -> list[events.Event]:
    return [e.event for e in effects if isinstance(e, Applied)]


# -- 1. finality ---------------------------------------------------------------------------


def won_connect4(winner: int) -> tuple[Loopback, list[RoundMachine]]:
    """Seat ``winner`` moves first and plays column 1 four times, each move in 2 s."""
    net = Loopback()
    machines = open_round(net, "connect4", {}, [human(0), human(1)], start=winner)
    t = net.now
    for _ in range(7):
        mover = owner_of(machines)
        t += 2_000
        column = "1" if mover.my_seat == winner else "2"
        net.post(f"p{PEOPLE.index(mover.me)}", mover.move(column, t))
        net.run()
    for m in machines:
        assert m.state.phase is Phase.OVER and m.state.winners() == (winner,)
    return net, machines


@pytest.mark.parametrize("loser", ["admin", "successor"])
def test_the_loser_cannot_forfeit_the_seat_that_just_beat_it(loser: str) -> None:
    """Issue 9: the loser forfeits the winner at its winning move, stamped 61 s late."""
    winner = 1 if loser == "admin" else 0  # the admin is seat 0
    _net, machines = won_connect4(winner)
    chain = machines[0].log()
    win, prev = chain[-1], chain[-2]
    assert win.ts - prev.ts <= 2_000  # the winner's own signature: it moved in 2 s
    forfeit = events.make(
        PEOPLE[1 - winner],
        "forfeit",
        prev.ts + OFFLINE + 1_000,
        offline(winner),
        round=ROUND,
        seq=win.seq,
        prev=prev.id,
    )
    for m in machines:
        # seconds after the winning move the forfeit claims a minute that has not passed
        early = m.receive(forfeit, win.ts + 1_000)
        assert not applied(early) and any(isinstance(e, Notice) for e in early)
        # once our clock reaches its date it is weighed: the winning move stays
        later = m.tick(forfeit.ts + 1)
        (why,) = drops(later)  # issue 16: the answered turn is settled before anything
        assert why.startswith(ANSWERED.format(seq=win.seq))
        assert not any(isinstance(e, Rewound) for e in early + later)
        assert m.state.head.id == win.id and m.state.winners() == (winner,)
        assert m.receive(forfeit, forfeit.ts + 2)[0].reason == "duplicate"
    assert replay_log([e.raw for e in machines[1].log()]).state.winners() == (winner,)


def three_cube(start: int = 1) -> tuple[Loopback, list[RoundMachine], set]:
    cut: set[tuple[str, str]] = set()
    net = Loopback(drop=lambda src, dst, event: (src, dst) in cut)
    machines = open_round(
        net, "cube", {"players": 3}, [human(0), human(1), human(2)], start=start
    )
    return net, machines, cut


def test_a_timely_move_beats_a_forfeit_in_either_arrival_order() -> None:
    net, machines, cut = three_cube()
    admin, bob, carol = machines
    prev = admin.state.head
    cut |= {("p1", "p2")}  # carol gets bob's move late
    x = bob.move("a1", prev.ts + 2_000)
    net.post("p1", x)
    net.run()
    (move,) = published(x, "move")
    # the admin (hostile) forfeits bob anyway, dated after the offline limit
    forfeit = events.make(
        PEOPLE[0],
        "forfeit",
        prev.ts + OFFLINE + 1_000,
        offline(1),
        round=ROUND,
        seq=move.seq,
        prev=prev.id,
    )
    # members who hold the move refuse the forfeit: the turn was answered long ago
    for m in (admin, bob):
        (why,) = drops(m.receive(forfeit, forfeit.ts))
        assert why.startswith(ANSWERED.format(seq=move.seq))
    # carol's clock has reached the forfeit's date and she never saw the move: she
    # applies the forfeit; the timely move then arrives and takes its place
    assert applied(carol.receive(forfeit, forfeit.ts)) == [forfeit]
    effects = carol.receive(move, forfeit.ts + 5)
    (rewound,) = [e for e in effects if isinstance(e, Rewound)]
    assert rewound.replaced == (forfeit,) and applied(effects)[0] == move
    assert_agree(machines)
    assert carol.state.phase is Phase.PLAY and carol.state.forfeited == []


def test_a_late_move_loses_to_the_forfeit_in_either_arrival_order() -> None:
    """Fair the other way: a turn really late by the mover's own signature is forfeited."""
    net, machines, cut = three_cube()
    admin, bob, carol = machines
    prev = admin.state.head
    cut |= {("p1", "p0")}
    x = bob.move("a1", prev.ts + SILENT + 5_000)  # 15 min and 5 s, by bob's own clock
    net.post("p1", x)
    net.run()
    (move,) = published(x, "move")
    cut.clear()
    cut |= {("p0", "p2")}
    net.post("p0", admin.tick(prev.ts + SILENT + 5_000))
    net.run()
    (forfeit,) = [e for e in admin.log() if e.kind == "forfeit"]
    assert drops(admin.receive(move, net.now))[0] in (
        f"position {move.seq} was forfeited (this event is late)",
        "duplicate",  # it came with the answer to the admin's head exchange
    )
    assert move.id not in {e.id for e in admin.log()}
    effects = carol.receive(forfeit, net.now)  # carol had the late move: it is replaced
    assert [e.replaced for e in effects if isinstance(e, Rewound)] == [(move,)]
    assert_agree(machines)
    assert admin.state.forfeited == [1]


def test_a_forfeit_cannot_claim_time_that_has_not_passed() -> None:
    net = Loopback()
    admin, bob = open_round(net, "connect4", {}, [human(0), human(1)], start=1)
    head = bob.state.head
    forfeit = signed(
        PEOPLE[0],
        bob.state,
        "forfeit",
        offline(1),
        head.ts + OFFLINE,
    )
    effects = bob.receive(forfeit, head.ts + 1_000)  # one second into bob's turn
    assert not applied(effects) and bob.state.head.id == head.id
    assert [e.text for e in effects if isinstance(e, Notice)] == [
        f"forfeit #{forfeit.seq} waits: it is dated ahead of our clock"
    ]
    net.post("p1", bob.move("4", head.ts + 5_000))
    net.run()
    (why,) = drops(bob.tick(forfeit.ts))
    assert why.startswith(ANSWERED.format(seq=forfeit.seq))
    assert_agree([admin, bob])
    assert bob.state.phase is Phase.PLAY and bob.state.forfeited == []


def test_a_backdated_move_does_not_shorten_the_next_turn() -> None:
    """The admin dates its move back 14 minutes, then forfeits the next seat 1 min later."""
    net = Loopback()
    admin, bob = open_round(net, "connect4", {}, [human(0), human(1)], start=0)
    t0 = bob.state.head.ts
    backdated = signed_move(PEOPLE[0], bob.state, "4", t0)  # made 14 min later
    seen = t0 + 14 * 60_000
    assert applied(bob.receive(backdated, seen)) == [backdated]
    forfeit = signed(
        PEOPLE[0], bob.state, "forfeit", {"seat": 1, "reason": "silent"}, t0 + SILENT
    )
    effects = bob.receive(forfeit, seen + 60_000)  # bob has had one minute
    assert not applied(effects)
    assert [e.text for e in effects if isinstance(e, Notice)] == [
        f"forfeit #{forfeit.seq} waits: our clock has not seen the timeout"
    ]
    # bob moves after 3 minutes; issue 16: his move is dated by his clock, never back
    mine = published(bob.move("4", seen + 3 * 60_000), "move")[0]
    assert mine.ts == seen + 3 * 60_000
    (why,) = drops(bob.tick(seen + SILENT))
    assert why.startswith(ANSWERED.format(seq=mine.seq))
    assert bob.state.head.id == mine.id and bob.state.phase is Phase.PLAY
    del admin


def test_a_move_dated_near_2_53_waits_and_its_seat_can_still_be_forfeited() -> None:
    net = Loopback()
    admin, bob = open_round(net, "connect4", {}, [human(0), human(1)], start=1)
    head = admin.state.head
    future = signed_move(PEOPLE[1], admin.state, "4", MAX_TS)
    effects = admin.receive(future, head.ts + 1_000)
    assert not applied(effects) and admin.state.head.id == head.id
    # the admin may still forfeit the silent seat; the future move never counts
    effects = admin.tick(head.ts + SILENT)
    assert published(effects, "forfeit") and admin.state.forfeited == [1]
    assert not applied(admin.tick(head.ts + SILENT + HEAD_EXCHANGE_MS))
    del bob


def test_a_settled_forfeit_is_not_revived_by_a_backdated_move() -> None:
    """A seat forfeited long ago returns with a move dated as if it had been timely.

    Rules v3 (issue 23): finality is signed, not read off the receiver's clock.  The
    admin asks for the missing ack every 15 s after the end; its own two signs on the
    forfeit's branch 30 s apart make the forfeit final for the admin itself (R3, per
    member): the back-dated move is kept as evidence and the position shows disputed.
    """
    net = Loopback()
    admin, bob = open_round(net, "connect4", {}, [human(0), human(1)], start=1)
    head = admin.state.head
    effects = admin.tick(head.ts + SILENT)
    (forfeit,) = published(effects, "forfeit")
    now = head.ts + SILENT
    for _ in range(SETTLE_MS // 1000 + 1):  # as live: the admin's timer runs
        now += 1_000
        admin.tick(now)
    revenant = signed_move(PEOPLE[1], bob.state, "4", head.ts + 1_000)
    effects = admin.receive(revenant, now)
    assert drops(effects) == [
        f"the forfeit at {forfeit.seq} is final here; position {forfeit.seq} is disputed"
    ]
    assert [n.code for n in effects if isinstance(n, Notice)] == ["disputed"]
    assert admin.state.head.id == forfeit.id and admin.state.winners() == (0,)
    assert [(seq, kept.id) for seq, kept, _ in admin.disputes()] == [(forfeit.seq, forfeit.id)]
    # its log keeps the move as evidence; replay gives the admin's own verdict
    lines = [e.raw for e in admin.log()] + [e.raw for e in admin.conflict_evidence()]
    result = replay_log(lines)
    assert result.chain[-1].id == forfeit.id and result.verdict == "disputed"


def test_a_player_cannot_forfeit_a_present_admin() -> None:
    net = Loopback()
    admin, bob = open_round(net, "connect4", {}, [human(0), human(1)], start=0)
    head = bob.state.head
    # on the admin's turn the successor may forfeit only a really late admin
    early = signed(
        PEOPLE[1],
        bob.state,
        "forfeit",
        {"seat": 0, "reason": "silent"},
        head.ts + 60_000,
    )
    assert "needs 900000 ms" in drops(admin.receive(early, early.ts))[0]
    net.post("p0", admin.move("4", head.ts + 30_000))  # the admin is present and moves
    net.run()
    late = signed(
        PEOPLE[1],
        bob.state,
        "forfeit",
        {"seat": 0, "reason": "silent"},
        bob.state.head.ts + SILENT,
    )
    # on bob's own turn he may forfeit nobody
    assert drops(admin.receive(late, late.ts)) == [
        f"forfeit by a key that may not forfeit position {late.seq}"
    ]
    assert_agree([admin, bob])


# -- 3. one chain for everyone ------------------------------------------------------------


def test_equivocation_ends_the_round_the_same_way_for_every_member() -> None:
    net, machines, _cut = three_cube()
    admin, bob, carol = machines
    x = signed_move(PEOPLE[1], bob.state, "a1", bob.state.head.ts + 1_000)
    y = signed_move(PEOPLE[1], bob.state, "b2", bob.state.head.ts + 1_000)
    # admin sees x first, carol y: they apply different moves at first
    assert applied(admin.receive(x, x.ts)) == [x]
    assert applied(carol.receive(y, y.ts)) == [y]
    # the other version reaches each: the proof is complete and published
    for m, other in ((admin, y), (carol, x)):
        effects = m.receive(other, x.ts + 10)
        assert any(isinstance(e, Equivocation) for e in effects)
        # (issue 16: the end by the proof is acknowledged too, hence the kind filter)
        assert {
            e.event.id for e in effects if isinstance(e, Publish) and e.event.kind == "move"
        } == {x.id, y.id}
        net.post(f"p{PEOPLE.index(m.me)}", effects)
    net.run()  # bob learns it too from the published proof
    assert_agree(machines)
    for m in machines:
        st = m.state
        assert st.phase is Phase.OVER and st.equivocators == [1]
        assert 1 not in st.winners() and st.head.seq == x.seq - 1


def test_an_admin_that_equivocates_before_play_voids_the_round() -> None:
    net = Loopback()
    admin, effects = RoundMachine.open(
        PEOPLE[0], 0, ROUND, "connect4", {}, [human(0), human(1)], 0, nonce(0)
    )
    bob = RoundMachine(PEOPLE[1], admin.state.genesis, nonce(1))
    net.add("p0", admin, effects)
    net.add("p1", bob, bob.accept(1))
    net.run()
    start = admin.state.chain[1]
    cancel = events.make(
        PEOPLE[0],
        "cancel",
        start.ts,
        {"reason": "x"},
        round=ROUND,
        seq=1,
        prev=start.prev,
    )
    effects = bob.receive(cancel, start.ts + 1)
    assert any(isinstance(e, Equivocation) for e in effects)
    assert bob.state.phase is Phase.CANCELLED and "void" in bob.state.end_reason


def test_a_member_on_a_branch_notices_by_head_exchange_and_resyncs() -> None:
    """A forfeit lost on its way: the heads differ; the exchange brings back one chain."""
    blocked: set[tuple[str, str]] = set()
    lose = {"on": True}
    net = Loopback(drop=lambda s, d, e: lose["on"] and (s, d) in blocked)
    machines = open_round(
        net, "chess4", {}, [human(0), human(1), human(2), human(3)], start=1
    )
    admin, bob, carol, dave = machines
    n = len(admin.state.chain)
    t0 = admin.state.head.ts
    blocked |= {("p1", "p0"), ("p2", "p0")}
    net.post("p1", bob.move(bob.state.game.legal_moves()[0], t0 + SILENT + 5_000))
    net.run()
    net.post("p2", carol.move(carol.state.game.legal_moves()[0], t0 + SILENT + 6_000))
    net.run()
    blocked |= {("p0", "p1"), ("p0", "p2"), ("p0", "p3")}
    net.post("p0", admin.tick(t0 + SILENT + 7_000))  # its forfeit reaches nobody
    net.run()
    assert admin.state.chain[n].kind == "forfeit" and len(dave.state.chain) == n + 2
    lose["on"] = False  # the losses are over; nothing is re-sent by itself
    later = t0 + SILENT + 7_000 + HEAD_EXCHANGE_MS
    for m in machines:
        net.post(f"p{PEOPLE.index(m.me)}", m.tick(later))
    net.run()
    assert_agree(machines)
    # issue 16: carol answered bob's late move, so it is settled for the members and the
    # admin's forfeit (a pending-turn claim that came too late) yields to it
    assert dave.state.chain[n].kind == "move" and dave.state.forfeited == []
    assert not net.effects_of(Equivocation)


# -- 4. hostile events cost almost nothing -------------------------------------------------


def test_old_position_forfeits_cost_no_replay_and_are_processed_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A stranger's and the admin's forfeits at old positions, copied and varied."""
    pytest.importorskip("p2p.ai")
    net = Loopback()
    seats = [human(0), human(1), {"pk": None, "level": "neuling"}]
    admin, effects = RoundMachine.open(
        PEOPLE[0], 0, ROUND, "cube", {"players": 3}, seats, 0, nonce(0)
    )
    bob = RoundMachine(PEOPLE[1], admin.state.genesis, nonce(1))
    net.add("p0", admin, effects)
    net.add("p1", bob, bob.accept(1))
    net.run()
    for ply in range(12):  # the humans play; the admin's machine plays the computer
        mover = owner_of([admin, bob])
        net.post(
            f"p{PEOPLE.index(mover.me)}",
            mover.move(mover.state.game.legal_moves()[ply % 3], net.now + 1_000),
        )
        net.run()
    # bob restarts from his log: no snapshots of old positions but the last few
    bob = RoundMachine.from_log(PEOPLE[1], bob.log(), nonce(1), now=net.now)
    calls = {"replay": 0, "ai": 0}
    import p2p.ai

    real_verify, real_choose = round_machine.verify_chain, p2p.ai.choose_move

    def counting_verify(*a, **k):
        calls["replay"] += 1
        return real_verify(*a, **k)

    def counting_choose(*a, **k):
        calls["ai"] += 1
        return real_choose(*a, **k)

    monkeypatch.setattr(round_machine, "verify_chain", counting_verify)
    monkeypatch.setattr(p2p.ai, "choose_move", counting_choose)
    chain = bob.state.chain
    head = bob.state.head.id
    now = net.now + 10 * SILENT
    bobs = [e.seq for e in chain if e.pk == PEOPLE[1].public_key and e.kind == "move"]
    for seq in bobs[:3]:  # old positions of bob's own moves
        for who in (STRANGER, PEOPLE[0]):
            for k in range(50):  # varied ids
                ev = events.make(
                    who,
                    "forfeit",
                    chain[seq - 1].ts + SILENT + k,
                    {"seat": 1, "reason": "silent"},
                    round=ROUND,
                    seq=seq,
                    prev=chain[seq - 1].id,
                )
                for _ in range(3):  # and copies of each
                    bob.receive(ev, now)
    assert calls == {"replay": 0, "ai": 0}
    assert bob.state.head.id == head
    # every id once: a copy is a duplicate; memory stays bounded under a flood
    for k in range(MAX_SEEN + 500):
        bob.receive(events.make(STRANGER, "resign", k, {}, round=ROUND, prev=head), now)
    assert len(bob.seen) <= MAX_SEEN and len(bob.pending) <= MAX_PENDING
    assert len(bob._clock_wait) <= MAX_PENDING


def resign_value(who: Identity, value: dict) -> bytes:
    """Sign an arbitrary envelope value (a hostile client can put anything in it)."""
    unsigned = {k: v for k, v in value.items() if k != "sig"}
    eid = canonical.encode(unsigned)
    import hashlib

    digest = hashlib.sha256(eid).digest()
    return canonical.encode(dict(unsigned, sig=who.sign(digest).hex()))


@pytest.mark.parametrize(
    "path", [("v",), ("ts",), ("seq",), ("body", "ply"), ("body", "seat")]
)
def test_true_is_not_an_integer_anywhere(path: tuple[str, ...]) -> None:
    state = RoundState.from_genesis(
        events.make(
            PEOPLE[0],
            "genesis",
            5,
            {
                "game": "connect4",
                "options": {},
                "seats": [human(0), human(1)],
                "start": 0,
                "expires": 10,
                "private": False,
            },
            round=ROUND,
            seq=0,
        )
    )
    kind, body = (
        ("forfeit", {"seat": 1, "reason": "silent"})
        if path[-1] == "seat"
        else (
            "move",
            {"ply": 1, "move": "4", "state": "00" * 32},
        )
    )
    value = events.make(
        PEOPLE[0], kind, 6, body, round=ROUND, seq=1, prev=state.head.id
    ).value()
    where = value
    for key in path[:-1]:
        where = where[key]
    assert where[path[-1]] == 1 or path[-1] in ("ts", "v")
    where[path[-1]] = True
    with pytest.raises(events.EventError):
        events.parse(resign_value(PEOPLE[0], value))


# -- 5. rounds never get stuck -------------------------------------------------------------


def test_an_invitation_whose_admin_vanished_ends_for_the_invitee() -> None:
    admin, effects = RoundMachine.open(
        PEOPLE[0], 0, ROUND, "connect4", {}, [human(0), human(1)], 0, nonce(0)
    )
    bob = RoundMachine(PEOPLE[1], admin.state.genesis, nonce(1))
    bob.accept(1)  # the admin is gone before it sees this
    expires = admin.state.expires
    assert (
        not acts(bob.tick(expires + FORMING_GRACE_MS - 1)) or bob.phase is Phase.FORMING
    )
    assert bob.phase is Phase.FORMING
    bob.tick(expires + FORMING_GRACE_MS)
    assert bob.phase is Phase.CANCELLED and bob.end_reason.startswith("expired")
    assert bob.state.end_reason == ""  # a verdict beside the chain: the chain says nothing
    # a start that comes after all is not applied: the round has ended here
    del effects


def test_a_draw_the_admin_never_finishes_ends_for_every_member() -> None:
    # the admin vanishes right after it starts the round
    net = Loopback(drop=lambda s, d, e: e.kind in ("commit_close", "draw", "cancel"))
    admin, effects = RoundMachine.open(
        PEOPLE[0], 0, ROUND, "connect4", {}, [human(0), human(1)], None, nonce(0)
    )
    bob = RoundMachine(PEOPLE[1], admin.state.genesis, nonce(1))
    net.add("p0", admin, effects)
    net.add("p1", bob)
    net.post("p1", bob.accept(1))
    net.run()
    assert bob.phase in (Phase.COMMIT, Phase.REVEAL)
    expires = bob.state.expires
    bob.tick(expires + START_DEADLINE_MS - 1)
    assert bob.phase in (Phase.COMMIT, Phase.REVEAL)
    bob.tick(expires + START_DEADLINE_MS)
    assert bob.phase is Phase.CANCELLED and "expired" in bob.end_reason
    assert bob.state.phase is not Phase.CANCELLED  # the chain alone decides the state


def test_a_round_whose_admin_and_successor_vanish_ends_for_the_others() -> None:
    net = Loopback()
    machines = open_round(
        net, "cube", {"players": 3}, [human(0), human(1), human(2)], start=0
    )
    carol = machines[2]
    head = carol.state.head.ts
    admin_gone = frozenset({PEOPLE[0].public_key})
    both_gone = admin_gone | {PEOPLE[1].public_key}
    # the successor is still there: it may forfeit the admin, so nothing ends
    carol.tick(head + 10 * OFFLINE, admin_gone)
    assert carol.phase is Phase.PLAY
    carol.tick(head + 2 * OFFLINE - 1_000, both_gone)
    assert carol.phase is Phase.PLAY
    carol.tick(head + 2 * OFFLINE + 1_000, both_gone)
    assert carol.phase is Phase.CANCELLED and "abandoned" in carol.end_reason
    assert carol.state.phase is Phase.PLAY and carol.local_end is not None


def test_a_replayed_genesis_is_not_an_invitation() -> None:
    alice, bob = PEOPLE[0], PEOPLE[1]
    lobby = Lobby(bob, "bob", bytes(16))
    admin, _ = RoundMachine.open(
        alice, 1_000, ROUND, "connect4", {}, [human(0), human(1)], 0, nonce(0)
    )
    genesis = admin.state.genesis
    inbox = Topics().inbox(bob.peer_id).topic
    lobby.receive(genesis, 1_001, inbox)
    assert ROUND in lobby.invitations
    lobby.take_invitation(ROUND)  # accepted: the round is ours now
    again = lobby.receive(genesis, 2_000, inbox)
    assert drops(again) == ["genesis of a round we already know"]
    assert ROUND not in lobby.invitations
    # a fresh lobby (after a restart) still refuses an expired genesis
    fresh = Lobby(bob, "bob", bytes(16))
    assert drops(fresh.receive(genesis, genesis.body["expires"], inbox)) == [
        "the invitation has expired"
    ]
    assert MAX_AHEAD_MS < OFFLINE


def test_an_inbox_takes_only_invitations_and_cancels() -> None:
    """The rule ``Edge.dispatch`` applies to its inbox, without a broker."""
    from p2p.peer import _inbox_problem

    net = Loopback()
    admin, bob = open_round(net, "connect4", {}, [human(0), human(1)], start=1)
    genesis = admin.state.genesis
    move = signed_move(PEOPLE[1], bob.state, "4", bob.state.head.ts)
    accept = events.make(
        PEOPLE[1], "accept", 1, {"seat": 1}, round=ROUND, prev=genesis.id
    )
    cancel = events.make(
        PEOPLE[0], "cancel", 1, {"reason": "x"}, round=ROUND, seq=1, prev=genesis.id
    )
    for event in (move, accept):
        assert "does not belong in an inbox" in _inbox_problem(event, {})
    assert _inbox_problem(cancel, {}) == "" and _inbox_problem(genesis, {}) == ""
    held = {ROUND: object()}
    assert "already hold" in _inbox_problem(genesis, held)  # type: ignore[arg-type]
