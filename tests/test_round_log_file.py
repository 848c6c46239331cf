"""The round log on disk follows the machine (issue 29): after every step the file a
``RoundLink`` writes replays (``p2p.protocol.replay``) to the head, phase and result the
machine holds -- after forfeits, rewinds, equivocation proofs and closing acks -- and it
keeps a replaced event beside the chain as evidence.

Pure machines on a ``Loopback``, each driven through a real ``RoundLink`` that writes a
real file (``tests/round_files.py``); the check runs after every delivery.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from round_files import LinkedMachine, replayed_verdict
from test_protocol_forfeit import SILENT, evidence_of
from test_protocol_round import PEOPLE, ROUND, human, nonce

from p2p.peer.files import write_atomic
from p2p.protocol import events
from p2p.protocol.effects import Publish, Rewound
from p2p.protocol.events import Event
from p2p.protocol.loopback import Loopback
from p2p.protocol.replay import replay_log
from p2p.protocol.round import Phase
from p2p.protocol.round_machine import RoundMachine


class Checked(Loopback):
    """A ``Loopback`` that checks every member's log file against its machine after
    every delivery (``replayed_verdict``)."""

    def run(self, max_deliveries: int = 100_000) -> int:
        count = 0
        while self.queue:
            count += self._one()
        return count

    def _one(self) -> int:
        source, publish = self.queue.pop(self.pick(len(self.queue)))
        for name, machine in list(self.machines.items()):
            if name == source or (self.drop and self.drop(source, name, publish.event)):
                continue
            self.now += 1
            self.post(name, machine.receive(publish.event, self.now))
            assert isinstance(machine, LinkedMachine)
            problem = replayed_verdict(machine.log_path, machine.machine)
            assert problem is None, problem
        return 1


@pytest.fixture()
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


def two_seats(tmp: Path, loop: asyncio.AbstractEventLoop, cut: dict) -> tuple[Checked, LinkedMachine, LinkedMachine]:
    """Alice (admin, seat 0) and bob (seat 1) play Connect Four; bob to move after four
    moves.  ``cut["to"]``: names whose incoming deliveries are lost (an outage)."""
    net = Checked(drop=lambda src, dst, event: dst in cut.get("to", ()))
    admin_m, effects = RoundMachine.open(
        PEOPLE[0], 0, ROUND, "connect4", {}, [human(0), human(1)], 1, nonce(0)
    )
    alice = LinkedMachine(admin_m, tmp / "alice", loop, effects)
    net.add("p0", alice, effects)
    bob_m = RoundMachine(PEOPLE[1], admin_m.state.genesis, nonce(1))
    bob = LinkedMachine(bob_m, tmp / "bob", loop)
    net.add("p1", bob, bob.step(lambda: bob_m.accept(1)))
    net.run()
    for column in "1212":
        lm, name = (alice, "p0") if alice.machine.state.owner() == PEOPLE[0].public_key else (bob, "p1")
        net.now += 1000
        net.post(name, lm.step(lambda lm=lm, c=column: lm.machine.move(c, net.now)))
        net.run()
    assert bob.machine.state.owner() == PEOPLE[1].public_key
    return net, alice, bob


def lines(lm: LinkedMachine) -> list[Event]:
    return [events.parse(x) for x in lm.log_path.read_bytes().split(b"\n") if x]


def test_a_forfeit_that_replaced_a_late_move_is_on_disk_with_the_move_beside_it(
    tmp_path: Path, loop: asyncio.AbstractEventLoop
) -> None:
    """Bob's late move is his head when alice's forfeit arrives: the forfeit replaces it
    (a rewind).  Bob's file holds the forfeit and, beside the chain, the move it
    replaced; it replays to bob's end (over, alice the winner, both acks: agreed).
    On the old writer the replaced move was lost from the file."""
    cut: dict = {}
    net, alice, bob = two_seats(tmp_path, loop, cut)
    cut["to"] = ("p0",)  # alice's link is down: she hears nothing
    head = bob.machine.state.head
    late = bob.step(lambda: bob.machine.move("3", head.ts + SILENT + 5_000))
    net.post("p1", late)
    net.run()  # alice never sees it
    forfeit = alice.step(lambda: alice.machine.tick(head.ts + SILENT + 6_000))
    cut["to"] = ()
    net.now = head.ts + SILENT + 6_000
    net.post("p0", forfeit)
    net.run()
    assert any(isinstance(e, Rewound) for _, e in net.seen if _ == "p1")
    (move,) = [e.event for e in late if isinstance(e, Publish) and e.event.kind == "move"]
    for lm in (alice, bob):
        st = lm.machine.state
        assert st.phase is Phase.OVER and st.end_reason == "forfeit" and st.winners() == (0,)
        result = replay_log(lm.log_path.read_bytes().split(b"\n"))
        assert result.verdict == "agreed" and result.state.head.id == st.head.id
    assert move.id in {e.id for e in lines(bob)}  # the replaced move, kept as evidence
    assert move.id in [e.id for e in bob.machine.conflict_evidence()]
    assert move.id in [e.id for e in replay_log(bob.log_path.read_bytes().split(b"\n")).evidence()]
    # the late move also reaches alice after her forfeit: her log keeps it too
    net.post("p1", late)
    for effect in late:
        if isinstance(effect, Publish):
            alice.receive(effect.event, net.now + 10)
    assert move.id in {e.id for e in lines(alice)}
    assert replayed_verdict(alice.log_path, alice.machine) is None


def test_a_timely_move_that_beats_a_forfeit_leaves_no_forfeit_in_the_file(
    tmp_path: Path, loop: asyncio.AbstractEventLoop, caplog: pytest.LogCaptureFixture
) -> None:
    """Alice forfeits bob on his Will while his move, signed in time, is on its way:
    the move replaces her forfeit; her file replays to the chain she plays on (in play,
    the move at the head), with her forfeit beside it as evidence and no stale ack of
    the end she left."""
    cut: dict = {}
    net, alice, bob = two_seats(tmp_path, loop, cut)
    cut["to"] = ("p0",)  # alice's link is down: she hears nothing
    head = alice.machine.state.head
    timely = bob.step(lambda: bob.machine.move("3", head.ts + 5_000))
    gone = frozenset({PEOPLE[1].public_key})
    offline = alice.machine.timeouts.offline_ms
    forfeit = alice.step(lambda: alice.machine.tick(head.ts + offline, gone, evidence_of(1, head.ts)))
    assert alice.machine.state.phase is Phase.OVER
    assert replayed_verdict(alice.log_path, alice.machine) is None  # the end, on disk
    cut["to"] = ()
    net.now = head.ts + offline
    net.post("p1", timely)
    net.post("p0", forfeit)
    net.run()
    st = alice.machine.state
    assert st.phase is Phase.PLAY and st.head.kind == "move"
    result = replay_log(alice.log_path.read_bytes().split(b"\n"))
    assert result.state.phase is Phase.PLAY and result.state.head.id == st.head.id
    assert "forfeit" not in {e.kind for e in result.chain}
    forfeits = [e.id for e in lines(alice) if e.kind == "forfeit"]
    assert forfeits and set(forfeits) <= {e.id for e in result.evidence()}
    assert "ack" not in {e.kind for e in lines(alice)}
    # the log line says what replaced what (it said "a forfeit replaced" here too)
    assert "were replaced (now: move)" in caplog.text and "a forfeit replaced" not in caplog.text


def test_an_equivocation_proof_is_written_with_the_end_it_caused(
    tmp_path: Path, loop: asyncio.AbstractEventLoop
) -> None:
    net, alice, bob = two_seats(tmp_path, loop, {})
    st = bob.machine.state
    made = []
    for column in ("3", "4"):
        trial = st.game.copy()  # type: ignore[union-attr]
        trial.push(column)
        body = {"ply": st.ply, "move": column, "state": trial.state_hash()}
        made.append(events.make(PEOPLE[1], "move", st.head.ts + 1_000, body,
                                round=ROUND, seq=st.head.seq + 1, prev=st.head.id))  # type: ignore[operator]
    for event in made:
        alice.receive(event, event.ts + 10)
    assert alice.machine.ended_by_proof
    result = replay_log(alice.log_path.read_bytes().split(b"\n"))
    assert result.proof is not None and {e.id for e in result.proof} == {e.id for e in made}
    assert replayed_verdict(alice.log_path, alice.machine) is None


def test_a_resumed_round_keeps_its_evidence_and_acks_in_the_file(
    tmp_path: Path, loop: asyncio.AbstractEventLoop
) -> None:
    """From the log after a restart: the machine holds the acks and the evidence the log
    held, so the file it writes again is the same file."""
    cut: dict = {}
    net, alice, bob = two_seats(tmp_path, loop, cut)
    cut["to"] = ("p0",)  # alice's link is down: she hears nothing
    head = bob.machine.state.head
    net.post("p1", bob.step(lambda: bob.machine.move("3", head.ts + SILENT + 5_000)))
    net.run()
    forfeit = alice.step(lambda: alice.machine.tick(head.ts + SILENT + 6_000))
    cut["to"] = ()
    net.post("p0", forfeit)
    net.run()
    before = bob.log_path.read_bytes()
    result = replay_log(before.split(b"\n"))
    assert result.evidence() and result.verdict == "agreed"
    again = RoundMachine.from_log(PEOPLE[1], result.chain, nonce(1), now=net.now,
                                  proof=result.proof, acks=result.acks.values(),
                                  evidence=result.evidence())
    assert [e.raw for e in again.log_events()] == [x for x in before.split(b"\n") if x]
    resumed = LinkedMachine(again, tmp_path / "bob", loop)
    assert resumed.log_path.read_bytes() == before


def test_a_rewrite_that_fails_leaves_the_old_file_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "round-x.log"
    path.write_bytes(b"old line 1\nold line 2\n")

    def crash(*args: object) -> None:
        raise OSError("disk gone")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError):
        write_atomic(path, b"new\n")
    assert path.read_bytes() == b"old line 1\nold line 2\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["round-x.log"]
    monkeypatch.undo()
    write_atomic(path, b"new\n")
    assert path.read_bytes() == b"new\n"


def test_a_live_ending_is_left_on_the_broker_until_its_time_is_over(
    tmp_path: Path, loop: asyncio.AbstractEventLoop
) -> None:
    """Issue 29.2, the link's side: once a live round ended by its chain, each member
    publishes its ending (retained, sealed, with the acks), and empties it when the
    time members ask for acks is over; nothing while the round runs."""
    from p2p.protocol import round_store, sealing
    from p2p.protocol.round_machine import ACK_ASK_MS

    net, alice, bob = two_seats(tmp_path, loop, {})
    assert alice.host.raw == []  # a running live round leaves nothing on the broker
    head = bob.machine.state.head
    alice.host.now = head.ts + SILENT
    net.post("p0", alice.step(lambda: alice.machine.tick(head.ts + SILENT)))
    net.run()
    assert alice.machine.state.phase is Phase.OVER and bob.machine.state.phase is Phase.OVER
    topic, payload, retain, expiry = alice.host.raw[-1]
    assert topic.endswith("/store/" + PEOPLE[0].peer_id) and retain and payload
    assert expiry == ACK_ASK_MS // 1000
    plain = sealing.open_round(alice.link.sealing_key, "store", payload)
    held = [events.parse(x) for x in round_store.decode(plain)]
    chain = [e for e in held if e.seq is not None]  # what bob may lack, up to the end
    assert chain[-1].kind == "forfeit" and chain[-1].id == alice.machine.state.head.id
    assert {e.pk for e in held if e.kind == "ack"} == {PEOPLE[0].public_key, PEOPLE[1].public_key}
    alice.host.now = alice.machine.phase_since + ACK_ASK_MS
    alice.link.store.refresh_if_due()
    assert alice.host.raw[-1][1:3] == (b"", True)  # emptied: the broker forgets it


def test_a_member_that_ended_a_round_still_answers_sync_requests(
    tmp_path: Path, loop: asyncio.AbstractEventLoop
) -> None:
    """Issue 29.2: after the end a member answers a member that asks from an earlier
    head with the chain from there and its acks, and one that holds the end with acks."""
    cut: dict = {}
    net, alice, bob = two_seats(tmp_path, loop, cut)
    cut["to"] = ("p1",)  # bob hears nothing of the end
    head = bob.machine.state.head
    net.post("p0", alice.step(lambda: alice.machine.tick(head.ts + SILENT)))
    net.run()
    assert alice.machine.state.phase is Phase.OVER and bob.machine.state.phase is Phase.PLAY
    now = head.ts + SILENT + 60_000
    ask = bob.machine.request_sync(now)
    (request,) = [e.event for e in ask if isinstance(e, Publish)]
    answer = alice.receive(request, now)
    sent = [e.event for e in answer if isinstance(e, Publish)]
    assert [e.kind for e in sent if e.seq is not None] == ["forfeit"]
    assert {e.kind for e in sent if e.seq is None} >= {"ack"}
    for event in sent:
        bob.receive(event, now + 1)
    assert bob.machine.state.head.id == alice.machine.state.head.id
    assert replayed_verdict(bob.log_path, bob.machine) is None


def _ending_of(lm: LinkedMachine) -> bytes:
    """The plaintext of the ending ``lm``'s link left on the broker (its last store)."""
    from p2p.protocol import sealing

    topic, payload, retain, _ = next(x for x in reversed(lm.host.raw) if "/store/" in x[0])
    assert retain and payload
    return sealing.open_round(lm.link.sealing_key, "store", payload)


