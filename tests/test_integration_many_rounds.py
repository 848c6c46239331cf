"""Many rounds at once, live on Mosquitto (issue 20 items 3 and 4): a peer in a live round
is "busy" only for live rounds -- it accepts and opens slow rounds beside it -- and a peer
that resumes a slow round the others moved in while it was away is told so
(``MovedWhileAway``), with whether it is now its turn."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from conftest import eventually, invitation, meet, run, start_round

from p2p.peer import ActionError, MovedWhileAway, Peer, Resynced
from p2p.protocol.identity import Identity

DAY_S = 86_400


def test_live_busy_means_a_live_round_and_slow_rounds_go_alongside(tmp_path: Path, broker_url: str) -> None:
    async def body() -> None:
        async with Peer(broker_url, nick="alice", log_dir=tmp_path / "a") as alice, \
                Peer(broker_url, nick="bob") as bob, Peer(broker_url, nick="carol") as carol:
            await meet(alice, bob, carol)
            ra_live, _ = await start_round(carol, [alice], "connect4", start=0)
            await eventually(lambda: alice.busy and alice.lobby.busy, 10, "alice busy")
            # a slow invitation waits for alice's answer (no automatic decline) ...
            slow = await bob.invite([alice.peer_id], "connect4", start=0, turn_limit=DAY_S)
            pending = await invitation(alice, slow.id)
            mine = await pending.accept()  # ... and she may take it while she plays live
            await mine.wait_started(10)
            assert alice.busy and len(alice.rounds) == 2
            # she may open another slow round, but no second live one
            other = await alice.invite([carol.peer_id], "connect4", turn_limit=DAY_S)
            assert other.turn_limit == DAY_S
            with pytest.raises(ActionError, match="already in a round"):
                await alice.invite([carol.peer_id], "connect4")
            # bob's slow round leaves him free; his live invitation is declined for alice
            assert not bob.busy
            live2 = await bob.invite([alice.peer_id], "connect4")
            await live2.wait_over(10)
            assert live2.phase.value == "cancelled" and alice.invitation(live2.id) is None
            # out of the live round: free, though two slow rounds still run
            await ra_live.leave()
            await eventually(lambda: not alice.busy, 10, "alice free")
            assert not mine.is_over and not other.is_over

    run(body())


def test_live_a_resumed_slow_round_says_who_moved_while_we_were_away(tmp_path: Path, broker_url: str) -> None:
    ids = {"alice": Identity.from_seed(b"\x31" * 32), "bob": Identity.from_seed(b"\x32" * 32)}

    async def body() -> None:
        async with Peer(broker_url, nick="bob", identity=ids["bob"]) as bob:
            async with Peer(broker_url, nick="alice", identity=ids["alice"],
                            log_dir=tmp_path) as alice:
                await meet(alice, bob)
                ra, rb = await start_round(alice, [bob], "connect4", start=0, turn_limit=DAY_S)
                await ra.play("4")
                await rb.wait_turn(10)
                log = ra.log_path
                assert log is not None
            await rb.play("3")  # alice is away
            await asyncio.sleep(0.3)  # bob's store on the broker holds it
            async with Peer(broker_url, nick="alice", identity=ids["alice"],
                            log_dir=tmp_path) as alice:
                with alice.events() as notes:
                    rnd = await alice.resume(log)
                    seen: list[object] = []
                    while not any(isinstance(n, MovedWhileAway) for n in seen):
                        seen.append(await notes.next(10))
                moved = next(n for n in seen if isinstance(n, MovedWhileAway))
                assert moved.round is rnd and moved.moves == 1 and moved.your_turn
                assert moved.movers == (ids["bob"].public_key,)
                assert any(isinstance(n, Resynced) and n.round is rnd for n in seen)
                assert rnd.game is not None and rnd.game.history() == ["4", "3"]
                # a move made while we are here is no "moved while you were away"
                with alice.events() as notes:
                    await rnd.play("4")
                    await rb.wait_turn(10)
                    await rb.play("3")
                    await rnd.wait_turn(10)
                    await asyncio.sleep(0.5)
                    later: list[object] = []
                    while True:
                        try:
                            later.append(await notes.next(0.05))
                        except TimeoutError:
                            break
                    assert not any(isinstance(n, MovedWhileAway) for n in later)

    run(body())
