"""Issue 9 attacks played live against real peers on Mosquitto (the pure versions are in
``test_protocol_fair_chain.py``).  The attacker signs with a real member's key (or a
stranger's) and publishes through a raw MQTT client, as a hostile client would.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import aiomqtt
import pytest
from conftest import Peers, assert_log_matches, eventually, first_legal, meet, run, start_round
from test_integration_forfeit import SHORT
from test_integration_hostile import expect_rejected, move_event

from p2p.net.inbound import DEDUPE_WINDOW_S
from p2p.peer import InvitationReceived, Peer, RoundOver
from p2p.protocol import canonical, round_machine, round_timers, sealing
from p2p.protocol import events as ev
from p2p.protocol.identity import Identity
from p2p.protocol.replay import replay_log
from p2p.protocol.round import Phase


def sealed_to(sender, recipient_pk: bytes, rnd, raw: bytes) -> bytes:
    """``raw`` sealed to ``recipient_pk``'s inbox by member ``sender`` (as its client would)."""
    return sealing.seal_invitation(
        os.urandom(sealing.KEY_SIZE),
        sender.identity.seed(),
        sender.public_key,
        recipient_pk,
        rnd.id,
        rnd.sealing_key,
        bytes.fromhex(rnd.machine.key),
        raw,
    )


async def play_column_game(rounds: list, winner_seat: int) -> None:
    """The winner plays column 1 four times, the other column 2: the winner wins."""
    by_seat = {r.my_seat: r for r in rounds}
    while not rounds[0].is_over:
        to_move = rounds[0].game.to_move()
        mover = by_seat[to_move]
        assert await mover.wait_turn(10)
        ply = len(mover.game.history())
        await mover.play("1" if to_move == winner_seat else "2")
        for r in rounds:
            await r.wait_until(
                lambda r, p=ply: len(r.game.history()) > p or r.is_over, 10
            )


@pytest.mark.parametrize("loser", ["admin", "successor"])
def test_live_the_loser_cannot_forfeit_the_seat_that_beat_it(
    broker_url: str, mosquitto, tmp_path, loser: str
) -> None:
    async def body() -> None:
        async with (
            Peer(
                broker_url, nick="alice", turn_timeouts=SHORT, log_dir=tmp_path / "a"
            ) as alice,
            Peer(
                broker_url, nick="bob", turn_timeouts=SHORT, log_dir=tmp_path / "b"
            ) as bob,
            aiomqtt.Client("127.0.0.1", mosquitto.port, identifier="attacker") as relay,
        ):
            await meet(alice, bob)
            winner_seat = 1 if loser == "admin" else 0  # alice (admin) holds seat 0
            rounds = await start_round(alice, [bob], "connect4", start=winner_seat)
            await play_column_game(rounds, winner_seat)
            for r in rounds:
                await r.wait_over(10)
                assert r.winners == (winner_seat,)
            win, prev = rounds[0].log()[-1], rounds[0].log()[-2]
            losing = (alice, bob)[1 - winner_seat]
            # the loser signs a forfeit of the winner at the winning move, dated past
            # the offline limit, and publishes it on the round and in the winner's inbox
            winner_key = (alice, bob)[winner_seat].identity
            will = ev.make(  # issue 16: an offline claim needs the seat's signed Will
                winner_key,
                "presence",
                prev.ts,
                {"nick": "w", "status": "offline", "busy": False,  # (of the session
                 "session": "00" * 16, "ttl": 60,  # that moved: issue 23 item 6)
                 "since": (alice, bob)[winner_seat].lobby.sessions.since},
            )
            forfeit = ev.make(
                losing.identity,
                "forfeit",
                prev.ts + SHORT.offline_ms + 1_000,
                {"seat": winner_seat, "reason": "offline", "evidence": will.value()},
                round=win.round,
                seq=win.seq,
                prev=prev.id,
            )
            notes = [p.events() for p in (alice, bob)]
            winning = (alice, bob)[winner_seat]
            r0 = rounds[0]
            await relay.publish(r0.topic(), r0.sealed(forfeit.raw), qos=1)
            await relay.publish(
                alice.topics.inbox(winning.peer_id).topic,
                sealed_to(losing, winning.public_key, r0, forfeit.raw),
                qos=1,
            )
            for n in notes:
                await expect_rejected(n, "ends the game", timeout=10)
            await expect_rejected(
                notes[winner_seat], "does not belong in an inbox", timeout=10
            )
            for r in rounds:
                assert r.winners == (winner_seat,) and r.log()[-1].id == win.id
                assert r.chain_state.end_reason == "game over"
                lines = r.log_path.read_bytes().split(b"\n")  # the forged forfeit beside it: judged with the round's timeouts
                assert replay_log(lines, SHORT).state.winners() == (winner_seat,)
            assert_log_matches(*rounds)

    run(body(), timeout=60)


