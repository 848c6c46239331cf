"""Issue 16 (results are final, Wills are one-shot, no back-dating, provable endings)
played live against real peers on Mosquitto.  The pure versions are in
``test_protocol_fair_results.py``; here the attacker signs with a real member's key and
publishes through a raw MQTT client, as a hostile client would, and the victims are real
``Peer`` objects (and, for the forfeited player who comes back, a real process killed
with SIGKILL)."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import aiomqtt
import pytest
from conftest import assert_log_matches, eventually, meet, run, start_round
from test_integration_forfeit import SHORT
from test_integration_hostile import expect_rejected

from p2p.peer import Peer
from p2p.protocol import events as ev
from p2p.protocol import lobby as lobby_rules
from p2p.protocol.identity import Identity
from p2p.protocol.replay import replay_log
from p2p.protocol.round import Phase, TurnTimeouts

SLOW_S = SHORT.offline_ms / 1000 + 1.0
"""How long the victim thinks over one move (online all along): longer than the offline
limit by its own signed timestamps, far shorter than the silent limit."""


def _victims_will(victim: Peer, ts: int) -> ev.Event:
    """A signed offline presence of ``victim`` (the strongest evidence an attacker can
    hold: e.g. the Will of an earlier session of the victim that really dropped)."""
    return ev.make(
        victim.identity,
        "presence",
        ts,
        {"nick": victim.nick, "status": "offline", "busy": False,
         "session": "11" * 16, "ttl": 60},
    )


async def _play_ply(rounds: list, winner_seat: int, slow_ply: int) -> None:
    """One ply of the column game (the winner plays column 1, the other column 2); the
    winner thinks ``SLOW_S`` over ply ``slow_ply``."""
    by_seat = {r.my_seat: r for r in rounds}
    to_move = rounds[0].game.to_move()
    mover = by_seat[to_move]
    assert await mover.wait_turn(10)
    ply = len(mover.game.history())
    if ply == slow_ply:
        await asyncio.sleep(SLOW_S)
    await mover.play("1" if to_move == winner_seat else "2")
    for r in rounds:
        await r.wait_until(lambda r, p=ply: len(r.game.history()) > p or r.is_over, 10)


def _log_verdicts(rounds: list) -> list[tuple[str, tuple[int, ...], str]]:
    """What ``p2p replay`` says of every member's log file: verdict, winners, state."""
    found = []
    for r in rounds:
        replay = replay_log(r.log_path.read_bytes().split(b"\n"), SHORT)
        found.append((replay.verdict, replay.state.winners(), replay.state.state_hash()))
    return found


