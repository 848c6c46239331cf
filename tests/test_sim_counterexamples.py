"""Counterexamples the simulator (``p2p.sim``, docs/simulation.md) found on rules v3, kept.

Each seed below violated an invariant once; it replays exactly (``python -m p2p.sim
--family F --seed N -v``), in about a second.  Where the cause was a rule (the pure
machine), a plain machine-level test states the rule beside the seed:

* ``honest/282``: a member that was away when the admin forfeited a timely move judged
  the next turn by the chain rule (T6 counts it from the beaten forfeit only for those
  who hold it), and when the beaten forfeit reached it in a sync answer it was dropped
  unweighed (its position was answered by then): two results for good.  Now a forfeit
  at an answered position is kept beside the chain and weighed for the next turn (T8).
* ``mixed/108``: a member that ended the round locally as *abandoned* (the player to
  move and its forfeiter both offline) kept that end when the forfeiter came back and
  forfeited: now a valid next chain event lifts a local abandoned end (§15.6).
* ``mixed/3`` (found once the simulator wrote logs as the peer does): the adversary
  acked the middle of the chain; the member kept that ack as a sign (evidence) in its
  log, and replay took it for "an ack of another end": live agreed, replay disputed.
  Replay now counts an ack of an earlier chain event as a sign only
  (``tests/test_protocol_replay.py::test_every_member_acknowledges_the_end_and_replay_says_agreed``).
* ``mixed/486`` was a simulator bug: members learnt each other's clocks only from the
  first heartbeat 20 s in, so a member 200 s ahead of the admin took the draw for late
  and ended the round at once; a peer shares the lobby's estimates, which hold the
  presences of the members it met before the invitation.
* ``honest/661`` (two seats, slow): a member's move that lost a conflict at the next
  position was not counted as a sign that its signer held the position before, so one
  member showed that earlier position disputed and the other did not.  A losing claim
  now stays a sign of its ``prev`` (live, on resume, and in replay, where the log's
  claims beside the chain count as signs too).
* ``mixed/139`` (three seats, the admin's clock 6 min ahead): the next seat's answer
  (T1) did not count as a sign at a member whose clock was behind (a sign dated ahead
  of our clock waits), so that member showed the position disputed while replay said
  answered.  A chain event we applied always counts, and other signs are judged in
  their signer's frame (its estimated offset), as chain events are.
* ``mixed/755`` was a simulator check too narrow: live and replay both showed the
  position disputed (T5, T7) while every member had acked; the check compared only
  "every ack held" with replay's "agreed".
* ``mixed/50`` (found when the phase table made a local end a verdict beside the chain):
  a member whose clock took the forming round for *expired* dropped the admin's
  ``cancel`` ("the round has ended here") and stayed at the invitation while every other
  member held the cancelled chain.  A local *expired* end now takes the chain's own end
  of the round (§15.6), as a local *abandoned* end takes its next chain event.
* ``honest/1019``, ``1568``, ``1973``, ``2728`` (two seats): a member's link delivered
  the head late (a restart, a held or lagging link); it answered within seconds (T5, its
  own observation: it keeps its move and shows the position disputed), while its
  forfeiter judged the move late by the signed timestamps (T3) and showed nothing: two
  results, one dispute.  A forfeit that beat a late move now leaves the position
  disputed while the forfeited seat has shown no sign on the forfeit's branch (it still
  claims its move, T7), as a timely move is disputed while its forfeiter shows no sign on
  the move's branch: every member shows the same dispute.
* ``honest/2805`` (three seats): the third member held the late move for a while, then
  judged it late and held the forfeit 30 s (T2); the member that had its early sign on
  the move's branch took that for "another member holds the move" and kept judging by
  T3/T5, the others by T2.  A member whose latest sign is on the forfeit's branch has
  left the move's branch: it holds the move no more (``conflicts.holder``, ``against``).
* ``honest/1905`` (four seats, the admin's inbound link 150 s late): the admin moved
  late on a branch the others had left; their later events, parked at the admin, were
  dropped unkept when it switched back to its own move (the cause of ``mixed/2338``,
  mended with it), so it went on alone.  Then the others kept showing an earlier
  position disputed after it settled (the admin's sign on the move's branch came only
  afterwards), while the admin and replay did not: a settled dispute now ends when the
  other claimant shows it holds what we keep, unless a row of our own (T4, T5) made it.
* ``honest/4659`` (four seats, found among fresh seeds): a member kept the admin's late
  move by its own observation (T5) after the admin itself had yielded to the forfeit;
  it stayed alone on that move for good.  T5 now keeps no move whose seat shows a sign
  on the forfeit's branch.
* ``mixed/3285``, ``1209`` (four seats): the admin signed two different forfeits for one
  position; every member ended the round by the equivocation proof and wrote both to
  its log, but replay took two forfeits at one position for "a forfeit and the seat's
  own event" and refused the log.  Two events of one author with one ``prev`` are a
  proof first (``replay.parse_log``).
* ``mixed/2681`` (three seats): the same cause as ``mixed/2032``, ``2066`` (a member
  away at an equivocation comes back at the very head the others ended on).
* ``mixed/2576`` (three seats): a member cut off during the draw ended the round
  locally as *expired* (the draw not finished 120 s after ``expires`` by its clock);
  the draw, signed by the admin well in time, reached it only afterwards and was
  refused ("the round has ended here"), while the others played on: two results.  A
  next chain event the admin signed before the deadline the member expired at now
  lifts the local *expired* end (§15.6), as a valid next event lifts *abandoned*.
* ``mixed/444`` was a simulator bug (a restart resumed without the log's closing acks,
  which the live peer takes up); ``mixed/48`` and ``silent_loser/105`` were mended on
  main before (a lost equivocation proof now travels in sync answers; the three-seat
  fork).
"""

