"""The invariants checked after every schedule (docs/simulation.md).

Each check reads a finished ``World`` and reports ``(code, one line)`` per violation:

* ``converge``: every honest member ends with the same phase, head, state hash and winners;
* ``timely-replaced``: a move an honest member signed in time (by the signed timestamps
  with the 10 s allowance to spare, and in true time) that reached every other member
  connected at the time within the race window (30 s), and at least one of them, is in
  the final chain of every honest member whose chain holds its ``prev``;
* ``final-changed``: no honest member's result changes after every honest member held
  one agreed end (checked while the world runs, ``World._watch_final``);
* ``replay``: ``p2p replay``'s code (``replay_log``) accepts every honest member's log
  and gives that member's live result, and says ``agreed`` exactly when the member's
  machine holds every ack and shows no disputed position;
* ``evidence``: the same log with the member's own moves that a rewind took out added
  back (the evidence a member holds) replays to the same result: the live machine
  and replay judge by one rule set;
* ``adversary-gain``: the adversary is not among the winners where an honest member's
  protected move ended the game in the position the final chain holds;
* ``own-log``: a member restarting from its own log can replay it (``World._resume``);
* ``draw``: no honest member reveals its nonce before every commitment is fixed: each
  reveal it published names the ``start`` of its final chain, which closed every human
  seat's commitment (protocol v5: the last to commit has seen no nonce).
"""

from __future__ import annotations

from p2p.protocol.replay import LogError, replay_log
from p2p.protocol.round import Phase
from p2p.sim.scenario import AHEAD_MS as MAX_AHEAD_MS
from p2p.sim.scenario import LIVE
from p2p.sim.scenario import RACE_WINDOW_MS as RACE_MS
from p2p.sim.world import Member, Signed, Verdict, World


def check(world: World) -> list[tuple[str, str]]:
    """Run every check on a finished world; returns its violations (the world's too)."""
    honest = [m for m in world.members if m.honest and m.machine is not None]
    _converge(world, honest)
    _timely(world, honest)
    for m in honest:
        _replay(world, m)
    _draw(world, honest)
    return list(world.violations)


def _draw(world: World, honest: list[Member]) -> None:
    by_index = {m.index: m for m in honest}
    for index, reveal in world.reveals:
        m = by_index.get(index)
        if m is None or m.machine is None:
            continue
        st = m.machine.state
        start = st.chain[1] if len(st.chain) > 1 else None
        if start is None or start.kind != "start" or reveal.prev != start.id:
            world.violation("draw", f"member {index} revealed its nonce answering"
                            f" {reveal.prev[:8] if reveal.prev else None}, not the start of its"
                            " chain")
        elif set(st.commits) != set(st.human_seats()):
            world.violation("draw", f"member {index} revealed its nonce though the start"
                            f" closed the commitments of seats {sorted(st.commits)} only")


def _converge(world: World, honest: list[Member]) -> None:
    verdicts = {m.index: world.verdict(m) for m in honest}
    # phase, state hash and winners (a round that never started ends on the admin's
    # cancel for one member and by the local expiry rule for another: the same verdict);
    # or, where the rules show a dispute (``RoundMachine.disputes``, if the machine has
    # it), every honest member shows the same one
    shown = {m.index: _disputes(m) for m in honest}
    if shown and all(shown.values()) and len(set(shown.values())) == 1:
        return
    if len({(v[0], v[2], v[3]) for v in verdicts.values()}) > 1:
        text = "; ".join(
            f"member {i}: {v[0]} head {v[1][:8]} winners {v[3]}" for i, v in verdicts.items())
        world.violation("converge", f"honest members disagree: {text}")


def _disputes(m: Member) -> frozenset[tuple[int, frozenset[str]]]:
    """The positions this member shows disputed, with the two claims (empty if none, or
    if the machine has no notion of a dispute)."""
    disputes = getattr(m.machine, "disputes", None)
    if disputes is None:
        return frozenset()
    return frozenset((seq, frozenset((a.id, b.id))) for seq, a, b in disputes())


