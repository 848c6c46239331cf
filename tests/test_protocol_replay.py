"""Offline verification of round logs, ``p2p replay``, and admin succession."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from test_protocol_forfeit import will_of

from p2p.cli import main
from p2p.protocol import canonical, events
from p2p.protocol.effects import Applied
from p2p.protocol.identity import Identity
from p2p.protocol.loopback import Loopback
from p2p.protocol.replay import LogError, replay_log
from p2p.protocol.round import Phase, RoundError, RoundState
from p2p.protocol.round_machine import RoundMachine

PEOPLE = [Identity.from_seed(bytes([i + 31]) * 32) for i in range(4)]
ROUND = "e1" * 16


def played_cube(seed: int = 4) -> tuple[list[RoundMachine], Loopback]:
    rng = random.Random(seed)
    net = Loopback(pick=rng.randrange)
    seats = [{"pk": p.pk_hex, "level": None} for p in PEOPLE[:3]]
    admin, effects = RoundMachine.open(
        PEOPLE[0], 0, ROUND, "cube", {"players": 3}, seats, None, bytes([1]) * 32
    )
    net.add("p0", admin, effects)
    machines = [admin]
    for i in (1, 2):
        m = RoundMachine(PEOPLE[i], admin.state.genesis, bytes([i + 1]) * 32)
        net.add(f"p{i}", m, m.accept(1))
        machines.append(m)
    net.run()
    by_key = {m.me.public_key: (f"p{i}", m) for i, m in enumerate(machines)}
    while admin.phase is Phase.PLAY:
        name, mover = by_key[admin.state.owner()]  # type: ignore[index]
        net.post(name, mover.move(rng.choice(mover.state.game.legal_moves()), net.now))
        net.run()
    return machines, net


def write_log(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def test_replay_of_a_full_log_matches_every_peer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    machines, net = played_cube()
    applied = [
        e.event.raw for name, e in net.seen if name == "p1" and isinstance(e, Applied)
    ]
    assert (
        len(applied) == len(machines[1].log()) - 1
    )  # genesis came with the invitation
    chain = [e.raw for e in machines[1].log()]
    # the log also holds side events and duplicates, shuffled: still fine
    extra = [p.event.raw for _, p in net.published[:10]]
    lines = chain + extra + chain[:5]
    random.Random(1).shuffle(lines)
    result = replay_log(lines)
    assert result.state.state_hash() == machines[0].state.state_hash()
    assert result.state.winners() == machines[2].state.winners()
    path = write_log(tmp_path / "round.log", chain)
    assert main(["replay", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"state hash {machines[0].state.state_hash()}" in out
    assert "drawn: seed" in out and "winners" in out


def test_tampered_log_names_the_first_bad_event(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    machines, _ = played_cube()
    chain = [e.raw for e in machines[0].log()]
    index = next(
        i
        for i, e in enumerate(machines[0].log())
        if e.kind == "move" and e.body["ply"] == 5
    )
    value = canonical.decode(chain[index])
    value["body"]["move"] = "a1" if value["body"]["move"] != "a1" else "a2"
    tampered = chain[:index] + [canonical.encode(value)] + chain[index + 1 :]
    path = write_log(tmp_path / "bad.log", tampered)
    assert main(["replay", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"line {index + 1}: bad signature" in err and err.count("\n") == 1
    # a validly signed but wrong move (the mover lying about the state hash) is named too
    state_before = replay_log(chain[:index]).state
    liar = machines[
        [m.me.public_key for m in machines].index(machines[0].log()[index].pk)
    ].me
    forged = events.make(
        liar,
        "move",
        state_before.head.ts,
        {"ply": 5, "move": machines[0].log()[index].body["move"], "state": "00" * 32},
        round=ROUND,
        seq=index,
        prev=state_before.head.id,
    )
    with pytest.raises(LogError, match=f"chain event {index} .*state hash"):
        replay_log(chain[:index] + [forged.raw] + chain[index + 1 :])
    with pytest.raises(LogError, match="position 3 of the chain is missing"):
        replay_log(chain[:3] + chain[4:])
    with pytest.raises(LogError, match="two different events at position"):
        replay_log(chain + [forged.raw])


@pytest.mark.parametrize(
    "content, reason",
    [
        (b"", "no round events"),
        (b"hello\n", "line 1"),
        (b"\n\n{}\n", "line 3"),
    ],
)
def test_corrupt_files_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, reason: str
) -> None:
    path = tmp_path / "x.log"
    path.write_bytes(content)
    assert main(["replay", str(path)]) == 2
    assert reason in capsys.readouterr().err
    assert main(["replay", str(tmp_path / "missing.log")]) == 2


def test_log_of_another_round_mixed_in_is_rejected() -> None:
    machines, _ = played_cube()
    other = Identity.from_seed(bytes(32))
    foreign = events.make(other, "chat", 1, {"text": "hi"}, round="99" * 16)
    with pytest.raises(LogError, match="another round"):
        replay_log([e.raw for e in machines[0].log()] + [foreign.raw])


def test_admin_leaving_chess4_passes_the_role_on() -> None:
    """Four-player chess: the admin leaves mid-round; the next human seat plays the computer."""
    pytest.importorskip("p2p.games.chess4")
    pytest.importorskip("p2p.ai.chess4_ai")
    rng = random.Random(2)
    net = Loopback(pick=rng.randrange)
    seats = [{"pk": p.pk_hex, "level": None} for p in PEOPLE[:3]] + [
        {"pk": None, "level": "einfach"}
    ]
    admin, effects = RoundMachine.open(
        PEOPLE[0], 0, ROUND, "chess4", {}, seats, 0, bytes([1]) * 32
    )
    net.add("p0", admin, effects)
    machines = [admin]
    for i in (1, 2):
        m = RoundMachine(PEOPLE[i], admin.state.genesis, bytes([i + 1]) * 32)
        net.add(f"p{i}", m, m.accept(1))
        machines.append(m)
    net.run()
    by_key = {m.me.public_key: (f"p{i}", m) for i, m in enumerate(machines)}

    def play(plies: int) -> None:
        for _ in range(plies):
            if machines[1].phase is not Phase.PLAY:
                return
            name, mover = by_key[machines[1].state.owner()]  # type: ignore[index]
            net.post(
                name, mover.move(rng.choice(mover.state.game.legal_moves()), net.now)
            )
            net.run()

    play(6)  # two full turns: the computer seat moved twice, played by the admin
    assert machines[1].state.admin == PEOPLE[0].public_key
    net.post("p0", admin.leave(net.now))
    net.run()
    play(1)
    for m in machines:
        assert m.state.admin == PEOPLE[1].public_key, (
            "seat 1 is the next human after seat 0"
        )
        assert 0 in m.state.left
    play(9)
    heads = {m.state.head.id for m in machines}
    assert len(heads) == 1
    # who signed the computer seat's moves, before and after the admin left
    state = RoundState.from_genesis(machines[2].state.genesis)
    signers = []
    refused = 0
    for event in machines[2].state.chain[1:]:
        if (
            event.kind == "move"
            and state.game is not None
            and state.game.to_move() == 3
        ):
            signers.append((0 in state.left, event.pk))
            if (
                0 in state.left
            ):  # the old admin's version of this computer move is refused
                body = dict(event.body)
                old = events.make(
                    PEOPLE[0],
                    "move",
                    1,
                    body,
                    round=ROUND,
                    seq=event.seq,
                    prev=event.prev,
                )
                with pytest.raises(RoundError, match="does not own"):
                    state.apply(old)
                refused += 1
        state.apply(event)
    assert refused >= 1
    assert (False, PEOPLE[0].public_key) in signers
    assert (True, PEOPLE[1].public_key) in signers
    assert all(
        pk == (PEOPLE[1] if after else PEOPLE[0]).public_key for after, pk in signers
    )
    result = replay_log([e.raw for e in machines[2].log()])
    assert result.state.head.id == machines[1].state.head.id


V1_LOGS = Path(__file__).parent / "data" / "v1"


@pytest.mark.parametrize(
    ("name", "starter", "revealed"),
    [
        (
            "v1_cube3_withheld_reveal.log",
            0,
            [0, 1],
        ),  # a v1 draw without seat 2's reveal
        ("v1_connect4_named_start_computer.log", 0, []),  # v1: named start, fixed seed
    ],
)
def test_old_v1_logs_still_replay(name: str, starter: int, revealed: list[int]) -> None:
    from p2p.protocol import draw

    result = replay_log((V1_LOGS / name).read_bytes().split(b"\n"))
    state = result.state
    assert state.genesis.v == 1 and not state.fair_draw
    assert state.phase is Phase.OVER
    assert state.starter == starter and sorted(state.revealed) == revealed
    if not revealed:
        assert state.seed == draw.fixed_seed(state.round_id)


def test_every_member_acknowledges_the_end_and_replay_says_agreed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from p2p.protocol.effects import Acknowledged

    machines, net = played_cube()
    head, state_hash = machines[0].state.head, machines[0].state.state_hash()
    for m in machines:
        assert m.agreed() and sorted(m.acks()) == [0, 1, 2]
        for ack in m.acks().values():
            assert ack.prev == head.id and ack.body["state"] == state_hash
    logged = [
        e.event.raw
        for name, e in net.seen
        if name == "p1" and isinstance(e, Acknowledged)
    ]
    assert len(logged) == 3  # what p1's driver appends to its log file
    chain = [e.raw for e in machines[1].log()]
    result = replay_log(chain + logged)
    assert result.verdict == "agreed" and sorted(result.acks) == [0, 1, 2]
    assert main(["replay", str(write_log(tmp_path / "a.log", chain + logged))]) == 0
    assert (
        "verdict: complete and agreed: every member (seats 0, 1, 2)"
        in capsys.readouterr().out
    )
    # the chain alone: complete, but nobody's signature on the result
    result = replay_log(chain)
    assert result.verdict == "unacknowledged" and result.missing_acks() == [0, 1, 2]
    # one member's ack missing
    assert replay_log(chain + logged[:2]).verdict == "unacknowledged"
    # the end cut off: a prefix, whose members acknowledged an end it does not hold
    result = replay_log(chain[:-1] + logged)
    assert result.verdict == "prefix" and result.ahead == 3
    assert "a valid prefix" in result.verdict_text()
    # a member that signed another end (the final head, another state) disputes it
    other = events.make(
        PEOPLE[2],
        "ack",
        5,
        {"state": "00" * 32},
        round=ROUND,
        prev=machines[0].state.chain[-1].id,
    )
    result = replay_log(chain + logged[:2] + [other.raw])
    assert result.verdict == "disputed" and list(result.disputes) == [2]
    # an ack of an earlier head is no end at all (the chain goes on from it): only a
    # sign of the head its signer held, as a member's log keeps it beside the chain
    # (evidence, §8.1); it neither stands for that member's closing ack nor disputes
    # the one it signed (the simulator's mixed/3: live agreed, replay said disputed)
    earlier = events.make(
        PEOPLE[2], "ack", 5, {"state": "00" * 32}, round=ROUND,
        prev=machines[0].state.chain[-2].id,
    )
    result = replay_log(chain + logged[:2] + [earlier.raw])
    assert result.verdict == "unacknowledged" and result.missing_acks() == [2]
    assert replay_log(chain + logged + [earlier.raw]).verdict == "agreed"


def test_an_ack_of_another_end_is_refused_by_a_member() -> None:
    machines, _ = played_cube()
    bob = machines[1]
    wrong = events.make(
        PEOPLE[2], "ack", 5, {"state": "00" * 32}, round=ROUND, prev=bob.state.head.id
    )
    fresh = RoundMachine.from_log(PEOPLE[1], bob.log(), bytes(32))
    effects = fresh.receive(wrong, 10)
    assert [getattr(e, "reason", "") for e in effects] == [
        "ack of another end of the round"
    ]
    assert not fresh.acks()


def test_replay_moves_name_the_mover_with_a_64_bit_fingerprint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from p2p.protocol.identity import fingerprint

    machines, _ = played_cube()
    path = write_log(tmp_path / "m.log", [e.raw for e in machines[0].log()])
    assert main(["replay", "--moves", str(path)]) == 0
    out = capsys.readouterr().out
    fp = fingerprint(PEOPLE[1].public_key)
    assert len(fp) == 19
    moves = [line for line in out.splitlines() if line.startswith("  ply ")]
    assert moves and any(f"({fp})" in line for line in moves)
    assert PEOPLE[1].pk_hex[:8] not in out


def test_a_v1_log_is_complete_but_unacknowledged() -> None:
    result = replay_log(
        (V1_LOGS / "v1_connect4_named_start_computer.log").read_bytes().split(b"\n")
    )
    assert result.verdict == "unacknowledged"
    assert "protocol v1 had no closing acknowledgement" in result.verdict_text()


def _connect4_to_bobs_turn() -> tuple[list[RoundMachine], Loopback]:
    """Alice (admin, seat 0) and bob play Connect Four until bob's winning chance."""
    net = Loopback()
    seats = [{"pk": p.pk_hex, "level": None} for p in PEOPLE[:2]]
    admin, effects = RoundMachine.open(
        PEOPLE[0], 0, ROUND, "connect4", {}, seats, 0, bytes([1]) * 32
    )
    bob = RoundMachine(PEOPLE[1], admin.state.genesis, bytes([2]) * 32)
    net.add("p0", admin, effects)
    net.add("p1", bob, bob.accept(1))
    net.run()
    for column in (
        "1",
        "2",
        "1",
        "2",
        "1",
        "2",
    ):  # alice 1,1,1; bob 2,2,2 -> bob to win
        mover, name = (
            (admin, "p0")
            if admin.state.owner() == PEOPLE[0].public_key
            else (bob, "p1")
        )
        net.now += 1000
        net.post(name, mover.move(column, net.now))
        net.run()
    assert admin.state.owner() == PEOPLE[0].public_key  # alice to move: she plays 7
    net.now += 1000
    net.post("p0", admin.move("7", net.now))
    net.run()
    assert bob.state.owner() == PEOPLE[1].public_key
    return [admin, bob], net


