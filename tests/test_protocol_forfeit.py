"""Turn timeouts: the admin forfeits a silent seat; a late move racing the forfeit loses."""

from __future__ import annotations

import random

import pytest
from test_protocol_round import PEOPLE, ROUND, assert_agree, human, nonce, open_round

from p2p.protocol import events
from p2p.protocol.effects import Applied, Dropped, Equivocation, Publish, Rewound
from p2p.protocol.loopback import Loopback
from p2p.protocol.replay import replay_log
from p2p.protocol.round import (
    DEFAULT_TIMEOUTS,
    Phase,
    TurnTimeouts,
    verify_chain,
)
from p2p.protocol.round_machine import MAX_REWIND, RoundMachine

SILENT = DEFAULT_TIMEOUTS.silent_ms
OFFLINE = DEFAULT_TIMEOUTS.offline_ms


def published(effects: list, kind: str) -> list[events.Event]:
    return [e.event for e in effects if isinstance(e, Publish) and e.event.kind == kind]


def will_of(
    who: int, ts: int = 0, session: str = "ab" * 16, people: list | None = None
) -> events.Event:
    """``PEOPLE[who]``'s signed Last Will (its pre-signed offline presence)."""
    body = {
        "nick": f"p{who}",
        "status": "offline",
        "busy": False,
        "session": session,
        "ttl": 60,
    }
    return events.make((people or PEOPLE)[who], "presence", ts, body)


def evidence_of(who: int, since: int, ts: int = 0) -> dict:
    """``tick`` evidence: ``PEOPLE[who]``'s Will, held in our lobby since ``since``."""
    return {PEOPLE[who].public_key: (will_of(who, ts), since)}


def forfeit_event(
    signer: int, machine: RoundMachine, seat: int, ts: int, reason: str = "silent"
) -> events.Event:
    head = machine.state.head
    body: dict = {"seat": seat, "reason": reason}
    if reason == "offline":
        body["evidence"] = will_of(seat).value()  # seat i is PEOPLE[i] here
    return events.make(
        PEOPLE[signer], "forfeit", ts, body, round=ROUND, seq=head.seq + 1, prev=head.id
    )


def drops(effects: list) -> list[str]:
    return [e.reason for e in effects if isinstance(e, Dropped)]


def acts(effects: list) -> list:
    """Effects other than the periodic head exchange (a sync_request naming our head)."""
    return [
        e
        for e in effects
        if not (isinstance(e, Publish) and e.event.kind == "sync_request")
    ]


def test_a_silent_seat_is_forfeited_after_the_timeout_not_before() -> None:
    net = Loopback()
    admin, bob = open_round(net, "connect4", {}, [human(0), human(1)], start=1)
    head = admin.state.head
    assert admin.state.owner() == PEOPLE[1].public_key
    assert acts(admin.tick(head.ts + SILENT - 1)) == []
    assert acts(bob.tick(head.ts + 10 * SILENT)) == []  # only the admin forfeits a member
    effects = admin.tick(head.ts + SILENT)
    (forfeit,) = published(effects, "forfeit")
    assert forfeit.body == {"seat": 1, "reason": "silent"}
    net.post("p0", effects)
    net.run()
    assert_agree([admin, bob])
    st = bob.state
    assert st.phase is Phase.OVER and st.end_reason == "forfeit"
    assert st.winners() == (0,) and st.forfeited == [1] and 1 in st.left
    assert verify_chain(admin.log()).state_hash() == st.state_hash()
    result = replay_log([e.raw for e in admin.log()])
    assert result.state.state_hash() == st.state_hash()


def test_offline_presence_shortens_the_timeout() -> None:
    """Issue 16: only the seat's own signed Will that stood the grace period shortens
    the turn, and the forfeit carries it; silence alone (``offline``) does not."""
    net = Loopback()
    admin, _bob = open_round(net, "connect4", {}, [human(0), human(1)], start=1)
    ts = admin.state.head.ts
    gone = frozenset({PEOPLE[1].public_key})
    assert acts(admin.tick(ts + OFFLINE)) == []  # still online in our lobby: 15 min apply
    assert acts(admin.tick(ts + OFFLINE, gone)) == []  # silent in the lobby: no evidence
    # the Will arrived 10 s into the turn: it must stand the whole grace period
    late_will = evidence_of(1, since=ts + 10_000)
    assert acts(admin.tick(ts + OFFLINE, gone, late_will)) == []
    held = evidence_of(1, since=ts)
    assert acts(admin.tick(ts + OFFLINE - 1, gone, held)) == []
    (forfeit,) = published(admin.tick(ts + OFFLINE, gone, held), "forfeit")
    assert forfeit.body["reason"] == "offline"
    assert forfeit.body["evidence"] == will_of(1).value()
    assert admin.state.forfeited == [1]
    assert replay_log([e.raw for e in admin.log()]).state.forfeited == [1]


