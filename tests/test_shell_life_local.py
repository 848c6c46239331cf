"""Issue 11 in local play, through the shell's real input: moves never become chat,
a resignation in four-player chess does not freeze the round, /again rotates the start,
and who starts against the computer."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path

from p2p.shell.testing import HeadlessShell


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 90))


def fast_clock(h: HeadlessShell) -> None:
    """Step the controller's clock 1 s per call so the 0.25 s input lock never bites."""
    counter = itertools.count(1000)
    h.controller.clock = lambda: float(next(counter))


async def said(h: HeadlessShell, text: str, timeout: float = 5.0) -> None:
    """Wait until a chat-pane line contains ``text`` (the pane may wrap it on screen)."""
    await h.wait_for(lambda: any(text in line for line in h.controller.state.text_lines()), timeout)


def chat_lines(h: HeadlessShell) -> list[str]:
    """Lines someone sent as chat (a sender is set), not notices."""
    return [line.text for line in h.controller.state.lines if line.sender]


def test_move_shaped_lines_are_moves_or_one_clear_line_never_chat(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with HeadlessShell(config_dir=tmp_path, lang="en", color=False) as h:
            fast_clock(h)
            await h.type_line("/play connect4")
            await h.wait_screen("Round 1 · To move: Red")
            h.send("9")  # a lone digit key: no such column
            await said(h, "There is no column 9 (1–7).")
            h.send("0")
            await said(h, "There is no column 0 (1–7).")
            assert h.shell.input.text == ""
            assert h.controller.match.game.history() == []
            h.send("4")
            await h.wait_for(lambda: h.controller.match.game.history() == ["4"])
            # Wider than 9 columns a move is typed as a line (two digits): the same rule.
            await h.type_line("/play connect4 width=10")
            await h.wait_screen("Round 1 · To move: Red")
            await h.type_line("11")
            await said(h, "There is no column 11 (1–10).")
            await h.type_line("10")
            await h.wait_for(lambda: h.controller.match.game.history() == ["10"])
            # German too, and the cube: a pillar that does not exist.
            await h.type_line("/lang de")
            await h.type_line("/play cube 2p")
            await h.wait_screen("Runde 1 · Am Zug: Rot")
            await h.type_line("e5")
            await said(h, "Es gibt keine Säule e5 (a1–d4).")
            await h.type_line("b2")
            await h.wait_for(lambda: h.controller.match.game.history() == ["b2"])
            assert chat_lines(h) == []

    run(scenario())


def test_chess4_pieces_chosen_and_moved_by_keyboard_never_reach_the_chat(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with HeadlessShell(config_dir=tmp_path, lang="en", color=False, rows=30, columns=100) as h:
            fast_clock(h)
            await h.type_line("/play chess4 2p")
            await h.wait_screen("Round 1 · To move: Red")
            game = lambda: h.controller.match.game
            await h.type_line("Ni3")  # the one knight that reaches i3
            await h.wait_for(lambda: game().history() == ["j1-i3"])
            await h.type_line("b7")  # Blue's own pawn: selected
            await said(h, "Selected the pawn on b7")
            assert h.controller.selected == "b7"
            await h.type_line("d7")  # ... and its target
            await h.wait_for(lambda: game().history() == ["j1-i3", "b7-d7"])
            assert h.controller.selected is None
            await h.type_line("/select g13")  # Yellow: select with the command, then the target
            await h.type_line("g11")
            await h.wait_for(lambda: game().history()[-1] == "g13-g11")
            await h.type_line("i3")  # Green: no own piece there, nothing selected
            await said(h, "No move to i3: select one of your pieces first")
            await h.type_line("Nj3")  # no Green knight reaches j3
            await said(h, "No knight can move to j3.")
            await h.type_line("m20")  # a square shape off the board
            await said(h, "There is no square m20")
            assert len(game().history()) == 3
            # German piece letters: S(pringer) for the knight; B is the pawn (Bauer) there.
            await h.type_line("/lang de")
            await h.type_line("Sl11")  # Green's knight from n10 (the only one that reaches l11)
            await h.wait_for(lambda: game().history()[-1] == "n10-l11")
            await h.type_line("Te5")
            await said(h, "Turm: kein Zug nach e5 möglich.")
            await h.type_line("d2")
            await said(h, "Bauer auf d2 gewählt")
            assert chat_lines(h) == []

    run(scenario())


def test_chess4_resign_lets_the_computers_play_on_and_again_rotates_the_start(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with HeadlessShell(config_dir=tmp_path, lang="en", color=False, rows=30, columns=100) as h:
            fast_clock(h)
            await h.type_line("/play chess4 move_limit=6")
            await h.wait_screen("Round 1 · To move: Red")
            await h.type_line("/resign")
            await said(h, "You resign.")
            match = h.controller.match
            # The round is not over for the three computers: they move on to its end.
            await h.wait_for(lambda: match.game.is_over(), 60)
            screen = await h.wait_screen("Round 1 · over:", 10)
            assert len([m for m in match.game.history() if not m.startswith("resign")]) >= 3
            assert sum("Round 1 over" in line for line in h.controller.state.text_lines()) == 1
            await h.type_line("/again")
            await said(h, "Round 2: Four-player chess, Blue (computer")
            # /again in the middle of a round (a computer thinking) still rotates.
            await h.wait_screen("Round 2 · To move: Red", 60)
            await h.type_line("/again")
            await said(h, "Round 3: Four-player chess, Yellow (computer")
            await h.wait_screen("Round 3 · To move: Red", 60)
            assert "Traceback" not in screen

    run(scenario())


def test_who_starts_against_the_computer(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with HeadlessShell(config_dir=tmp_path, lang="en", color=False) as h:
            fast_clock(h)
            await h.type_line("/play connect4 ai start=me")
            await said(h, "You start every round.")
            await said(h, "Round 1: Connect Four, Red starts.")
            await h.type_line("/resign")
            await said(h, "Round 1 over")
            await h.type_line("/again")
            await said(h, "Round 2: Connect Four, Red starts.")
            await h.type_line("/play connect4 ai start=computer")
            await said(h, "The computer starts every round.")
            await said(h, "Round 1: Connect Four, Yellow (computer")
            await h.wait_for(lambda: h.controller.match.game.history() != [], 20)
            await h.type_line("/play connect4 ai start=whoever")
            await said(h, "start=me|computer|alternate")

    run(scenario())
