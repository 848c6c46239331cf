"""Reversi, the fourth game, added by the path of ``docs/adding-a-game.md``: the engine
(with passes: the null move of ``p2p.games.base``), the computer player, the shell view,
online between two real peers on Mosquitto (both logs "complete and agreed") and in the
headless shell against the computer."""

from __future__ import annotations

import asyncio
import itertools
import subprocess
from pathlib import Path

import pytest
from conftest import autoplay, computer, eventually, first_legal, meet, run, start_round
from hypothesis import given, settings
from hypothesis import strategies as st

from p2p.games import create_game, spec
from p2p.games.base import NULL_MOVE, IllegalMove, MalformedMove, MoveError, OptionError
from p2p.games.reversi import Reversi


def _white_will_pass() -> Reversi:
    """6x6, Black a1 b1, White c1 a2, Black to move (d1 or a3); after d1 White has no square.
    Built by hand: not reachable from the start, which is fine for the rules under test."""
    g = Reversi.create({"size": 6})
    g.cells = [-1] * 36
    g.cells[0] = g.cells[1] = 0  # a1 b1 Black
    g.cells[2] = g.cells[6] = 1  # c1 a2 White
    return g


def play_out(game: Reversi, picks: list[int]) -> Reversi:
    for pick in picks:
        legal = game.legal_moves()
        if not legal:
            break
        game.push(legal[pick % len(legal)])
    return game


def test_start_positions_and_first_moves() -> None:
    g8 = Reversi.create()
    assert g8.options() == {"size": 8, "first": 0} and g8.seat_names() == ("Black", "White")
    assert g8.legal_moves() == ["d3", "c4", "f5", "e6"] and g8.scores() == (2, 2)
    g8.push("D3")  # squares are case-insensitive, canonical lower case
    assert g8.history() == ["d3"] and g8.scores() == (4, 1) and g8.to_move() == 1
    g6 = Reversi.create({"size": 6, "first": 1})
    assert g6.to_move() == 1 and len(g6.legal_moves()) == 4
    assert "   a b c d e f" in g6.render()


def test_bad_moves_and_options_are_coded_errors_and_change_nothing() -> None:
    g = Reversi.create({"size": 6})
    before = g.encode()
    for text, error, code in [
        ("g1", MalformedMove, "not_square"), ("a7", MalformedMove, "not_square"), ("xx", MalformedMove, "not_square"),
        ("c3", IllegalMove, "reversi_taken"), ("a1", IllegalMove, "reversi_no_flip"),
        ("pass", IllegalMove, "reversi_no_pass"),
    ]:
        with pytest.raises(error) as err:
            g.push(text)
        assert err.value.code == code, text
    assert g.encode() == before and g.history() == []
    for options, code in [({"size": 7}, "reversi_size"), ({"size": 12}, "option_range"), ({"colour": 1}, "option_unknown")]:
        with pytest.raises(OptionError) as opt:
            Reversi.create(options)
        assert opt.value.code == code


def test_a_seat_without_a_square_passes_with_the_null_move() -> None:
    """The pass is ``NULL_MOVE``: the only legal move then, in the history, replayed,
    taken back by ``pop``; the game ends only when neither seat can place a disc."""
    g = _white_will_pass()
    assert g.to_move() == 0 and g.legal_moves() == ["d1", "a3"]
    g.push("d1")
    assert g.to_move() == 1 and g.legal_moves() == [NULL_MOVE] and not g.is_over()
    with pytest.raises(IllegalMove) as err:
        g.push("e1")
    assert err.value.code == "reversi_must_pass"
    g.push("pass")
    assert g.history() == ["d1", NULL_MOVE] and g.to_move() == 0 and g.legal_moves() == ["a3"]
    g.push("a3")
    assert g.is_over() and g.to_move() is None and g.winners() == (0,) and g.scores() == (6, 0)
    assert g.legal_moves() == []
    assert [g.pop(), g.pop()] == ["a3", NULL_MOVE] and g.to_move() == 1