def _bob_move_and_alice_forfeit(machines, move_after_ms: int, column: str = "2"):  # type: ignore[no-untyped-def]
    """Bob's move at the head (``move_after_ms`` after it) and alice's 'offline' forfeit
    of bob at the same position, stamped just past the turn limit."""
    st = machines[1].state
    head = st.head
    trial = st.game.copy()
    trial.push(column)
    move = events.make(
        PEOPLE[1],
        "move",
        head.ts + move_after_ms,
        {"ply": st.ply, "move": column, "state": trial.state_hash()},
        round=ROUND,
        seq=head.seq + 1,
        prev=head.id,
    )
    forfeit = events.make(
        PEOPLE[0],
        "forfeit",
        head.ts + st.timeouts.offline_ms + 1000,
        {"seat": 1, "reason": "offline", "evidence": will_of(1, people=PEOPLE).value()},
        round=ROUND,
        seq=head.seq + 1,
        prev=head.id,
    )
    return move, forfeit


def test_replay_calls_a_log_whose_forfeit_replaced_a_winning_move_disputed() -> None:
    """Rules v3 (issue 23): a log holding a forfeit beside the forfeited seat's own
    game-ending (or timely) move is no longer refused outright: a member may hold both
    (the evidence a live machine keeps); replay weighs them by the table of §8 and says
    "complete, but disputed", naming the two claims, whichever line comes first."""
    machines, _ = _connect4_to_bobs_turn()
    chain = [e.raw for e in machines[0].log()]
    win, forfeit = _bob_move_and_alice_forfeit(
        machines, 2000
    )  # bob wins within seconds
    # the loser's log: its forfeit of the winner, with the winner's move beside it
    loser = replay_log(chain + [forfeit.raw, win.raw])
    assert loser.chain[-1].id == forfeit.id and loser.rules == "rules v5"
    (conflict,) = loser.conflicts
    assert conflict.judged is conflict.rival and conflict.rule == "timely"
    assert loser.verdict == "disputed"
    assert "seat 0 forfeited seat 1, who claims its own move there" in (
        loser.verdict_text()
    )
    # the winner's log keeps its move; the forfeit beside it is a claim alice still makes
    winner = replay_log(chain + [win.raw, forfeit.raw])
    assert winner.state.winners() == (1,) and winner.verdict == "disputed"
    # the winner's own log (no forfeit in it) replays to its win
    result = replay_log(chain + [win.raw])
    assert result.state.phase is Phase.OVER and result.state.winners() == (1,)
    assert result.verdict != "disputed"
    # a timely move that does not end the game is judged the same way
    timely, forfeit = _bob_move_and_alice_forfeit(machines, 5000, column="4")
    held = replay_log(chain + [forfeit.raw, timely.raw])
    assert [c.judged.id for c in held.conflicts] == [timely.id]
    assert held.contested()


