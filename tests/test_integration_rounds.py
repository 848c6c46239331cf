"""Whole rounds between real peers over a real Mosquitto (started by ``conftest.py``).

Every test plays through the public ``p2p.peer`` API only, and checks what every member
derived on its own: identical chains, identical final state hashes, the same draw.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from conftest import (
    Peers,
    assert_log_matches,
    autoplay,
    computer,
    eventually,
    first_legal,
    invitation,
    meet,
    play_out,
    run,
    start_round,
)

from p2p.net.broker import LocalBroker
from p2p.net.transport import PUBLISH_RATE_PER_S
from p2p.peer import (
    ActionError,
    ChatMessage,
    ConnectionChanged,
    Peer,
    PresenceChanged,
    Resynced,
    RoundOver,
)
from p2p.protocol import draw
from p2p.protocol.round import Phase, verify_chain


def assert_same_outcome(rounds: list) -> None:
    """Every member holds the same verified chain and the same final position."""
    hashes = {r.state_hash for r in rounds}
    assert len(hashes) == 1, f"state hashes differ: {hashes}"
    chains = {tuple(e.id for e in r.log()) for r in rounds}
    assert len(chains) == 1, "members hold different chains"
    for r in rounds:
        replayed = verify_chain(r.log())  # an independent replay of the chain
        assert replayed.state_hash() == r.state_hash
        assert replayed.phase is Phase.OVER
        assert r.phase is Phase.OVER
    assert len({r.winners for r in rounds}) == 1


def assert_draw_verified(rnd) -> None:
    """Recompute the starter from the revealed nonces and the commitments in the chain."""
    st = rnd.chain_state
    assert st.start_seat is None, "this round was meant to draw its starter"
    for seat, nonce in st.revealed.items():
        assert (
            draw.commitment(st.round_id, st.seats[seat].pk, nonce) == st.commits[seat]
        )
    seed = draw.draw_seed(st.round_id, [st.revealed[s] for s in sorted(st.revealed)])
    eligible = sorted(set(st.revealed) | {s.index for s in st.seats if s.is_computer})
    assert seed == st.seed
    assert draw.starter(seed, eligible) == st.starter


def test_two_peers_connect4_to_the_end(broker_url: str) -> None:
    async def body() -> None:
        async with (
            Peer(broker_url, nick="alice") as alice,
            Peer(broker_url, nick="bob") as bob,
        ):
            notes = bob.events()
            await meet(alice, bob)
            await alice.say("hello bob")
            ra, rb = await start_round(alice, [bob], "connect4")
            assert ra.id == rb.id and ra.seed == rb.seed and ra.starter == rb.starter
            for r in (ra, rb):
                assert_draw_verified(r)
            await asyncio.gather(
                autoplay(ra, computer("normal")), autoplay(rb, computer("neuling"))
            )
            await rb.wait_over(10)
            assert_same_outcome([ra, rb])
            seen = []
            while True:
                note = await notes.next(5)
                seen.append(note)
                if isinstance(note, RoundOver):
                    break
            chat = [n for n in seen if isinstance(n, ChatMessage)]
            assert (
                chat
                and chat[0].text == "hello bob"
                and chat[0].sender == alice.public_key
            )
            assert chat[0].round_id is None
            # round chat reaches the members only
            await ra.say("good game")
            note = await notes.next(5)
            while not isinstance(note, ChatMessage):
                note = await notes.next(5)
            assert (note.text, note.round_id, note.sender) == (
                "good game",
                ra.id,
                alice.public_key,
            )
            # another round: same seats, the starting seat rotates
            again = await alice.another_round(ra)
            again_b = await (await invitation(bob, again.id)).accept()
            await again_b.wait_started(10)
            assert again_b.starter == (ra.starter + 1) % 2 and again_b.id != ra.id

    run(body())


def test_three_peers_cube_to_the_end(peers: Peers, tmp_path: Path) -> None:
    async def body() -> None:
        async with peers("ann", "ben", "cid", log_root=tmp_path) as (ann, ben, cid):
            rounds = await start_round(ann, [ben, cid], "cube", {"players": 3})
            for r in rounds:
                assert_draw_verified(r)
            assert len({(r.seed, r.starter) for r in rounds}) == 1
            await asyncio.gather(*(autoplay(r, computer("neuling")) for r in rounds))
            for r in rounds:
                await r.wait_over(10)
            assert_same_outcome(rounds)
            assert (
                len(rounds[0].game.history()) == 64
            )  # the cube is played until it is full
            assert_log_matches(*rounds)

    run(body())


def test_computer_seat_played_by_the_admin_and_checked_by_the_guest(
    peers: Peers,
) -> None:
    async def body() -> None:
        async with peers("host", "guest") as (host, guest):
            rounds = await start_round(host, [guest], "cube", computers=["neuling"])
            await play_out(rounds)
            assert_same_outcome(rounds)
            chain = rounds[1].log()
            computer_moves = [
                e for e in chain if e.kind == "move" and e.pk == host.public_key
            ]
            # the host signs both its own and the computer's moves; the guest replayed the
            # computer's choice itself (RoundState refuses a move the AI would not make).
            assert (
                len(computer_moves) > len([m for m in chain if m.kind == "move"]) // 3
            )

    run(body())


def test_reconnecting_peer_resyncs(peers: Peers, tmp_path: Path) -> None:
    async def body() -> None:
        async with peers("steady", "flaky", log_root=tmp_path) as (steady, flaky):
            rs, rf = await start_round(steady, [flaky], "connect4", start=0)
            notes = rf.events()
            peer_notes = flaky.events()
            await rs.play("4")
            await rf.wait_turn(10)
            await rf.play("4")
            await rs.wait_turn(10)
            # flaky drops off the network; steady moves while it is away
            flaky.transport.interrupt(hold=1.0)
            await eventually(lambda: not flaky.connected, 5, "flaky to notice the loss")
            await rs.play("3")
            assert rf.game is not None and len(rf.game.history()) == 2, (
                "flaky cannot have seen it"
            )
            assert await rf.wait_turn(15)  # reconnect, sync, and it is flaky's turn
            assert rf.game.history() == ["4", "4", "3"]
            resync = None
            while resync is None:
                note = await notes.next(5)
                if isinstance(note, Resynced):
                    resync = note
            assert resync.applied >= 1
            states = []
            while "reconnected" not in states:
                note = await peer_notes.next(5)
                if isinstance(note, ConnectionChanged):
                    states.append(note.state)
            assert states == ["lost", "reconnected"]
            await asyncio.gather(autoplay(rs, first_legal), autoplay(rf, first_legal))
            await rs.wait_over(10)
            await rf.wait_over(10)
            assert_same_outcome([rs, rf])
            assert_log_matches(rs, rf)

    run(body())


def test_broker_restart_mid_round(private_mosquitto: LocalBroker, tmp_path: Path) -> None:
    async def body() -> None:
        url = private_mosquitto.url
        async with Peer(url, nick="one", log_dir=tmp_path / "1") as one, Peer(
            url, nick="two", log_dir=tmp_path / "2"
        ) as two:
            await meet(one, two)
            r1, r2 = await start_round(one, [two], "connect4", start=0)
            await r1.play("1")
            await r2.wait_turn(10)
            await asyncio.to_thread(private_mosquitto.restart, 0.5)
            await r2.play(
                "2"
            )  # published while the broker may still be down: the outbox keeps it
            assert await r1.wait_turn(20)
            assert r1.game.history() == ["1", "2"]
            await asyncio.gather(autoplay(r1, first_legal), autoplay(r2, first_legal))
            await r1.wait_over(10)
            await r2.wait_over(10)
            assert_same_outcome([r1, r2])
            assert_log_matches(r1, r2)

    run(body())


def test_admin_leaving_mid_round_ends_it_the_same_for_everyone(
    peers: Peers, tmp_path: Path
) -> None:
    async def body() -> None:
        async with peers("boss", "x", "y", log_root=tmp_path) as (boss, x, y):
            rounds = await start_round(boss, [x, y], "cube", {"players": 3}, start=0)
            rb, rx, ry = rounds
            for _ in range(2):  # two full turns
                for r in rounds:
                    if await r.wait_turn(10):
                        await r.play(first_legal(r.game))
            await boss.rounds[rb.id].leave()
            for r in (rx, ry):
                await r.wait_over(10)
            # the cube has no resignation: the round ends, the others ranked by points
            assert_same_outcome([rb, rx, ry])
            for r in (rb, rx, ry):
                assert 0 in r.chain_state.left
                assert r.chain_state.admin == x.public_key, (
                    "the admin role passed to the next seat"
                )
                assert 0 not in r.winners
            assert_log_matches(rb, rx, ry)

    run(body())


def test_lobby_presence_last_will_and_busy(broker_url: str) -> None:
    async def body() -> None:
        async with (
            Peer(broker_url, nick="watcher") as watcher,
            Peer(broker_url, nick="drops") as drops,
        ):
            notes = watcher.events()
            await meet(watcher, drops)
            assert watcher.lobby.peers[drops.public_key].label.startswith("drops (")
            drops.transport.interrupt(hold=0.5)  # the broker publishes its Last Will
            went, came = False, False
            while not (went and came):
                note = await notes.next(10)
                if (
                    isinstance(note, PresenceChanged)
                    and note.peer.pk == drops.public_key
                ):
                    went = went or not note.online
                    came = came or (went and note.online)
            assert drops.public_key in watcher.lobby.peers
            # a busy peer declines a second invitation by itself
            async with Peer(broker_url, nick="third") as third:
                await meet(watcher, drops, third)
                await start_round(watcher, [drops], "connect4")
                await eventually(
                    lambda: (
                        (info := third.lobby.peers.get(drops.public_key)) is not None
                        and info.busy
                    ),
                    25,
                    "drops to be shown busy",
                )
                second = await third.invite([drops.peer_id], "connect4")
                await second.wait_over(10)
                assert second.phase is Phase.CANCELLED
                assert "declined" in second.chain_state.end_reason

    run(body(), timeout=90)


def test_private_round_joined_by_code(broker_url: str) -> None:
    async def body() -> None:
        async with (
            Peer(broker_url, nick="host") as host,
            Peer(broker_url, nick="friend1") as f1,
            Peer(broker_url, nick="friend2") as f2,
        ):
            rh = await host.open_private("cube", {"players": 3}, open_seats=2)
            assert rh.code is not None and len(rh.code) == 6
            assert rh.id not in rh.machine.key, "the topic key does not show the round"
            with pytest.raises(ActionError, match="no open round"):
                wrong = "".join("2" if ch != "2" else "3" for ch in rh.code)
                await f2.join(wrong, timeout=1.0)
            r1 = await f1.join(rh.code.lower())  # typed sloppily: case does not matter
            r2 = await f2.join(rh.code)
            rounds = [rh, r1, r2]
            for r in rounds:
                await r.wait_started(30)
            assert {r.my_seat for r in rounds} == {0, 1, 2}
            await play_out(rounds)
            assert_same_outcome(rounds)

    run(body())


def test_chess4_two_humans_two_computers_admin_leaves(peers: Peers) -> None:
    """Four-player chess online: the admin plays the computer seats until it leaves; then
    the next human seat takes over the admin role and the computer seats, and every peer
    (and a late observer replaying the log) ends with the same state."""

    async def body() -> None:
        async with peers("red", "blue") as (red, blue):
            rr, rb = await start_round(
                red, [blue], "chess4", computers=["einfach", "einfach"], start=0
            )
            assert rr.seats[2:] == ["computer (einfach)", "computer (einfach)"]
            play_blue = asyncio.create_task(
                autoplay(rb, computer("einfach"), timeout=60)
            )
            for _ in range(3):  # red's first three moves (computers answer in between)
                assert await rr.wait_turn(20)
                await rr.play(computer("einfach")(rr.game))
            await eventually(
                lambda: len(rb.log()) == len(rr.log()), 10, "blue to catch up"
            )
            before = [e for e in rb.log() if e.kind == "move"]
            signed_by_red = [e for e in before if e.pk == red.public_key]
            assert len(signed_by_red) > 3, (
                "red signed its three moves and the computers' moves"
            )
            await rr.leave()
            await eventually(
                lambda: rb.chain_state.admin == blue.public_key,
                10,
                "the admin role to pass",
            )
            await play_blue
            await rb.wait_over(10)
            assert rb.phase is Phase.OVER and 0 in rb.chain_state.left
            chain = rb.log()
            seal = next(i for i, e in enumerate(chain) if e.kind == "seal")
            after = [e for e in chain[seal:] if e.kind == "move"]
            assert after and all(e.pk == blue.public_key for e in after), (
                "blue signs every later move"
            )
            replayed = verify_chain(rb.log())
            assert replayed.state_hash() == rb.state_hash
            # blue's computers played hundreds of moves in a few seconds; blue publishes at
            # most PUBLISH_RATE_PER_S events a second (the stated rate, docs/brokers.md), so
            # red follows at that pace
            follow_s = 15 + len(rb.log()) / PUBLISH_RATE_PER_S
            await eventually(
                lambda: rr.phase is Phase.OVER and len(rr.log()) == len(rb.log()),
                follow_s,
                f"red to follow ({rr.phase}, {len(rr.log())} of {len(rb.log())} events)",
            )
            assert rr.state_hash == rb.state_hash

    run(body(), timeout=180)


def test_chess4_the_computers_play_on_to_the_end_after_the_only_player_resigns(
    peers: Peers,
) -> None:
    """We resign against three computers: our client plays their moves on to the end of
    the game (one step plays at most ``REACT_STEPS`` of them, the peer's timer goes on),
    and the log replays to the result.  Before, it stopped for good after the first
    ``REACT_STEPS`` duties whenever the game went on longer (most games)."""

    async def body() -> None:
        async with peers("red") as (red,):
            (rr,) = await start_round(  # (most games go past the cap, none past 200 plies)
                red, [], "chess4", {"move_limit": 200}, computers=["einfach"] * 3, start=0
            )
            assert await rr.wait_turn(20)
            await rr.resign()
            await rr.wait_over(60)
            assert rr.phase is Phase.OVER and rr.chain_state.resigned == [0]
            assert verify_chain(rr.log()).state_hash() == rr.state_hash

    run(body(), timeout=120)


def test_round_logs_replay_offline(broker_url: str, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    from p2p.cli import main as cli

    async def body() -> list:
        async with (
            Peer(broker_url, nick="a", log_dir=tmp_path / "a") as a,
            Peer(broker_url, nick="b", log_dir=tmp_path / "b") as b,
        ):
            await meet(a, b)
            rounds = await start_round(a, [b], "connect4", start=1)
            await play_out(rounds)
            await eventually(lambda: all(r.agreed for r in rounds), 10, "both acks")
            return rounds

    rounds = run(body())
    files = [r.log_path for r in rounds]
    assert all(f is not None and f.exists() for f in files)
    # both peers logged the same chain and both closing acks (in arrival order)
    assert sorted(files[0].read_bytes().split(b"\n")) == sorted(
        files[1].read_bytes().split(b"\n")
    )
    assert sum(b'"kind":"ack"' in x for x in files[0].read_bytes().split(b"\n")) == 2
    assert cli(["replay", str(files[0])]) == 0
    out = capsys.readouterr().out
    assert f"state hash {rounds[0].state_hash}" in out
    assert "verdict: complete and agreed: every member (seats 0, 1)" in out
    lines = files[1].read_bytes().split(b"\n")
    lines[5] = lines[5].replace(b'"move":"', b'"move":"1', 1)  # tamper with one move
    files[1].write_bytes(b"\n".join(lines))
    assert cli(["replay", str(files[1])]) == 2


def test_bad_input_is_one_clear_line_and_changes_nothing(broker_url: str) -> None:
    async def body() -> None:
        with pytest.raises(ActionError, match="namespace"):
            Peer(broker_url, nick="x", namespace="Bad Namespace!")
        with pytest.raises(ActionError, match="bad broker URL"):
            Peer("http://nowhere", nick="x")
        async with Peer(broker_url, nick="p") as p, Peer(broker_url, nick="q") as q:
            await meet(p, q)
            for call, pattern in (
                (p.invite(["nobody"], "connect4"), "no peer 'nobody' online"),
                (p.invite([q.peer_id], "go"), "unknown game"),
                (
                    p.invite([q.peer_id], "cube", computers=["godlike"]),
                    "unknown computer level",
                ),
                (p.say("   "), "empty chat line"),
                (q.join("0OIL10"), "join code"),
            ):
                with pytest.raises(ActionError, match=pattern) as caught:
                    await call
                assert "\n" not in str(caught.value)
            assert p.rounds == {} and not p.busy
            rp, rq = await start_round(p, [q], "connect4", start=0)
            before = rp.state_hash
            for rnd, move, pattern in (
                (rq, "4", "not your turn"),
                (rp, "9", "column 9 does not exist"),
                (rp, "x", "is not a column"),
            ):
                with pytest.raises(ActionError, match=pattern):
                    await rnd.play(move)
            assert rp.state_hash == rq.state_hash == before and rp.game.history() == []
            with pytest.raises(ActionError, match="only the admin"):
                await rq.cancel()
            with pytest.raises(ActionError, match="already in a round"):
                await p.invite([q.peer_id], "connect4")
            await rp.play("4")
            await rq.wait_turn(10)
            assert rq.game.history() == ["4"]

    run(body())


def test_restarted_peer_resumes_from_its_log(broker_url: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from p2p.protocol.identity import Identity

    async def body() -> None:
        me = Identity.from_seed(bytes(range(40, 72)))
        async with Peer(broker_url, nick="stays", log_dir=tmp_path / "stays") as stays:
            first = Peer(broker_url, nick="restarts", identity=me, log_dir=tmp_path)
            await first.start()
            await meet(stays, first)
            rs, rf = await start_round(stays, [first], "connect4", start=0)
            await rs.play("4")
            await rf.wait_turn(10)
            await rf.play("5")
            await rs.wait_turn(10)
            path = rf.log_path
            await first.close()  # the program ends mid-round
            await rs.play("4")  # ... and the round goes on without it
            async with Peer(
                broker_url, nick="restarts", identity=me, log_dir=tmp_path
            ) as again:
                with pytest.raises(ActionError, match="cannot read"):
                    await again.resume(tmp_path / "missing.log")
                # the round key is kept next to the log, for us only
                key_path = path.with_suffix(".key")
                assert key_path.stat().st_mode & 0o777 == 0o600
                (tmp_path / "elsewhere").mkdir()
                alone = tmp_path / "elsewhere" / path.name
                alone.write_bytes(path.read_bytes())
                with pytest.raises(ActionError, match="cannot read the round key"):
                    await again.resume(alone)
                rr = await again.resume(path)
                assert rr.id == rs.id and rr.my_seat == 1
                assert await rr.wait_turn(10)  # synced: it is our turn again
                assert rr.game.history() == ["4", "5", "4"]
                await asyncio.gather(
                    autoplay(rs, first_legal), autoplay(rr, first_legal)
                )
                await rr.wait_over(10)
                await rs.wait_over(10)
                assert_same_outcome([rs, rr])
                lines = path.read_bytes().split(b"\n")
                from p2p.protocol.replay import replay_log

                assert replay_log(lines).state.state_hash() == rs.state_hash
                assert_log_matches(rs, rr)

    run(body())
