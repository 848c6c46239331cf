"""Taking back a move online needs both consents in the chain (pure, no broker).

The mover signs a ``takeback`` side event whose ``prev`` is its move; the owner of the
next position agrees by sealing it.  Attacks by a losing player: undo the opponent's
strong move without being asked, undo an older move, ask twice, seal one's own request,
take back a computer's move, mix a take-back into a resignation seal.
"""

from __future__ import annotations

import pytest
from test_protocol_hostile import (
    ALICE,
    BOB,
    ROUND,
    finish,
    nonce,
    only_dropped,
    seats,
    started,
)

from p2p.protocol import events
from p2p.protocol.effects import Applied, Equivocation, Notice
from p2p.protocol.loopback import Loopback
from p2p.protocol.replay import replay_log
from p2p.protocol.round import Phase
from p2p.protocol.round_machine import ActionError, RoundMachine


def seal_of(who, state, *inner: events.Event) -> events.Event:
    return events.make(
        who, "seal", max(7, state.head.ts), {"sealed": [e.value() for e in inner]},
        round=ROUND, seq=len(state.chain), prev=state.head.id,
    )


def takeback(who, answered: events.Event) -> events.Event:
    return events.make(who, "takeback", 6, {"ply": answered.body["ply"]}, round=ROUND, prev=answered.id)


def test_a_take_back_asked_by_the_mover_and_agreed_by_the_opponent() -> None:
    net, alice, bob = started()
    net.post("alice", alice.move("4", net.now))
    net.run()
    assert bob.takeback_request() is None
    with pytest.raises(ActionError, match="nobody asks"):
        bob.accept_takeback(net.now)
    net.post("alice", alice.request_takeback(net.now))
    net.run()
    asked = [e for n, e in net.seen if n == "bob" and isinstance(e, Notice) and e.code == "takeback_asked"]
    assert asked and asked[0].params == {"seat": 0}
    with pytest.raises(ActionError, match="nobody asks"):
        alice.accept_takeback(net.now)  # a request of her own is no consent
    net.post("bob", bob.accept_takeback(net.now))
    net.run()
    for machine in (alice, bob):
        assert machine.state.game.history() == [] and machine.state.ply == 0
        assert machine.state.game.to_move() == 0  # Alice moves again
    assert alice.state.head.id == bob.state.head.id and alice.state.head.kind == "seal"
    with pytest.raises(ActionError, match="already asked"):
        net.post("alice", alice.move("3", net.now))
        net.run()
        alice.request_takeback(net.now)  # one request per player and round
    # Anyone replaying the log gets the same position; the round plays on to its end.
    assert replay_log([e.raw for e in alice.log()]).state.state_hash() == alice.state.state_hash()
    finish(net, alice, bob)


def test_nobody_takes_back_a_move_without_its_movers_request() -> None:
    net, alice, bob = started()
    net.post("alice", alice.move("4", net.now))
    net.run()
    move = alice.state.head
    # Bob (to move) forges a take-back of Alice's strong move with his own key.
    only_dropped(alice.receive(seal_of(BOB, alice.state, takeback(BOB, move)), net.now),
                 "only the player who made the last move")
    # Alice's request sealed by Alice herself, who does not own the position.
    only_dropped(bob.receive(seal_of(ALICE, bob.state, takeback(ALICE, move)), net.now), "does not own")
    net.post("bob", bob.move("3", net.now))
    net.run()
    # Alice's request for her older move, after Bob has answered it.
    request = takeback(ALICE, move)
    bob.receive(request, net.now)
    with pytest.raises(ActionError):
        alice.request_takeback(net.now)  # her move is no longer the last event
    net.post("alice", alice.move("5", net.now))
    net.run()
    only_dropped(alice.receive(seal_of(BOB, alice.state, request), net.now),
                 "a takeback answers the last event")
    # A take-back mixed into a resignation seal.
    resign = events.make(ALICE, "resign", 6, {}, round=ROUND, prev=alice.state.head.id)
    only_dropped(alice.receive(seal_of(BOB, alice.state, takeback(ALICE, alice.state.head), resign), net.now),
                 "sealed on its own")
    # A second, different request by the same member is equivocation, never a second chance.
    net.post("alice", alice.request_takeback(net.now))
    net.run()
    other = events.make(ALICE, "takeback", 9, {"ply": 0}, round=ROUND, prev=alice.state.chain[-1].id)
    assert any(isinstance(e, Equivocation) for e in bob.receive(other, net.now))
    assert alice.state.game.history() == ["4", "3", "5"]
    finish(net, alice, bob)