def test_a_forfeit_from_a_non_admin_is_rejected() -> None:
    net = Loopback()
    machines = open_round(
        net, "cube", {"players": 3}, [human(0), human(1), human(2)], start=1
    )
    admin, bob, carol = machines
    fake = forfeit_event(2, carol, 1, carol.state.head.ts + 10 * SILENT)
    for m in (admin, bob):
        assert drops(m.receive(fake, fake.ts)) == [
            "forfeit by a key that may not forfeit position 2"
        ]
    assert_agree(machines)
    assert admin.state.phase is Phase.PLAY


def test_a_forfeit_at_a_position_the_seat_does_not_own_is_rejected() -> None:
    net = Loopback()
    machines = open_round(
        net, "cube", {"players": 3}, [human(0), human(1), human(2)], start=1
    )
    admin, bob, carol = machines
    late = admin.state.head.ts + 10 * SILENT
    wrong_seat = forfeit_event(0, admin, 2, late)
    assert drops(carol.receive(wrong_seat, late)) == [
        "forfeit of seat 2, but seat 1 is to move"
    ]
    too_soon = forfeit_event(0, admin, 1, admin.state.head.ts + OFFLINE - 1, "offline")
    assert drops(carol.receive(too_soon, too_soon.ts)) == [
        f"forfeit (offline) {OFFLINE - 1} ms after the previous event; needs {OFFLINE} ms"
    ]
    silent_soon = forfeit_event(0, admin, 1, admin.state.head.ts + OFFLINE, "silent")
    assert "needs 900000 ms" in drops(carol.receive(silent_soon, silent_soon.ts))[0]
    # seat 1 moves; seat 2 moves; now the admin itself is to move: it cannot forfeit itself
    net.post("p1", bob.move("a1", 10))
    net.run()
    net.post("p2", carol.move("a2", 20))
    net.run()
    assert admin.state.owner() == PEOPLE[0].public_key
    own = forfeit_event(0, admin, 0, admin.state.head.ts + 10 * SILENT)
    assert drops(bob.receive(own, own.ts)) == [
        f"forfeit by a key that may not forfeit position {own.seq}"
    ]
    assert acts(admin.tick(admin.state.head.ts + 10 * SILENT)) == []
    assert_agree(machines)


def _four_chess(net: Loopback) -> list[RoundMachine]:
    return open_round(
        net, "chess4", {}, [human(0), human(1), human(2), human(3)], start=1
    )


@pytest.mark.parametrize("resumed", [False, True])
def test_a_late_move_already_answered_stands_and_the_forfeiter_yields(resumed: bool) -> None:
    """Issue 16 (was: "a late move racing the forfeit loses on every peer"): a forfeit may
    replace only the pending turn.  Bob's move came late, but carol answered it before
    the admin's forfeit arrived: the members refuse the forfeit, and the admin, who never
    saw the moves, yields to them once carol's answer reaches it."""
    cut = {"on": False}
    net = Loopback(drop=lambda src, dst, event: cut["on"] and dst == "p0")
    machines = _four_chess(net)
    admin, bob, carol, dave = machines
    n = len(admin.state.chain)
    start_ts = admin.state.head.ts
    # bob moves very late; only carol and dave see it, then carol moves on top of it
    cut["on"] = True
    late_move = bob.move(bob.state.game.legal_moves()[0], start_ts + SILENT + 5)
    net.post("p1", late_move)
    net.run()
    carol_move = carol.move(carol.state.game.legal_moves()[0], start_ts + SILENT + 6)
    net.post("p2", carol_move)
    net.run()
    assert len(dave.state.chain) == n + 2 and len(admin.state.chain) == n
    cut["on"] = False
    if resumed:  # after a restart from the log: the resumed state serves the conflict
        for i in (1, 2, 3):
            m = machines[i]
            m = RoundMachine.from_log(PEOPLE[i], m.log(), nonce(i), now=net.now)
            machines[i] = net.machines[f"p{i}"] = m
        admin, bob, carol, dave = machines
    # the admin never saw them: its timer forfeits seat 1 at the same position
    forfeit = admin.tick(start_ts + SILENT)
    assert published(forfeit, "forfeit")
    net.post("p0", forfeit)
    net.run()
    for name in ("p1", "p2", "p3"):
        assert f"a forfeit may replace only the pending turn; position {n} is settled" in [
            d.reason for d in net.effects_of(Dropped, name)
        ]
    # the late events reach the admin after all (carol's first: it must not stay parked)
    got: list = list(net.effects_of(Rewound, "p0"))  # a head exchange may have brought them
    for effects in (carol_move, late_move):
        for e in effects:
            if isinstance(e, Publish):
                got += admin.receive(e.event, net.now)
    assert admin.pending == {}
    assert_agree(machines)
    st = dave.state
    assert [e.kind for e in st.chain[n:]] == ["move", "move"]
    assert st.forfeited == [] and st.phase is Phase.PLAY
    (rewound,) = [e for e in got if isinstance(e, Rewound)]
    assert rewound.seq == n and [e.kind for e in rewound.replaced] == ["forfeit"]
    # and the round goes on identically everywhere
    for _ in range(3):
        mover = next(m for m in machines if m.state.owner() == m.me.public_key)
        net.post(
            f"p{PEOPLE.index(mover.me)}",
            mover.move(mover.state.game.legal_moves()[0], 100),
        )
        net.run()
    assert_agree(machines)
    assert verify_chain(admin.log()).state_hash() == admin.state.state_hash()


