"""Results that prove themselves, live: real peers' round logs and what ``p2p replay`` says.

Two peers play Connect Four to the end on a real Mosquitto, each writing its log.  Both
logs hold both closing acknowledgements and replay as "complete and agreed"; a log cut
before the end is "a valid prefix"; the loser's forfeit of the winning move, signed with
its own key and put beside the real log, is refused as a forfeit the rules forbid.
"""

from __future__ import annotations

from conftest import assert_log_matches, eventually, meet, play_out, run, start_round

from p2p.cli import main as cli
from p2p.peer import Peer
from p2p.protocol import events as ev
from p2p.protocol.replay import replay_log
from p2p.protocol.round import DEFAULT_TIMEOUTS


def test_live_logs_are_agreed_and_a_forged_forfeit_beside_them_is_refused(
    broker_url: str, tmp_path, capsys
) -> None:  # type: ignore[no-untyped-def]
    async def body() -> list:
        async with (
            Peer(broker_url, nick="alice", log_dir=tmp_path / "a") as alice,
            Peer(broker_url, nick="bob", log_dir=tmp_path / "b") as bob,
        ):
            await meet(alice, bob)
            rounds = await start_round(alice, [bob], "connect4")
            await play_out(rounds)
            await eventually(lambda: all(r.agreed for r in rounds), 10, "both acks")
            assert_log_matches(*rounds)
            return rounds

    rounds = run(body())
    st = rounds[0].chain_state
    for r in rounds:
        result = replay_log(r.log_path.read_bytes().split(b"\n"))
        assert result.verdict == "agreed" and sorted(result.acks) == [0, 1]
        assert result.state.state_hash() == r.state_hash
    path = rounds[1].log_path
    assert cli(["replay", str(path)]) == 0
    assert "verdict: complete and agreed: every member (seats 0, 1)" in capsys.readouterr().out

    lines = [x for x in path.read_bytes().split(b"\n") if x]
    chain = [x for x in lines if b'"kind":"ack"' not in x]
    prefix = tmp_path / "prefix.log"
    prefix.write_bytes(b"\n".join(chain[:-1]) + b"\n")
    assert cli(["replay", str(prefix)]) == 0
    assert "verdict: a valid prefix" in capsys.readouterr().out

    # the loser signs a forfeit of the winner at the winning move, dated past the limit
    (winner,) = st.winners()
    loser = (rounds[0], rounds[1])[1 - winner]
    win, prev = st.chain[-1], st.chain[-2]

    def forge(reason: str, limit: int) -> ev.Event:
        return ev.make(
            loser.machine.me,
            "forfeit",
            prev.ts + limit + 1_000,
            {"seat": winner, "reason": reason},
            round=win.round,
            seq=win.seq,
            prev=prev.id,
        )

    attacked = tmp_path / "attacked.log"
    forged = forge("offline", DEFAULT_TIMEOUTS.offline_ms)  # without the seat's Will
    attacked.write_bytes(b"\n".join([*chain[:-1], forged.raw, chain[-1]]) + b"\n")
    assert cli(["replay", str(attacked)]) == 2
    err = capsys.readouterr().err
    assert "an offline forfeit needs the seat's signed offline presence" in err
    # rules v3 (issue 23): a forfeit valid by the chain rules beside the game-ending move
    # is weighed by the table: the log keeps the forfeit, but the verdict names both
    forged = forge("silent", DEFAULT_TIMEOUTS.silent_ms)
    attacked.write_bytes(b"\n".join([*chain[:-1], forged.raw, chain[-1]]) + b"\n")
    assert cli(["replay", str(attacked)]) == 0
    out = capsys.readouterr().out
    assert "judged by rules v5" in out
    assert f"complete, but disputed: at position {win.seq} seat {1 - winner} forfeited seat {winner}" in out