from __future__ import annotations

import pytest
from test_protocol_fair_chain import signed, signed_move, three_cube
from test_protocol_forfeit import OFFLINE, SILENT, published
from test_protocol_round import PEOPLE, ROUND, human, nonce, open_round

from p2p.protocol import events, round_conflicts
from p2p.protocol.conflicts import HOLD_MS, judge
from p2p.protocol.effects import Notice, Publish
from p2p.protocol.events import Event
from p2p.protocol.loopback import Loopback
from p2p.protocol.replay import LogError, replay_log
from p2p.protocol.round import Phase
from p2p.protocol.round_machine import RoundMachine
from p2p.protocol.round_timers import START_DEADLINE_MS
from p2p.sim import simulate


@pytest.mark.parametrize(
    "family,seed",
    [("honest", 282), ("honest", 661), ("mixed", 108), ("mixed", 444), ("mixed", 3),
     ("mixed", 486), ("mixed", 755), ("mixed", 139), ("mixed", 48), ("silent_loser", 105),
     ("mixed", 50), ("honest", 1019), ("honest", 1568), ("honest", 1973), ("honest", 2728),
     ("honest", 2805), ("mixed", 3285), ("mixed", 1209), ("mixed", 2032), ("mixed", 2066),
     ("mixed", 2338), ("mixed", 2681), ("mixed", 2576), ("honest", 1905), ("mixed", 1287),
     ("mixed", 1987), ("mixed", 550), ("mixed", 2181), ("honest", 4659)],
)
def test_a_counterexample_seed_holds_every_invariant(family: str, seed: int) -> None:
    result = simulate(family, seed)
    assert result.ok, result.report()


def _sent(effects: list, kind: str) -> Event:
    return next(e.event for e in effects if isinstance(e, Publish) and e.event.kind == kind)


def test_a_beaten_forfeit_that_arrives_after_the_next_turn_still_counts_for_it() -> None:
    """honest/282 (T6, T8): the admin forfeits carol, whose timely move it has not
    seen; the move wins where it meets the forfeit, so the admin's own turn after it
    counts from that forfeit.  Bob never got the forfeit: by the chain rule the admin
    is late, and bob forfeits it.  The beaten forfeit reaches bob only afterwards (a
    sync answer's evidence), at a position already answered: it settles nothing there,
    but bob must weigh it for the next turn, as the others do, or he splits for good."""
    net = Loopback()
    admin, bob, carol = open_round(
        net, "cube", {"players": 3}, [human(0), human(1), human(2)], start=2)
    machines = (admin, bob, carol)
    prev = carol.state.head
    t = prev.ts
    move = _sent(carol.move(sorted(carol.state.game.legal_moves())[0], t + 5_000), "move")
    bob.receive(move, t + 5_100)
    beaten = _sent(admin.tick(t + SILENT + 1_000), "forfeit")  # it never saw the move
    carol.receive(beaten, t + SILENT + 1_100)
    admin.receive(move, t + SILENT + 1_200)  # the timely move beats it (T3)
    assert admin.state.chain[move.seq].id == move.id == carol.state.chain[move.seq].id
    late = move.ts + SILENT + 1_000  # the admin is late by the chain rule, not by T6
    forfeit = _sent(bob.tick(late, frozenset()), "forfeit")
    answer = _sent(admin.move(sorted(admin.state.game.legal_moves())[0], late + 5_000), "move")
    now = late + SILENT
    for m in machines:
        for e in (forfeit, answer):
            if e.pk != m.me.public_key:
                m.receive(e, now)
    assert admin.state.head.id == carol.state.head.id == answer.id  # T6 start: in time
    assert bob.state.head.id == forfeit.id  # without the beaten forfeit: the chain rule
    bob.receive(beaten, now + 1_000)
    assert bob.state.chain[move.seq].id == move.id  # T1: the answered turn stays
    assert bob.state.head.id == answer.id  # T6 now holds here too
    for m in machines:
        replay = replay_log([e.raw for e in m.log_events()])
        assert replay.state.head.id == answer.id


