"""Turn timeouts on a real broker: a peer that dies mid-round is forfeited by its Last Will."""

from __future__ import annotations

import time
from pathlib import Path

from conftest import Peers, assert_log_matches, first_legal, run, start_round

from p2p.protocol import events
from p2p.protocol.round import Phase, TurnTimeouts, verify_chain

SHORT = TurnTimeouts(silent_ms=8_000, offline_ms=1_500)
"""Shared by every member (chain rules); short so the test takes a few seconds."""


async def play_until_turn_of(rounds: list, seat: int) -> None:
    """Everyone plays its first legal move until ``seat`` is to move."""
    by_seat = {r.my_seat: r for r in rounds}
    for _ in range(20):
        game = rounds[0].game
        if game.to_move() == seat:
            return
        mover = by_seat[game.to_move()]
        ply = len(game.history()) + 1
        assert await mover.wait_turn(10)
        await mover.play(first_legal(mover.game))
        for r in rounds:
            await r.wait_until(lambda r, p=ply: len(r.game.history()) >= p, 10)
    raise AssertionError(f"seat {seat} never came to move")


def test_a_peer_killed_mid_round_is_forfeited_when_its_last_will_fires(
    peers: Peers, tmp_path: Path
) -> None:
    async def body() -> None:
        async with peers(
            "alice", "bob", "carol", turn_timeouts=SHORT, log_root=tmp_path
        ) as (alice, bob, carol):
            rounds = await start_round(
                alice, [bob, carol], "cube", {"players": 3}, start=0
            )
            await play_until_turn_of(rounds, 2)
            await play_until_turn_of(rounds, 1)
            await play_until_turn_of(rounds, 2)
            # carol's connection dies without a leave; the broker publishes her Will
            killed = time.monotonic()
            carol.transport.interrupt(hold=600)
            survivors = rounds[:2]
            for r in survivors:
                await r.wait_over(15)
            took = time.monotonic() - killed
            for r in survivors:
                st = r.chain_state
                assert st.end_reason == "forfeit" and st.forfeited == [2]
                last = r.log()[-1]
                assert last.kind == "forfeit" and last.pk == alice.public_key
                # issue 16: an offline forfeit carries carol's own signed Will
                assert {k: last.body[k] for k in ("seat", "reason")} == {
                    "seat": 2,
                    "reason": "offline",
                }
                will = events.from_value(last.body["evidence"], nested=True)
                assert will.pk == carol.public_key and will.body["status"] == "offline"
                replayed = verify_chain(r.log(), SHORT)
                assert replayed.state_hash() == r.state_hash
                assert replayed.phase is Phase.OVER
                assert 2 not in r.winners
            assert len({r.state_hash for r in survivors}) == 1
            assert len({tuple(e.id for e in r.log()) for r in survivors}) == 1
            assert len({r.winners for r in survivors}) == 1
            # the offline timeout, not the silent one, ended it
            assert took < SHORT.silent_ms / 1000, took
            assert_log_matches(*survivors)  # each log on disk holds that end
            assert_log_matches(rounds[2])  # carol's holds what she saw before her death

    run(body())


def test_the_successor_forfeits_an_admin_killed_on_its_turn(
    peers: Peers, tmp_path: Path
) -> None:
    async def body() -> None:
        async with peers("alice", "bob", turn_timeouts=SHORT, log_root=tmp_path) as (alice, bob):
            ra, rb = await start_round(alice, [bob], "connect4", start=1)
            await play_until_turn_of([ra, rb], 0)
            alice.transport.interrupt(hold=600)
            await rb.wait_over(15)
            st = rb.chain_state
            assert st.end_reason == "forfeit" and st.forfeited == [0]
            assert rb.winners == (1,) and rb.is_admin
            last = rb.log()[-1]
            assert last.pk == bob.public_key and last.body["seat"] == 0
            assert verify_chain(rb.log(), SHORT).state_hash() == rb.state_hash
            assert_log_matches(ra, rb, same_end=False)  # alice died before the end

    run(body())
