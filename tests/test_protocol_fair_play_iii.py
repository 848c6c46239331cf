"""Issue 23 ("Fair play III"), played purely (no broker) with validly signed events:
a silent loser never wins, and every member reaches one verdict whatever the order.

The attack (two seats): the winner plays its move in time; the loser receives it, stays
silent, and at ``prev + limit + 30 s`` signs a ``silent`` forfeit dated exactly
``prev + limit`` plus its own ``sync_request`` built on the forfeit, dated 40 s later.
Rules v2 counted the forfeiter's own event as "another member holds the forfeit as
final" and made the victim rewind its own timely move.  Rules v3 (docs/protocol.md §8):
nobody witnesses for itself, so the victim keeps its move and shows the dispute; its
log replays to the same verdict.  Three seats: with the third member away, it used to
keep the move or the forfeit depending on which reached it first.
"""

from __future__ import annotations

import pytest

from p2p.protocol import events
from p2p.protocol.effects import Notice, Publish, Rewound
from p2p.protocol.identity import Identity
from p2p.protocol.replay import replay_log
from p2p.protocol.round import Phase, TurnTimeouts
from p2p.protocol.round_machine import RoundMachine

PEOPLE = [Identity.from_seed(bytes([i + 40]) * 32) for i in range(3)]
LIMITS = TurnTimeouts(silent_ms=20_000, offline_ms=20_000)
ROUND = "c3" * 16


def _open(n: int, game: str, options: dict, turn_s: int | None) -> list[RoundMachine]:
    seats = [{"pk": p.pk_hex, "level": None} for p in PEOPLE[:n]]
    admin, effects = RoundMachine.open(
        PEOPLE[0], 0, ROUND, game, options, seats, 0, b"\1" * 32,
        timeouts=LIMITS, turn_s=turn_s,
    )
    machines = [admin] + [
        RoundMachine(PEOPLE[i], admin.state.genesis, bytes([i + 1]) * 32, now=0, timeouts=LIMITS)
        for i in range(1, n)
    ]
    queue = [(0, e.event) for e in effects if isinstance(e, Publish)]
    for i in range(1, n):
        queue += [(i, e.event) for e in machines[i].accept(1) if isinstance(e, Publish)]
    _deliver(machines, queue, 1)
    assert all(m.state.phase is Phase.PLAY for m in machines)
    return machines


def _deliver(
    machines: list[RoundMachine], queue: list, now: int, away: frozenset[int] = frozenset()
) -> list:
    """Deliver everything published (and what it causes) to every member not ``away``."""
    out = []
    while queue:
        src, event = queue.pop(0)
        for j, m in enumerate(machines):
            if j == src or j in away:
                continue
            effects = m.receive(event, now)
            out.append((j, effects))
            queue += [(j, e.event) for e in effects if isinstance(e, Publish)]
    return out


def _publish(machines: list[RoundMachine], i: int, effects: list, now: int) -> None:
    _deliver(machines, [(i, e.event) for e in effects if isinstance(e, Publish)], now)


def _forged(attacker: Identity, prev: events.Event, seat: int, limit: int) -> tuple:
    """The loser's forfeit dated exactly ``prev + limit`` and its own sync request built
    on it, dated 40 s later (both validly signed)."""
    forfeit = events.make(
        attacker, "forfeit", prev.ts + limit, {"seat": seat, "reason": "silent"},
        round=ROUND, seq=(prev.seq or 0) + 1, prev=prev.id,
    )
    sync = events.make(
        attacker, "sync_request", forfeit.ts + 40_000, {"from_seq": (forfeit.seq or 0) + 1},
        round=ROUND, prev=forfeit.id,
    )
    return forfeit, sync


