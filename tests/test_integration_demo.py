"""``p2p demo`` end to end: its own local Mosquitto, scripted peers, identical results."""

from __future__ import annotations

import pytest

from p2p.cli import main as cli


@pytest.mark.parametrize("game", ["connect4", "cube"])
def test_demo_runs_end_to_end(
    game: str, mosquitto, capsys: pytest.CaptureFixture[str]
) -> None:  # type: ignore[no-untyped-def]
    # ``mosquitto`` only makes the test skip (or fail in CI) without mosquitto installed;
    # the demo starts a broker of its own.
    assert cli(["demo", "--game", game, "--seed", "7"]) == 0
    out = capsys.readouterr().out
    assert "local mosquitto" in out
    assert "[chat]" in out and "[draw]" in out and "[move]" in out
    verified = [line for line in out.splitlines() if "[verify]" in line]
    assert len(verified) == (2 if game == "connect4" else 3)
    hashes = {line.rsplit("state hash ", 1)[1] for line in verified}
    assert len(hashes) == 1
    assert "identical on every peer" in out


def test_demo_on_a_given_broker_and_bad_urls(
    mosquitto, capsys: pytest.CaptureFixture[str]
) -> None:  # type: ignore[no-untyped-def]
    assert (
        cli(["demo", "--game", "connect4", "--quiet", "--broker", mosquitto.url]) == 0
    )
    assert "identical on every peer" in capsys.readouterr().out
    assert cli(["demo", "--broker", "gopher://x"]) == 2
    assert "bad broker URL" in capsys.readouterr().err
    assert cli(["demo", "--game", "connect4", "--peers", "3"]) == 2
    assert "--peers applies to the cube only" in capsys.readouterr().err