def test_a_computer_move_cannot_be_taken_back() -> None:
    net = Loopback()
    alice, effects = RoundMachine.open(
        ALICE, 0, ROUND, "connect4", {}, seats(ALICE) + [{"pk": None, "level": "neuling"}], 0, nonce(1)
    )
    net.add("alice", alice, effects)
    net.run()
    net.post("alice", alice.move("4", net.now))
    net.run()
    assert alice.state.head.pk == ALICE.public_key and len(alice.state.game.history()) == 2
    with pytest.raises(ActionError, match="only your own last move"):
        alice.request_takeback(net.now)  # the head is the computer's answer, signed by her
    # Forged anyway: a request by the admin sealed by... nobody else may own the position.
    request = takeback(ALICE, alice.state.head)
    assert not any(isinstance(e, Applied) for e in alice.receive(seal_of(ALICE, alice.state, request), net.now))
    assert alice.state.phase is Phase.PLAY and len(alice.state.game.history()) == 2


def test_takeback_by_a_stranger_is_dropped() -> None:
    from test_protocol_hostile import MALLORY

    net, alice, bob = started()
    net.post("alice", alice.move("4", net.now))
    net.run()
    only_dropped(bob.receive(takeback(MALLORY, alice.state.head), net.now), "non-member")
    assert bob.takeback_request() is None


def test_a_second_take_back_sealed_by_an_accomplice_is_refused_by_the_chain_rule() -> None:
    """Once per member and round is a chain rule, not a courtesy of the honest client.

    Two players who agree with each other (in a 3-4 seat game: the mover and the next
    seat, against the others) could otherwise sign move, take-back, move, take-back ...
    forever, each within its turn limit: the round never goes on and nobody may forfeit
    anyone.  The second request never reaches the pool here: the accomplice seals it
    straight into the chain, so only the chain rule can stop it.
    """
    net, alice, bob = started()
    net.post("alice", alice.move("4", net.now))
    net.run()
    net.post("alice", alice.request_takeback(net.now))
    net.run()
    net.post("bob", bob.accept_takeback(net.now))
    net.run()
    net.post("alice", alice.move("4", net.now))
    net.run()
    again = takeback(ALICE, bob.state.head)
    history = list(bob.state.game.history())
    only_dropped(bob.receive(seal_of(BOB, bob.state, again), net.now), "already taken back a move")
    assert bob.state.game.history() == history == ["4"]
    # ... and a log that holds it does not replay.
    from p2p.protocol.replay import LogError

    forged = seal_of(BOB, bob.state, again)
    with pytest.raises(LogError, match="already taken back a move"):
        replay_log([e.raw for e in bob.log()] + [forged.raw])
    finish(net, alice, bob)


def test_a_game_ending_move_is_never_taken_back_even_with_both_signatures() -> None:
    """The loser cannot undo the winning move: nobody owns a position after the end, and
    a take-back needs the winner's own request for that very move (its ``prev``)."""
    net, alice, bob = started()
    for text in ("4", "3", "4", "3", "4", "3"):
        owner = alice if alice.state.owner() == ALICE.public_key else bob
        net.post("alice" if owner is alice else "bob", owner.move(text, net.now))
        net.run()
    stale = takeback(ALICE, bob.state.chain[-2])  # her request for her previous move
    bob.receive(stale, net.now)
    net.post("alice", alice.move("4", net.now))
    net.run()
    assert bob.state.phase is Phase.OVER and bob.state.game.winners() == (0,)
    winning = bob.state.head
    with pytest.raises(ActionError):
        alice.request_takeback(net.now)  # the client refuses after the end ...
    for request in (stale, takeback(ALICE, winning)):  # ... and forged, both are refused
        effects = bob.receive(seal_of(BOB, bob.state, request), net.now)
        assert not any(isinstance(e, Applied) for e in effects), effects
    assert bob.state.head.id == winning.id and bob.state.phase is Phase.OVER
    assert bob.state.game.winners() == (0,)


