"""Rounds driven entirely in-process between several members' state machines."""

from __future__ import annotations

import random

import pytest

from p2p.protocol import draw, events
from p2p.protocol.effects import Applied, Dropped, Equivocation, Publish
from p2p.protocol.identity import Identity
from p2p.protocol.loopback import Loopback
from p2p.protocol.round import ChainError, Phase, RoundState, verify_chain
from p2p.protocol.round_machine import (
    INVITE_TTL_MS,
    PRIVATE_TTL_MS,
    REACT_STEPS,
    ActionError,
    RoundMachine,
)
from p2p.protocol.topics import Topics, private_key

PEOPLE = [Identity.from_seed(bytes([i + 1]) * 32) for i in range(4)]
ROUND = "5a" * 16


def nonce(i: int) -> bytes:
    return bytes([0x40 + i]) * 32


def human(i: int) -> dict:
    return {"pk": PEOPLE[i].pk_hex, "level": None}


def open_round(
    net: Loopback,
    game: str,
    options: dict,
    seats: list[dict],
    start: int | None = None,
    round_id: str = ROUND,
) -> list[RoundMachine]:
    """The admin (person 0) opens; every invited human accepts; returns machines by person."""
    admin, effects = RoundMachine.open(
        PEOPLE[0], 0, round_id, game, options, seats, start, nonce(0)
    )
    net.add("p0", admin, effects)
    machines = [admin]
    for i, seat in enumerate(seats):
        if seat["pk"] is None or seat["pk"] == PEOPLE[0].pk_hex:
            continue
        person = [p.pk_hex for p in PEOPLE].index(seat["pk"])
        member = RoundMachine(PEOPLE[person], admin.state.genesis, nonce(person))
        net.add(f"p{person}", member, member.accept(1))
        machines.append(member)
    net.run()
    return machines


def play_out(net: Loopback, machines: list[RoundMachine], rng: random.Random) -> None:
    """Every human to move plays a random legal move until the round is over."""
    by_key = {m.me.public_key: m for m in machines}
    for _ in range(500):
        reference = machines[0].state
        if reference.phase is not Phase.PLAY:
            return
        owner = reference.owner()
        mover = by_key[owner]
        assert mover.state.game is not None
        move = rng.choice(mover.state.game.legal_moves())
        net.post(f"p{PEOPLE.index(mover.me)}", mover.move(move, net.now))
        net.run()
    raise AssertionError("the round did not end")


def assert_agree(machines: list[RoundMachine]) -> None:
    heads = {m.state.head.id for m in machines}
    hashes = {m.state.state_hash() for m in machines}
    assert len(heads) == 1 and len(hashes) == 1, (heads, hashes)
    assert len({m.state.phase for m in machines}) == 1


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_two_seat_connect4_drawn_start_any_delivery_order(seed: int) -> None:
    rng = random.Random(seed)
    net = Loopback(pick=rng.randrange)
    machines = open_round(net, "connect4", {}, [human(0), human(1)])
    assert_agree(machines)
    state = machines[0].state
    assert state.phase is Phase.PLAY
    # every member recomputes the draw from the sealed reveals and gets the same starter
    expected_seed = draw.draw_seed(ROUND, [nonce(0), nonce(1)])
    for m in machines:
        assert m.state.seed == expected_seed
        assert m.state.starter == draw.starter(expected_seed, [0, 1])
        assert m.state.game is not None and m.state.game.to_move() == m.state.starter
    play_out(net, machines, rng)
    assert_agree(machines)
    assert machines[0].phase is Phase.OVER
    assert not net.effects_of(Equivocation)
    # nothing but harmless duplicates/late copies was dropped
    reasons = {e.reason for e in net.effects_of(Dropped)}
    assert reasons <= {"duplicate"}, reasons
    # and the log verifies offline to the same state
    replayed = verify_chain(machines[1].log())
    assert replayed.state_hash() == machines[0].state.state_hash()
    assert replayed.winners() == machines[0].state.winners()


@pytest.mark.parametrize("seed", [5, 6])
def test_three_seat_cube_played_to_the_end(seed: int) -> None:
    rng = random.Random(seed)
    net = Loopback(pick=rng.randrange)
    machines = open_round(net, "cube", {"players": 3}, [human(0), human(1), human(2)])
    assert_agree(machines)
    assert machines[2].state.seed == draw.draw_seed(
        ROUND, [nonce(0), nonce(1), nonce(2)]
    )
    play_out(net, machines, rng)
    assert_agree(machines)
    state = machines[0].state
    assert state.phase is Phase.OVER and state.ply == 64
    assert sum(1 for e in state.chain if e.kind == "move") == 64