def three_cube(alice, bob, carol, **kw):
    return start_round(alice, [bob, carol], "cube", {"players": 3}, start=1, **kw)


def test_live_a_move_sent_to_one_members_inbox_does_not_fork_it(
    peers: Peers, mosquitto
) -> None:
    async def body() -> None:
        async with (
            peers("alice", "bob", "carol") as (alice, bob, carol),
            aiomqtt.Client("127.0.0.1", mosquitto.port, identifier="bob-evil") as relay,
        ):
            ra, rb, rc = await three_cube(alice, bob, carol)
            notes = carol.events()
            # bob signs move y for carol's inbox only, then plays x on the round
            y = move_event(bob.identity, rc, "b2")
            inbox = alice.topics.inbox(carol.peer_id).topic
            await relay.publish(
                inbox, sealed_to(bob, carol.public_key, rb, y.raw), qos=1
            )
            await expect_rejected(notes, "does not belong in an inbox")
            await rb.play("a1")
            for r in (ra, rb, rc):
                await r.wait_until(lambda r: len(r.game.history()) == 1, 10)
            assert {r.log()[-1].id for r in (ra, rb, rc)} == {rb.log()[-1].id}
            assert y.id not in {e.id for e in rc.log()}
            # and the round goes on as one chain
            await rc.wait_turn(10)
            await rc.play(first_legal(rc.game))
            for r in (ra, rb, rc):
                await r.wait_until(lambda r: len(r.game.history()) == 2, 10)
            assert len({r.state_hash for r in (ra, rb, rc)}) == 1

    run(body(), timeout=60)


def test_live_equivocation_ends_the_round_the_same_way_for_everyone(
    peers: Peers, mosquitto, tmp_path: Path
) -> None:
    async def body() -> None:
        async with (
            peers("alice", "bob", "carol", log_root=tmp_path) as (alice, bob, carol),
            aiomqtt.Client("127.0.0.1", mosquitto.port, identifier="bob-evil") as relay,
        ):
            rounds = await three_cube(alice, bob, carol)
            _ra, rb, _rc = rounds
            overs = [p.events() for p in (alice, bob, carol)]
            y = move_event(bob.identity, rb, "b2")
            await rb.play("a1")  # bob's own client plays x, his other one y
            await relay.publish(rb.topic(), rb.sealed(y.raw), qos=1)
            for r in rounds:
                await r.wait_over(10)
            assert len({tuple(e.id for e in r.log()) for r in rounds}) == 1
            assert len({r.state_hash for r in rounds}) == 1
            for r in rounds:
                st = r.chain_state
                assert st.phase is Phase.OVER and st.equivocators == [1]
                assert 1 not in r.winners and "equivocation" in st.end_reason
            for n in overs:  # every member is told how the round ended
                while True:
                    note = await n.next(5)
                    if isinstance(note, RoundOver):
                        assert "equivocation" in note.reason
                        break
            assert not alice.busy and not carol.busy
            assert_log_matches(*rounds)  # each log holds the proof and that end

    run(body(), timeout=60)


