"""The draw cannot be steered: attacks on commit-reveal with validly signed events (pure).

Since protocol v5 the draw starts with the invitation: the admin's commitment is in the
genesis, each guest's in its ``accept`` (a code joiner's in its ``join``), and the admin's
``start``, which must seal every seat's accept, closes the commit set; the reveals follow
the start, and the admin seals them all in ``draw`` after seeing every one.  Under the
fair-draw rules every human seat's commitment and reveal must be sealed, so the admin's
only other option is to cancel; a named starter's round with computer seats draws its
seed from every member too.  Each test plays one attack.
"""

from __future__ import annotations

import itertools
import random

from test_protocol_round import PEOPLE, ROUND, human, nonce, open_round

from p2p.protocol import draw, events
from p2p.protocol.effects import Dropped, Notice, cancel_reason
from p2p.protocol.loopback import Loopback
from p2p.protocol.round import Phase, RoundError, RoundState
from p2p.protocol.round_machine import REVEAL_TIMEOUT_MS, RoundMachine

CHI2_999 = {1: 10.83, 2: 13.82, 3: 16.27}
"""Chi-square critical values at p = 0.001 by degrees of freedom."""


def admin_event(state: RoundState, kind: str, body: dict) -> events.Event:
    """A chain event at the head of ``state``, validly signed by the admin (person 0)."""
    head = state.head
    return events.make(
        PEOPLE[0],
        kind,
        head.ts + 1,
        body,
        round=state.round_id,
        seq=head.seq + 1,
        prev=head.id,
    )


def notices(net: Loopback, name: str) -> list[str]:
    return [e.text for e in net.effects_of(Notice, name)]


def test_the_start_closes_every_commitment_and_nothing_is_revealed_before_it() -> None:
    """The last to commit has seen no nonce: every reveal answers the start, and the
    start holds every human seat's commitment (the admin's from the genesis)."""
    net = Loopback(pick=random.Random(3).randrange)
    machines = open_round(net, "chess4", {}, [human(i) for i in range(4)])
    start = machines[0].state.chain[1]
    for m in machines:
        st = m.state
        assert st.phase is Phase.PLAY
        assert [e.kind for e in st.chain] == ["genesis", "start", "draw"]
        assert st.commits == {
            i: draw.commitment(ROUND, PEOPLE[i].public_key, nonce(i)) for i in range(4)
        }
        assert st.starter == draw.starter(
            draw.draw_seed(ROUND, [nonce(i) for i in range(4)]), [0, 1, 2, 3]
        )
    assert start.kind == "start"
    assert machines[0].state.genesis.body["commit"] == machines[0].state.commits[0]
    published = [p.event for _, p in net.published]
    reveals = [e for e in published if e.kind == "reveal"]
    assert len(reveals) == 4 and all(e.prev == start.id for e in reveals)
    # nothing of the kinds of the old commit round is sent any more
    assert not [e for e in published if e.kind in ("commit", "commit_close")]


def test_an_accept_without_a_commitment_is_dropped_and_a_start_sealing_one_refused() -> None:
    admin, effects = RoundMachine.open(
        PEOPLE[0], 0, ROUND, "connect4", {}, [human(0), human(1)], None, nonce(0)
    )
    genesis = admin.state.genesis
    bare = events.make(PEOPLE[1], "accept", 1, {"seat": 1}, round=ROUND, prev=genesis.id)
    dropped = admin.receive(bare, 2)
    assert [e.reason for e in dropped if isinstance(e, Dropped)] == [
        "the accept carries no commitment to the draw"
    ]
    assert admin.phase is Phase.FORMING
    # a start sealing it (the admin's own signature) is refused by the chain rule
    bob = RoundMachine(PEOPLE[1], genesis, nonce(1))
    start = admin_event(admin.state, "start", {"sealed": [bare.value()]})
    refused = bob.receive(start, 3)
    assert [e.reason for e in refused if isinstance(e, Dropped)] == [
        "the accept carries no commitment to the draw"
    ]
    assert bob.phase is Phase.FORMING


