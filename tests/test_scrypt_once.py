"""A join code's scrypt runs once per peer and round, and never on the event loop.

scrypt is slow on purpose (docs/protocol.md, private rounds); the round machine used to
derive the code's secret again in its constructor, on the event loop, after opening had
computed it in a thread: a stall of about one link round trip in every private start
(bench/bench_round_trips.py, docs/performance.md).
"""

from __future__ import annotations

import hashlib
import threading
from typing import Any

import pytest
from conftest import invitation, meet, play_out, run

from p2p.peer import Peer


def test_a_private_round_derives_its_code_once_per_peer_off_the_loop(
    broker_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = hashlib.scrypt
    calls: list[str] = []

    def counting(*args: Any, **kwargs: Any) -> bytes:
        calls.append(threading.current_thread().name)
        return plain(*args, **kwargs)

    monkeypatch.setattr(hashlib, "scrypt", counting)

    async def body() -> None:
        loop_thread = threading.current_thread().name
        async with (
            Peer(broker_url, nick="host") as host,
            Peer(broker_url, nick="guest") as guest,
            Peer(broker_url, nick="coder") as coder,
        ):
            await meet(host, guest)
            rh = await host.open_private(
                "cube", {"players": 3}, open_seats=1, peers=[guest.peer_id]
            )
            assert len(calls) == 1, calls  # the host, once
            rg = await (await invitation(guest, rh.id)).accept()
            assert len(calls) == 1, calls  # an invitee has no code: the invitation names the key
            rc = await coder.join(rh.code)
            assert len(calls) == 2, calls  # the joiner, once
            rounds = [rh, rg, rc]
            for r in rounds:
                await r.wait_started(20)
            await play_out(rounds, 20)
            assert len(calls) == 2, calls  # checking the join's proof reuses the host's
            assert loop_thread not in calls, calls

    run(body(), timeout=90)