def test_a_round_ended_here_as_abandoned_goes_on_when_its_forfeiter_comes_back() -> None:
    """mixed/108: carol ended the round locally (the admin to move and its successor
    both gone); the successor comes back and forfeits the admin: carol takes it up,
    says so, and ends on the chain every other member holds."""
    net = Loopback()
    machines = open_round(net, "cube", {"players": 3}, [human(0), human(1), human(2)], start=0)
    _admin, bob, carol = machines
    head = carol.state.head.ts
    both_gone = frozenset({PEOPLE[0].public_key, PEOPLE[1].public_key})
    carol.tick(head + 2 * OFFLINE + 1_000, both_gone)
    assert carol.phase is Phase.CANCELLED and carol.ended_here
    late = head + max(SILENT, 2 * OFFLINE) + 5_000
    published = [e.event for e in bob.tick(late, frozenset({PEOPLE[0].public_key}))
                 if isinstance(e, Publish)]
    forfeit = next(e for e in published if e.kind == "forfeit")
    effects = carol.receive(forfeit, late + 1_000)
    assert any(isinstance(e, Notice) and e.code == "goes_on" for e in effects)
    assert not carol.ended_here and carol.phase is bob.phase is not Phase.CANCELLED
    assert carol.state.head.id == forfeit.id == bob.state.head.id
    replay = replay_log([e.raw for e in carol.log_events()])
    assert replay.state.head.id == forfeit.id


def test_a_round_ended_here_as_abandoned_refuses_what_does_not_go_on() -> None:
    """Only a valid next chain event lifts the local end: junk at another position
    (or one that does not follow our head) leaves it ended."""
    net = Loopback()
    machines = open_round(net, "cube", {"players": 3}, [human(0), human(1), human(2)], start=0)
    _admin, bob, carol = machines
    head = carol.state.head
    both_gone = frozenset({PEOPLE[0].public_key, PEOPLE[1].public_key})
    carol.tick(head.ts + 2 * OFFLINE + 1_000, both_gone)
    assert carol.ended_here
    # bob may not move for the admin: no valid next event
    from p2p.protocol import events

    body = {"ply": carol.state.ply, "move": "a1", "state": "00" * 32}
    wrong = events.make(PEOPLE[1], "move", head.ts + 200_000, body,
                        round=carol.state.round_id, seq=len(carol.state.chain), prev=head.id)
    carol.receive(wrong, head.ts + 200_000)
    assert carol.ended_here and carol.phase is Phase.CANCELLED


def _late_move_race() -> tuple:
    """Two seats: the admin moves (``head``) and forfeits bob at the limit; bob's move
    is dated after the forfeit (late by the signed timestamps, T3)."""
    net = Loopback()
    admin, bob = open_round(net, "connect4", {}, [human(0), human(1)], start=0)
    t = admin.state.head.ts
    (head,) = published(admin.move("4", t + 2_000), "move")
    (forfeit,) = published(admin.tick(head.ts + SILENT), "forfeit")
    return admin, bob, head, forfeit


def _disputed(m) -> list[tuple[int, str, str]]:
    return [(seq, kept.id, other.id) for seq, kept, other in m.disputes()]


def test_a_late_move_whose_seat_saw_its_head_late_is_disputed_at_both_members() -> None:
    """honest/1019 (T5, T7): the admin's move reaches bob only at the limit (a link
    that held it); bob answers within seconds.  By the signed timestamps the move is
    late: the admin keeps its forfeit.  Bob saw the head arrive and answered in time:
    he keeps his move (his own observation).  Neither yields, so both show the one
    position disputed, each keeping its own claim, and each log replays so."""
    admin, bob, head, forfeit = _late_move_race()
    arrive = head.ts + SILENT + 3_000
    bob.receive(head, arrive)
    (move,) = published(bob.move("4", arrive + 3_000), "move")
    assert move.ts > forfeit.ts  # late by the signed timestamps
    effects = admin.receive(move, arrive + 3_100)
    assert [n.params["kept"] for n in effects
            if isinstance(n, Notice) and n.code == "disputed"] == ["forfeit"]
    bob.receive(forfeit, arrive + SILENT)  # once bob's clock has seen the timeout
    assert bob.state.head.id == move.id and admin.state.head.id == forfeit.id
    assert _disputed(admin) == [(move.seq, forfeit.id, move.id)]
    assert _disputed(bob) == [(move.seq, move.id, forfeit.id)]
    for m in (admin, bob):
        replay = replay_log([e.raw for e in m.log_events()])
        assert replay.state.head.id == m.state.head.id
        assert [c.seq for c in replay.contested()] == [move.seq]


