"""An end that reaches everyone (issue 29.2), live on Mosquitto through ``tests/faults.py``.

Two seats; bob's link is cut on his turn; past the offline grace alice forfeits him and
quits at once -- nobody is online in the round when bob comes back.  Bob learns the end
from alice's retained ending (docs/protocol.md §9.1), ends with her result, and his log
replays "complete and agreed" (her ack came with the ending).  The timeouts are scaled as
in ``tests/test_faults_live.py`` (``offline_ms`` 12 s stands for 3 min; grace 16 s).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import assert_log_matches, eventually, first_legal, meet, run, start_round

from p2p.peer import Peer
from p2p.protocol.replay import replay_log
from p2p.protocol.round import Phase, TurnTimeouts

SCALED = TurnTimeouts(silent_ms=600_000, offline_ms=12_000)


@pytest.mark.slow
def test_live_a_cut_off_guest_learns_the_forfeit_from_the_broker_after_the_admin_quit(
    broker_url: str, link_to: Any, tmp_path: Path
) -> None:
    async def body() -> None:
        async with link_to() as link:
            bob = Peer(link.url, nick="bob", log_dir=tmp_path / "bob", turn_timeouts=SCALED)
            async with bob:
                async with Peer(
                    broker_url, nick="alice", log_dir=tmp_path / "alice", turn_timeouts=SCALED
                ) as alice:
                    await meet(alice, bob)
                    ra, rb = await start_round(alice, [bob], "connect4", start=0)
                    for r in (ra, rb, ra):  # then bob to move
                        await r.wait_turn(10)
                        await r.play(first_legal(r.game))
                    await rb.wait_until(lambda r: r.is_my_turn, 10)
                    link.cut()  # bob's link goes down on his turn
                    await ra.wait_over(90)  # the grace passes: alice forfeits him
                    assert ra.chain_state.head.kind == "forfeit"
                    assert_log_matches(ra)
                    end = (ra.chain_state.head.id, ra.winners, ra.state_hash)
                # alice has quit (her goodbye sent); only now does bob come back
                assert not rb.is_over
                link.heal()
                await eventually(lambda: bob.connected, 30, "bob to reconnect")
                await rb.wait_over(30)
                assert (rb.chain_state.head.id, rb.winners, rb.state_hash) == end
                assert rb.phase is Phase.OVER and rb.winners == (0,)
                await eventually(lambda: len(rb.machine.acks()) == 2, 10, "alice's ack")
                assert_log_matches(rb)
                assert rb.log_path is not None
                result = replay_log(rb.log_path.read_bytes().split(b"\n"), SCALED)
                assert result.verdict == "agreed", result.verdict_text()

    run(body(), 240)