def protected(world: World, s: Signed) -> bool:
    """The move was signed in time and reached every connected member in the window."""
    if s.event.kind != "move" or s.prev_ts is None or s.prev_at is None:
        return False
    limit = world.sc.limit
    if s.event.ts - s.prev_ts >= limit - MAX_AHEAD_MS:
        return False
    if s.at - s.prev_at >= limit - 2 * MAX_AHEAD_MS:
        return False
    reached = 0
    for other in world.members:
        if other.index == s.member:
            continue
        got = world.delivered.get((other.index, s.event.id))
        if got is not None and got - s.at <= RACE_MS:
            reached += 1
        elif world.connected_throughout(other.index, s.at, s.at + RACE_MS):
            return False  # it could have had it and did not: not "reached the others"
    return reached > 0


def _timely(world: World, honest: list[Member]) -> None:
    adversary = world.sc.adversary
    for s in world.signed.values():
        if not protected(world, s):
            continue
        seq = s.event.seq
        assert seq is not None
        for m in honest:
            assert m.machine is not None
            chain = m.machine.state.chain
            if len(chain) <= seq - 1 or chain[seq - 1].id != s.event.prev:
                continue
            if len(chain) > seq and chain[seq].id == s.event.id:
                continue
            there = chain[seq].kind if len(chain) > seq else "nothing"
            world.violation(
                "timely-replaced",
                f"member {s.member}'s move #{seq} ({s.event.body['move']}), signed"
                f" {(s.event.ts - (s.prev_ts or 0)) // 1000}s after its prev and received in time,"
                f" is replaced by {there} on member {m.index}",
            )
            winners = m.machine.state.winners()
            if s.ends_game and adversary is not None and adversary in winners:
                world.violation(
                    "adversary-gain",
                    f"the adversary (seat {adversary}) wins on member {m.index} although"
                    f" member {s.member}'s timely move #{seq} ended the game",
                )


def _result(phase: Phase, head: str, state: str, winners: tuple[int, ...]) -> Verdict:
    return (phase.value, head[:8], state[:8], winners)


def _replay(world: World, m: Member) -> None:
    machine = m.machine
    assert machine is not None
    st = machine.state
    local_end = machine.ended_here
    live = _result(st.phase, st.head.id, st.state_hash(), st.winners())
    try:
        replay = replay_log(m.log, LIVE)
    except LogError as err:
        world.violation("replay", f"member {m.index}'s log does not replay: {err}")
        return
    rs = replay.state
    got = _result(rs.phase, rs.head.id, rs.state_hash(), rs.winners())
    if local_end:  # an end by a local rule (expired, abandoned) is in no chain
        live_cmp: tuple[object, ...] = live[1:3]
        got_cmp: tuple[object, ...] = got[1:3]
    else:
        live_cmp, got_cmp = live, got
    if got_cmp != live_cmp:
        world.violation("replay", f"member {m.index}: live {live}, its log replays to {got}")
        return
    # "agreed" exactly when the live machine holds every ack and shows no dispute (a
    # disputed position is named live, by its notice, and by replay alike: §8.1 T7)
    live_agreed = machine.agreed() and not _disputes(m)
    if not local_end and (replay.verdict == "agreed") != live_agreed:
        world.violation(
            "replay",
            f"member {m.index}: live agreed={machine.agreed()}"
            f" disputed={bool(_disputes(m))}, replay says {replay.verdict}")
    # its own moves a forfeit replaced (its own losing forfeits are left out: today's
    # replay refuses a log holding a forfeit beside the timely move that beat it)
    own_moves = [e for e in m.replaced_own if e.kind == "move"]
    if not own_moves:
        return
    lines = m.log + [e.raw for e in own_moves]
    try:
        again = replay_log(lines, LIVE)
    except LogError as err:
        world.violation(
            "evidence",
            f"member {m.index}'s log with its own replaced event(s) added is refused by"
            f" replay: {err}")
        return
    rs = again.state
    if not local_end and _result(rs.phase, rs.head.id, rs.state_hash(), rs.winners()) != live:
        world.violation(
            "evidence", f"member {m.index}'s log with its own replaced event(s) replays to"
            f" another result than its live one")
