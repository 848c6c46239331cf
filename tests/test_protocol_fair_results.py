"""Issue 16 (results are final, Wills are one-shot, no back-dating, provable endings),
played as attacks with validly signed events against the pure machines (no broker)."""

from __future__ import annotations

import pytest
from test_protocol_fair_chain import offline, owner_of, signed, signed_move, won_connect4
from test_protocol_forfeit import OFFLINE, SILENT, drops, published
from test_protocol_round import PEOPLE, ROUND, assert_agree, human, nonce, open_round

from p2p.protocol import events
from p2p.protocol.effects import Equivocation, Publish, Rewound
from p2p.protocol.lobby import WILL_REPLAYED, Lobby
from p2p.protocol.loopback import Loopback
from p2p.protocol.replay import replay_log
from p2p.protocol.round import Phase
from p2p.protocol.round_machine import ActionError, RoundMachine

SETTLED = "a forfeit may replace only the pending turn; position {seq} is settled"


def _think_then_play(first: int) -> tuple[Loopback, list[RoundMachine], events.Event]:
    """Connect Four, seat ``first`` starts; seat ``1 - first`` (the victim) thinks 5 min
    over its first move (online all along), then play goes on quickly."""
    net = Loopback()
    machines = open_round(net, "connect4", {}, [human(0), human(1)], start=first)
    t = net.now
    slow = None
    for ply in range(4):
        mover = owner_of(machines)
        t += 2_000 if mover.my_seat == first else OFFLINE + 120_000
        effects = mover.move(str(ply % 2 + 3 if mover.my_seat == first else 1), t)
        if mover.my_seat != first and slow is None:
            slow = published(effects, "move")[0]
        net.post(f"p{PEOPLE.index(mover.me)}", effects)
        net.run()
        net.now = t
    assert slow is not None and slow.ts - machines[0].state.chain[slow.seq - 1].ts > OFFLINE
    return net, machines, slow


@pytest.mark.parametrize("forfeiter", ["admin", "successor"])
def test_a_retro_forfeit_of_an_earlier_slow_move_is_refused(forfeiter: str) -> None:
    """The attack: forfeit the opponent at an earlier position where it took > the
    offline limit, claiming 'offline' (with its Will as evidence).  Both seat orders:
    the admin forfeits the guest, the guest (the admin's successor) forfeits the admin."""
    victim = 1 if forfeiter == "admin" else 0
    net, machines, slow = _think_then_play(first=1 - victim)
    prev = machines[0].state.chain[slow.seq - 1]
    forfeit = events.make(
        PEOPLE[1 - victim],
        "forfeit",
        prev.ts + OFFLINE + 1_000,
        offline(victim),
        round=ROUND,
        seq=slow.seq,
        prev=prev.id,
    )
    before = [m.state.head.id for m in machines]
    for m in machines:
        effects = m.receive(forfeit, net.now + 1)
        assert drops(effects) == [SETTLED.format(seq=slow.seq)]
        assert not any(isinstance(e, Rewound) for e in effects)
    assert [m.state.head.id for m in machines] == before
    assert_agree(machines)
    # p2p replay agrees: a log holding that forfeit beside the answered move keeps the
    # move (rules v3: the "answered" row of the table; the forfeit is evidence that lost)
    lines = [e.raw for e in machines[0].log()] + [forfeit.raw]
    result = replay_log(lines)
    assert [c.rule for c in result.conflicts] == ["answered"]
    assert result.chain[slow.seq].id == slow.id and not result.contested()


@pytest.mark.parametrize("loser", ["admin", "successor"])
def test_after_game_over_no_forfeit_at_any_position_changes_the_result(loser: str) -> None:
    """After the game is over, the loser forfeits the winner at every earlier position
    of the winner and at the winning move: nothing changes, on every member."""
    winner = 1 if loser == "admin" else 0
    _net, machines = won_connect4(winner)
    chain = machines[0].log()
    result = [m.state.state_hash() for m in machines]
    for pos in range(len(chain) - 1, 0, -1):
        there, prev = chain[pos], chain[pos - 1]
        if there.kind != "move" or there.pk != PEOPLE[winner].public_key:
            continue
        forfeit = events.make(
            PEOPLE[1 - winner],
            "forfeit",
            max(prev.ts + OFFLINE + 1_000, chain[-1].ts),
            offline(winner),
            round=ROUND,
            seq=pos,
            prev=prev.id,
        )
        for m in machines:
            effects = m.receive(forfeit, forfeit.ts + 1)
            assert drops(effects), effects
            assert not any(isinstance(e, Rewound) for e in effects)
    assert [m.state.state_hash() for m in machines] == result
    assert all(m.state.winners() == (winner,) for m in machines)


