"""What a member's own clock says about a forfeit (issue 26.2): "the turn timeout came
after N s by our clock" is said only when our clock saw the head arrive live; a forfeit
learnt after a restart (the head taken up from the log) accuses nobody."""

from __future__ import annotations

from test_protocol_forfeit import SILENT, forfeit_event
from test_protocol_round import PEOPLE, human, nonce, open_round

from p2p.protocol.effects import Applied, Notice
from p2p.protocol.loopback import Loopback
from p2p.protocol.round import Phase
from p2p.protocol.round_machine import RoundMachine
from p2p.protocol.round_notices import CLOCK_GRACE_MS


def codes(effects: list) -> list[str]:
    return [e.code for e in effects if isinstance(e, Notice)]


def test_a_forfeit_that_came_too_soon_by_our_clock_is_reported() -> None:
    """Signed 15 min after the head, but here it came 8 s after we saw the head: said."""
    net = Loopback()
    admin, bob = open_round(net, "connect4", {}, [human(0), human(1)], start=1)
    head = bob.state.head
    seen = bob._observed_at[head.id]
    forfeit = forfeit_event(0, bob, 1, head.ts + SILENT)
    effects = bob.receive(forfeit, seen + SILENT - CLOCK_GRACE_MS - 3_000)
    assert any(isinstance(e, Applied) for e in effects)
    assert "forfeit_early" in codes(effects)
    assert bob.state.phase is Phase.OVER


def test_a_forfeit_in_time_by_our_clock_is_not_reported() -> None:
    net = Loopback()
    _admin, bob = open_round(net, "connect4", {}, [human(0), human(1)], start=1)
    head = bob.state.head
    forfeit = forfeit_event(0, bob, 1, head.ts + SILENT)
    effects = bob.receive(forfeit, bob._observed_at[head.id] + SILENT)
    assert "forfeit" in codes(effects) and "forfeit_early" not in codes(effects)


def test_a_forfeit_learnt_after_a_restart_is_not_reported() -> None:
    """bob restarts from his log a moment after the admin forfeited him; the forfeit
    reaches him at once: our clock never saw the head arrive, so it blames nobody."""
    net = Loopback()
    _admin, bob = open_round(net, "connect4", {}, [human(0), human(1)], start=1)
    head = bob.state.head
    forfeit = forfeit_event(0, bob, 1, head.ts + SILENT)
    restart = head.ts + SILENT + 1_000
    bob = RoundMachine.from_log(PEOPLE[1], bob.log(), nonce(1), now=restart)
    effects = bob.receive(forfeit, restart + 50)
    assert any(isinstance(e, Applied) for e in effects)
    assert "forfeit" in codes(effects)
    assert "forfeit_early" not in codes(effects), codes(effects)
    assert bob.state.phase is Phase.OVER
