"""Adding a game is one registry line (``docs/adding-a-game.md``): a toy tic-tac-toe that
exists only in the tests (``tests/toy_game.py``) is registered and then played online
between two real peers on Mosquitto and in the headless shell, with no other change."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest
import toy_game
from conftest import autoplay, computer, eventually, first_legal, meet, run, start_round

from p2p.games import create_game, game_names, register_game, unregister_game


@pytest.fixture()
def toy() -> Iterator[None]:
    """Tic-tac-toe registered for one test, and gone again after it."""
    register_game(toy_game.SPEC)
    try:
        yield
    finally:
        unregister_game("ttt")


def test_the_registry_line_reaches_every_layer(toy: None) -> None:
    from p2p.ai import choose_move, hint, levels
    from p2p.shell.game_view import rules, view_for
    from p2p.shell.i18n import Translator
    from p2p.shell.move_input import looks_like_move, off_board, resolve

    assert "ttt" in game_names()
    game = create_game("ttt")
    assert isinstance(game, toy_game.TicTacToe)
    assert levels("ttt") == toy_game.LEVELS
    for move in "152":
        game.push(move)
    assert choose_move(game, "normal", b"") == "3"  # blocks Red's line 1-2-3
    assert hint(game) == "3"  # no own hint: the strongest level with the hint seed
    assert view_for("ttt") is toy_game.VIEW
    assert looks_like_move("ttt", "5") and not looks_like_move("ttt", "hello")
    assert resolve(game, " 5 ").move == "5"  # type: ignore[union-attr]
    assert off_board(game, "5") is None
    assert rules("ttt", "en")[0] == "Tic-Tac-Toe"
    assert Translator("de").game("ttt") == "Drei gewinnt"


def test_an_unregistered_game_is_unknown_everywhere() -> None:
    from p2p.shell.game_view import PLAIN, view_for

    assert "ttt" not in game_names()
    with pytest.raises(KeyError, match="unknown game 'ttt'"):
        create_game("ttt")
    assert view_for("ttt") is PLAIN


def test_the_toy_game_online_between_two_peers(
    toy: None, broker_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two real peers play it to the end on Mosquitto; both round logs replay offline to
    the same verdict and state."""
    from p2p.cli import main as cli
    from p2p.peer import Peer
    from p2p.protocol.replay import replay_log

    async def body() -> list:
        async with (
            Peer(broker_url, nick="ann", log_dir=tmp_path / "a") as a,
            Peer(broker_url, nick="ben", log_dir=tmp_path / "b") as b,
        ):
            await meet(a, b)
            rounds = await start_round(a, [b], "ttt", start=0)
            await asyncio.gather(autoplay(rounds[0], first_legal), autoplay(rounds[1], computer("normal")))
            for r in rounds:
                await r.wait_over(10)
            await eventually(lambda: all(r.agreed for r in rounds), 10, "both acks")
            return rounds

    rounds = run(body())
    assert {r.state_hash for r in rounds} == {rounds[0].state_hash}
    assert rounds[0].game.name == "ttt" and rounds[0].game.is_over()
    replays = [replay_log(r.log_path.read_bytes().splitlines()) for r in rounds]
    assert {rp.state.state_hash() for rp in replays} == {rounds[0].state_hash}
    assert {rp.state.winners() for rp in replays} == {rounds[0].winners}
    capsys.readouterr()
    for r in rounds:
        assert cli(["replay", str(r.log_path)]) == 0
    out = capsys.readouterr().out
    verdicts = [line for line in out.splitlines() if line.startswith("verdict:")]
    assert len(verdicts) == 2 and verdicts[0] == verdicts[1]
    assert verdicts[0].startswith("verdict: complete and agreed: every member (seats 0, 1)")
    assert out.count(f"state hash {rounds[0].state_hash}") == 2


def fast_clock(h: object) -> None:
    """Step the controller's clock 1 s per call so the 0.25 s input lock never bites."""
    counter = itertools.count(1000)
    h.controller.clock = lambda: float(next(counter))  # type: ignore[attr-defined]


def test_the_toy_game_in_the_shell(toy: None, tmp_path: Path) -> None:
    """``/play ttt`` against the computer to the end, then at one keyboard; ``/rules``."""
    from p2p.shell.testing import HeadlessShell

    async def scenario() -> None:
        async with HeadlessShell(config_dir=tmp_path, lang="en", color=False) as h:
            fast_clock(h)
            await h.type_line("/rules ttt")
            await h.wait_screen("Two players take turns marking a cell 1-9")
            await h.type_line("/play tictactoe ai")
            screen = await h.wait_screen("To move: Red")
            assert "7 8 9" in screen  # the toy view's row labels: its own board picture
            game = h.controller.match.game
            assert game.name == "ttt" and h.controller.match.seats[1].is_computer
            while not game.is_over():
                await h.wait_for(lambda: game.is_over() or not h.controller.match.computer_to_move(), 20)
                if game.is_over():
                    break
                plies = len(game.history())
                await h.type_line(game.legal_moves()[0], settle=0.0)
                await h.wait_for(lambda plies=plies: len(game.history()) > plies, 5)
            await h.wait_screen("over:", 20)
            first = h.controller.match
            await h.type_line("/play ttt 2p")
            await h.wait_for(lambda: h.controller.match is not first, 20)
            game = h.controller.match.game
            assert not any(seat.is_computer for seat in h.controller.match.seats)
            for move in "14253":
                await h.type_line(move, settle=0.0)
            await h.wait_for(game.is_over, 20)
            assert game.winners() == (0,) and game.history() == list("14253")
            assert "over: Red wins" in h.screen()

    run(scenario())