def test_a_late_move_whose_seat_yields_to_the_forfeit_is_not_disputed() -> None:
    """The ordinary late move: bob saw the head in time but answered after the limit.
    Until bob shows he holds the forfeit the admin shows the position disputed (bob
    still claims his move); bob's machine yields to the forfeit and acknowledges the
    end, and with that sign the dispute is gone at the admin, live and in replay."""
    admin, bob, head, forfeit = _late_move_race()
    bob.receive(head, head.ts + 1_000)
    (move,) = published(bob.move("4", forfeit.ts + 2_000), "move")
    admin.receive(move, forfeit.ts + 2_100)
    assert _disputed(admin) == [(move.seq, forfeit.id, move.id)]
    effects = bob.receive(forfeit, forfeit.ts + 2_200)
    assert bob.state.head.id == forfeit.id and not bob.disputes()
    (ack,) = published(effects, "ack")
    admin.receive(ack, forfeit.ts + 2_300)
    assert admin.state.head.id == forfeit.id and not admin.disputes()
    replay = replay_log([e.raw for e in admin.log_events()])
    assert replay.state.head.id == forfeit.id and not replay.contested()


def test_a_witness_that_left_the_move_for_the_forfeit_does_not_hold_the_move() -> None:
    """honest/2805 (T2): carol first held bob's late move, then judged it late and held
    the forfeit 30 s.  Her early sign on the move's branch must not count as "a member
    holds the move" against her own later holding of the forfeit: every member that
    holds her signs judges T2 alike, whichever of them it got."""
    net = Loopback()
    admin, bob, carol = open_round(
        net, "cube", {"players": 3}, [human(0), human(1), human(2)], start=1)
    prev = admin.state.head
    forfeit = events.make(PEOPLE[0], "forfeit", prev.ts + SILENT,
                          {"seat": 1, "reason": "silent"}, round=prev.round,
                          seq=prev.seq + 1, prev=prev.id)
    body_state = bob.state.game.copy()
    text = sorted(body_state.legal_moves())[0]
    body_state.push(text)
    move = events.make(PEOPLE[1], "move", forfeit.ts + 5_000,
                       {"ply": bob.state.ply, "move": text, "state": body_state.state_hash()},
                       round=prev.round, seq=prev.seq + 1, prev=prev.id)

    def sync(ts: int, head: Event) -> Event:
        return events.make(PEOPLE[2], "sync_request", ts, {"from_seq": head.seq + 1},
                           round=prev.round, prev=head.id)

    on_move = sync(forfeit.ts + 6_000, move)
    on_forfeit = [sync(forfeit.ts + 10_000, forfeit), sync(forfeit.ts + 10_000 + HOLD_MS, forfeit)]

    def verdict(held: list[Event]) -> str:
        return judge(move, forfeit, prev, False, admin.timeouts, held, {forfeit.id},
                     {move.id}, next_owner=PEOPLE[2].public_key).rule

    assert verdict(on_forfeit) == "held"
    assert verdict([on_move, *on_forfeit]) == "held"  # she left the move's branch
    back = sync(forfeit.ts + 20_000 + HOLD_MS, move)  # she holds the move again, last
    assert verdict([on_move, *on_forfeit, back]) == "late"
    del bob, carol


def test_two_forfeits_of_one_position_by_one_forfeiter_replay_as_an_equivocation() -> None:
    """mixed/3285, 1209: the admin signs two different forfeits for one position.  Every
    member ends the round by the proof and writes both to its log; replay takes them for
    the proof they are (not for "a forfeit and the seat's own event") and ends the round
    the same way."""
    net = Loopback()
    machines = open_round(
        net, "chess4", {}, [human(0), human(1), human(2), human(3)], start=1)
    carol = machines[2]
    prev = carol.state.head

    def forfeit(ts: int) -> Event:
        return events.make(PEOPLE[0], "forfeit", ts, {"seat": 1, "reason": "silent"},
                           round=prev.round, seq=prev.seq + 1, prev=prev.id)

    first, second = forfeit(prev.ts + SILENT), forfeit(prev.ts + SILENT + 1_000)
    now = second.ts + 1_000
    carol.receive(first, now)
    carol.receive(second, now)
    assert carol.phase is Phase.OVER and 0 not in carol.state.winners()
    assert carol.state.head.id == prev.id  # ended on the state before the position
    replay = replay_log([e.raw for e in carol.log_events()])
    assert replay.proof is not None and {e.id for e in replay.proof} == {first.id, second.id}
    assert replay.state.state_hash() == carol.state.state_hash()
    assert replay.state.winners() == carol.state.winners()