def test_a_cut_off_guest_learns_the_end_from_the_ending_alone(
    tmp_path: Path, loop: asyncio.AbstractEventLoop
) -> None:
    """Issue 29.2 at the link level: bob is cut off on his turn, alice forfeits him and
    is gone; the only thing bob ever receives is her ending (read through his own
    ``StoreLink``, as from the broker).  He ends with her result, and his log replays
    "complete and agreed"."""
    cut: dict = {}
    net, alice, bob = two_seats(tmp_path, loop, cut)
    cut["to"] = ("p1",)
    head = alice.machine.state.head
    alice.host.now = head.ts + SILENT
    net.post("p0", alice.step(lambda: alice.machine.tick(head.ts + SILENT)))
    net.run()
    assert alice.machine.state.phase is Phase.OVER and bob.machine.state.phase is Phase.PLAY
    bob.host.now = head.ts + SILENT + 120_000
    loop.run_until_complete(bob.link.store.receive(PEOPLE[0].peer_id, _ending_of(alice)))
    assert bob.machine.state.head.id == alice.machine.state.head.id
    assert bob.machine.state.winners() == (0,)
    assert replay_log(bob.log_path.read_bytes().split(b"\n")).verdict == "agreed"


def test_a_guest_that_moved_late_during_its_cut_learns_the_forfeit_from_the_ending(
    tmp_path: Path, loop: asyncio.AbstractEventLoop
) -> None:
    """The fault run of issue 29: the guest moved during its cut, past the limit (its
    move is signed after the forfeit); the admin forfeited it and quit.  From the ending
    alone the guest reaches the admin's end (under the rules of v2 it refused the
    forfeit of its own unseen move and waited for a sign the gone admin never sent)."""
    cut: dict = {}
    net, alice, bob = two_seats(tmp_path, loop, cut)
    cut["to"] = ("p0", "p1")
    head = alice.machine.state.head
    offline = alice.machine.timeouts.offline_ms
    bob.host.now = head.ts + offline + 20_000
    bob.step(lambda: bob.machine.move("3", head.ts + offline + 20_000))  # never arrives
    gone = frozenset({PEOPLE[1].public_key})
    alice.host.now = head.ts + offline + 1_000
    alice.step(lambda: alice.machine.tick(head.ts + offline + 1_000, gone, evidence_of(1, head.ts)))
    assert alice.machine.state.phase is Phase.OVER
    bob.host.now = head.ts + offline + 65_000
    loop.run_until_complete(bob.link.store.receive(PEOPLE[0].peer_id, _ending_of(alice)))
    assert bob.machine.state.head.id == alice.machine.state.head.id
    assert replayed_verdict(bob.log_path, bob.machine) is None


