"""The draw cannot be steered: attacks on commit-reveal with validly signed events (pure).

The admin closes the commit set and seals the reveals; it sees every reveal before it
signs the draw.  Under the fair-draw rules every human seat's commitment and reveal must be
sealed, so the admin's only other option is to cancel; a named starter's round with
computer seats draws its seed from every member too.  Each test plays one attack and fails
on the v1 rules.
"""

from __future__ import annotations

import itertools
import random

from test_protocol_round import PEOPLE, ROUND, human, nonce, open_round

from p2p.protocol import draw, events
from p2p.protocol.effects import Dropped, Notice, cancel_reason
from p2p.protocol.loopback import Loopback
from p2p.protocol.round import Phase, RoundError, RoundState
from p2p.protocol.round_machine import (
    COMMIT_TIMEOUT_MS,
    REVEAL_TIMEOUT_MS,
    RoundMachine,
)

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


def test_commit_close_sealing_only_the_admins_commitment_is_refused_and_named() -> None:
    # bob's commitment never reaches the admin's machine, so it waits in the commit phase
    net = Loopback(drop=lambda src, dst, e: e.kind == "commit" and dst == "p0")
    admin, bob = open_round(net, "connect4", {}, [human(0), human(1)])
    assert admin.phase is Phase.COMMIT and bob.phase is Phase.COMMIT
    own = admin.side[("commit", PEOPLE[0].public_key)]
    attack = admin_event(admin.state, "commit_close", {"sealed": [own.value()]})
    effects = bob.receive(attack, net.now)
    assert bob.phase is Phase.COMMIT  # the draw does not go ahead
    reasons = [e.reason for e in effects if isinstance(e, Dropped)]
    assert reasons == ["commit_close leaves out the commitment of seat 1"]
    texts = [e.text for e in effects if isinstance(e, Notice)]
    assert any("left out the commitment of seat 1 that reached us" in t for t in texts)
    # the admin's only way on is to cancel, and its own client does so at the timeout
    net.post("p0", admin.tick(admin.phase_since + COMMIT_TIMEOUT_MS))
    net.run()
    for m in (admin, bob):
        assert m.phase is Phase.CANCELLED
        assert "seat 1 did not commit" in m.state.end_reason
    assert any(
        "although every seat's commitment reached us" in t for t in notices(net, "p1")
    )


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
        assert [e.kind for e in st.chain] == [
            "genesis",
            "start",
            "commit_close",
            "draw",
        ]
        assert st.seed == draw.draw_seed(ROUND, [nonce(0), nonce(1)])
        assert st.seed != draw.fixed_seed(ROUND)


def test_grinding_round_ids_does_not_fix_the_computer_seed() -> None:
    # The admin tries many round ids; whatever it picks, the seed still moves with bob's
    # nonce, which is committed only after the round id is fixed and hidden until the
    # admin's own commitment is sealed.
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
    # a v1-style chain (play straight after start, seed from the round id) is refused
    state = RoundState.from_genesis(admin.state.genesis)
    state.apply(admin.state.chain[1])
    assert state.phase is Phase.COMMIT


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

    Three human seats, random honest nonces.  At the commit stage the admin may seal any
    subset of the commitments (its own included or not); at the reveal stage any subset of
    the reveals, or cancel.  Its best strategy starts whenever any accepted option makes it
    the starter; that must happen no more often than its fair share (1/3), and every
    accepted draw must be the one fair result.
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
            },
            round=rid,
            seq=0,
        )
        state = RoundState.from_genesis(genesis)
        accepts = [
            events.make(p, "accept", 1, {"seat": i}, round=rid, prev=genesis.id)
            for i, p in ((1, bob), (2, carol))
        ]
        state.apply(
            admin_event(state, "start", {"sealed": [a.value() for a in accepts]})
        )
        commits = {
            i: events.make(
                p,
                "commit",
                2,
                {"commit": draw.commitment(rid, p.public_key, nonces[i])},
                round=rid,
                prev=state.chain[1].id,
            )
            for i, p in enumerate((alice, bob, carol))
        }
        if trial == 0:  # the commit stage: only the full set is accepted
            closable = []
            for size in range(4):
                for subset in itertools.combinations(range(3), size):
                    probe = state.snapshot()
                    body = {"sealed": [commits[s].value() for s in subset]}
                    try:
                        probe.apply(admin_event(probe, "commit_close", body))
                    except RoundError:
                        continue
                    closable.append(subset)
            assert closable == [(0, 1, 2)]
        state.apply(
            admin_event(
                state, "commit_close", {"sealed": [c.value() for c in commits.values()]}
            )
        )
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