def test_two_forfeits_kept_beside_a_move_only_our_clock_kept_are_a_proof() -> None:
    """mixed/1209 (found under protocol v5): carol saw the head and bob's answer arrive
    one second apart, so she keeps bob's move by her own observation (T5), though it is
    late by the signed timestamps and the table keeps the admin's forfeit of his turn
    (which she holds beside her chain, disputed).  The admin then signs a second forfeit
    for that position: with the first, a proof of equivocation, which she applies as the
    members that kept the forfeit in their chain (by the table) do -- before, she weighed
    each forfeit only against bob's move and played on: two ends.  A timely move the
    table keeps is not touched by two such forfeits (mixed/75)."""
    net = Loopback(drop=lambda src, dst, e: e.kind == "start" and dst == "p2")
    machines = open_round(
        net, "chess4", {}, [human(0), human(1), human(2), human(3)], start=1)
    carol = machines[2]
    start = machines[1].state.chain[1]
    late = start.ts + SILENT + 10_000  # the admin's clock runs behind (or it back-dated)
    carol.receive(start, late)
    assert carol.phase is Phase.PLAY
    move = sorted(carol.state.game.legal_moves())[0]  # type: ignore[union-attr]
    mine = signed_move(PEOPLE[1], carol.state, move, late + 1_000)  # late by the signatures
    carol.receive(mine, late + 1_000)
    assert carol.state.head.id == mine.id

    def forfeit(ts: int) -> Event:
        return events.make(PEOPLE[0], "forfeit", ts, {"seat": 1, "reason": "silent"},
                           round=start.round, seq=start.seq + 1, prev=start.id)

    first, second = forfeit(start.ts + SILENT), forfeit(start.ts + SILENT + 1_000)
    now = late + SILENT
    carol.receive(first, now)
    assert carol.phase is Phase.PLAY and carol.state.head.id == mine.id  # hers by T5
    assert [seq for seq, _a, _b in carol.disputes()] == [2]
    carol.receive(second, now + 10)
    assert carol.phase is Phase.OVER and carol.state.equivocators == [0]
    assert carol.state.head.id == start.id  # ended on the state before the position
    replay = replay_log([e.raw for e in carol.log_events()])
    assert replay.proof is not None and {e.id for e in replay.proof} == {first.id, second.id}
    assert replay.state.state_hash() == carol.state.state_hash()
    assert replay.state.winners() == carol.state.winners()


def test_two_forfeits_of_a_timely_move_kept_by_the_table_change_nothing() -> None:
    """mixed/75: bob's move is timely (the table keeps it, T3); two forfeits of his turn
    by the admin, both beside the chain, are no reason to undo it."""
    net = Loopback()
    machines = open_round(
        net, "chess4", {}, [human(0), human(1), human(2), human(3)], start=1)
    carol = machines[2]
    start = carol.state.head
    move = sorted(carol.state.game.legal_moves())[0]  # type: ignore[union-attr]
    mine = signed_move(PEOPLE[1], carol.state, move, start.ts + 1_000)
    carol.receive(mine, start.ts + 1_000)

    def forfeit(ts: int) -> Event:
        return events.make(PEOPLE[0], "forfeit", ts, {"seat": 1, "reason": "silent"},
                           round=start.round, seq=start.seq + 1, prev=start.id)

    now = start.ts + SILENT + 2_000
    carol.receive(forfeit(start.ts + SILENT), now)
    carol.receive(forfeit(start.ts + SILENT + 1_000), now + 10)
    assert carol.phase is Phase.PLAY and carol.state.head.id == mine.id