@pytest.mark.parametrize("turn_s", [None, 120], ids=["live", "slow"])
@pytest.mark.parametrize("ending", [False, True], ids=["mid_game", "game_ending"])
@pytest.mark.parametrize("attacker", ["admin", "successor"])
def test_a_silent_loser_cannot_take_a_timely_move_in_two_seats(
    attacker: str, ending: bool, turn_s: int | None
) -> None:
    machines = _open(2, "connect4", {}, turn_s)
    a = 0 if attacker == "admin" else 1  # the admin forfeits the guest, or the successor the admin
    v = 1 - a
    victim, loser = machines[v], machines[a]
    limit = victim.timeouts.silent_ms
    now = 1
    turns = 4 if ending else 2  # the victim's 4th move in column 1 wins
    while True:
        now += 1_000
        mover = next(m for m in machines if m.state.owner() == m.me.public_key)
        if mover is victim:
            turns -= 1
            if turns == 0:
                break
            _publish(machines, v, victim.move("1", now), now)
        else:
            column = "2" if loser.state.ply // 2 % 2 == 0 else "3"
            _publish(machines, a, loser.move(column, now), now)
    prev = victim.state.head
    now = prev.ts + 5_000  # in time
    effects = victim.move("1", now)
    (move,) = [e.event for e in effects if isinstance(e, Publish) and e.event.kind == "move"]
    assert (victim.state.phase is Phase.OVER) is ending
    loser.receive(move, now)  # the loser holds the move, and stays silent
    forfeit, sync = _forged(PEOPLE[a], prev, v, limit)
    now = prev.ts + limit + 30_000
    seen = victim.receive(forfeit, now) + victim.receive(sync, now)
    for _ in range(120):  # two minutes of the victim's timer
        now += 1_000
        seen += victim.tick(now)
    assert not any(isinstance(e, Rewound) for e in seen)
    assert victim.state.chain[move.seq].id == move.id
    assert [d[0] for d in victim.disputes()] == [move.seq]
    assert [e.code for e in seen if isinstance(e, Notice) and e.code == "disputed"] == ["disputed"]
    # the victim never signs an ack of the forfeit's end
    acks = [e.event for e in seen if isinstance(e, Publish) and e.event.kind == "ack"]
    assert all(a.prev != forfeit.id for a in acks)
    if ending:
        assert victim.state.winners() == (v,)
    # its log, with the evidence beside the chain, replays to the same verdict
    lines = [e.raw for e in victim.log()] + [e.raw for e in victim.conflict_evidence()]
    lines += [e.raw for e in victim.acks().values()]
    result = replay_log(lines, LIMITS)
    assert result.chain[move.seq].id == move.id and result.rules == "rules v5"
    assert [c.seq for c in result.contested()] == [move.seq]
    if ending:
        assert result.state.winners() == (v,) and result.verdict == "disputed"
    # restarted from that log, the victim weighs the same evidence: still disputed
    resumed = RoundMachine.from_log(
        PEOPLE[v], result.chain, b"\7" * 32, now=now, timeouts=LIMITS,
        evidence=result.evidence(),
    )
    assert [d[0] for d in resumed.disputes()] == [move.seq]
    assert resumed.state.state_hash() == victim.state.state_hash()
    # the loser's own log with the victim's move beside it is disputed, never agreed
    forged = [e.raw for e in victim.log()[: move.seq]] + [forfeit.raw, sync.raw, move.raw]
    assert replay_log(forged, LIMITS).verdict in ("disputed", "prefix")


@pytest.mark.parametrize("order", ["move_first", "forfeit_first"])
def test_three_seats_reach_one_verdict_whatever_reaches_the_third_member_first(
    order: str,
) -> None:
    """The admin (loser) forfeits seat 1's timely move and signs its own sync request
    40 s later; seat 2 is away and comes back to both, in either order."""
    machines = _open(3, "cube", {"players": 3}, None)
    admin, victim, third = machines
    now = 1
    while victim.state.owner() != victim.me.public_key or victim.state.ply < 3:
        now += 1_000
        mover = next(m for m in machines if m.state.owner() == m.me.public_key)
        i = machines.index(mover)
        _publish(machines, i, mover.move(mover.state.game.legal_moves()[0], now), now)
    prev = victim.state.head
    now = prev.ts + 5_000
    effects = victim.move(victim.state.game.legal_moves()[0], now)
    (move,) = [e.event for e in effects if isinstance(e, Publish) and e.event.kind == "move"]
    admin.receive(move, now)  # the admin holds it and stays silent; seat 2 is away
    forfeit, sync = _forged(PEOPLE[0], prev, 1, LIMITS.silent_ms)
    now = prev.ts + LIMITS.silent_ms + 30_000
    out = victim.receive(forfeit, now) + victim.receive(sync, now)
    assert victim.state.chain[move.seq].id == move.id
    now += 30_000  # seat 2 comes back
    arrivals = [move, forfeit, sync] if order == "move_first" else [forfeit, sync, move]
    for event in arrivals:
        out += third.receive(event, now)
    for _ in range(180):  # three minutes of head exchange between the two honest members
        now += 1_000
        queue = [(1, e.event) for e in victim.tick(now) if isinstance(e, Publish)]
        queue += [(2, e.event) for e in third.tick(now) if isinstance(e, Publish)]
        _deliver(machines, queue, now, away=frozenset({0}))
    assert third.state.head.id == victim.state.head.id
    assert third.state.chain[move.seq].id == move.id
    assert third.state.phase is Phase.PLAY and third.state.forfeited == []
    # both honest members name the forfeiter's claim as disputed, and replay of each
    # one's log (chain and evidence) gives that member's live verdict
    for m in (victim, third):
        assert [d[0] for d in m.disputes()] == [move.seq]
        lines = [e.raw for e in m.log()] + [e.raw for e in m.conflict_evidence()]
        result = replay_log(lines, LIMITS)
        assert result.state.state_hash() == m.state.state_hash()
        assert [c.seq for c in result.contested()] == [move.seq]


