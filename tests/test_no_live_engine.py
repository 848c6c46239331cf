"""No live engine handed out, no copied setting, no stale view (issue 27, item 4)."""

from __future__ import annotations

from pathlib import Path

import pytest
import toy_game
from conftest import first_legal, meet, run, start_round

import p2p.peer
import p2p.peer.config
from p2p.games import register_game, unregister_game
from p2p.games.registry import GameSpec


def test_round_game_is_a_copy_a_bot_cannot_corrupt(broker_url: str, tmp_path: Path) -> None:
    """A bot that pushes on ``round.game`` changes nothing in the round: the next
    ``round.game`` is the round's position again, and play goes on as before."""
    from p2p.peer import Peer

    async def body() -> None:
        async with (
            Peer(broker_url, nick="ann", log_dir=tmp_path / "a") as a,
            Peer(broker_url, nick="ben", log_dir=tmp_path / "b") as b,
        ):
            await meet(a, b)
            ra, rb = await start_round(a, [b], "connect4", start=0)
            before = ra.state_hash
            got = ra.game
            assert got is not None and got is not ra.chain_state.game
            got.push("4")
            got.push("4")
            assert ra.game is not None and ra.game.history() == [] and ra.state_hash == before
            assert ra.chain_state.game is not None and ra.chain_state.game.history() == []
            assert await ra.wait_turn(10)
            await ra.play(first_legal(ra.game))
            await rb.wait_until(lambda r: r.game is not None and len(r.game.history()) == 1, 10)
            assert ra.game.history() == rb.game.history() == ["1"]  # type: ignore[union-attr]
            assert ra.state_hash == rb.state_hash != before
            await ra.resign()

    run(body())


def test_the_package_settings_are_not_copies(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(p2p.peer.config, "OFFLOAD_COMPUTER_MOVES", True)
    assert p2p.peer.OFFLOAD_COMPUTER_MOVES is True
    p2p.peer.OFFLOAD_COMPUTER_MOVES = False
    assert p2p.peer.config.OFFLOAD_COMPUTER_MOVES is False  # what the round links read
    p2p.peer.config.OFFLOAD_COMPUTER_MOVES = True
    assert p2p.peer.OFFLOAD_COMPUTER_MOVES is True
    from p2p.peer import TICK_S

    assert TICK_S == p2p.peer.config.TICK_S
    with pytest.raises(AttributeError):
        p2p.peer.NO_SUCH_SETTING  # noqa: B018


def test_the_view_cache_never_serves_an_unregistered_or_replaced_game() -> None:
    from p2p.shell.game_view import PLAIN, view_for

    register_game(toy_game.SPEC)
    try:
        assert view_for("ttt") is toy_game.VIEW
        unregister_game("ttt")
        assert view_for("ttt") is PLAIN
        register_game(GameSpec("ttt", toy_game.SPEC.engine, toy_game.SPEC.title))  # no view now
        assert view_for("ttt") is PLAIN
        register_game(toy_game.SPEC)
        assert view_for("ttt") is toy_game.VIEW
    finally:
        unregister_game("ttt")
    assert view_for("ttt") is PLAIN
