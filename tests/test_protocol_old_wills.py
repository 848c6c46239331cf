"""Issue 23 item 6: a Will counts only for the session that moved.  Round events name the
signer's session (``since``, as its presences do); an ``offline`` forfeit's evidence must
be a Will of the session of the seat's newest event in the chain, so a forfeiter holding
a Will of an earlier session of the seat cannot cut its pending turn from 15 to 3 min.
Pure: the machines, the chain rule and ``p2p replay``'s verdict."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from test_protocol_forfeit import OFFLINE, SILENT, drops, published
from test_protocol_round import PEOPLE, ROUND, human, nonce

from p2p.protocol import events
from p2p.protocol.lobby import Lobby
from p2p.protocol.loopback import Loopback
from p2p.protocol.replay import LogError, replay_log
from p2p.protocol.round import Phase, evidence_error, seat_session
from p2p.protocol.round_machine import RoundMachine

OLD_RUN = 1_000
"""When bob's earlier session started (yesterday, say): its Will is the old one."""
NOW_RUN = 50_000_000


def _session(who: int, since: int, n: int) -> tuple[Lobby, events.Event]:
    """A lobby session of ``PEOPLE[who]`` started at ``since``, and its Last Will."""
    lobby = Lobby(PEOPLE[who], f"p{who}", bytes([n]) * 16)
    return lobby, lobby.will(since, session=bytes([n]) * 16)


def _round() -> tuple[Loopback, RoundMachine, RoundMachine, events.Event, events.Event]:
    """Connect Four, alice (admin) starts; bob plays in his current session.  Two moves
    each side... then bob is to move.  Returns both of bob's Wills (old, current)."""
    alice_lobby, _ = _session(0, NOW_RUN - 5_000, 1)
    _, old_will = _session(1, OLD_RUN, 2)  # bob's earlier session, which crashed
    bob_lobby, bob_will = _session(1, NOW_RUN, 3)  # bob restarted: his session now
    net = Loopback()
    t = NOW_RUN + 1_000
    admin, effects = RoundMachine.open(
        PEOPLE[0], t, ROUND, "connect4", {}, [human(0), human(1)], 0, nonce(0)
    )
    admin.sessions = alice_lobby.sessions
    bob = RoundMachine(PEOPLE[1], admin.state.genesis, nonce(1), now=t)
    bob.sessions = bob_lobby.sessions
    net.now = t
    net.add("a", admin, effects)
    net.add("b", bob, bob.accept(t + 1))
    net.run()
    for column in ("1", "2", "1"):
        mover = admin if admin.state.owner() == PEOPLE[0].public_key else bob
        net.now += 2_000
        net.post("a" if mover is admin else "b", mover.move(column, net.now))
        net.run()
    assert bob.state.owner() == PEOPLE[1].public_key and admin.state.phase is Phase.PLAY
    return net, admin, bob, old_will, bob_will


def test_round_events_name_the_signers_session() -> None:
    _, admin, bob, _, _ = _round()
    moves = [e for e in bob.state.chain if e.kind == "move"]
    assert {e.body["since"] for e in moves if e.pk == PEOPLE[1].public_key} == {NOW_RUN}
    assert {e.body["since"] for e in moves if e.pk == PEOPLE[0].public_key} == {NOW_RUN - 5_000}
    assert seat_session(bob.state, 1) == NOW_RUN
    (accept,) = [e for e in bob.state.chain[1].sealed() if e.pk == PEOPLE[1].public_key]
    assert accept.body["since"] == NOW_RUN


def test_an_old_will_of_an_earlier_session_never_shortens_the_turn() -> None:
    """The admin holds bob's Will of an earlier session (unrevoked in its lobby for the
    whole grace period).  Before: it forfeited bob 'offline' after 3 min.  Now it waits
    the full 15 min and says 'silent'."""
    _, admin, _, old_will, _ = _round()
    head = admin.state.head
    evidence = {PEOPLE[1].public_key: (old_will, head.ts)}
    for now in (head.ts + OFFLINE, head.ts + OFFLINE + 60_000, head.ts + SILENT - 1):
        assert published(admin.tick(now, evidence=evidence), "forfeit") == []
    (forfeit,) = published(admin.tick(head.ts + SILENT, evidence=evidence), "forfeit")
    assert forfeit.body["reason"] == "silent" and "evidence" not in forfeit.body


def test_a_forfeit_with_an_old_will_is_refused_by_every_member_and_by_replay(
    tmp_path: Path,
) -> None:
    """A forfeiter that signs the 'offline' forfeit anyway, with the old Will: bob's
    machine drops it, and the log with it does not replay; the same forfeit with a Will
    of the session bob moved in is valid (the rule binds, it does not forbid)."""
    _, admin, bob, old_will, bob_will = _round()
    head = bob.state.head

    def forfeit(will: events.Event) -> events.Event:
        body = {"seat": 1, "reason": "offline", "evidence": will.value()}
        return events.make(PEOPLE[0], "forfeit", head.ts + OFFLINE, body,
                           round=ROUND, seq=head.seq + 1, prev=head.id)

    why = "the evidence is a Will of another session of seat 1 than its last event's"
    assert evidence_error(bob.state, 1, old_will, head.ts + OFFLINE) == why
    bad = forfeit(old_will)
    assert drops(bob.receive(bad, bad.ts)) == [why]
    assert bob.state.phase is Phase.PLAY
    with pytest.raises(LogError, match=why):
        replay_log([e.raw for e in [*bob.state.chain, bad]])
    log = tmp_path / "round.log"  # the command, as a user runs it
    log.write_bytes(b"\n".join(e.raw for e in [*bob.state.chain, bad]) + b"\n")
    out = subprocess.run([sys.executable, "-m", "p2p", "replay", str(log)],
                         check=False, capture_output=True, text=True, timeout=60)
    assert out.returncode != 0 and why in out.stdout + out.stderr, out
    good = forfeit(bob_will)
    assert evidence_error(bob.state, 1, bob_will, good.ts) is None
    assert drops(bob.receive(good, good.ts)) == []
    assert bob.state.phase is Phase.OVER and bob.state.winners() == (0,)
    assert replay_log([e.raw for e in bob.state.chain]).state.winners() == (0,)
    del admin


def test_a_log_of_an_earlier_release_is_judged_as_before() -> None:
    """Events that name no session (an earlier release): any Will of the seat's key dated
    before the forfeit still counts, so old logs replay as they did."""
    net = Loopback()
    admin, effects = RoundMachine.open(
        PEOPLE[0], 0, ROUND, "connect4", {}, [human(0), human(1)], 1, nonce(0)
    )
    bob = RoundMachine(PEOPLE[1], admin.state.genesis, nonce(1))
    net.add("a", admin, effects)
    net.add("b", bob, bob.accept(1))
    net.run()
    assert seat_session(bob.state, 1) is None
    _, old_will = _session(1, OLD_RUN, 2)
    assert evidence_error(bob.state, 1, old_will, bob.state.head.ts + OFFLINE) is None