def test_named_starting_seat_skips_the_draw() -> None:
    net = Loopback()
    machines = open_round(net, "cube", {"players": 2}, [human(0), human(1)], start=1)
    assert_agree(machines)
    state = machines[1].state
    assert state.phase is Phase.PLAY and state.starter == 1
    assert [e.kind for e in state.chain] == ["genesis", "start"]
    assert state.seed == draw.fixed_seed(ROUND)


def test_starter_never_a_non_revealer_for_many_rounds() -> None:
    for k in range(12):
        rid = f"{k:032x}"
        seed = draw.draw_seed(rid, [nonce(0), nonce(2)])
        assert draw.starter(seed, [0, 2]) in (0, 2)


def test_decline_cancels_and_expiry_cancels() -> None:
    net = Loopback()
    admin, effects = RoundMachine.open(
        PEOPLE[0], 0, ROUND, "connect4", {}, [human(0), human(1)], None, nonce(0)
    )
    bob = RoundMachine(PEOPLE[1], admin.state.genesis, nonce(1))
    net.add("p0", admin, effects)
    net.add("p1", bob, bob.decline(5))
    net.run()
    assert admin.phase is bob.phase is Phase.CANCELLED
    assert "declined" in bob.state.end_reason

    net = Loopback()
    admin, effects = RoundMachine.open(
        PEOPLE[0], 0, "77" * 16, "connect4", {}, [human(0), human(1)], None, nonce(0)
    )
    bob = RoundMachine(PEOPLE[1], admin.state.genesis, nonce(1))
    net.add("p0", admin, effects)
    net.add("p1", bob)
    net.run()
    assert admin.tick(1000) == []
    net.post("p0", admin.tick(admin.state.expires))
    net.run()
    assert bob.phase is Phase.CANCELLED
    with pytest.raises(ActionError):
        bob.accept(10**9)


def test_invitation_goes_to_the_invitees_inbox() -> None:
    _admin, effects = RoundMachine.open(
        PEOPLE[0], 0, ROUND, "connect4", {}, [human(0), human(1)], None, nonce(0)
    )
    topics = [e.route.topic for e in effects if isinstance(e, Publish)]
    assert Topics().inbox(PEOPLE[1].peer_id).topic in topics
    assert Topics().round_events(ROUND).topic in topics


def test_private_round_two_joins_for_the_last_seat() -> None:
    code = "K7MQ2X"
    net = Loopback()
    seats = [human(0), {"pk": None, "level": None}]
    admin, effects = RoundMachine.open(
        PEOPLE[0], 0, ROUND, "connect4", {}, seats, 0, nonce(0), code=code
    )
    key = private_key(code)
    routes = {e.route for e in effects if isinstance(e, Publish)}
    assert (
        Topics().round_genesis(key) in routes and Topics().round_events(key) in routes
    )
    assert all(ROUND not in r.topic for r in routes)
    net.add("p0", admin, effects)
    first = RoundMachine(PEOPLE[1], admin.state.genesis, nonce(1), code=code)
    second = RoundMachine(PEOPLE[2], admin.state.genesis, nonce(2), code=code)
    wrong = RoundMachine(PEOPLE[3], admin.state.genesis, nonce(3), code="K7MQ2Y")
    net.add("p3", wrong, wrong.join("eve", 1))
    net.add("p1", first, first.join("bob", 2))
    net.add("p2", second, second.join("carol", 3))
    net.run()
    assert any("right code" in e.reason for e in net.effects_of(Dropped, "p0"))
    for m in (admin, first, second):
        assert m.phase is Phase.PLAY
        assert m.state.seats[1].pk == PEOPLE[1].public_key  # the admin's start decided
        assert m.state.seats[1].nick == "bob"
    assert second.my_seat is None
    with pytest.raises(ActionError):
        second.move("4", net.now)


def test_a_private_round_waits_longer_for_its_code_than_an_invitation() -> None:
    invited, _ = RoundMachine.open(
        PEOPLE[0], 1000, ROUND, "connect4", {}, [human(0), human(1)], 0, nonce(0)
    )
    private, _ = RoundMachine.open(
        PEOPLE[0], 1000, ROUND, "connect4", {}, [human(0), {"pk": None, "level": None}], 0,
        nonce(0), code="K7MQ2X",
    )
    assert invited.state.expires == 1000 + INVITE_TTL_MS
    assert private.state.expires == 1000 + PRIVATE_TTL_MS > invited.state.expires
    # Still forming just before the code expires, cancelled at the expiry.
    assert private.tick(1000 + PRIVATE_TTL_MS - 1) == [] and private.phase is Phase.FORMING
    private.tick(1000 + PRIVATE_TTL_MS)
    assert private.phase is Phase.CANCELLED


