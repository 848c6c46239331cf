"""Protocol version 5 on the wire (issue 23: the conflict table changed what makes a log
valid in v3, and the simulator's counterexamples amended it in v4; issue 28: v5 starts the
draw with the invitation); version 1, 2 and 4 round logs still replay (``p2p replay``) by
their own rules (a v4 log with its commit round), version 3 logs by the v4 table."""

from __future__ import annotations

from pathlib import Path

import pytest

from p2p.protocol import canonical, events
from p2p.protocol.identity import Identity
from p2p.protocol.replay import LogError, replay_log
from p2p.protocol.round import Phase, RoundError, RoundState

DATA = Path(__file__).parent / "data" / "v1"
ALICE = Identity.from_seed(b"\x01" * 32)


def lines(name: str) -> list[bytes]:
    return (DATA / name).read_bytes().split(b"\n")


def test_we_sign_version_5() -> None:
    event = events.make(ALICE, "hello", 5, {"nick": "alice", "ns": "p2p/v2/public"})
    assert events.PROTOCOL_VERSION == 5 and event.v == 5
    assert canonical.decode(event.raw)["v"] == 5  # type: ignore[index]


@pytest.mark.parametrize("name", ["v1_connect4.log", "v1_cube_forfeit.log"])
def test_recorded_v1_logs_still_replay(name: str) -> None:
    """Logs recorded by the version-1 code (tests/data/v1) verify with the v1 rules."""
    result = replay_log(lines(name))
    assert result.state.genesis.v == 1
    assert result.state.phase is Phase.OVER
    assert result.state.winners()


def test_a_v1_event_is_refused_live() -> None:
    first = lines("v1_connect4.log")[0]
    assert events.parse(first, legacy=True).v == 1
    with pytest.raises(events.EventError, match="version"):
        events.parse(first)


def test_a_round_holds_events_of_its_own_version_only() -> None:
    v1 = [events.parse(x, legacy=True) for x in lines("v1_connect4.log") if x]
    state = RoundState.from_genesis(v1[0])
    # a v5 event at position 1 of a v1 round (validly signed by the admin) is refused
    start = events.make(
        ALICE, "start", 7, {"sealed": []}, round=v1[0].round, seq=1, prev=v1[0].id
    )
    with pytest.raises(RoundError, match="v5 event in a v1 round"):
        state.apply(start)


def test_a_v1_log_with_a_v5_event_mixed_in_is_refused() -> None:
    log = lines("v1_connect4.log")
    genesis = events.parse(log[0], legacy=True)
    intruder = events.make(
        ALICE, "start", 7, {"sealed": []}, round=genesis.round, seq=1, prev=genesis.id
    )
    with pytest.raises(LogError, match="v5 event in a v1 round"):
        replay_log([log[0], intruder.raw, *log[2:]])


V2 = Path(__file__).parent / "data" / "v2"


def test_a_recorded_v2_log_replays_by_the_rules_of_v2() -> None:
    """Recorded by the version-2 code (tests/data/v2): it still replays, and says which
    rule set judged it; ``p2p replay`` prints that line."""
    result = replay_log((V2 / "v2_connect4.log").read_bytes().split(b"\n"))
    assert result.state.genesis.v == 2 and result.rules == "rules v2"
    assert result.verdict == "agreed" and result.state.winners() == (1,)


def test_a_v2_log_keeps_the_v2_rule_for_a_forfeit_beside_a_winning_move() -> None:
    """What made a v2 log valid stays what it was: a forfeit beside the forfeited seat's
    game-ending move is refused under rules v2 (rules v3 weighs it as a dispute)."""
    with pytest.raises(LogError, match="a forfeit the rules forbid: seat 1's own move there ends the game"):
        replay_log((V2 / "v2_forfeit_beside_the_win.log").read_bytes().split(b"\n"))


def test_replay_names_the_rule_set_it_judged_by(capsys: pytest.CaptureFixture[str]) -> None:
    from p2p.cli import main as cli

    assert cli(["replay", str(V2 / "v2_connect4.log")]) == 0
    assert "judged by rules v2" in capsys.readouterr().out


def test_a_v3_log_replays_by_the_v4_table_and_says_so() -> None:
    """A log the version-3 code wrote (kept in tests/data/replay_corpus, verdicts
    recorded there) still replays; ``p2p replay`` names the table that judged it."""
    import gzip

    from replay_corpus import CORPUS

    for path in sorted(CORPUS.glob("*.log.gz")):
        raw = gzip.decompress(path.read_bytes()).split(b"\n")
        try:
            result = replay_log(raw)
        except LogError:
            continue
        if result.state.genesis.v == 3:
            assert result.rules == "rules v4 (a v3 log)"
            return
    pytest.fail("no v3 log in the replay corpus")


V4 = Path(__file__).parent / "data" / "v4"
"""Logs the version-4 code wrote (commit b524bff, the rounds of
``test_protocol_round.open_round`` with the draw's commit round: a three-seat round
played to an agreed end, and a two-seat round cancelled because a commitment never
reached the admin)."""


def test_a_v4_log_replays_with_its_commit_round_by_the_rules_of_v4() -> None:
    """A log the version-4 code wrote, with the draw's commit round (``commit``s sealed in
    ``commit_close`` after the ``start``), still replays by the rules of v4 and says so."""
    result = replay_log((V4 / "v4_cube3_drawn_agreed.log").read_bytes().split(b"\n"))
    assert result.state.genesis.v == 4 and result.rules == "rules v4"
    assert [e.kind for e in result.chain][:4] == ["genesis", "start", "commit_close", "draw"]
    assert "commit" not in result.state.genesis.body
    assert sorted(result.state.commits) == [0, 1, 2] == sorted(result.state.revealed)
    assert result.verdict == "agreed" and result.state.phase is Phase.OVER
    # the v4 commit timeout: a commitment that never reached the admin cancels the round
    cancelled = replay_log((V4 / "v4_connect4_no_commit.log").read_bytes().split(b"\n"))
    assert cancelled.rules == "rules v4" and cancelled.state.phase is Phase.CANCELLED
    assert cancelled.state.end_reason == "cancelled: seat 1 did not commit to the draw in time"
    assert [e.kind for e in cancelled.chain] == ["genesis", "start", "cancel"]


def test_replay_names_rules_v4_for_a_v4_log(capsys: pytest.CaptureFixture[str]) -> None:
    from p2p.cli import main as cli

    assert cli(["replay", str(V4 / "v4_cube3_drawn_agreed.log")]) == 0
    assert "judged by rules v4" in capsys.readouterr().out


def test_a_v4_commit_round_does_not_fit_a_v5_round() -> None:
    """A v5 round's start closes the commitments: a commit_close after it is refused,
    and the genesis of a v5 round that draws must carry the admin's commitment."""
    body = {"game": "connect4", "options": {}, "seats": [
        {"pk": ALICE.pk_hex, "level": None}, {"pk": "22" * 32, "level": None}],
        "start": None, "expires": 10**9, "private": False}
    bare = events.make(ALICE, "genesis", 0, body, round="7c" * 16, seq=0)
    with pytest.raises(RoundError, match="the genesis carries no commitment to the draw"):
        RoundState.from_genesis(bare)
    named = events.make(ALICE, "genesis", 0, dict(body, start=0, commit="33" * 32),
                        round="7c" * 16, seq=0)
    with pytest.raises(RoundError, match="carries a commitment, but the round draws nothing"):
        RoundState.from_genesis(named)