def test_resignation_comes_from_the_base_class() -> None:
    g = Reversi.create({"size": 6})
    g.push("c2")
    g.resign(0)
    assert g.is_over() and g.winners() == (1,) and g.history() == ["c2", "resign:0"]
    copy = g.copy()
    assert g.pop() == "resign:0" and not g.is_over() and copy.is_over()
    with pytest.raises(IllegalMove):
        g.resign(5)


@settings(max_examples=40, deadline=None)
@given(picks=st.lists(st.integers(0, 1000), max_size=70), size=st.sampled_from([6, 8]), first=st.integers(0, 1))
def test_any_game_replays_and_pops_back_exactly(picks: list[int], size: int, first: int) -> None:
    g = play_out(Reversi.create({"size": size, "first": first}), picks)
    black, white = g.scores()
    passes = g.history().count(NULL_MOVE)
    assert black + white == 4 + len(g.history()) - passes  # every board move adds one disc
    again = Reversi.create(g.options())
    for entry in g.history():
        again.apply(entry)
    assert again.state_hash() == g.state_hash() and again.history() == g.history()
    if g.is_over() and black != white:
        assert g.winners() == ((0,) if black > white else (1,))
    while g.history():
        g.pop()
    assert g.encode() == Reversi.create(g.options()).encode()


def test_the_computer_player_is_pure_seeded_and_passes() -> None:
    from p2p.ai import choose_move, hint, levels
    from p2p.ai.reversi_ai import LEVELS

    assert levels("reversi") == LEVELS == ("neuling", "normal", "stark", "meister")
    g = Reversi.create({"size": 6})
    for level in LEVELS:
        move = choose_move(g, level, b"seed")
        assert move in g.legal_moves() and move == choose_move(g.copy(), level, b"seed")
    assert g.history() == []  # the position was not changed
    assert hint(g) in g.legal_moves()
    g = _white_will_pass()
    g.push("d1")
    assert all(choose_move(g, level, b"") == NULL_MOVE for level in LEVELS)
    # the stronger level wins most of a handful of seeded 6x6 games against the weaker
    won = 0
    for seed in range(4):
        game = Reversi.create({"size": 6, "first": seed % 2})
        while not game.is_over():
            level = "stark" if game.to_move() == 0 else "neuling"
            game.push(choose_move(game, level, bytes([seed, len(game.history())])))
        won += game.winners() == (0,)
    assert won >= 3


def test_the_registry_line_reaches_every_layer() -> None:
    from p2p.shell.commands import usage
    from p2p.shell.game_view import view_for
    from p2p.shell.i18n import Translator
    from p2p.shell.move_input import looks_like_move, off_board, resolve
    from p2p.web.web_view import PLAIN, web_view_for

    assert spec("reversi").aliases == ("othello",)
    game = create_game("reversi", {"size": 6})
    assert looks_like_move("reversi", "d3") and looks_like_move("reversi", "passen")
    assert not looks_like_move("reversi", "hello there")
    assert resolve(game, "Passen").move == NULL_MOVE  # type: ignore[union-attr]
    assert off_board(game, "g1") is not None and off_board(game, "f6") is None
    for lang, text in (("de", "schließt keinen Stein ein"), ("en", "outflanks no disc")):
        t = Translator(lang)
        with pytest.raises(MoveError) as err:
            game.push("a1")
        assert text in t.reason(err.value)
        assert t.seat("Black") in ("Schwarz", "Black")
        assert "d3 · pass" in t.help_lines()[1][0]
        assert "reversi" in t.help_lines()[0][1] and "/play reversi" in t.t("board.none")
    assert "connect4|cube|chess4|reversi" in usage("invite")
    assert view_for("reversi").seat_styles["Black"]
    assert web_view_for("reversi") is PLAIN  # no web view: the plain board