def test_no_commit_round_in_v5_and_no_reveal_before_the_start() -> None:
    """The kinds of the old commit round do not fit a v5 round, and a reveal made before
    the start (answering the genesis) is dropped: nobody reveals before the set is closed."""
    net = Loopback(drop=lambda src, dst, e: e.kind == "start")
    admin, bob = open_round(net, "connect4", {}, [human(0), human(1)])
    assert admin.phase is Phase.REVEAL and bob.phase is Phase.FORMING
    genesis = bob.state.genesis
    early = events.make(
        PEOPLE[0], "reveal", 2, {"nonce": nonce(0).hex()}, round=ROUND, prev=genesis.id
    )
    assert [e.reason for e in bob.receive(early, net.now + 1) if isinstance(e, Dropped)] == [
        "reveal outside the reveal phase"
    ]
    commit = events.make(PEOPLE[0], "commit", 2, {"commit": "ee" * 32}, round=ROUND,
                         prev=genesis.id)
    assert [e.reason for e in bob.receive(commit, net.now + 2) if isinstance(e, Dropped)] == [
        "commit outside the commit phase"
    ]
    close = admin_event(admin.state, "commit_close", {"sealed": []})
    trial = admin.state.snapshot()
    try:
        trial.apply(close)
        raise AssertionError("a commit_close was taken in a v5 round")
    except RoundError as err:
        assert str(err) == "commit_close only while collecting commitments"


def test_an_equivocating_guest_is_held_to_the_commitment_the_start_sealed() -> None:
    """Bob signs two accepts with two commitments (one to the admin, one to carol): the
    start seals one, and a reveal of the other nonce is dropped by every member."""
    other = bytes([0xAB]) * 32
    admin, effects = RoundMachine.open(
        PEOPLE[0], 0, ROUND, "cube", {"players": 3}, [human(0), human(1), human(2)], None,
        nonce(0)
    )
    genesis = admin.state.genesis
    bob = RoundMachine(PEOPLE[1], genesis, nonce(1))
    carol = RoundMachine(PEOPLE[2], genesis, nonce(2))
    second = events.make(
        PEOPLE[1], "accept", 1,
        {"seat": 1, "commit": draw.commitment(ROUND, PEOPLE[1].public_key, other)},
        round=ROUND, prev=genesis.id,
    )
    holding = True

    def drop(src: str, dst: str, e: events.Event) -> bool:
        return src == "p1" and (e.kind == "accept" and dst == "p2" or e.kind == "reveal"
                                and holding)

    net = Loopback(drop=drop)
    net.add("p0", admin, effects)
    carol.receive(second, 1)  # carol holds the other accept
    net.add("p2", carol, carol.accept(1))
    net.add("p1", bob, bob.accept(1))
    net.run()
    sealed = {e.pk: e for e in admin.state.chain[1].sealed()}
    assert sealed[PEOPLE[1].public_key].body["commit"] == draw.commitment(
        ROUND, PEOPLE[1].public_key, nonce(1))
    assert all(m.phase is Phase.REVEAL for m in (admin, bob, carol))
    late = events.make(PEOPLE[1], "reveal", net.now, {"nonce": other.hex()}, round=ROUND,
                       prev=admin.state.chain[1].id)
    for m in (admin, carol):
        assert [e.reason for e in m.receive(late, net.now + 1) if isinstance(e, Dropped)] == [
            "reveal does not match a commitment in the closed set"
        ]
    holding = False
    net.post("p1", [p for n, p in net.published if n == "p1" and p.event.kind == "reveal"])
    net.run()
    for m in (admin, bob, carol):
        assert m.phase is Phase.PLAY
        assert m.state.seed == draw.draw_seed(ROUND, [nonce(0), nonce(1), nonce(2)])