def test_a_member_away_at_an_equivocation_gets_the_proof_at_the_same_head() -> None:
    """mixed/2032, 2066: bob equivocates while carol is away (restarted, or cut off).
    A round ended by a proof keeps the head before the proven position, so carol, back,
    names the very head the others hold: their answer must carry the proof (not only
    their acks of that end, which carol, still in play, refuses), or she plays on."""
    _net, machines, _cut = three_cube()
    admin, bob, carol = machines
    x = signed_move(PEOPLE[1], bob.state, "a1", bob.state.head.ts + 1_000)
    y = signed_move(PEOPLE[1], bob.state, "b2", bob.state.head.ts + 1_000)
    admin.receive(x, x.ts)
    admin.receive(y, x.ts + 10)
    assert admin.phase is Phase.OVER and admin.state.head.id == carol.state.head.id
    now = x.ts + 60_000
    (ask,) = [e.event for e in carol.request_sync(now) if isinstance(e, Publish)]
    answer = [e.event for e in admin.receive(ask, now + 10) if isinstance(e, Publish)]
    assert {x.id, y.id} <= {e.id for e in answer}
    carol.receive_all(answer, now + 20)
    assert carol.phase is Phase.OVER and carol.state.equivocators == [1]
    assert carol.state.state_hash() == admin.state.state_hash()
    assert carol.state.winners() == admin.state.winners()
    replay = replay_log([e.raw for e in carol.log_events()])
    assert replay.proof is not None and replay.state.phase is Phase.OVER


def test_an_event_parked_on_a_losing_forfeit_still_counts_as_a_sign() -> None:
    """mixed/2338: carol's move built on the admin's forfeit of bob waited at bob (its
    ``prev`` unknown) when the forfeit lost there; bob dropped it unkept, so a later
    sign of carol naming it no longer showed that carol held the forfeit's branch, and
    bob stayed on his claim while everyone else played on from the forfeit: two results
    for good.  The parked event is kept as a sign, as one that arrives afterwards is."""
    net = Loopback()
    machines = open_round(net, "chess4", {}, [human(i) for i in range(4)], start=1)
    admin, bob, carol, _dave = machines
    prev = bob.state.head
    (move,) = published(bob.move(sorted(bob.state.game.legal_moves())[0], prev.ts + 2_000),
                        "move")  # it reaches nobody
    forfeit = signed(PEOPLE[0], admin.state, "forfeit", {"seat": 1, "reason": "silent"},
                     prev.ts + SILENT + 1_000)
    carol.receive(forfeit, forfeit.ts)
    (answer,) = published(carol.move(sorted(carol.state.game.legal_moves())[0],
                                     forfeit.ts + 2_000), "move")
    assert answer.prev == forfeit.id
    bob.receive(answer, answer.ts)  # parked: bob does not hold its prev
    bob.receive(forfeit, answer.ts + 10)  # bob's move is timely: the forfeit loses here
    assert bob.state.head.id == move.id
    assert answer.id in {e.id for e in round_conflicts.signs(bob)}
    (ask,) = [e.event for e in carol.request_sync(answer.ts + 31_000, catch_up=False)
              if isinstance(e, Publish)]  # carol held the forfeit's branch 31 s (T2)
    bob.receive(ask, ask.ts)
    assert bob.state.chain[move.seq].id == forfeit.id
    assert bob.state.head.id == answer.id == carol.state.head.id


def test_a_draw_signed_in_time_lifts_a_round_expired_here() -> None:
    """mixed/2576: bob never got the admin's draw (a cut link) and ended the round here
    as expired at ``expires`` + 120 s by his clock.  It was signed long before that
    deadline (the admin's clock, as ``expires``): when it reaches him, the round was on
    time after all, and he plays on with the others."""
    net = Loopback(drop=lambda s, d, e: d == "p1" and e.kind == "draw")
    admin, effects = RoundMachine.open(
        PEOPLE[0], 0, ROUND, "connect4", {}, [human(0), human(1)], None, nonce(0))
    bob = RoundMachine(PEOPLE[1], admin.state.genesis, nonce(1))
    net.add("p0", admin, effects)
    net.add("p1", bob)
    net.post("p1", bob.accept(1))
    net.run()
    assert admin.phase is Phase.PLAY and bob.phase in (Phase.COMMIT, Phase.REVEAL)
    deadline = bob.state.expires + START_DEADLINE_MS
    bob.tick(deadline)
    assert bob.phase is Phase.CANCELLED and bob.ended_here
    (draw,) = [e for e in admin.state.chain if e.kind == "draw"]
    assert draw.ts < deadline
    bob.receive(draw, deadline + 60_000)
    assert not bob.ended_here and bob.phase is Phase.PLAY
    assert bob.state.head.id == admin.state.head.id


