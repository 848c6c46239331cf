"""Slow rounds live on Mosquitto (issue 20): two peers that are never online at the same
time after the invitation play a Connect Four round with a 1-day limit to the end, through
the members' retained stores on the broker (docs/protocol.md §6.7, §9.1)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import invitation, meet, run
from faults import broker_outage

from p2p.peer import Peer
from p2p.protocol.identity import Identity
from p2p.protocol.replay import replay_log
from p2p.protocol.round import Phase

DAY_S = 86_400


async def _session(url: str, name: str, identity: Identity, log_dir: Path, log: Path,
                   other: Identity, column: int) -> str:
    """One visit: connect, resume from the log, wait a few seconds for our turn, move,
    disconnect.  Returns what happened: ``moved``, ``waited`` or ``over``."""
    async with Peer(url, nick=name, identity=identity, log_dir=log_dir) as peer:
        rnd = await peer.resume(log)
        assert peer.find_peer(other.peer_id) is None  # never online together
        try:
            mine = await rnd.wait_turn(3.0)
        except TimeoutError:
            return "waited"
        if mine:
            game = rnd.game
            assert game is not None
            await rnd.play(game.legal_moves()[column])
            return "moved"
        # over: stay a moment so that the acks in the stores are read and ours goes out
        try:
            await rnd.wait_until(lambda r: r.agreed, 3.0)
        except TimeoutError:
            pass
        return "over"


@pytest.mark.slow
def test_live_a_slow_round_between_peers_never_online_together(
    tmp_path: Path, private_mosquitto
) -> None:
    url = private_mosquitto.url
    ids = {"alice": Identity.from_seed(b"\x11" * 32), "bob": Identity.from_seed(b"\x22" * 32)}
    dirs = {name: tmp_path / name for name in ids}

    async def body() -> None:
        async with Peer(url, nick="alice", identity=ids["alice"], log_dir=dirs["alice"]) as alice, \
                Peer(url, nick="bob", identity=ids["bob"], log_dir=dirs["bob"]) as bob:
            await meet(alice, bob)
            rnd = await alice.invite([bob.peer_id], "connect4", start=0, turn_limit=DAY_S)
            pending = await invitation(bob, rnd.id)
            assert pending.turn_limit == DAY_S  # the invitation shows it
            theirs = await pending.accept()
            await rnd.wait_started(10)
            await theirs.wait_started(10)
            assert rnd.phase is Phase.PLAY and rnd.turn_limit == theirs.turn_limit == DAY_S
            logs = {"alice": rnd.log_path, "bob": theirs.log_path}
        # From here on alice and bob are never online at the same time.  Alice plays the
        # first column, bob the second: alice wins with her fourth move (ply 6).
        columns = {"alice": 0, "bob": 1}
        other = {"alice": ids["bob"], "bob": ids["alice"]}
        history: list[tuple[str, str]] = []
        restarted = False
        for visit in range(30):
            name = "alice" if visit % 2 == 0 else "bob"
            assert logs[name] is not None
            what = await _session(url, name, ids[name], dirs[name], logs[name], other[name],
                                  columns[name])
            history.append((name, what))
            moves = sum(1 for _, w in history if w == "moved")
            if moves == 3 and not restarted:  # both offline: the broker forgets everything
                restarted = True
                await broker_outage(private_mosquitto, 0.5)
            verdicts = [replay_log(p.read_bytes().split(b"\n")).verdict for p in logs.values()]  # type: ignore[union-attr]
            if verdicts == ["agreed", "agreed"]:
                break
        else:
            raise AssertionError(f"the round did not end agreed: {history}")
        assert restarted and sum(1 for _, w in history if w == "moved") == 7, history
        results = [replay_log(p.read_bytes().split(b"\n")) for p in logs.values()]  # type: ignore[union-attr]
        a, b = results
        assert a.state.phase is Phase.OVER and a.state.winners() == (0,)
        assert a.state.state_hash() == b.state.state_hash()
        assert a.state.head.id == b.state.head.id
        assert a.verdict == b.verdict == "agreed"

    run(body(), 90)