def test_a_guest_that_lost_its_nonce_cannot_reveal_and_the_draw_is_cancelled() -> None:
    """A guest restarted after its accept (its nonce is gone, a new one differs): its
    reveal cannot match the commitment its accept carried, so it sends none, and the
    admin cancels at the reveal timeout, naming the seat; nobody starts."""
    admin, effects = RoundMachine.open(
        PEOPLE[0], 0, ROUND, "connect4", {}, [human(0), human(1)], None, nonce(0)
    )
    bob = RoundMachine(PEOPLE[1], admin.state.genesis, nonce(1))
    accepted = bob.accept(1)
    restarted = RoundMachine(PEOPLE[1], admin.state.genesis, nonce(7))
    net = Loopback()
    net.add("p0", admin, effects)
    net.add("p1", restarted)
    net.post("p1", accepted)  # what the first bob sent before it stopped
    net.run()
    assert admin.phase is Phase.REVEAL and restarted.phase is Phase.REVEAL
    assert not [p for n, p in net.published if n == "p1" and p.event.kind == "reveal"]
    net.post("p0", admin.tick(admin.phase_since + REVEAL_TIMEOUT_MS))
    net.run()
    for m in (admin, restarted):
        assert m.phase is Phase.CANCELLED and m.state.starter is None
        assert m.state.end_reason == "cancelled: seat 1 did not reveal for the draw in time"


def test_a_guest_restarted_after_its_accept_finds_its_nonce_again_and_the_draw_completes() -> None:
    """The live peer derives its nonce from its key and the round (``draw.own_nonce``,
    p2p.peer.opening), so a guest restarted between its accept and its reveal (a slow
    round may form for hours) computes the same nonce again: its reveal matches the
    commitment its accept carried and the round starts, as it did before v5."""
    ours = [draw.own_nonce(PEOPLE[i].seed(), ROUND) for i in range(2)]
    assert ours[0] != ours[1] and ours[1] == draw.own_nonce(PEOPLE[1].seed(), ROUND)
    admin, effects = RoundMachine.open(
        PEOPLE[0], 0, ROUND, "connect4", {}, [human(0), human(1)], None, ours[0]
    )
    bob = RoundMachine(PEOPLE[1], admin.state.genesis, ours[1])
    accepted = bob.accept(1)
    restarted = RoundMachine(PEOPLE[1], admin.state.genesis, draw.own_nonce(PEOPLE[1].seed(), ROUND))
    net = Loopback()
    net.add("p0", admin, effects)
    net.add("p1", restarted)
    net.post("p1", accepted)  # what the first bob sent before it stopped
    net.run()
    for m in (admin, restarted):
        assert m.phase is Phase.PLAY
        assert m.state.starter == draw.starter(draw.draw_seed(ROUND, ours), [0, 1])


def test_a_round_that_draws_nothing_carries_no_commitment() -> None:
    """A named starter and no computer seat: no draw, so no commitment in the genesis or
    the accept, and an accept that carries one anyway is dropped."""
    net = Loopback()
    admin, bob = open_round(net, "connect4", {}, [human(0), human(1)], start=1)
    assert "commit" not in admin.state.genesis.body
    assert [e.kind for e in admin.state.chain] == ["genesis", "start"]
    assert all("commit" not in e.body for e in admin.state.chain[1].sealed())
    assert bob.phase is Phase.PLAY and bob.state.starter == 1
    fresh, _ = RoundMachine.open(
        PEOPLE[0], 0, "6b" * 16, "connect4", {}, [human(0), human(1)], 1, nonce(0)
    )
    extra = events.make(PEOPLE[1], "accept", 1, {"seat": 1, "commit": "aa" * 32},
                        round="6b" * 16, prev=fresh.state.genesis.id)
    assert [e.reason for e in fresh.receive(extra, 2) if isinstance(e, Dropped)] == [
        "the accept carries a commitment, but the round draws nothing"
    ]


def test_a_private_rounds_joiners_commit_with_their_join() -> None:
    """Two code joiners race for the last seat: the start seals the first, whose join
    carried its commitment; the other joiner's commitment is in no draw."""
    code = "K7MQ2X"
    seats = [human(0), {"pk": None, "level": None}]
    admin, effects = RoundMachine.open(
        PEOPLE[0], 0, ROUND, "connect4", {}, seats, None, nonce(0), code=code
    )
    net = Loopback()
    net.add("p0", admin, effects)
    first = RoundMachine(PEOPLE[1], admin.state.genesis, nonce(1), code=code)
    second = RoundMachine(PEOPLE[2], admin.state.genesis, nonce(2), code=code)
    net.add("p1", first, first.join("bob", 2))
    net.add("p2", second, second.join("carol", 3))
    net.run()
    for m in (admin, first, second):
        assert m.phase is Phase.PLAY
        assert m.state.commits == {
            0: draw.commitment(ROUND, PEOPLE[0].public_key, nonce(0)),
            1: draw.commitment(ROUND, PEOPLE[1].public_key, nonce(1)),
        }
        assert m.state.seed == draw.draw_seed(ROUND, [nonce(0), nonce(1)])
    assert not [p for n, p in net.published if n == "p2" and p.event.kind == "reveal"]


