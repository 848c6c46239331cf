"""Slow rounds (issue 20, docs/protocol.md §6.7): the genesis names a turn limit that is a
chain rule every member and ``p2p replay`` check; a genesis without it keeps the defaults."""

from __future__ import annotations

import pytest
from test_protocol_forfeit import evidence_of, forfeit_event, published
from test_protocol_round import PEOPLE, ROUND, assert_agree, human, nonce

from p2p.protocol import events
from p2p.protocol.effects import Dropped
from p2p.protocol.loopback import Loopback
from p2p.protocol.replay import LogError, replay_log
from p2p.protocol.round import (
    DEFAULT_TIMEOUTS,
    MAX_TURN_S,
    MIN_TURN_S,
    Phase,
    RoundState,
    TurnTimeouts,
    timeouts_for,
)
from p2p.protocol.round_machine import ActionError, RoundMachine

DAY_S = 86_400
DAY = DAY_S * 1000


def open_slow(net: Loopback, turn_s: int | None = DAY_S) -> list[RoundMachine]:
    """Person 0 opens a Connect Four round with ``turn_s`` per turn; person 1 accepts;
    person 1 starts (so the admin may forfeit it)."""
    admin, effects = RoundMachine.open(
        PEOPLE[0], 0, ROUND, "connect4", {}, [human(0), human(1)], 1, nonce(0),
        turn_s=turn_s,
    )
    net.add("p0", admin, effects)
    bob = RoundMachine(PEOPLE[1], admin.state.genesis, nonce(1))
    net.add("p1", bob, bob.accept(1))
    net.run()
    assert admin.state.phase is Phase.PLAY and bob.state.phase is Phase.PLAY
    return [admin, bob]


def test_the_turn_limit_is_in_the_genesis_and_every_member_takes_it_from_there() -> None:
    net = Loopback()
    admin, bob = open_slow(net)
    assert admin.state.genesis.body["turn"] == DAY_S
    limits = TurnTimeouts(silent_ms=DAY, offline_ms=DAY)
    # bob's machine was built with the defaults: the genesis overrides them for everyone
    assert admin.timeouts == bob.timeouts == limits
    assert bob.state.timeouts == limits


def test_a_genesis_without_a_turn_limit_keeps_the_default_timeouts() -> None:
    net = Loopback()
    admin, bob = open_slow(net, turn_s=None)
    assert "turn" not in admin.state.genesis.body
    assert admin.timeouts == bob.timeouts == DEFAULT_TIMEOUTS
    short = TurnTimeouts(silent_ms=5_000, offline_ms=2_000)  # what the tests pass
    assert timeouts_for(admin.state.genesis, short) == short
    lines = [e.raw for e in admin.log()]
    assert replay_log(lines).state.timeouts == DEFAULT_TIMEOUTS


@pytest.mark.parametrize("turn", [MIN_TURN_S - 1, MAX_TURN_S + 1, 0, True, "1d"])
def test_a_turn_limit_out_of_range_is_refused_by_the_event_schema(turn: object) -> None:
    body = {
        "game": "connect4", "options": {}, "seats": [human(0), human(1)], "start": 1,
        "expires": 60_000, "private": False, "turn": turn,
    }
    with pytest.raises(events.EventError):
        events.make(PEOPLE[0], "genesis", 0, body, round=ROUND, seq=0)
    with pytest.raises(ActionError):
        RoundMachine.open(
            PEOPLE[0], 0, ROUND, "connect4", {}, [human(0), human(1)], 1, nonce(0),
            turn_s=turn,  # type: ignore[arg-type]
        )


def test_a_slow_seat_is_forfeited_only_after_its_own_limit() -> None:
    """15 min (the live limit) and a signed goodbye (3 min) do not count in a day-long
    turn; the admin's forfeit comes after one day, and every member and replay agree."""
    net = Loopback()
    admin, bob = open_slow(net)
    ts = admin.state.head.ts
    gone = frozenset({PEOPLE[1].public_key})
    held = evidence_of(1, since=ts)  # bob's signed goodbye, held since the turn began
    for later in (DEFAULT_TIMEOUTS.silent_ms, DEFAULT_TIMEOUTS.offline_ms * 4, DAY - 1):
        assert published(admin.tick(ts + later, gone, held), "forfeit") == []
    effects = admin.tick(ts + DAY, gone, held)
    (forfeit,) = published(effects, "forfeit")
    assert forfeit.ts - ts >= DAY
    net.post("p0", effects)
    net.now = ts + DAY
    net.run()
    assert_agree([admin, bob])
    assert bob.state.phase is Phase.OVER and bob.state.forfeited == [1]
    result = replay_log([e.raw for e in admin.log()])
    assert result.state.forfeited == [1] and result.state.timeouts.silent_ms == DAY


def test_a_forfeit_judged_by_the_live_limit_is_refused_in_a_slow_round() -> None:
    """A hostile admin signs a forfeit 15 min (and an offline one 3 min) into a day-long
    turn: bob drops it, and ``p2p replay`` rejects a log that holds it."""
    net = Loopback()
    admin, bob = open_slow(net)
    ts = admin.state.head.ts
    silent = forfeit_event(0, admin, 1, ts + DEFAULT_TIMEOUTS.silent_ms)
    offline = forfeit_event(0, admin, 1, ts + DEFAULT_TIMEOUTS.offline_ms, "offline")
    for early in (silent, offline):
        effects = bob.receive(early, early.ts + 1)
        assert [e for e in effects if isinstance(e, Dropped)], effects
        assert bob.state.phase is Phase.PLAY and bob.state.forfeited == []
        with pytest.raises(LogError):
            replay_log([e.raw for e in admin.log()] + [early.raw])
    # the same forfeit a day later is in the rules
    timely = forfeit_event(0, admin, 1, ts + DAY)
    bob.receive(timely, timely.ts + 1)
    assert bob.state.forfeited == [1]


def test_an_old_genesis_replays_as_before() -> None:
    """A log of a live round (no ``turn``) with a forfeit after 15 min still replays."""
    net = Loopback()
    admin, bob = open_slow(net, turn_s=None)
    ts = admin.state.head.ts
    effects = admin.tick(ts + DEFAULT_TIMEOUTS.silent_ms)
    assert published(effects, "forfeit")
    assert replay_log([e.raw for e in admin.log()]).state.forfeited == [1]
    assert RoundState.from_genesis(admin.state.genesis).timeouts == DEFAULT_TIMEOUTS


def test_a_busy_lobby_declines_a_live_invitation_but_keeps_a_slow_one() -> None:
    """Busy means "in a live round" (issue 20 item 3): an invitation to a slow round waits
    for our answer while we play live; one to another live round is declined for us."""
    from p2p.protocol.effects import Publish
    from p2p.protocol.lobby import Lobby

    bob = Lobby(PEOPLE[1], "bob", bytes(16))
    bob.set_busy(True, 0)
    slow, _ = RoundMachine.open(PEOPLE[0], 0, "ab" * 16, "connect4", {}, [human(0), human(1)],
                                0, nonce(0), turn_s=DAY_S)
    live, _ = RoundMachine.open(PEOPLE[2], 0, "cd" * 16, "connect4", {}, [human(2), human(1)],
                                0, nonce(2))
    kept = bob.receive(slow.state.genesis, 1)
    assert not [e for e in kept if isinstance(e, Publish)]  # no automatic decline
    assert slow.state.genesis.round in bob.invitations
    declined = [e for e in bob.receive(live.state.genesis, 2) if isinstance(e, Publish)]
    assert [e.event.kind for e in declined] == ["decline"]
    assert live.state.genesis.round not in bob.invitations