@pytest.mark.parametrize("when", ["play", "over"])
@pytest.mark.parametrize("forfeiter", ["admin", "successor"])
def test_live_a_retro_forfeit_of_an_earlier_slow_move_changes_nothing(
    broker_url: str, mosquitto, tmp_path, forfeiter: str, when: str
) -> None:
    """Issue 16 'a loser flips a finished result': the victim thinks longer than the
    offline limit over one move (by its own signed ``ts``), online all along; later the
    losing member signs a forfeit of it at that earlier position, claiming 'offline' --
    once bare (as the old rules took it) and once with a signed Will of the victim as
    evidence -- in play (after that move was answered) or after the game is over.
    Both seat orders: the admin forfeits the guest, the guest (the admin's successor)
    forfeits the admin.  Every member refuses it as settled; results, state hashes and
    the replay of every log stay the same."""
    victim_seat = 1 if forfeiter == "admin" else 0  # alice (admin) holds seat 0
    slow_ply = 2  # the victim starts; its second move is the slow one
    attack_after = 4 if when == "play" else None  # plies played before the attack

    async def body() -> None:
        async with (
            Peer(broker_url, nick="alice", turn_timeouts=SHORT,
                 log_dir=tmp_path / "a") as alice,
            Peer(broker_url, nick="bob", turn_timeouts=SHORT,
                 log_dir=tmp_path / "b") as bob,
            aiomqtt.Client("127.0.0.1", mosquitto.port, identifier="loser") as relay,
        ):
            peers = (alice, bob)
            await meet(alice, bob)
            rounds = await start_round(alice, [bob], "connect4", start=victim_seat)
            while not rounds[0].is_over and (
                attack_after is None or len(rounds[0].game.history()) < attack_after
            ):
                await _play_ply(rounds, victim_seat, slow_ply)
            chain = rounds[0].log()
            slow = next(
                e for e in chain if e.kind == "move" and e.body["ply"] == slow_ply
            )
            prev = chain[slow.seq - 1]
            assert slow.pk == peers[victim_seat].public_key
            assert slow.ts - prev.ts > SHORT.offline_ms  # slow by its own signature
            assert len(chain) - slow.seq <= 8  # within reach of the old rewind rule
            before = [(r.log()[-1].id, r.state_hash, r.winners, r.phase) for r in rounds]
            loser = peers[1 - victim_seat]
            notes = [p.events() for p in peers]
            forged = []
            for evidence in (False, True):
                claim = {"seat": victim_seat, "reason": "offline"}
                if evidence:
                    claim["evidence"] = _victims_will(peers[victim_seat], prev.ts).value()
                try:
                    forged.append(
                        ev.make(
                            loser.identity,
                            "forfeit",
                            prev.ts + SHORT.offline_ms + 100,
                            claim,
                            round=slow.round,
                            seq=slow.seq,
                            prev=prev.id,
                        )
                    )
                except ev.EventError:  # rules without evidence cannot even encode it
                    assert evidence
            for forfeit in forged:
                await relay.publish(rounds[0].topic(), rounds[0].sealed(forfeit.raw), qos=1)
            await eventually(  # every member took the bare one in (and judged it)
                lambda: all(forged[0].id in r.machine.seen for r in rounds),
                10,
                "the forfeit to reach every member",
            )
            await asyncio.sleep(0.5)  # and the one with evidence
            after = [(r.log()[-1].id, r.state_hash, r.winners, r.phase) for r in rounds]
            assert after == before, "a retro-forfeit changed a member's result"
            for r in rounds:
                assert r.chain_state.forfeited == []
                assert not {f.id for f in forged} & {e.id for e in r.log()}
            for n in notes:  # refused by the rule, not by accident
                for _ in forged:
                    await expect_rejected(n, f"position {slow.seq} is settled", timeout=5)
            while not rounds[0].is_over:  # the round goes on as one chain
                await _play_ply(rounds, victim_seat, slow_ply)
            for r in rounds:
                await r.wait_over(10)
                await r.wait_until(lambda r: r.agreed, 10)
                assert r.winners == (victim_seat,)
                assert r.chain_state.end_reason == "game over"
                assert r.phase is Phase.OVER
            assert len({r.state_hash for r in rounds}) == 1
            verdicts = _log_verdicts(rounds)
            assert len(set(verdicts)) == 1, verdicts
            assert verdicts[0][:2] == ("agreed", (victim_seat,))
            assert verdicts[0][2] == rounds[0].state_hash

    run(body(), timeout=60)


WILL_TIMEOUTS = TurnTimeouts(silent_ms=6_000, offline_ms=2_000)
"""The Will test's chain rules: a grace period of 4 heartbeats (the defaults: 9)."""