def _reveal_phase_without_admin_seeing(
    players: int,
) -> tuple[Loopback, list[RoundMachine]]:
    """A round in the reveal phase where the members hold every reveal, the admin none."""
    net = Loopback(drop=lambda src, dst, e: e.kind == "reveal" and dst == "p0")
    seats = [human(i) for i in range(players)]
    machines = open_round(net, "cube", {"players": players}, seats)
    assert all(m.phase is Phase.REVEAL for m in machines)
    return net, machines


def test_admin_choosing_a_subset_of_reveals_after_seeing_them_is_refused() -> None:
    net, machines = _reveal_phase_without_admin_seeing(3)
    member = machines[1]
    reveals = {member.state.seat_of(e.pk): e for e in member.pooled("reveal")}
    assert sorted(reveals) == [0, 1, 2]
    accepted = []
    for size in range(1, 4):
        for subset in itertools.combinations(sorted(reveals), size):
            nonces = {s: bytes.fromhex(reveals[s].body["nonce"]) for s in subset}
            seed = draw.draw_seed(ROUND, [nonces[s] for s in subset])
            starter = draw.starter(seed, list(subset))
            body = {
                "sealed": [reveals[s].value() for s in subset],
                "seed": seed.hex(),
                "starter": starter,
            }
            trial = member.state.snapshot()
            try:
                trial.apply(admin_event(trial, "draw", body))
            except RoundError as err:
                assert "leaves out the reveal" in str(err) or "own reveal" in str(err)
                continue
            accepted.append(subset)
    assert accepted == [(0, 1, 2)]  # only the full draw: no subset to choose from
    # a draw that left seat 2 out is refused by the member, which names the seat
    subset = (0, 1)
    nonces = [bytes.fromhex(reveals[s].body["nonce"]) for s in subset]
    seed = draw.draw_seed(ROUND, nonces)
    body = {
        "sealed": [reveals[s].value() for s in subset],
        "seed": seed.hex(),
        "starter": draw.starter(seed, [0, 1]),
    }
    effects = member.receive(admin_event(member.state, "draw", body), net.now)
    assert member.phase is Phase.REVEAL
    assert [e.reason for e in effects if isinstance(e, Dropped)] == [
        "the draw leaves out the reveal of seat 2"
    ]
    assert any(
        "left out the reveal of seat 2 that reached us" in e.text
        for e in effects
        if isinstance(e, Notice)
    )


def test_admin_cancelling_after_the_reveals_is_seen_with_the_would_be_starter() -> None:
    net, machines = _reveal_phase_without_admin_seeing(3)
    admin = machines[0]
    net.post("p0", admin.tick(admin.phase_since + REVEAL_TIMEOUT_MS))
    net.run()
    assert all(m.phase is Phase.CANCELLED for m in machines)
    assert "did not reveal" in admin.state.end_reason
    seed = draw.draw_seed(ROUND, [nonce(0), nonce(1), nonce(2)])
    fair = draw.starter(seed, [0, 1, 2])
    for name in ("p1", "p2"):
        assert any(
            f"every reveal reached us; seat {fair} would have started" in t
            for t in notices(net, name)
        )