def test_reversi_online_between_two_peers_with_a_pass(
    broker_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two real peers play 6x6 to the end, one seat passing on the way; both round logs
    replay to the same state and ``p2p replay`` calls both complete and agreed."""
    from p2p.cli import main as cli
    from p2p.peer import Peer

    async def body() -> list:
        async with (
            Peer(broker_url, nick="ann", log_dir=tmp_path / "a") as a,
            Peer(broker_url, nick="ben", log_dir=tmp_path / "b") as b,
        ):
            await meet(a, b)
            rounds = await start_round(a, [b], "reversi", {"size": 6}, start=0)
            await asyncio.gather(autoplay(rounds[0], first_legal), autoplay(rounds[1], computer("stark")))
            for r in rounds:
                await r.wait_over(20)
            await eventually(lambda: all(r.agreed for r in rounds), 10, "both acks")
            return rounds

    rounds = run(body())
    game = rounds[0].game
    assert {r.state_hash for r in rounds} == {rounds[0].state_hash}
    assert game.name == "reversi" and game.is_over() and NULL_MOVE in game.history()
    capsys.readouterr()
    for r in rounds:
        assert cli(["replay", str(r.log_path)]) == 0
    out = capsys.readouterr().out
    verdicts = [line for line in out.splitlines() if line.startswith("verdict:")]
    assert len(verdicts) == 2 and verdicts[0] == verdicts[1]
    assert verdicts[0].startswith("verdict: complete and agreed: every member (seats 0, 1)")
    assert out.count(f"state hash {rounds[0].state_hash}") == 2


def test_reversi_in_the_shell_against_the_computer(tmp_path: Path) -> None:
    """``/play reversi ai size=6`` to the end in German, typing squares and ``passen``."""
    from p2p.shell.testing import HeadlessShell

    async def scenario() -> None:
        async with HeadlessShell(config_dir=tmp_path, lang="de", color=False) as h:
            counter = itertools.count(1000)
            h.controller.clock = lambda: float(next(counter))  # the input lock never bites
            await h.type_line("/rules othello")
            await h.wait_screen("(passen)")
            await h.type_line("/play reversi ai neuling size=6")
            await h.wait_screen("Am Zug: Schwarz")
            assert "X Schwarz: 2 Steine" in h.screen() and "O Weiß: 2 Steine" in h.screen()
            match = h.controller.match
            game = match.game
            assert game.name == "reversi" and match.seats[1].is_computer
            await h.type_line("a1")
            await h.wait_screen("keinen Stein ein")
            while not game.is_over():
                await h.wait_for(lambda: game.is_over() or not match.computer_to_move(), 20)
                if game.is_over():
                    break
                plies = len(game.history())
                legal = game.legal_moves()
                await h.type_line("passen" if legal == [NULL_MOVE] else legal[-1], settle=0.0)
                await h.wait_for(lambda plies=plies: len(game.history()) > plies, 10)
            await h.wait_screen("vorbei:", 20)
            assert "/analyze" not in h.screen()  # no review for this game: not offered
            # at one keyboard: Black plays its first square, White its last; on 6x6 this
            # line of play reaches a seat with no square (whoever starts), typed "passen"
            await h.type_line("/play reversi 2p size=6")
            await h.wait_for(lambda: h.controller.match is not match, 20)
            game = h.controller.match.game
            while not game.is_over():
                legal = game.legal_moves()
                plies = len(game.history())
                word = "passen" if legal == [NULL_MOVE] else legal[0 if game.to_move() == 0 else -1]
                await h.type_line(word, settle=0.0)
                await h.wait_for(lambda plies=plies: len(game.history()) > plies, 10)
                if word == "passen":
                    await h.wait_screen("passt.")
            assert NULL_MOVE in game.history()
            await h.wait_screen("vorbei:", 20)

    run(scenario())


def test_no_shared_file_names_reversi() -> None:
    """The fourth game touched no shared module: outside its own modules only the
    registry line (and the README's list) names it."""
    root = Path(__file__).resolve().parents[1]
    own = {"p2p/games/reversi.py", "p2p/ai/reversi_ai.py", "p2p/shell/views/reversi.py", "p2p/games/registry.py"}
    out = subprocess.run(
        ["git", "grep", "-il", "reversi", "--", "p2p"], cwd=root, capture_output=True, text=True, check=False
    )
    if out.returncode > 1:
        pytest.skip("not a git checkout")
    assert set(out.stdout.split()) <= own