def test_live_a_replayed_will_keeps_nobody_offline_and_never_shortens_a_turn(
    broker_url: str, mosquitto, private_mosquitto, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 16 'a replayed Last Will keeps a present member offline': bob uses two
    brokers; his link to the second one breaks for good, so that broker publishes his
    Will -- of the session bob still plays in over the first broker.  A stranger reads
    it there and republishes the very bytes on the first broker after each of bob's
    heartbeats while bob, online all along, thinks over his turn.  The first copy takes
    bob out of alice's lobby until his next heartbeat; every later one is a replay and
    changes nothing: bob stays online for alice, and alice (the admin) forfeits him only
    after the full silent limit, never as 'offline'."""
    monkeypatch.setattr(lobby_rules, "HEARTBEAT_MS", 500)
    first, second = broker_url, private_mosquitto.url

    async def body() -> None:
        async with (
            Peer(first, nick="alice", turn_timeouts=WILL_TIMEOUTS) as alice,
            Peer([first, second], nick="bob", turn_timeouts=WILL_TIMEOUTS) as bob,
            aiomqtt.Client("127.0.0.1", private_mosquitto.port,
                           identifier="reader") as reader,
            aiomqtt.Client("127.0.0.1", mosquitto.port, identifier="replayer") as relay,
        ):
            link = bob.transport.transports[1]  # bob's link to the second broker
            await eventually(lambda: all(up for _, up in bob.brokers()), 10, "bob up")
            await meet(alice, bob)
            # bob's link to the second broker comes back once (its Will is then the one
            # of bob's current session) and then breaks for good
            session = bob.lobby.session
            link.interrupt(hold=0.1)
            await eventually(
                lambda: bob.lobby.session != session and link.connected, 10,
                "bob's second link to come back",
            )
            topic = alice.topics.presence(bob.peer_id).topic
            await reader.subscribe(topic, qos=1)
            await asyncio.sleep(0.3)  # bob's retained presence there, if any, first
            link.interrupt(hold=600)
            will = None
            async with asyncio.timeout(10):
                async for message in reader.messages:
                    event = ev.parse(bytes(message.payload))
                    if event.body["status"] == "offline":
                        will = event
                        break
            assert will is not None and will.pk == bob.public_key
            assert will.body["session"] == bob.lobby.session  # the one bob plays in
            assert bob.public_key in alice.lobby.peers  # alice never saw it

            ra, rb = await start_round(alice, [bob], "connect4", start=1)
            head = ra.log()[-1]
            replays = 0

            async def replay_after_each_heartbeat() -> None:
                nonlocal replays
                await relay.subscribe(topic, qos=1)
                async for message in relay.messages:
                    seen = ev.parse(bytes(message.payload))
                    if seen.body["status"] == "online":  # bob's heartbeat
                        await relay.publish(topic, will.raw, qos=1)
                        replays += 1

            stranger = asyncio.create_task(replay_after_each_heartbeat())
            offline_seen = 0.0
            try:
                loop = asyncio.get_running_loop()
                started = loop.time()
                while not ra.is_over and loop.time() - started < 15:
                    if bob.public_key not in alice.lobby.peers:
                        offline_seen += 0.05
                    await asyncio.sleep(0.05)
            finally:
                stranger.cancel()
            assert ra.is_over, "bob was never forfeited"
            forfeit = ra.log()[-1]
            assert forfeit.kind == "forfeit" and forfeit.body["seat"] == 1
            assert forfeit.body["reason"] == "silent", forfeit.body
            assert forfeit.ts - head.ts >= WILL_TIMEOUTS.silent_ms  # the full limit
            assert replays >= 8, replays
            # the first copy stood until bob's next heartbeat; the replays did nothing
            assert offline_seen <= 1.0, offline_seen
            assert alice.stats.dropped.get(lobby_rules.WILL_REPLAYED, 0) >= 1
            await rb.wait_over(10)
            assert rb.winners == ra.winners == (0,)

    run(body(), timeout=60)


CHILD = Path(__file__).with_name("peer_process.py")


def test_live_a_forfeited_player_killed_and_restarted_cannot_undo_the_forfeit(
    broker_url: str, tmp_path
) -> None:
    """Issue 16 'a forfeited player comes back and reverses its forfeit': Connect Four,
    bob plays in a process of his own, which is killed with SIGKILL on his turn.  The
    broker publishes his Will, alice (the admin) forfeits him by the rules ('offline',
    with that Will, after the grace period).  Bob restarts: a new ``Peer`` with his key
    resumes the round from his log file and plays a move at once -- signed before any
    answer can reach him (as the old rules let him: they dated it 'made in time').
    The forfeit stands on both sides, both show the same result, both logs replay to the
    same verdict, and each side's 'every member signed the result' is what the replay of
    its own log says."""
    seed = os.urandom(32)
    bob_id = Identity.from_seed(seed)
    a_dir, b_dir = tmp_path / "a", tmp_path / "b"

    async def body() -> None:
        async with Peer(broker_url, nick="alice", turn_timeouts=SHORT,
                        log_dir=a_dir) as alice:
            child = await asyncio.create_subprocess_exec(
                sys.executable, str(CHILD), broker_url, seed.hex(), str(b_dir),
                str(SHORT.silent_ms), str(SHORT.offline_ms), "1",
                stdout=asyncio.subprocess.PIPE,
            )
            try:
                assert child.stdout is not None
                async with asyncio.timeout(15):
                    assert (await child.stdout.readline()).startswith(b"ONLINE")
                await eventually(lambda: bob_id.public_key in alice.lobby.peers, 10,
                                 "alice to see bob")
                ra = await alice.invite([bob_id.peer_id], "connect4", start=1)
                await ra.wait_started(15)
                assert await ra.wait_turn(15)  # bob played his first move
                await ra.play(ra.game.legal_moves()[0])
                async with asyncio.timeout(15):
                    line = await child.stdout.readline()
                assert line.split() == [b"THINKING", ra.id.encode()]
                child.kill()  # SIGKILL on his turn: no goodbye, no leave
                await child.wait()
            finally:
                if child.returncode is None:
                    child.kill()
                    await child.wait()
            await ra.wait_over(15)
            forfeit = ra.log()[-1]
            assert forfeit.kind == "forfeit" and forfeit.body["seat"] == 1
            assert forfeit.body["reason"] == "offline"  # the Will fired: by the rules
            assert ra.winners == (0,)
            log_path = b_dir / f"round-{ra.id}.log"
            assert log_path.exists()

            bob = Peer(broker_url, nick="bob", identity=bob_id, turn_timeouts=SHORT,
                       log_dir=b_dir)
            try:
                rb = await bob.resume(log_path)  # his head: alice's move; his turn
                assert rb.is_my_turn and not rb.is_over
                await rb.play(rb.game.legal_moves()[0])  # before any answer reaches him
                mine = rb.log()[-1]
                assert mine.kind == "move" and mine.pk == bob_id.public_key
                await bob.start()
                await eventually(lambda: bob.public_key in alice.lobby.peers, 10,
                                 "alice to see bob back")
                await eventually(  # bob's move and the sync answer have been through
                    lambda: mine.id in ra.machine.seen and rb.is_over, 10,
                    "bob's move to reach alice and the forfeit to reach bob",
                )
                for r in (ra, rb):  # the forfeit stands on both sides
                    assert r.log()[-1].id == forfeit.id, "the forfeit was undone"
                    assert r.chain_state.forfeited == [1] and r.winners == (0,)
                    assert mine.id not in {e.id for e in r.log()}
                await eventually(lambda: ra.agreed and rb.agreed, 10,
                                 "both members to hold both closing acks")
                assert ra.state_hash == rb.state_hash
                verdicts = []
                for r in (ra, rb):
                    replay = replay_log(r.log_path.read_bytes().split(b"\n"), SHORT)
                    # 'every member signed the result' is what the log proves
                    assert r.agreed == (replay.verdict == "agreed")
                    verdicts.append(
                        (replay.verdict, replay.state.winners(), replay.state.state_hash())
                    )
                assert verdicts[0] == verdicts[1] == ("agreed", (0,), ra.state_hash)
                assert_log_matches(ra, rb)  # issue 29: each log = its live verdict
                # bob's move the forfeit beat is kept beside the chain as evidence
                assert mine.id in {e.id for e in rb.machine.conflict_evidence()}
            finally:
                await bob.close()

    run(body(), timeout=60)
