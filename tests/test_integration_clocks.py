"""Rounds and the lobby between real peers whose wall clocks disagree (issue 17, item 1).

Peers run in one process on a real Mosquitto (``conftest.py``); each has its own wall clock,
the real one shifted (``Peer(..., clock=...)``).  A round with any member off by up to
±10 minutes completes with one result for every member, and each member's log replays to
the same verdict; peers see each other in the lobby at ±1 hour.  What each rule reads and in
whose frame: docs/protocol.md, "Time".
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from conftest import assert_log_matches, eventually, meet, play_out, run, start_round

from p2p.peer import Peer, RoundNotice
from p2p.protocol.replay import replay_log
from p2p.protocol.round import Phase, TurnTimeouts

SHORT = TurnTimeouts(silent_ms=60_000, offline_ms=3_000)
MIN = 60_000


class Shifted:
    """A wall clock in integer ms, the real one plus ``offset_ms`` (one per peer)."""

    def __init__(self, offset_ms: int = 0) -> None:
        self.offset_ms = offset_ms

    def __call__(self) -> int:
        return time.time_ns() // 1_000_000 + self.offset_ms


def _peer(url: str, nick: str, offset: int, logs: Path | None = None) -> Peer:
    return Peer(
        url,
        nick=nick,
        clock=Shifted(offset),
        turn_timeouts=SHORT,
        log_dir=logs / nick if logs is not None else None,
    )


async def _round(url: str, offsets: list[int], game: str, logs: Path) -> tuple[list, list]:
    """Admin (offsets[0]) invites the others; all play first legal moves to the end."""
    nicks = ["anna", "bob", "cleo"][: len(offsets)]
    peers = [_peer(url, n, o, logs) for n, o in zip(nicks, offsets, strict=True)]
    told: list[list[str]] = [[] for _ in peers]
    for p in peers:
        await p.start()
    try:
        for i, p in enumerate(peers):
            feed = p.events()

            async def collect(feed=feed, into=told[i]) -> None:  # type: ignore[no-untyped-def]
                async for note in feed:
                    if isinstance(note, RoundNotice):
                        into.append(note.text)

            import asyncio

            asyncio.get_running_loop().create_task(collect())
        await meet(*peers)
        options = {"players": len(peers)} if game == "cube" else None
        rounds = await start_round(peers[0], peers[1:], game, options)
        await play_out(rounds, timeout=20)
        await eventually(lambda: all(r.agreed for r in rounds), 10, "every ack")
        return rounds, told
    finally:
        for p in peers:
            await p.close()


CASES = [
    pytest.param(seat, offset, players, id=f"{who}{offset // 1000:+d}s-{players}seats")
    for who, seat in (("admin", 0), ("guest", 1))
    for offset in (-10 * MIN, -MIN, MIN, 10 * MIN)
    for players in (2, 3)
]


@pytest.mark.parametrize(("seat", "offset", "players"), CASES)
def test_a_round_completes_with_one_clock_off(
    broker_url: str, tmp_path: Path, seat: int, offset: int, players: int
) -> None:
    offsets = [0] * players
    offsets[seat] = offset
    game = "connect4" if players == 2 else "cube"
    rounds, told = run(_round(broker_url, offsets, game, tmp_path), timeout=60)
    assert all(r.phase is Phase.OVER for r in rounds), told
    assert len({r.state_hash for r in rounds}) == 1
    assert len({r.winners for r in rounds}) == 1
    assert len({tuple(e.id for e in r.log()) for r in rounds}) == 1
    verdicts = set()
    for r in rounds:
        result = replay_log(r.log_path.read_bytes().split(b"\n"))
        assert result.state.state_hash() == r.state_hash
        verdicts.add(result.verdict)
    assert verdicts == {"agreed"}
    assert_log_matches(*rounds)
    for lines in told:  # within the tolerance nobody is told of a cancel or a wait
        assert not any("cancel" in t or "expired" in t or "waits" in t for t in lines), told


@pytest.mark.parametrize("offset", [-60 * MIN, 60 * MIN], ids=["-1h", "+1h"])
@pytest.mark.parametrize("first", ["shifted", "true"])
def test_peers_see_each_other_in_the_lobby_an_hour_apart(
    broker_url: str, offset: int, first: str
) -> None:
    """Whoever connects first, the other sees it from its retained presence (its age comes
    with it, MQTT v5 expiry) or its live one, and knows its clock within a few seconds."""

    async def body() -> None:
        shifted = _peer(broker_url, "bob", offset)
        true = _peer(broker_url, "anna", 0)
        order = [shifted, true] if first == "shifted" else [true, shifted]
        await order[0].start()
        try:
            await eventually(lambda: order[0].lobby._echoed, 20, "the first presence stored")
            await order[1].start()
            await meet(true, shifted, timeout=5)
            seen = true.lobby.clocks.offset(shifted.public_key)
            back = shifted.lobby.clocks.offset(true.public_key)
            assert seen is not None and abs(seen - offset) < 2_000
            assert back is not None and abs(back + offset) < 2_000
        finally:
            for p in order:
                await p.close()

    run(body(), timeout=30)