@pytest.mark.parametrize("seed", range(6))
def test_move_and_forfeit_published_together_converge_in_any_order(seed: int) -> None:
    rng = random.Random(seed)
    net = Loopback(pick=rng.randrange)
    machines = _four_chess(net)
    admin, bob = machines[0], machines[1]
    ts = admin.state.head.ts + SILENT + 1_000  # bob is late by a second, by his clock
    net.post("p1", bob.move(bob.state.game.legal_moves()[0], ts))
    net.post("p0", admin.tick(ts))
    net.run()
    assert_agree(machines)
    assert admin.state.forfeited == [1]


def test_a_forfeit_may_not_rewrite_long_history() -> None:
    net = Loopback()
    machines = open_round(net, "connect4", {}, [human(0), human(1)], start=1)
    admin, bob = machines
    old = admin.state.head
    forfeit = forfeit_event(0, admin, 1, old.ts + SILENT)
    for ply in range(MAX_REWIND + 1):
        mover = machines[(ply + 1) % 2]
        net.post(f"p{(ply + 1) % 2}", mover.move(str(ply % 7 + 1), 10 + ply))
        net.run()
    assert drops(bob.receive(forfeit, forfeit.ts)) == [
        f"position {forfeit.seq} is settled (older than {MAX_REWIND})"
    ]
    assert_agree(machines)


def test_the_admins_successor_forfeits_a_vanished_admin() -> None:
    gone = {"on": False}
    net = Loopback(drop=lambda src, dst, event: gone["on"] and "p0" in (src, dst))
    seats = [human(0), human(1), {"pk": None, "level": "neuling"}]
    admin, effects = RoundMachine.open(
        PEOPLE[0], 0, ROUND, "cube", {"players": 3}, seats, 0, nonce(0)
    )
    net.add("p0", admin, effects)
    bob = RoundMachine(PEOPLE[1], admin.state.genesis, nonce(1))
    net.add("p1", bob, bob.accept(1))
    net.run()
    assert bob.state.phase is Phase.PLAY and bob.state.owner() == PEOPLE[0].public_key
    gone["on"] = True  # the admin, to move at seat 0, vanishes
    ts = bob.state.head.ts + 100  # a little after bob saw the head (loopback clock)
    assert acts(bob.tick(ts + OFFLINE, frozenset())) == []
    gone_admin = frozenset({PEOPLE[0].public_key})
    assert acts(bob.tick(ts + OFFLINE, gone_admin)) == []  # silence alone: 15 min
    effects = bob.tick(ts + OFFLINE, gone_admin, evidence_of(0, since=ts))
    (forfeit,) = published(effects, "forfeit")
    assert (
        forfeit.body == {"seat": 0, "reason": "offline", "evidence": will_of(0).value()}
        and forfeit.pk == PEOPLE[1].public_key
    )
    st = bob.state
    assert bob.is_admin and 0 in st.left
    # cube has no resignation: the round ends at once with the others ranked
    assert st.phase is Phase.OVER and st.end_reason == "forfeit"
    # the admin comes back and learns it by sync: it converges too
    gone["on"] = False
    net.post("p0", admin.request_sync(10**6))
    net.run()
    assert_agree([admin, bob])