@pytest.mark.parametrize(("seed", "seats"), [(0, 2), (1, 2), (1, 3)])
def test_the_file_follows_the_machine_through_outages_late_moves_and_forfeits(
    tmp_path: Path, loop: asyncio.AbstractEventLoop, seed: int, seats: int
) -> None:
    """Seeded schedules: random delivery order, members cut off and back (what they
    signed meanwhile goes out on their return), moves dated late, the forfeiter's timer
    with the cut members' Wills.  After every round of steps each member's file replays
    to its machine."""
    import random

    from test_protocol_forfeit import will_of

    from p2p.protocol.round import TurnTimeouts

    rng = random.Random(seed)
    timeouts = TurnTimeouts(silent_ms=60_000, offline_ms=20_000)
    down: set[str] = set()
    net = Loopback(pick=rng.randrange, drop=lambda src, dst, event: src in down or dst in down)
    options = {} if seats == 2 else {"players": 3}
    game = "connect4" if seats == 2 else "cube"
    admin, effects = RoundMachine.open(
        PEOPLE[0], 0, ROUND, game, options, [human(i) for i in range(seats)], 0, nonce(0),
        timeouts=timeouts,
    )
    members = [LinkedMachine(admin, tmp_path / "p0", loop, effects)]
    net.add("p0", members[0], effects)
    for i in range(1, seats):
        m = RoundMachine(PEOPLE[i], admin.state.genesis, nonce(i), timeouts=timeouts)
        members.append(LinkedMachine(m, tmp_path / f"p{i}", loop))
        net.add(f"p{i}", members[-1], members[-1].step(lambda m=m: m.accept(1)))
    net.run()
    held: dict[str, list] = {}
    ended = False
    for _ in range(300):
        net.now += rng.choice([500, 2_000, 8_000, 15_000])
        for i in range(seats):
            name = f"p{i}"
            if rng.random() < 0.05:
                if name in down:
                    down.discard(name)
                    net.post(name, held.pop(name, []))
                else:
                    down.add(name)
        for i, lm in enumerate(members):
            m, name = lm.machine, f"p{i}"
            out: list = []
            if m.state.phase is Phase.PLAY and m.state.owner() == m.me.public_key and rng.random() < 0.5:
                move = rng.choice(m.state.game.legal_moves())  # type: ignore[union-attr]
                ts = net.now + rng.choice([0, 0, -5_000])
                out += lm.step(lambda m=m, move=move, ts=ts: m.move(move, ts))
            cut = [j for j in range(seats) if f"p{j}" in down and j != i]
            offline = frozenset(PEOPLE[j].public_key for j in cut)
            since = max(0, net.now - 30_000)
            wills = {PEOPLE[j].public_key: (will_of(j, since), since) for j in cut}
            out += lm.step(lambda m=m, o=offline, w=wills: m.tick(net.now, o, w))
            if name in down:
                held.setdefault(name, []).extend(out)
            else:
                net.post(name, out)
        net.run()
        for lm in members:
            problem = replayed_verdict(lm.log_path, lm.machine)
            assert problem is None, problem
        if not down and all(lm.machine.state.phase in (Phase.OVER, Phase.CANCELLED) for lm in members):
            ended = True
            break
    assert ended
    for lm in members:
        assert replayed_verdict(lm.log_path, lm.machine) is None