def test_an_offline_forfeit_without_the_seats_signed_will_is_refused() -> None:
    """Silence or a bare claim never shortens a turn: 'offline' needs evidence signed by
    the seat itself (not the forfeiter's own presence), checked by every member."""
    net = Loopback()
    admin, bob = open_round(net, "connect4", {}, [human(0), human(1)], start=1)
    head = bob.state.head
    bare = signed(PEOPLE[0], bob.state, "forfeit", {"seat": 1, "reason": "offline"},
                  head.ts + OFFLINE)
    assert drops(bob.receive(bare, bare.ts)) == [
        "an offline forfeit needs the seat's signed offline presence"
    ]
    body = {"seat": 1, "reason": "offline",
            "evidence": offline(0)["evidence"]}  # the admin's own Will, not bob's
    forged = signed(PEOPLE[0], bob.state, "forfeit", body, head.ts + OFFLINE + 1)
    assert drops(bob.receive(forged, forged.ts)) == ["the evidence is not signed by seat 1"]
    assert bob.state.phase is Phase.PLAY
    del admin


def test_a_move_signed_after_the_forfeit_never_undoes_it() -> None:
    """Issue 16: bob is forfeited; he restarts and moves.  His move is dated by his own
    clock (no back-dating), so it loses to the forfeit on every member, and the replay
    of either log says the same."""
    net = Loopback()
    admin, bob = open_round(net, "connect4", {}, [human(0), human(1)], start=1)
    head = admin.state.head
    effects = admin.tick(head.ts + SILENT)
    (forfeit,) = published(effects, "forfeit")
    # bob restarts from his log 70 s later (he never got the forfeit) and moves at once
    back = head.ts + SILENT + 70_000
    bob = RoundMachine.from_log(PEOPLE[1], bob.log(), nonce(1), now=back)
    mine = published(bob.move("4", back), "move")[0]
    assert mine.ts == back  # what bob's clock said when he signed
    assert drops(admin.receive(mine, back + 10)) == [
        f"position {mine.seq} was forfeited (this event is late)"
    ]
    bob_effects = bob.receive(forfeit, back + 20)  # the forfeit reaches bob: it wins
    assert [e.replaced for e in bob_effects if isinstance(e, Rewound)] == [(mine,)]
    assert_agree([admin, bob])
    assert admin.state.winners() == bob.state.winners() == (0,)
    for m in (admin, bob):
        assert replay_log([e.raw for e in m.log()]).state.winners() == (0,)


def test_a_replayed_will_changes_nothing() -> None:
    """Issue 16: a stranger republishes bob's Will bytes after each heartbeat."""
    alice = Lobby(PEOPLE[0], "alice", bytes([1]) * 16)
    bob = Lobby(PEOPLE[1], "bob", bytes([2]) * 16)
    alice.keep([PEOPLE[1].public_key])
    t = 1_000_000
    will = bob.will(t)
    (hello,) = bob.connect(t)
    alice.receive(hello.event, t + 1)
    assert not alice.is_offline(PEOPLE[1].public_key)
    # the first copy takes bob out (it could be real) ...
    alice.receive(will, t + 2)
    assert alice.is_offline(PEOPLE[1].public_key)
    assert alice.offline_evidence(PEOPLE[1].public_key) == (will, t + 2)
    # ... his next heartbeat revokes it, and every replay of the same bytes is void
    for k in range(1, 10):
        t += 20_000
        beat = [e for e in bob.tick(t) if hasattr(e, "event")]
        for effect in beat:
            alice.receive(effect.event, t + 1)
        assert alice.offline_evidence(PEOPLE[1].public_key) is None
        assert drops(alice.receive(will, t + 2)) == [WILL_REPLAYED]
        assert not alice.is_offline(PEOPLE[1].public_key), k
        assert alice.replayed(will, t + 3) == WILL_REPLAYED  # the edge charges nothing
    # a round machine that is fed this lobby never says 'offline'
    net = Loopback()
    admin, _bob = open_round(net, "connect4", {}, [human(0), human(1)], start=1)
    evidence = {
        pk: held
        for pk in (PEOPLE[1].public_key,)
        if (held := alice.offline_evidence(pk)) is not None
    }
    assert evidence == {}
    assert not published(admin.tick(admin.state.head.ts + OFFLINE, evidence=evidence),
                         "forfeit")


