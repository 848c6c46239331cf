"""Take-backs against a third seat, live on Mosquitto: two players who agree with each
other (alice asks, bob -- the next seat -- seals) cannot loop move/take-back against carol.

The second take-back is signed validly by alice and sealed validly by bob, then published
sealed with the round key as a member sends it; every member, carol first, refuses it by
the chain rule "one take-back per seat and round" and the round goes on.
"""

from __future__ import annotations

import time

import aiomqtt
from conftest import Peers, eventually, run, start_round
from test_integration_hostile import expect_rejected

from p2p.protocol import events as ev


def test_live_a_second_take_back_sealed_by_an_accomplice_is_refused_by_the_third_seat(
    peers: Peers, mosquitto
) -> None:
    async def body() -> None:
        async with (
            peers("alice", "bob", "carol") as (alice, bob, carol),
            aiomqtt.Client("127.0.0.1", mosquitto.port, identifier="bob-tool") as tool,
        ):
            ra, rb, rc = await start_round(alice, [bob, carol], "cube", {"players": 3}, start=0)
            rounds = (ra, rb, rc)
            first = ra.game.legal_moves()[0]
            await ra.play(first)
            await rb.wait_until(lambda r: len(r.game.history()) == 1, 10)
            await ra.request_takeback()
            await rb.wait_until(lambda r: r.takeback_asked == 0, 10)
            await rb.accept_takeback()  # the first one is honest and allowed
            await eventually(lambda: all(r.game.history() == [] for r in rounds), 10, "the take-back")
            await ra.play(first)
            await eventually(lambda: all(len(r.game.history()) == 1 for r in rounds), 10, "the move again")

            head = rc.log()[-1]
            ts = max(head.ts, int(time.time() * 1000))
            again = ev.make(alice.identity, "takeback", ts, {"ply": head.body["ply"]},
                            round=rc.id, prev=head.id)
            seal = ev.make(bob.identity, "seal", ts, {"sealed": [again.value()]},
                           round=rc.id, seq=head.seq + 1, prev=head.id)
            notes = carol.events()
            await tool.publish(rb.topic(), rb.sealed(seal.raw), qos=1)
            await expect_rejected(notes, "already taken back a move")
            assert rc.game.history() == [first] and rc.log()[-1].id == head.id

            # the round goes on for everyone on the same chain
            await rb.play(rb.game.legal_moves()[0])
            await eventually(lambda: all(len(r.game.history()) == 2 for r in rounds), 10, "bob's move")
            assert len({r.log()[-1].id for r in rounds}) == 1
            assert len({r.state_hash for r in rounds}) == 1

    run(body(), 60)