def test_replay_keeps_a_forfeit_of_a_move_that_really_came_too_late() -> None:
    machines, _ = _connect4_to_bobs_turn()
    chain = [e.raw for e in machines[0].log()]
    # bob's non-winning move, signed long after his turn limit
    late, forfeit = _bob_move_and_alice_forfeit(machines, 10 * 60_000 * 2, column="4")
    result = replay_log(chain + [forfeit.raw, late.raw])
    assert result.chain[-1].id == forfeit.id and result.state.phase is Phase.OVER
    assert result.state.winners() == (0,)
    # a log that goes on from the late move the forfeit replaced is refused
    head = RoundState.from_genesis(machines[0].state.genesis)
    for e in machines[0].log()[1:]:
        head.apply(e)
    head.apply(late)
    after = events.make(
        PEOPLE[0],
        "move",
        late.ts + 1000,
        {"ply": head.ply, "move": "1", "state": _pushed(head, "1")},
        round=ROUND,
        seq=late.seq + 1,
        prev=late.id,
    )
    # issue 16 (was "the forfeit there wins"): alice answered the late move, so it is
    # settled (rules v3: the table's "answered" row); the forfeit beside it lost
    answered = replay_log(chain + [late.raw, after.raw, forfeit.raw])
    (conflict,) = answered.conflicts
    assert conflict.rule == "answered" and conflict.judged.id == late.id
    assert answered.chain[late.seq].id == late.id and not answered.contested()


def _pushed(state: RoundState, column: str) -> str:
    trial = state.game.copy()
    trial.push(column)
    return trial.state_hash()


def test_replay_rejects_forfeits_the_chain_rules_forbid() -> None:
    """Forfeits refused by the chain rules alone (no rival event in the log needed)."""
    machines, _ = _connect4_to_bobs_turn()
    chain = [e.raw for e in machines[0].log()]
    head = machines[0].state.head

    def forfeit(signer: Identity, seat: int, after_ms: int, prev: events.Event) -> bytes:
        return events.make(
            signer,
            "forfeit",
            prev.ts + after_ms,
            {"seat": seat, "reason": "offline", "evidence": will_of(seat, people=PEOPLE).value()},
            round=ROUND,
            seq=prev.seq + 1,
            prev=prev.id,
        ).raw

    # bob is to move: bob cannot forfeit alice, the admin, at his own position
    with pytest.raises(LogError, match="may not forfeit"):
        replay_log(chain + [forfeit(PEOPLE[1], 0, 61_000, head)])
    # the admin forfeits bob five seconds into his turn: too soon by the signed clocks
    with pytest.raises(LogError, match="needs 180000 ms"):
        replay_log(chain + [forfeit(PEOPLE[0], 1, 5_000, head)])
