"""The shell in local play, driven headlessly through its real input (pipe) and screen."""

from __future__ import annotations

import asyncio
import itertools
import json
from pathlib import Path

import pytest

from p2p.shell.settings import Settings, load
from p2p.shell.testing import HeadlessShell


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 60))


def fast_clock(h: HeadlessShell) -> None:
    """Step the controller's clock 1 s per call so the 0.25 s input lock never bites."""
    counter = itertools.count(1000)
    h.controller.clock = lambda: float(next(counter))


def test_connect4_two_players_at_one_keyboard_to_the_end(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with HeadlessShell(config_dir=tmp_path, lang="de", color=False) as h:
            await h.type_line("/play connect4")
            screen = await h.wait_screen("Runde 1 · Am Zug: Rot")
            assert "1 2 3 4 5 6 7" in screen
            # A lone digit plays at once; a double press inside the lock does not
            # play for the other side.
            h.send("44")
            await h.wait_for(lambda: h.controller.match.game.history() == ["4"])
            await asyncio.sleep(0.1)
            assert h.controller.match.game.history() == ["4"]
            assert "Zu schnell" in h.screen()
            for col in "545454":
                await asyncio.sleep(0.3)
                h.send(col)
            screen = await h.wait_screen("Runde 1 · vorbei: Rot gewinnt")
            assert "Stand 1:0" in screen
            # Plain fallback: winning stones upper case, the rest lower case.
            assert "│ · · · X o · · │" in screen
            assert "│ · · · X · · · │" in screen
            await h.type_line("/again")
            screen = await h.wait_screen("Runde 2 · Am Zug: Gelb")
            assert "Stand 1:0" in screen
            assert "X" not in screen.split("Brett")[-1].split("1 2 3")[0]
            # Undo and a bad move: one line each, state as expected.
            await asyncio.sleep(0.3)
            h.send("1")
            await h.wait_for(lambda: h.controller.match.game.history() == ["1"])
            await h.type_line("/undo")
            await h.wait_for(lambda: h.controller.match.game.history() == [])
            await h.type_line("/play connect4 width=99")
            await h.wait_screen("Ungültige Option")
            assert h.controller.match.round_no == 2

    run(scenario())


def test_connect4_against_the_computer_records_stats(tmp_path: Path) -> None:
    pytest.importorskip("p2p.ai.connect4_ai")

    async def scenario() -> None:
        async with HeadlessShell(config_dir=tmp_path, lang="en") as h:
            fast_clock(h)
            from p2p.ai import levels

            level = levels("connect4")[0]
            await h.type_line(f"/play connect4 ai {level}")
            await h.wait_screen("To move: Red")
            game = h.controller.match.game
            while not game.is_over():
                await h.wait_for(lambda: game.is_over() or (game.to_move() == 0 and not h.controller.local.thinking), 20)
                if game.is_over():
                    break
                plies = len(game.history())
                h.send(game.legal_moves()[0])
                await h.wait_for(lambda plies=plies: len(game.history()) > plies, 5)
            await h.wait_screen("over:", 20)
        stats = json.loads((tmp_path / "shell.json").read_text())["connect4_stats"]
        assert sum(stats[level].values()) == 1

    run(scenario())


def test_cube_to_its_end(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with HeadlessShell(config_dir=tmp_path, lang="en", columns=100, rows=30) as h:
            fast_clock(h)
            try:
                import p2p.ai.cube_ai  # noqa: F401

                await h.type_line("/play cube ai")
                computer = True
            except ImportError:
                await h.type_line("/play cube 2p")
                computer = False
            screen = await h.wait_screen("level 4")
            assert "a b c d" in screen
            # The preview shows where a typed pillar's stone would land.
            h.send("a1")
            await h.wait_screen("Preview a1: level 1")
            h.send("\x7f\x7f")
            game = h.controller.match.game
            while not game.is_over():
                await h.wait_for(lambda: game.is_over() or not h.controller.match.computer_to_move(), 20)
                if game.is_over():
                    break
                await h.type_line(game.legal_moves()[0], settle=0.0)
            screen = await h.wait_screen("over:", 20)
            assert "Points:" in screen
            assert computer or "Yellow" in screen

    run(scenario())


def test_bad_input_is_one_line_and_changes_nothing(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with HeadlessShell(config_dir=tmp_path, lang="en") as h:
            before = len(h.controller.state.lines)
            await h.type_line("/frobnicate now")
            await h.wait_screen("Unknown command: /frobnicate")
            assert len(h.controller.state.lines) == before + 1
            await h.type_line("/play tetris")
            await h.wait_screen("Unknown game tetris")
            assert h.controller.match is None
            await h.type_line("/undo")
            await h.wait_screen("No game is running.")
            await h.type_line("/lang xx")
            await h.wait_screen("Languages: de, en")
            await h.type_line("hello there")
            screen = await h.wait_screen("tester: hello there")
            assert "nobody is reading" in screen
            assert "Traceback" not in screen

    run(scenario())


def test_language_switch_and_settings_persist(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with HeadlessShell(config_dir=tmp_path, lang="en") as h:
            await h.wait_screen("No game")
            await h.type_line("/lang de")
            await h.wait_screen("Kein Spiel")
            await h.type_line("/notify off")
            await h.type_line("/nick Zoe")
            await h.wait_screen("Dein Name ist jetzt Zoe")

    run(scenario())
    settings, corrupt = load(tmp_path)
    assert corrupt is None
    assert (settings.lang, settings.notifications, settings.nick) == ("de", False, "Zoe")


def test_corrupt_settings_give_a_warning_and_defaults(tmp_path: Path) -> None:
    (tmp_path / "shell.json").write_text("{not json", encoding="utf-8")
    settings, corrupt = load(tmp_path)
    assert corrupt is not None and settings == Settings()

    async def scenario() -> None:
        async with HeadlessShell(config_dir=tmp_path, lang="en", settings=settings, corrupt_settings=corrupt) as h:
            screen = await h.wait_screen("Settings unreadable")
            assert "Traceback" not in screen

    run(scenario())


def test_quit_command_ends_the_shell(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with HeadlessShell(config_dir=tmp_path) as h:
            await h.type_line("/quit", settle=0.0)
            await h.wait_for(lambda: h.exit_code == 0)

    run(scenario())


def test_chess4_against_computer_players_to_its_end(tmp_path: Path) -> None:
    pytest.importorskip("p2p.games.chess4")
    pytest.importorskip("p2p.ai.chess4_ai")

    async def scenario() -> None:
        async with HeadlessShell(config_dir=tmp_path, lang="de", columns=100, rows=30) as h:
            fast_clock(h)
            await h.type_line("/play chess4 ai einfach move_limit=12")
            screen = await h.wait_screen("Runde 1 · Am Zug: Rot")
            assert "rK" in screen and "gK" in screen and "yK" not in screen  # German owner letters
            # Selecting a piece shows its legal targets (show_legal is on by default).
            await h.type_line("/select h2")
            await h.wait_screen(" *", 10)  # the next render shows them (CI read the old one)
            game = h.controller.match.game
            while not game.is_over():
                await h.wait_for(lambda: game.is_over() or not h.controller.match.computer_to_move(), 20)
                if game.is_over():
                    break
                await h.type_line(game.legal_moves()[0], settle=0.0)
            screen = await h.wait_screen("vorbei", 20)
            assert "Punkte: r=Rot" in screen
            assert "Letzter Zug:" in screen

    run(scenario())


def test_turn_notification_only_when_unfocused(tmp_path: Path) -> None:
    pytest.importorskip("p2p.games.chess4")

    async def scenario() -> None:
        async with HeadlessShell(config_dir=tmp_path, lang="en", columns=100, rows=30) as h:
            fast_clock(h)
            notifier = h.shell.notifier
            assert "\x1b[?1004h" in h.raw.getvalue()  # focus reporting switched on
            h.send("\x1b[I")  # the terminal reports: focused
            await h.wait_for(lambda: notifier.focused is True)
            await h.type_line("/play chess4 ai einfach")
            await h.wait_screen("To move: Red")
            game = h.controller.match.game

            def red_again(plies: int) -> bool:
                return len(game.history()) >= plies and game.to_move() == 0 and not h.controller.local.thinking

            await h.type_line("h2-h3")
            await h.wait_for(lambda: red_again(4), 20)
            assert notifier.sent == []  # focused: nothing
            h.send("\x1b[O")  # focus lost
            await h.wait_for(lambda: notifier.focused is False)
            assert h.shell.input.text == ""  # the report did not leak into the input line
            # The computer players' replies vary with the match's seed: play a legal move.
            await h.type_line(game.legal_moves()[0])
            await h.wait_for(lambda: red_again(8), 20)
            await h.wait_for(lambda: "desktop" in notifier.sent, 20)
            assert notifier.sent[:2] == ["bell", "desktop"]
            assert "\x1b]777;notify;Your turn;" in h.raw.getvalue()
            await h.type_line("/notify off")
            notifier.sent.clear()
            await h.type_line(game.legal_moves()[0])
            # Red may be mated by the computers' replies before its next turn: over counts too
            await h.wait_for(lambda: red_again(12) or game.is_over(), 20)
            assert notifier.sent == []

    run(scenario())


def test_replay_analysis_rules_and_click(tmp_path: Path) -> None:
    pytest.importorskip("p2p.ai.connect4_ai")

    async def scenario() -> None:
        async with HeadlessShell(config_dir=tmp_path, lang="en") as h:
            fast_clock(h)
            await h.type_line("/rules connect4")
            await h.wait_screen("four own stones in a row")
            await h.type_line("/play connect4")
            await h.wait_screen("To move: Red")
            # A mouse click on a column plays it (SGR mouse: press and release at x, y).
            h.send("\x1b[<0;60;4M\x1b[<0;60;4m")
            await h.wait_for(lambda: len(h.controller.match.game.history()) == 1)
            clicked = h.controller.match.game.history()[0]
            await h.type_line("/hint")  # computed off the UI thread; the screen stays usable
            await h.wait_screen("Hint: ", 20)
            other = "7" if clicked != "7" else "6"
            for col in (other, clicked) * 3:
                await h.type_line(col, settle=0.0)
            await h.wait_screen("over: Red wins")
            await h.type_line("/replay start")
            await h.wait_screen("Replay move 0/")
            await h.type_line("/replay next")
            await h.wait_screen("Replay move 1/")
            await h.type_line("/replay stop")
            h.controller.analysis_nodes = 5_000  # keep the test short; the real default is larger
            await h.type_line("/analyze")
            screen = await h.wait_screen("Analysis done", 30)
            assert "decisive move" in screen or "mistake" in screen or "keeps a win" in screen

    run(scenario())


def test_a_broken_view_shows_one_line_and_the_shell_keeps_working(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async def scenario() -> None:
        async with HeadlessShell(config_dir=tmp_path, lang="en") as h:
            await h.type_line("/play connect4")
            await h.wait_screen("To move: Red")

            def broken() -> tuple[str, str]:
                raise RuntimeError("boom")

            h.controller.status_parts = broken  # a bug in the status line
            h.send("4")
            await h.wait_screen("display error")
            assert "Traceback" not in h.screen() and "boom" not in h.screen()
            assert h.controller.match.game.history() == ["4"]

    run(scenario())
    assert any("render failed: RuntimeError: boom" in r.getMessage() for r in caplog.records)