def decline_of(who, answered: events.Event, ts: int = 8) -> events.Event:
    return events.make(who, "takeback_decline", ts, {"ply": answered.body["ply"]}, round=ROUND, prev=answered.id)


def test_a_declined_take_back_reaches_the_asker_at_once_and_changes_nothing() -> None:
    """Issue 26.13: the player to move says no with a signed ``takeback_decline``; the
    asker is told at once (not when the decliner moves), the request is answered, the
    chain, the state and the log stay as they were, and the decliner plays on."""
    net, alice, bob = started()
    net.post("alice", alice.move("4", net.now))
    net.run()
    with pytest.raises(ActionError, match="nobody asks"):
        bob.decline_takeback(net.now)
    net.post("alice", alice.request_takeback(net.now))
    net.run()
    with pytest.raises(ActionError, match="nobody asks"):
        alice.decline_takeback(net.now)  # her own request: nothing for her to answer
    chain_before = [e.id for e in alice.state.chain]
    hash_before = alice.state.state_hash()
    log_before = [e.id for e in alice.log()]
    net.post("bob", bob.decline_takeback(net.now))
    net.run()
    told = [e for n, e in net.seen if n == "alice" and isinstance(e, Notice) and e.code == "takeback_declined"]
    assert len(told) == 1 and told[0].params == {"seat": 0, "by": 1}
    assert [e.id for e in alice.state.chain] == chain_before and alice.state.state_hash() == hash_before
    assert [e.id for e in alice.log()] == log_before  # never sealed, never logged
    for machine in (alice, bob):
        assert machine.takeback_request() is None  # answered
    with pytest.raises(ActionError, match="nobody asks"):
        bob.accept_takeback(net.now)
    with pytest.raises(ActionError, match="already asked"):
        alice.request_takeback(net.now)  # still one request per round
    net.post("bob", bob.move("3", net.now))
    net.run()
    assert alice.state.game.history() == ["4", "3"]
    finish(net, alice, bob)


def test_a_takeback_decline_from_anyone_but_the_player_to_move_is_dropped() -> None:
    """A stranger, the asker itself, a forged or replayed "no", one for another ply or an
    older move: dropped with a reason, nothing changes, the request stays open."""
    from test_protocol_hostile import MALLORY

    net, alice, bob = started()
    net.post("alice", alice.move("4", net.now))
    net.run()
    move = alice.state.head
    # before any request: a "no" to nothing
    only_dropped(alice.receive(decline_of(BOB, move), net.now), "no request we hold")
    net.post("alice", alice.request_takeback(net.now))
    net.run()
    only_dropped(alice.receive(decline_of(MALLORY, move), net.now), "non-member")
    only_dropped(bob.receive(decline_of(ALICE, move), net.now), "does not answer take-backs")
    wrong_ply = events.make(BOB, "takeback_decline", 8, {"ply": 5}, round=ROUND, prev=move.id)
    only_dropped(alice.receive(wrong_ply, net.now), "another ply")
    genesis = alice.state.chain[0]
    old = events.make(BOB, "takeback_decline", 8, {"ply": 0}, round=ROUND, prev=genesis.id)
    only_dropped(alice.receive(old, net.now), "no longer the last")
    forged = dict(decline_of(BOB, move).value())
    forged["sig"] = "00" * 64
    with pytest.raises(events.EventError):
        events.from_value(forged)
    assert alice.takeback_request() is None and bob.takeback_request() is not None  # still open
    real = decline_of(BOB, move, ts=7)  # (the one at ts 8 was taken as seen when it came too early)
    told = alice.receive(real, net.now)
    assert [e.code for e in told if isinstance(e, Notice)] == ["takeback_declined"]
    assert alice.replayed(real, net.now) == "duplicate"  # a replay costs one lookup
    only_dropped(alice.receive(decline_of(BOB, move, ts=9), net.now), "again")  # a second "no": nothing new
    # a "no" that arrives after the decliner's next move is stale
    net.post("bob", bob.move("3", net.now))
    net.run()
    only_dropped(alice.receive(decline_of(BOB, move, ts=10), net.now), "no longer the last")
    assert alice.state.game.history() == ["4", "3"]