def test_live_old_position_forfeits_cost_no_replay(
    peers: Peers, mosquitto, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("p2p.ai")
    import p2p.ai

    calls = {"replay": 0}
    real_verify = round_machine.verify_chain

    def counting(*a, **k):
        calls["replay"] += 1
        return real_verify(*a, **k)

    async def body() -> None:
        async with (
            peers("alice", "bob") as (alice, bob),
            aiomqtt.Client("127.0.0.1", mosquitto.port, identifier="stranger") as relay,
        ):
            ra, rb = await start_round(
                alice, [bob], "cube", {"players": 3}, computers=["neuling"], start=0
            )
            for _ in range(10):  # alice, bob and the computer play 15 moves
                async with asyncio.timeout(10):
                    while not (ra.is_my_turn or rb.is_my_turn):
                        await asyncio.sleep(0.05)
                mover = ra if ra.is_my_turn else rb
                ply = len(mover.game.history())
                await mover.play(first_legal(mover.game))
                for r in (ra, rb):
                    await r.wait_until(
                        lambda r, p=ply: len(r.game.history()) > p or r.is_over, 10
                    )
            async with asyncio.timeout(10):  # quiet: a human is to move, and both hold
                # every move (a receiver recomputes a computer move to check it)
                while not (
                    (ra.is_my_turn or rb.is_my_turn)
                    and len(ra.game.history()) == len(rb.game.history())
                ):
                    await asyncio.sleep(0.05)
            await asyncio.sleep(0.2)
            chain = ra.log()
            monkeypatch.setattr(round_machine, "verify_chain", counting)
            ai_calls = {"n": 0}
            real_choose = p2p.ai.choose_move

            def counting_choose(*a, **k):
                ai_calls["n"] += 1
                return real_choose(*a, **k)

            monkeypatch.setattr(p2p.ai, "choose_move", counting_choose)
            stranger = Identity.from_seed(b"\x77" * 32)
            topic = ra.topic()
            bobs = [e.seq for e in chain if e.kind == "move" and e.pk == bob.public_key]
            assert len(chain) - bobs[1] > round_machine.MAX_REWIND  # old positions
            sent = 0
            dropped_before = sum(bob.stats.dropped.values())
            for seq in bobs[:2]:
                for who in (stranger, alice.identity):
                    for k in range(40):
                        forfeit = ev.make(
                            who,
                            "forfeit",
                            chain[seq - 1].ts + k,
                            {"seat": 1, "reason": "silent"},
                            round=ra.id,
                            seq=seq,
                            prev=chain[seq - 1].id,
                        )
                        for _ in range(3):  # identical copies too
                            await relay.publish(topic, ra.sealed(forfeit.raw), qos=1)
                            sent += 1
            await eventually(
                lambda: sum(bob.stats.dropped.values()) >= dropped_before + sent,
                20,
                "every copy to be dropped",
            )
            await asyncio.sleep(0.3)
            assert calls["replay"] == 0 and ai_calls["n"] == 0
            assert ra.log()[: len(chain)] == chain
            assert rb.log()[: len(chain)] == chain

    run(body(), timeout=60)


def test_live_a_replayed_genesis_is_no_invitation(peers: Peers, mosquitto) -> None:
    async def body() -> None:
        async with (
            peers("alice", "bob") as (alice, bob),
            aiomqtt.Client("127.0.0.1", mosquitto.port, identifier="replayer") as relay,
        ):
            inbox = alice.topics.inbox(bob.peer_id).topic
            await relay.subscribe(inbox, qos=1)  # a stranger records bob's inbox
            ra, rb = await start_round(alice, [bob], "connect4", start=0)
            captured = None
            async with asyncio.timeout(5):
                async for message in relay.messages:
                    captured = bytes(message.payload)
                    break
            await ra.resign()
            await rb.wait_over(10)
            notes = bob.events()
            # replayed later (copies within the transport's dedupe window are one message)
            await asyncio.sleep(DEDUPE_WINDOW_S + 0.2)
            before = bob.stats.dropped.get("duplicate", 0)
            await relay.publish(inbox, captured, qos=1)  # the same bytes, replayed
            # dropped at the network edge: an inbox event id bob took already (the
            # round machine would refuse it too: "genesis of a round we already hold")
            await eventually(
                lambda: bob.stats.dropped.get("duplicate", 0) > before,
                5,
                "the replayed invitation to be dropped",
            )
            assert bob.invitations == [] and not bob.busy
            while True:  # nothing offered to bob in the meantime
                try:
                    note = await notes.next(0.3)
                except TimeoutError:
                    break
                assert not isinstance(note, InvitationReceived)

    run(body(), timeout=60)


def test_live_an_invitee_whose_admin_vanished_is_freed(
    peers: Peers, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(round_machine, "INVITE_TTL_MS", 2_000)
    monkeypatch.setattr(round_timers, "FORMING_GRACE_MS", 1_000)

    async def body() -> None:
        async with peers("alice", "bob") as (alice, bob):
            rnd = await alice.invite([bob.peer_id], "connect4", start=0)
            note = None
            async with asyncio.timeout(10):
                notes = bob.events()
                while not isinstance(note, InvitationReceived):
                    note = await notes.next(10)
            alice.transport.interrupt(hold=600)  # the admin is gone before it starts
            rb = await note.invitation.accept()
            assert bob.busy and rb.phase is Phase.FORMING
            await rb.wait_over(10)
            assert (
                rb.phase is Phase.CANCELLED and "expired" in rb.end_reason
            )
            assert not bob.busy
            del rnd

    run(body(), timeout=60)


def test_live_a_move_dated_near_2_53_cannot_block_the_forfeit(
    peers: Peers, mosquitto
) -> None:
    """A member signs its move with ``ts`` = 2^53: nobody applies it, and its seat can
    still be forfeited when it stays silent (the v1 code applied it and then nobody
    could ever forfeit the next seat)."""

    async def body() -> None:
        async with (
            peers("alice", "bob", turn_timeouts=SHORT) as (alice, bob),
            aiomqtt.Client("127.0.0.1", mosquitto.port, identifier="bob-evil") as relay,
        ):
            ra, rb = await start_round(alice, [bob], "connect4", start=1)
            head = rb.log()[-1]
            trial = rb.game.copy()
            trial.push("4")
            future = ev.make(
                bob.identity,
                "move",
                ev.MAX_TS,
                {"ply": 0, "move": "4", "state": trial.state_hash()},
                round=rb.id,
                seq=head.seq + 1,
                prev=head.id,
            )
            await relay.publish(rb.topic(), rb.sealed(future.raw), qos=1)
            await ra.wait_over(SHORT.silent_ms / 1000 + 10)
            assert ra.chain_state.forfeited == [1] and ra.winners == (0,)
            assert future.id not in {e.id for e in ra.log()}

    run(body(), timeout=60)


def test_live_a_round_whose_admin_and_successor_vanish_ends_for_the_rest(
    peers: Peers,
) -> None:
    async def body() -> None:
        async with peers("alice", "bob", "carol", turn_timeouts=SHORT) as (alice, bob, carol):
            rounds = await start_round(
                alice, [bob, carol], "cube", {"players": 3}, start=0
            )
            rc = rounds[2]
            # the admin (to move) and its successor lose their connections for good
            alice.interrupt_connection(hold=600)
            bob.interrupt_connection(hold=600)
            await rc.wait_over(20)
            assert rc.phase is Phase.CANCELLED
            assert rc.end_reason.startswith("abandoned")
            assert not carol.busy

    run(body(), timeout=60)


def test_live_true_is_not_the_protocol_version(peers: Peers, mosquitto) -> None:
    async def body() -> None:
        async with (
            peers("alice", "bob") as (alice, bob),
            aiomqtt.Client("127.0.0.1", mosquitto.port, identifier="old") as relay,
        ):
            ra, rb = await start_round(alice, [bob], "connect4", start=0)
            value = move_event(alice.identity, ra, "4").value()
            value["v"] = (
                True  # in Python True == 1: signed anew, so only the type is wrong
            )
            unsigned = {k: v for k, v in value.items() if k != "sig"}
            digest = bytes.fromhex(ev.event_id(unsigned))
            value["sig"] = alice.identity.sign(digest).hex()
            notes = bob.events()
            await relay.publish(ra.topic(), ra.sealed(canonical.encode(value)), qos=1)
            await expect_rejected(notes, "unsupported protocol version")
            assert len(rb.log()) == len(ra.log())

    run(body(), timeout=60)