def test_withheld_reveal_cancels_the_draw_nobody_starts() -> None:
    net = Loopback(drop=lambda src, dst, e: e.kind == "reveal" and src == "p2")
    machines = open_round(net, "cube", {"players": 3}, [human(0), human(1), human(2)])
    admin = machines[0]
    assert admin.phase is Phase.REVEAL
    # the admin cannot draw without the withholder (the chain rule refuses it) ...
    reveals = admin.pooled("reveal")
    nonces = [bytes.fromhex(e.body["nonce"]) for e in reveals]
    seed = draw.draw_seed(ROUND, nonces)
    body = {
        "sealed": [e.value() for e in reveals],
        "seed": seed.hex(),
        "starter": draw.starter(seed, [0, 1]),
    }
    trial = admin.state.snapshot()
    try:
        trial.apply(admin_event(trial, "draw", body))
        raise AssertionError("a draw without seat 2's reveal was accepted")
    except RoundError as err:
        assert "leaves out the reveal of seat 2" in str(err)
    # ... so at the timeout it cancels, naming the seat; nobody starts
    net.post("p0", admin.tick(admin.phase_since + REVEAL_TIMEOUT_MS))
    net.run()
    for m in machines:
        assert m.phase is Phase.CANCELLED and m.state.starter is None
        assert (
            m.state.end_reason
            == "cancelled: seat 2 did not reveal for the draw in time"
        )
        assert cancel_reason(m.state.end_reason.removeprefix("cancelled: ")) == (
            "no_reveal",
            2,
        )


def test_admin_withholding_its_own_reveal_cannot_draw() -> None:
    # the admin keeps its reveal (and so its honest draw) to itself
    net = Loopback(
        drop=lambda src, dst, e: e.kind in ("reveal", "draw") and src == "p0"
    )
    _admin, bob = open_round(net, "connect4", {}, [human(0), human(1)])
    assert bob.phase is Phase.REVEAL
    theirs = bob.pooled("reveal")
    assert [bob.state.seat_of(e.pk) for e in theirs] == [1]
    seed = draw.draw_seed(ROUND, [nonce(1)])
    body = {"sealed": [theirs[0].value()], "seed": seed.hex(), "starter": 1}
    effects = bob.receive(admin_event(bob.state, "draw", body), net.now)
    assert bob.phase is Phase.REVEAL
    assert any(isinstance(e, Dropped) and "own reveal" in e.reason for e in effects)


def test_named_starter_with_a_computer_draws_its_seed_from_every_member() -> None:
    seats = [human(0), human(1), {"pk": None, "level": "neuling"}]
    net = Loopback()
    machines = open_round(net, "cube", {"players": 3}, seats, start=1)
    for m in machines:
        st = m.state
        assert st.phase is Phase.PLAY and st.starter == 1
        assert [e.kind for e in st.chain] == ["genesis", "start", "draw"]
        assert st.seed == draw.draw_seed(ROUND, [nonce(0), nonce(1)])
        assert st.seed != draw.fixed_seed(ROUND)


def test_grinding_round_ids_does_not_fix_the_computer_seed() -> None:
    # The admin tries many round ids; whatever it picks, the seed still moves with bob's
    # nonce, which bob commits to (in its accept) only after the round id and the admin's
    # own commitment (in the genesis) are fixed.
    seats = [human(0), human(1), {"pk": None, "level": "neuling"}]
    seeds = set()
    for bob_nonce in (nonce(1), nonce(9)):
        for k in range(3):
            rid = f"{k:032x}"
            admin, effects = RoundMachine.open(
                PEOPLE[0], 0, rid, "cube", {"players": 3}, seats, 0, nonce(0)
            )
            bob = RoundMachine(PEOPLE[1], admin.state.genesis, bob_nonce)
            net = Loopback()
            net.add("p0", admin, effects)
            net.add("p1", bob, bob.accept(1))
            net.run()
            assert admin.state.head.id == bob.state.head.id
            assert bob.state.seed == draw.draw_seed(rid, [nonce(0), bob_nonce])
            seeds.add(bob.state.seed)
    assert len(seeds) == 6
    # a v1-style chain (play straight after start, seed from the round id) is refused:
    # the start leads to the reveals
    state = RoundState.from_genesis(admin.state.genesis)
    state.apply(admin.state.chain[1])
    assert state.phase is Phase.REVEAL