def test_a_successor_forfeit_hands_the_computer_seats_to_the_new_admin() -> None:
    pytest.importorskip("p2p.ai")
    gone = {"on": False}
    net = Loopback(drop=lambda src, dst, event: gone["on"] and "p0" in (src, dst))
    comp = {"pk": None, "level": "einfach"}
    admin, effects = RoundMachine.open(
        PEOPLE[0], 0, ROUND, "chess4", {}, [human(0), human(1), comp, comp], 1, nonce(0)
    )
    net.add("p0", admin, effects)
    bob = RoundMachine(PEOPLE[1], admin.state.genesis, nonce(1))
    net.add("p1", bob, bob.accept(1))
    net.run()
    gone["on"] = True  # bob moves; the admin, who owns the computer seats, is gone
    net.post("p1", bob.move(bob.state.game.legal_moves()[0], 5))
    net.run()
    assert bob.state.game.to_move() == 2
    ts = bob.state.head.ts  # bob's own move: seen when signed
    assert acts(bob.tick(ts + SILENT - 1)) == []
    effects = bob.tick(ts + SILENT)
    st = bob.state
    assert published(effects, "forfeit") and bob.is_admin and st.forfeited == [0]
    # bob, now admin, has played both computer seats: it is bob's turn again
    assert [e.kind for e in st.chain[-3:]] == ["forfeit", "move", "move"]
    assert st.phase is Phase.PLAY and st.game.to_move() == 1
    gone["on"] = False
    net.post("p0", admin.request_sync(10**6))
    net.run()
    assert_agree([admin, bob])
    assert not admin.is_admin


def test_a_forfeit_is_applied_only_with_the_rounds_timeouts() -> None:
    short = TurnTimeouts(silent_ms=2_000, offline_ms=500)
    admin, _ = RoundMachine.open(
        PEOPLE[0],
        0,
        ROUND,
        "connect4",
        {},
        [human(0), human(1)],
        1,
        nonce(0),
        timeouts=short,
    )
    bob = RoundMachine(PEOPLE[1], admin.state.genesis, nonce(1), timeouts=short)
    net = Loopback()
    net.add("p0", admin)
    net.add("p1", bob, bob.accept(1))
    net.run()
    effects = admin.tick(admin.state.head.ts + 2_000)
    net.post("p0", effects)
    net.run()
    assert_agree([admin, bob])
    assert any(isinstance(e, Applied) and e.event.kind == "forfeit" for e in effects)
    with pytest.raises(Exception, match="needs 900000 ms"):
        verify_chain(admin.log())  # default timeouts: this log is not valid


def test_a_move_on_the_forfeit_branch_that_overtakes_the_forfeit_waits_for_it() -> None:
    """(Issue 16: carol no longer answers bob's late move first -- a forfeit may replace
    only a pending turn, so here only dave holds it, unanswered.)"""
    blocked: set[tuple[str, str]] = set()
    net = Loopback(drop=lambda src, dst, event: (src, dst) in blocked)
    machines = _four_chess(net)
    admin, bob, carol, dave = machines
    n = len(admin.state.chain)
    start_ts = admin.state.head.ts
    blocked |= {("p1", "p0"), ("p1", "p2")}  # only dave sees bob's late move
    net.post("p1", bob.move(bob.state.game.legal_moves()[0], start_ts + SILENT + 5))
    net.run()
    blocked.clear()
    blocked |= {("p0", "p1"), ("p0", "p3")}  # only carol gets the forfeit at first
    forfeit = admin.tick(start_ts + SILENT)
    net.post("p0", forfeit)
    net.run()
    assert carol.state.chain[n].kind == "forfeit" and carol.state.game.to_move() == 2
    # carol moves on the forfeit branch; dave gets it before the forfeit
    net.post(
        "p2", carol.move(carol.state.game.legal_moves()[-1], start_ts + SILENT + 9)
    )
    net.run()
    assert len(dave.pending) == 1 and not net.effects_of(Equivocation, "p3")
    blocked.clear()
    net.post("p0", forfeit)  # the forfeit reaches bob and dave late
    net.run()
    assert_agree(machines)
    assert len(dave.state.chain) == n + 2 and dave.pending == {}
    assert dave.state.chain[n].kind == "forfeit"
    assert not net.effects_of(Equivocation)