def test_a_member_keeps_no_move_by_its_own_observation_once_the_mover_left_it() -> None:
    """honest/4659 (T5): carol got the admin's move (the head) late and bob's answer
    seconds after it: by her own observation bob answered in time, so she keeps his move
    against the admin's forfeit although it is late by the signed timestamps.  Bob
    himself saw the head in time, judges his move late and yields: his ack of the
    forfeit's end is on the forfeit's branch.  From then on nobody keeps the move for
    him: carol takes the forfeit too, or she stays alone on a branch nobody else holds."""
    net = Loopback()
    admin, bob, carol = open_round(
        net, "cube", {"players": 3}, [human(0), human(1), human(2)], start=0)
    t = admin.state.head.ts
    head = _sent(admin.move(sorted(admin.state.game.legal_moves())[0], t + 1_000), "move")
    forfeit = _sent(admin.tick(head.ts + SILENT), "forfeit")
    bob.receive(head, head.ts + 1_000)  # in time: bob's answer is simply late
    move = _sent(bob.move(sorted(bob.state.game.legal_moves())[0], forfeit.ts + 4_000), "move")
    arrive = forfeit.ts + 2_000  # carol: the head late, the answer 2 s after it
    carol.receive(head, arrive)
    carol.receive(move, arrive + 2_000)
    carol.receive(forfeit, arrive + SILENT)  # once her clock has seen the timeout
    assert carol.state.chain[move.seq].id == move.id  # T5: kept, disputed here
    effects = bob.receive(forfeit, forfeit.ts + 5_000)
    assert bob.state.head.id == forfeit.id  # bob yields (no T5 at his machine)
    (ack,) = [e.event for e in effects if isinstance(e, Publish) and e.event.kind == "ack"]
    carol.receive(ack, arrive + SILENT + 1_000)
    assert carol.state.head.id == forfeit.id == admin.state.head.id
    assert carol.phase is admin.phase and not carol.disputes()
    del net


def _sync_request(who: int, head: Event, ts: int) -> Event:
    body = {"from_seq": (head.seq or 0) + 1}
    return events.make(PEOPLE[who], "sync_request", ts, body, round=head.round, prev=head.id)


def test_a_late_move_its_seat_keeps_is_disputed_at_a_third_member_too() -> None:
    """mixed/1287, 1987 (T5, T7; three seats): the admin dates its move back (its
    clock runs behind); bob answers at once, late by the signed timestamps but in time
    by what he saw, so he keeps his move (T5) and shows the position disputed.  Carol,
    neither forfeiter nor forfeited, never saw his move arrive live: she keeps the
    admin's forfeit by the signed timestamps (T3), and shows the same dispute while bob
    claims his move (her log replays so); it is over when bob yields."""
    _net, machines, _cut = three_cube(start=0)
    admin, bob, carol = machines
    h = admin.state.head
    prev = signed_move(PEOPLE[0], admin.state, sorted(admin.state.game.legal_moves())[0],
                       h.ts + 1)  # dated back by the admin's clock
    t0 = h.ts + SILENT
    bob.receive(prev, t0)
    carol.receive(prev, t0)
    (move,) = published(bob.move(sorted(bob.state.game.legal_moves())[0], t0 + 2_000),
                        "move")
    forfeit = events.make(PEOPLE[0], "forfeit", prev.ts + SILENT + 1,
                          {"seat": 1, "reason": "silent"}, round=prev.round,
                          seq=move.seq, prev=prev.id)
    assert move.ts > forfeit.ts  # late by the signed timestamps
    bob.receive(forfeit, t0 + SILENT)
    assert bob.state.chain[move.seq].id == move.id  # T5: he saw it in time
    assert [seq for seq, *_ in bob.disputes()] == [move.seq]
    carol.receive(forfeit, t0 + SILENT)
    carol.receive(move, t0 + SILENT + 10)
    assert carol.state.chain[move.seq].id == forfeit.id  # T3
    assert [(seq, kept.id) for seq, kept, _ in carol.disputes()] == [(move.seq, forfeit.id)]
    replay = replay_log([e.raw for e in carol.log_events()])
    assert replay.verdict == "disputed" and replay.state.head.id == forfeit.id
    carol.receive(_sync_request(1, forfeit, move.ts + 60_000), t0 + SILENT + 20)  # yields
    assert carol.disputes() == []
    assert not replay_log([e.raw for e in carol.log_events()]).contested()


def test_a_flood_of_signs_naming_one_head_evicts_no_other_sign() -> None:
    """mixed/550, 1987: a member's sync requests naming one head again and again (the
    adversary's head exchanges while it stays silent; an honest member asking another
    branch from an old head every 15 s) evicted its other signs from the 8 kept of it.
    In 550 that was the third member's sign of seat 1's timely move, so the admin, whose
    link lagged, kept its own forfeit of that move by T4 and ended the round there,
    while the others ended it by the adversary's equivocation proof, with other winners.
    Of the signs naming one head the first and the last are kept (they tell how long it
    was held); other signs stay."""
    _net, machines, _cut = three_cube()
    _admin, bob, carol = machines
    chain = carol.state.chain
    claim = _sync_request(1, chain[-1], chain[-1].ts + 1_000)
    round_conflicts.add_sign(carol, claim)
    asks = [_sync_request(1, chain[0], chain[-1].ts + 2_000 + 15_000 * i) for i in range(12)]
    for ask in asks:
        round_conflicts.add_sign(carol, ask)
    kept = {e.id for e in carol._signs[(PEOPLE[1].public_key, False)]}
    assert claim.id in kept and asks[0].id in kept and asks[-1].id in kept
    assert not kept & {e.id for e in asks[1:-1]}