def test_resync_after_missing_events() -> None:
    offline = {"on": False}

    def lose_to_p1(src: str, dst: str, event: events.Event) -> bool:
        return offline["on"] and dst == "p1"

    rng = random.Random(9)
    net = Loopback(drop=lose_to_p1)
    machines = open_round(
        net, "cube", {"players": 3}, [human(0), human(1), human(2)], start=0
    )
    admin, bob, _carol = machines
    # seat 0 and seat 1 must move while bob is offline: only seat 0 moves, then bob misses it
    offline["on"] = True
    net.post("p0", admin.move("a1", net.now))
    net.run()
    assert len(bob.state.chain) == len(admin.state.chain) - 1
    offline["on"] = False
    net.post("p1", bob.request_sync(net.now))
    net.run()
    assert_agree(machines)
    play_out(net, machines, rng)
    assert_agree(machines)


def test_late_joiner_replays_log_in_any_order() -> None:
    rng = random.Random(3)
    net = Loopback(pick=rng.randrange)
    machines = open_round(net, "connect4", {}, [human(0), human(1)])
    play_out(net, machines, rng)
    log = machines[0].log()
    fresh = RoundMachine(PEOPLE[1], log[0], nonce(1))
    shuffled = log[1:]
    rng.shuffle(shuffled)
    effects = fresh.receive_all(shuffled, 10**6)
    assert sum(isinstance(e, Applied) for e in effects) == len(log) - 1
    assert fresh.state.state_hash() == machines[0].state.state_hash()


def test_admin_leaving_connect4_ends_with_the_other_winning() -> None:
    net = Loopback()
    machines = open_round(net, "connect4", {}, [human(0), human(1)], start=1)
    admin, _bob = machines
    net.post("p0", admin.leave(net.now))
    net.run()
    assert_agree(machines)
    assert admin.state.phase is Phase.OVER
    assert admin.state.winners() == (1,)
    assert (
        admin.state.chain[-1].kind == "seal"
        and admin.state.chain[-1].pk == PEOPLE[1].public_key
    )


def test_resignation_in_cube_ends_the_round() -> None:
    net = Loopback()
    machines = open_round(
        net, "cube", {"players": 3}, [human(0), human(1), human(2)], start=0
    )
    net.post("p2", machines[2].resign(net.now))
    net.run()
    assert_agree(machines)
    state = machines[0].state
    assert state.phase is Phase.OVER and state.resigned == [2]
    assert 2 not in state.winners()


def test_computer_seat_moves_are_recomputed_by_every_peer() -> None:
    pytest.importorskip("p2p.ai.connect4_ai")
    rng = random.Random(11)
    net = Loopback(pick=rng.randrange)
    seats = [human(0), {"pk": None, "level": "neuling"}]
    admin, effects = RoundMachine.open(
        PEOPLE[0], 0, ROUND, "connect4", {}, seats, None, nonce(0)
    )
    watcher = RoundMachine(
        PEOPLE[3], admin.state.genesis, nonce(3)
    )  # a spectator verifying all
    net.add("p0", admin, effects)
    net.add("w", watcher)
    net.run()
    for _ in range(30):
        if admin.phase is not Phase.PLAY:
            break
        net.post("p0", admin.move(rng.choice(admin.state.game.legal_moves()), net.now))
        net.run()
    assert admin.state.head.id == watcher.state.head.id
    computer_moves = [
        e
        for e in admin.state.chain
        if e.kind == "move" and e.body["ply"] % 2 != admin.state.starter
    ]
    assert computer_moves
    # a forged computer move (a legal but different column) is refused by the watcher
    state = RoundState.from_genesis(admin.state.genesis)
    for e in admin.state.chain[1:]:
        if (
            e.kind == "move"
            and state.game is not None
            and state.seats[state.game.to_move()].is_computer
        ):
            other = next(m for m in state.game.legal_moves() if m != e.body["move"])
            trial = state.game.copy()
            trial.push(other)
            forged = events.make(
                PEOPLE[0],
                "move",
                1,
                {"ply": state.ply, "move": other, "state": trial.state_hash()},
                round=ROUND,
                seq=e.seq,
                prev=e.prev,
            )
            with pytest.raises(Exception, match="computer at seat"):
                state.apply(forged)
            break
        state.apply(e)
    else:
        pytest.fail("no computer move found")


def test_verify_chain_names_the_first_bad_event() -> None:
    net = Loopback()
    machines = open_round(net, "connect4", {}, [human(0), human(1)], start=0)
    for column in ("4", "4", "3"):
        mover = (
            machines[0]
            if machines[0].state.owner() == PEOPLE[0].public_key
            else machines[1]
        )
        net.post("x", mover.move(column, net.now))
        net.run()
    log = machines[0].log()
    assert verify_chain(log).ply == 3
    with pytest.raises(ChainError, match="event 3"):
        verify_chain(log[:3] + log[4:])
    with pytest.raises(ChainError, match="event 0"):
        verify_chain(log[1:])
    with pytest.raises(ChainError, match="empty"):
        verify_chain([])