def test_ten_thousand_honest_draws_are_uniform_over_the_seats() -> None:
    rng = random.Random(2024)
    for seats in (2, 3, 4):
        counts = [0] * seats
        for _ in range(10_000):
            rid = rng.randbytes(16).hex()
            nonces = [rng.randbytes(32) for _ in range(seats)]
            counts[draw.starter(draw.draw_seed(rid, nonces), list(range(seats)))] += 1
        expected = 10_000 / seats
        chi2 = sum((c - expected) ** 2 / expected for c in counts)
        assert chi2 < CHI2_999[seats - 1], (seats, counts, chi2)


def _draw_body(state: RoundState, reveals: dict[int, events.Event], subset) -> dict:
    """The draw the admin would sign for ``subset`` of the reveals (its result computed
    the way the v1 rules would accept it)."""
    nonces = {s: bytes.fromhex(reveals[s].body["nonce"]) for s in subset}
    seed = draw.draw_seed(state.round_id, [nonces[s] for s in sorted(subset)])
    return {
        "sealed": [reveals[s].value() for s in sorted(subset)],
        "seed": seed.hex(),
        "starter": draw.starter(seed, sorted(subset)),
    }


def test_the_admins_best_strategy_gets_no_more_than_its_fair_share() -> None:
    """Enumerate every choice the rules leave the admin, after it saw every reveal.

    Three human seats, random honest nonces.  At the start the admin may seal any subset
    of the accepts (each carrying its signer's commitment; its own is in the genesis); at
    the reveal stage any subset of the reveals, or cancel.  Its best strategy starts
    whenever any accepted option makes it the starter; that must happen no more often than
    its fair share (1/3), and every accepted draw must be the one fair result.
    """
    rng = random.Random(7)
    trials = 100
    wins = 0
    alice, bob, carol = PEOPLE[:3]
    seats = [human(0), human(1), human(2)]
    for trial in range(trials):
        rid = rng.randbytes(16).hex()
        nonces = [rng.randbytes(32) for _ in range(3)]
        genesis = events.make(
            alice,
            "genesis",
            0,
            {
                "game": "cube",
                "options": {"players": 3},
                "seats": seats,
                "start": None,
                "expires": 10**9,
                "private": False,
                "commit": draw.commitment(rid, alice.public_key, nonces[0]),
            },
            round=rid,
            seq=0,
        )
        state = RoundState.from_genesis(genesis)
        accepts = {
            i: events.make(
                p, "accept", 1,
                {"seat": i, "commit": draw.commitment(rid, p.public_key, nonces[i])},
                round=rid, prev=genesis.id,
            )
            for i, p in ((1, bob), (2, carol))
        }
        if trial == 0:  # the start: only every accept (every commitment) is accepted
            closable = []
            for size in range(3):
                for subset in itertools.combinations((1, 2), size):
                    probe = state.snapshot()
                    body = {"sealed": [accepts[s].value() for s in subset]}
                    try:
                        probe.apply(admin_event(probe, "start", body))
                    except RoundError:
                        continue
                    closable.append(subset)
            assert closable == [(1, 2)]
        state.apply(
            admin_event(state, "start", {"sealed": [a.value() for a in accepts.values()]})
        )
        assert state.phase is Phase.REVEAL and sorted(state.commits) == [0, 1, 2]
        reveals = {
            i: events.make(
                p,
                "reveal",
                3,
                {"nonce": nonces[i].hex()},
                round=rid,
                prev=state.head.id,
            )
            for i, p in enumerate((alice, bob, carol))
        }
        fair = draw.starter(draw.draw_seed(rid, nonces), [0, 1, 2])
        outcomes = {"cancel"}  # cancelling is always open to the admin; nobody starts
        for size in range(1, 4):
            for subset in itertools.combinations(range(3), size):
                probe = state.snapshot()
                try:
                    probe.apply(
                        admin_event(probe, "draw", _draw_body(probe, reveals, subset))
                    )
                except RoundError:
                    continue
                outcomes.add(probe.starter)
        assert outcomes == {"cancel", fair}, (trial, outcomes, fair)
        wins += 0 in outcomes
    # fair share 1/3: the count is Binomial(100, 1/3) under the best strategy; allow 3 sigma
    assert wins <= trials / 3 + 3 * (trials * 2 / 9) ** 0.5, wins