def test_a_third_member_cannot_fake_the_forfeits_finality_against_a_move_in_time() -> None:
    """Three seats, the third member hostile: seat 1 moves at the last second, its move
    reaches the admin just after the admin's forfeit, within the race window, so the
    admin takes the move.  The third member then signs a "holding proof" of the forfeit
    (two sync requests on it, 30 s apart by their dates).  The admin holds the move
    itself: it says so with a signed sign of its own, so the proof decides nothing and
    the move stays (the table's "held" row needs that nobody but the mover holds it)."""
    machines = _open(3, "cube", {"players": 3}, None)
    admin, mover, third = machines
    now = 1
    while mover.state.owner() != mover.me.public_key or mover.state.ply < 3:
        now += 1_000
        m = next(x for x in machines if x.state.owner() == x.me.public_key)
        i = machines.index(m)
        _publish(machines, i, m.move(m.state.game.legal_moves()[0], now), now)
    prev = mover.state.head
    limit = LIMITS.silent_ms
    late_second = prev.ts + limit - 1_000
    effects = mover.move(mover.state.game.legal_moves()[0], late_second)
    (move,) = [e.event for e in effects if isinstance(e, Publish) and e.event.kind == "move"]
    third.receive(move, late_second)
    now = prev.ts + limit
    seen = []
    for _ in range(3):  # the move is on its way to the admin; the admin's clock runs out
        out = admin.tick(now)
        seen += out
        forfeits = [e.event for e in out if isinstance(e, Publish) and e.event.kind == "forfeit"]
        if forfeits:
            break
        now += 1_000
    (forfeit,) = forfeits
    now += 3_000
    seen += admin.receive(move, now)  # within the race window: the timely move wins
    assert admin.state.chain[move.seq].id == move.id
    fake = [
        events.make(PEOPLE[2], "sync_request", forfeit.ts + k * 30_000,
                    {"from_seq": forfeit.seq + 1}, round=ROUND, prev=forfeit.id)
        for k in (0, 1)
    ]
    now = forfeit.ts + 21_000  # as soon as the later one is no more than 10 s ahead
    for sign in fake:
        seen += admin.receive(sign, now)
        seen += mover.receive(sign, now)
    mover.receive(forfeit, now)
    for _ in range(60):  # a minute of head exchange between the two honest members
        now += 1_000
        queue = [(0, e.event) for e in admin.tick(now) if isinstance(e, Publish)]
        queue += [(1, e.event) for e in mover.tick(now) if isinstance(e, Publish)]
        _deliver(machines, queue, now, away=frozenset({2}))
    for m in (admin, mover):
        assert m.state.chain[move.seq].id == move.id
        assert 1 not in m.state.forfeited  # (the away third member may be, later)
    assert admin.state.head.id == mover.state.head.id


def test_a_back_dated_revival_does_not_make_the_next_seat_late_at_once() -> None:
    """T6: the guest (the admin's successor) really was late; the admin forfeits it; the
    guest comes back within seconds with a move dated back to just after ``prev`` (it wins
    by the signed timestamps, T3) and at once forfeits the admin, dated ``limit`` after
    that back-dated move.  The admin's turn counts from the forfeit the move beat."""
    machines = _open(2, "connect4", {}, None)
    admin, guest = machines
    now = 1
    for column in ("4", "1", "4"):
        now += 1_000
        m = next(x for x in machines if x.state.owner() == x.me.public_key)
        _publish(machines, machines.index(m), m.move(column, now), now)
    prev = admin.state.head  # the guest's turn
    limit = LIMITS.silent_ms
    now = prev.ts + limit
    (forfeit,) = [e.event for e in admin.tick(now) if isinstance(e, Publish)
                  and e.event.kind == "forfeit"]
    trial = guest.state.game.copy()
    trial.push("2")
    body = {"ply": guest.state.ply, "move": "2", "state": trial.state_hash()}
    revival = events.make(PEOPLE[1], "move", prev.ts + 1, body, round=ROUND,
                          seq=forfeit.seq, prev=prev.id)
    now += 2_000
    admin.receive(revival, now)  # within seconds: the back-dated move wins (T3)
    assert admin.state.chain[revival.seq].id == revival.id
    early = events.make(PEOPLE[1], "forfeit", revival.ts + limit, {"seat": 0, "reason": "silent"},
                        round=ROUND, seq=revival.seq + 1, prev=revival.id)
    effects = admin.receive(early, now)  # the admin saw the revival arrive: it waits
    assert admin.state.head.id == revival.id and admin.state.phase is Phase.PLAY
    assert [e.code for e in effects if isinstance(e, Notice)] == ["forfeit_early"]
    # the admin answers 10 s later: by T3 with the turn counted from the beaten
    # forfeit (T6) its move is timely and beats the early forfeit in any order
    mine = [e.event for e in admin.move("3", now + 10_000) if isinstance(e, Publish)
            and e.event.kind == "move"]
    assert mine and admin.state.head.id == mine[0].id
    now += 10 * limit
    admin.tick(now)
    assert admin.state.chain[mine[0].seq].id == mine[0].id  # (then the guest's turn ran out)
    assert 0 not in admin.state.forfeited