def test_an_equivocation_ended_log_replays_as_ended_and_is_not_resumed() -> None:
    """Issue 16: the round ended by a proof; its log (chain + the proof) replays to that
    end, and a member resumed from it sees the round over, not 'to move'."""
    net = Loopback()
    machines = open_round(
        net, "cube", {"players": 3}, [human(0), human(1), human(2)], start=1
    )
    admin, bob, carol = machines
    x = signed_move(PEOPLE[1], bob.state, "a1", bob.state.head.ts + 1_000)
    y = signed_move(PEOPLE[1], bob.state, "b2", bob.state.head.ts + 1_000)
    admin.receive(x, x.ts)
    effects = admin.receive(y, x.ts + 10)
    assert any(isinstance(e, Equivocation) for e in effects)
    assert admin.state.phase is Phase.OVER
    acks = [e.event for e in effects if hasattr(e, "event") and e.event.kind == "ack"]
    assert acks  # the end by the proof is acknowledged like any end
    lines = [e.raw for e in admin.log()] + [x.raw, y.raw] + [a.raw for a in acks]
    result = replay_log(lines)
    assert result.proof is not None and result.state.phase is Phase.OVER
    assert result.state.equivocators == [1]
    assert "ended by equivocation" in result.verdict_text()
    assert result.state.state_hash() == admin.state.state_hash()
    resumed = RoundMachine.from_log(
        PEOPLE[2], result.chain, nonce(2), now=x.ts + 20, proof=result.proof
    )
    assert resumed.state.phase is Phase.OVER and resumed.state.owner() is None
    with pytest.raises(ActionError, match="not in play"):
        resumed.move("c3", x.ts + 30)
    del carol


def test_closing_acks_are_asked_for_again_after_a_rewind_until_every_member_holds_them() -> None:
    """Issue 16 item 7: alice forfeits bob and signs that end; bob's winning move, signed
    in time, was in flight and replaces the forfeit on alice's side, so alice signs the
    new end -- while bob is offline: her ack of the final head never reaches him.  Bob
    (and any member that lacks an ack of the final head) asks again every head-exchange
    interval; a member whose head is the asker's answers with its acks; the asking stops
    once every human seat's ack of the final head is held, and both logs replay as agreed."""
    from p2p.protocol.round_machine import HEAD_EXCHANGE_MS

    lost: set[str] = set()

    def offline_once(_src: str, dst: str, event: events.Event) -> bool:
        """Bob misses the first delivery of each id in ``lost`` (he is offline then)."""
        if dst == "p1" and event.id in lost:
            lost.discard(event.id)
            return True
        return False

    net = Loopback(drop=offline_once)
    admin, bob = open_round(net, "connect4", {}, [human(0), human(1)], start=1)
    t = net.now
    for _ in range(6):  # bob plays column 1, alice column 2: bob's next 1 wins
        mover = owner_of([admin, bob])
        t += 2_000
        column = "1" if mover is bob else "2"
        net.post("p1" if mover is bob else "p0", mover.move(column, t))
        net.run()
    head = admin.state.head
    t_forfeit = net.now + SILENT
    forfeiting = admin.tick(t_forfeit)
    (forfeit,) = published(forfeiting, "forfeit")
    assert admin.state.phase is Phase.OVER and admin.state.winners() == (0,)
    winning = bob.move("1", t_forfeit - 1_000)  # signed in time, before the forfeit
    (win,) = published(winning, "move")
    assert win.ts - head.ts < SILENT and bob.state.winners() == (1,)
    net.post("p0", forfeiting)
    net.post("p1", winning)
    original = net.post

    def post(name: str, effects: list) -> None:  # bob is offline when alice re-signs
        if name == "p0":
            lost.update(e.id for e in published(effects, "ack") if e.prev == win.id)
        original(name, effects)

    net.post = post  # type: ignore[method-assign]
    net.run()
    net.post = original  # type: ignore[method-assign]
    assert admin.state.head.id == bob.state.head.id == win.id  # the rewind happened
    assert admin.agreed() and not bob.agreed()
    asked = 0
    now = net.now
    for _ in range(4):
        now += HEAD_EXCHANGE_MS
        net.now = now
        for name, m in (("p0", admin), ("p1", bob)):
            requests = published(m.tick(now), "sync_request")
            asked += len(requests)
            net.post(name, [Publish(m.topics.round_sync(m.key), e) for e in requests])
        net.run()
        if admin.agreed() and bob.agreed():
            break
    assert admin.agreed() and bob.agreed(), "bob never got alice's ack of the final head"
    assert asked == 1  # only bob lacked an ack, and he asked once
    later = now + HEAD_EXCHANGE_MS
    assert not published(admin.tick(later), "sync_request")  # everyone agreed: quiet
    assert not published(bob.tick(later), "sync_request")
    for m in (admin, bob):
        lines = [e.raw for e in m.log()] + [a.raw for a in m.acks().values()]
        replay = replay_log(lines)
        assert replay.verdict == "agreed" and replay.state.winners() == (1,)