def test_a_dispute_told_before_an_end_by_a_proof_is_weighed_again_after_it() -> None:
    """mixed/2181: a member showed a late move's position disputed (its seat still
    claimed it), then the round ended by an equivocation proof, which dropped the states
    before the earlier positions: the dispute stayed told for good, although the seat
    yielded right after and replay of the log (which holds its yield) found none.  An
    end by a proof keeps those states (it still replaces nothing: it keeps its end)."""
    net = Loopback()
    machines = open_round(net, "chess4", {}, [human(i) for i in range(4)], start=0)
    admin, bob, carol, dave = machines
    h = admin.state.head
    prev = signed_move(PEOPLE[0], admin.state, sorted(admin.state.game.legal_moves())[0],
                       h.ts + 1)
    t0 = h.ts + SILENT
    for m in (bob, carol, dave):
        m.receive(prev, t0)
    (move,) = published(bob.move(sorted(bob.state.game.legal_moves())[0], t0 + 2_000),
                        "move")
    forfeit = events.make(PEOPLE[0], "forfeit", prev.ts + SILENT + 1,
                          {"seat": 1, "reason": "silent"}, round=prev.round,
                          seq=move.seq, prev=prev.id)
    now = t0 + SILENT
    for m in (carol, dave):
        m.receive(forfeit, now)
        m.receive(move, now + 10)
    for ts in (move.ts + 15_000, move.ts + 45_000):
        carol.receive(_sync_request(1, move, ts), now + 20)
    assert [seq for seq, *_ in carol.disputes()] == [move.seq]
    (answer,) = published(carol.move(sorted(carol.state.game.legal_moves())[0], now + 30),
                          "move")
    dave.receive(answer, now + 40)
    one, two = (signed_move(PEOPLE[3], dave.state, text, now + 50)
                for text in sorted(dave.state.game.legal_moves())[:2])
    carol.receive(one, now + 60)
    carol.receive(two, now + 70)
    assert carol.ended_by_proof and carol.state.head.id == answer.id
    carol.receive(_sync_request(1, forfeit, move.ts + 60_000), now + 80)  # bob yields
    assert carol.disputes() == []
    replay = replay_log([e.raw for e in carol.log_events()])
    assert replay.proof is not None and not replay.contested()
    assert carol.state.chain[move.seq].id == forfeit.id  # the proof's end stands


def test_a_log_with_a_leaf_of_another_branch_beside_its_chain_replays() -> None:
    """mixed/2181 (``evidence``): a rewind of 8 events took out two of a member's own
    moves several positions after the contested one; with them added to its log (moves
    a member may keep, issue 23: replaced events stay beside the chain), replay found
    "position 8 of the chain is missing": their ``prev``s are other members' replaced
    moves, which no log holds.  A chain event built on an event the log does not hold,
    on which nothing in the log builds, is now left beside the chain; a line cut out of
    the chain is still refused."""
    net = Loopback()
    machines = open_round(net, "connect4", {}, [human(0), human(1)], start=0)
    for _ in range(6):
        mover = next(m for m in machines if m.state.owner() == m.me.public_key)
        net.post(f"p{PEOPLE.index(mover.me)}",
                 mover.move(sorted(mover.state.game.legal_moves())[0], net.now + 1_000))
        net.run()
    log = [e.raw for e in machines[0].log_events()]
    chain = machines[0].state.chain
    before = replay_log(log)
    body = {"ply": 3, "move": "1", "state": "00" * 32}
    strays = [events.make(PEOPLE[1], "move", chain[-1].ts, body, round=chain[0].round,
                          seq=seq, prev=f"{seq:02x}" * 32) for seq in (6, len(chain) + 2)]
    after = replay_log(log + [e.raw for e in strays])
    assert after.state.head.id == before.state.head.id == chain[-1].id
    assert after.state.state_hash() == before.state.state_hash()
    assert after.ignored == before.ignored + 2
    with pytest.raises(LogError, match="position 5 of the chain is missing"):
        replay_log([e.raw for e in chain[:5] + chain[6:]] + [e.raw for e in strays])
