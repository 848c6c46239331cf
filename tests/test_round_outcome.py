"""A round's end is typed (issue 27 item 2): ``RoundState.outcome()`` from the chain,
``RoundMachine.outcome`` as a member sees it (a local end included), ``Round.outcome`` and
``RoundOver.outcome`` for the faces -- nobody parses a reason text."""

from __future__ import annotations

from test_protocol_round import PEOPLE, ROUND, human, nonce, open_round

from p2p.games.base import Termination
from p2p.protocol.loopback import Loopback
from p2p.protocol.outcome import RoundEnd
from p2p.protocol.round import Phase
from p2p.protocol.round_machine import FORMING_GRACE_MS, RoundMachine


def test_a_resignation_is_a_typed_outcome_with_the_games_own() -> None:
    net = Loopback()
    machines = open_round(net, "connect4", {}, [human(0), human(1)], start=1)
    admin, bob = machines
    assert admin.outcome is None and admin.state.outcome() is None  # still running
    net.post("p0", admin.leave(net.now))
    net.run()
    for m in machines:
        outcome = m.outcome
        assert outcome is not None and outcome == m.state.outcome()
        assert outcome.end is RoundEnd.RESIGNATION and outcome.winners == (1,)
        assert outcome.game is not None and outcome.game.termination is Termination.RESIGNATION
        assert m.state.game is not None and outcome.points == m.state.game.scores()
        assert outcome.reason == m.state.end_reason == "resignation"
        assert not outcome.is_cancelled and not outcome.is_local
    del bob


def test_a_cancel_keeps_the_admins_words_apart_from_its_kind() -> None:
    net = Loopback()
    admin, effects = RoundMachine.open(
        PEOPLE[0], 0, ROUND, "connect4", {}, [human(0), human(1)], 0, nonce(0)
    )
    net.add("p0", admin, effects)
    net.post("p0", admin.cancel("not today: sorry", 1))
    net.run()
    outcome = admin.outcome
    assert outcome is not None and outcome.end is RoundEnd.CANCELLED
    assert outcome.detail == "not today: sorry"  # a colon in the text splits nothing
    assert outcome.is_cancelled and outcome.winners == () and outcome.game is None
    assert admin.state.end_reason == "cancelled: not today: sorry"


def test_a_local_end_is_an_outcome_of_ours_not_of_the_chain() -> None:
    admin, _ = RoundMachine.open(
        PEOPLE[0], 0, ROUND, "connect4", {}, [human(0), human(1)], 0, nonce(0)
    )
    bob = RoundMachine(PEOPLE[1], admin.state.genesis, nonce(1))
    bob.tick(admin.state.expires + FORMING_GRACE_MS)
    outcome = bob.outcome
    assert outcome is not None and outcome.end is RoundEnd.EXPIRED and outcome.is_local
    assert bob.phase is Phase.CANCELLED and bob.state.outcome() is None
    assert bob.state.phase is Phase.FORMING  # the chain alone decides the state
    assert bob.end_reason == outcome.reason == "expired: the round did not start in time"