def test_resume_from_a_saved_log_and_catch_up_by_sync() -> None:
    rng = random.Random(21)
    net = Loopback(pick=rng.randrange)
    machines = open_round(net, "connect4", {}, [human(0), human(1)], start=0)
    for _ in range(4):
        mover = (
            machines[0]
            if machines[0].state.owner() == PEOPLE[0].public_key
            else machines[1]
        )
        net.post("x", mover.move(rng.choice(mover.state.game.legal_moves()), net.now))
        net.run()
    saved = machines[1].log()[:3]  # bob's log file is behind (he crashed)
    resumed = RoundMachine.from_log(PEOPLE[1], saved, nonce(1))
    assert len(resumed.state.chain) == 3
    net.machines["p1"] = resumed
    machines[1] = resumed
    net.post("p1", resumed.request_sync(net.now))
    net.run()
    assert_agree(machines)
    with pytest.raises(ChainError):
        RoundMachine.from_log(PEOPLE[1], saved[1:], nonce(1))


def test_the_computers_play_on_to_the_end_once_no_human_seat_is_left() -> None:
    """Four-player chess, both human seats resign: the two computer seats play on alone,
    their moves signed by the admin.  One machine step plays at most ``REACT_STEPS`` of
    them (a step holds the round's lock); the admin's next ``tick`` goes on with the rest,
    so the round ends instead of stalling at the cap until some event comes in (the live
    test whose last human was mated after the admin left waited its 60 s out)."""
    net = Loopback()
    computer = {"pk": None, "level": "einfach"}
    seats = [human(0), human(1), computer, computer]
    admin, guest = open_round(net, "chess4", {}, seats, start=0)
    net.post("p1", guest.resign(net.now))
    net.run()
    net.post("p0", admin.resign(net.now))  # the admin seals both and plays on
    net.run()
    assert admin.state.resigned == [1, 0] and admin.state.phase is Phase.PLAY
    assert admin.duties_left, "the game is longer than one step's moves"
    ticks = 0
    while admin.state.phase is Phase.PLAY:
        ply = admin.state.ply
        net.now += 250  # the peer ticks every 0.25 s
        net.post("p0", admin.tick(net.now))
        net.run()
        ticks += 1
        assert 0 < admin.state.ply - ply <= REACT_STEPS, f"tick {ticks} at ply {ply}"
    assert not admin.duties_left and admin.state.phase is Phase.OVER
    assert_agree([admin, guest])
    assert verify_chain(guest.state.chain).state_hash() == admin.state.state_hash()


def test_applied_names_the_seat_that_moved_also_for_a_computer_seat() -> None:
    """``Applied.seat``: the seat to move before a move, though the admin signs a computer
    seat's move; every member reads it from the effect (no shadow engine to replay)."""
    pytest.importorskip("p2p.ai.connect4_ai")
    seats = [human(0), {"pk": None, "level": "neuling"}]
    admin, _ = RoundMachine.open(PEOPLE[0], 0, ROUND, "connect4", {}, seats, 0, nonce(0))
    watcher = RoundMachine(PEOPLE[3], admin.state.genesis, nonce(3))
    for event in admin.state.chain[1:]:
        watcher.receive(event, 1)
    assert admin.phase is Phase.PLAY and admin.state.game is not None
    effects = admin.move(admin.state.game.legal_moves()[0], 2)
    applied = [e for e in effects if isinstance(e, Applied)]
    assert [(a.event.kind, a.seat) for a in applied] == [("move", 0), ("move", 1)]
    assert {a.event.pk for a in applied} == {PEOPLE[0].public_key}  # both signed by the admin
    seen = [e for a in applied for e in watcher.receive(a.event, 3) if isinstance(e, Applied)]
    assert [a.seat for a in seen] == [0, 1]


def test_an_illegal_move_keeps_the_engines_error_code() -> None:
    """The engine's ``code`` and ``params`` reach the user action's ``ActionError``."""
    net = Loopback()
    machines = open_round(net, "connect4", {"height": 4}, [human(0), human(1)], start=0)
    for _ in range(2):  # fill column 1 in turn: 4 rows
        for m in machines:
            net.post(f"p{PEOPLE.index(m.me)}", m.move("1", net.now))
            net.run()
    admin = machines[0]
    with pytest.raises(ActionError) as caught:
        admin.move("1", net.now)
    assert caught.value.code == "column_full" and caught.value.params == {"column": 1}
    with pytest.raises(ActionError) as caught:
        admin.move("x9", net.now)
    assert caught.value.code == "not_column"
