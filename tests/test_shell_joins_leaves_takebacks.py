"""Small things a player notices, through the shell's real input on a real Mosquitto:
people already online are not announced as "joined", a leave is not a resignation,
take-back lines use "you" and the ply wording, a lapsed request is said, and a move typed
out of turn is answered with "not your turn" once its shape fits the board."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

from test_shell_life_online import (
    Peer,
    bob_accepts,
    online_shell,
    run,
    said,
    seen_in_lobby,
    status,
)


def test_people_already_online_are_in_the_lobby_not_announced_as_joined(tmp_path: Path, broker_url: str) -> None:
    """Bob was online before we connected (his retained presence): lobby pane only."""

    async def scenario() -> None:
        async with contextlib.AsyncExitStack() as stack:
            for nick in ("bob", "dora", "emil", "fritz", "gert", "hans"):
                await stack.enter_async_context(Peer(broker_url, nick=nick))
            async with online_shell(tmp_path, broker_url) as h:
                await h.wait_screen("Connected to", 10)
                for nick in ("bob", "dora", "emil", "fritz", "gert", "hans"):
                    await seen_in_lobby(h, nick)
                await asyncio.sleep(0.3)
                lines = h.controller.state.text_lines()
                assert not any("joined" in x for x in lines), lines
                async with Peer(broker_url, nick="carol"):  # someone new is still announced
                    await h.wait_for(lambda: any("carol" in x and "joined" in x
                                                 for x in h.controller.state.text_lines()), 10)

    run(scenario())


def test_a_leave_ends_the_round_as_left_not_as_a_resignation(tmp_path: Path, broker_url: str) -> None:
    """Bob /leaves our Connect Four round: the end line says "(left)", not "(resignation)"."""

    async def scenario() -> None:
        async with online_shell(tmp_path, broker_url) as h, Peer(broker_url, nick="bob") as bob:
            await h.wait_screen("Connected to", 10)
            rb = await bob_accepts(h, bob, "connect4 start=me")
            await h.wait_for(lambda: "To move: Red (you)" in status(h), 20)
            h.send("4")
            await rb.wait_turn(20)
            await rb.leave()
            line = await said(h, "Round 1 over")
            assert "(left)" in line and "resignation" not in line, line

    run(scenario())


def test_our_own_take_back_says_you_and_names_the_move_not_a_column_number(tmp_path: Path, broker_url: str) -> None:
    """We /undo our 4 and bob agrees: "Your last move (4) was taken back; you move again."
    (it read "Move 4 by tester taken back; tester moves again"); German with "du"."""

    async def scenario() -> None:
        for lang, asked, done in (
            ("en", "Asked to take back 4", "Your last move (4) was taken back; you move again."),
            ("de", "Bitte um Rücknahme von 4", "Dein letzter Zug (4) wurde zurückgenommen; du bist wieder am Zug."),
        ):
            async with online_shell(tmp_path / lang, broker_url, lang) as h, Peer(broker_url, nick="bob") as bob:
                await h.wait_screen("Connected to" if lang == "en" else "Verbunden mit", 10)
                rb = await bob_accepts(h, bob, "connect4 start=me")
                await h.wait_for(lambda: h.controller.online.round.is_my_turn, 20)
                h.send("4")
                await h.wait_for(lambda rb=rb: rb.game is not None and rb.game.history() == ["4"], 10)
                await h.type_line("/undo")
                await said(h, asked)
                await rb.wait_until(lambda r: r.takeback_asked == 0, 10)
                await rb.accept_takeback()
                line = await said(h, done)
                assert "tester" not in line, line

    run(scenario())


def test_a_take_back_request_the_other_plays_past_is_said_to_have_lapsed(tmp_path: Path, broker_url: str) -> None:
    """We /undo our 4; bob simply plays 5 instead of answering: one line says the request lapsed."""

    async def scenario() -> None:
        async with online_shell(tmp_path, broker_url) as h, Peer(broker_url, nick="bob") as bob:
            await h.wait_screen("Connected to", 10)
            rb = await bob_accepts(h, bob, "connect4 start=me")
            await h.wait_for(lambda: h.controller.online.round.is_my_turn, 20)
            h.send("4")
            await h.wait_for(lambda: rb.game is not None and rb.game.history() == ["4"], 10)
            await h.type_line("/undo")
            await said(h, "Asked to take back 4")
            await rb.wait_until(lambda r: r.takeback_asked == 0, 10)
            await rb.play("5")
            await said(h, "bob played on; your take-back request lapsed.")
            h.send("3")  # and it is said once: our own next move says nothing more
            await h.wait_for(lambda: rb.game.history() == ["4", "5", "3"], 10)
            await asyncio.sleep(0.2)
            assert sum("lapsed" in x for x in h.controller.state.text_lines()) == 1

    run(scenario())


def test_a_move_off_the_board_typed_out_of_turn_says_so_before_the_turn(tmp_path: Path, broker_url: str) -> None:
    """Out of turn, ``9`` on a 7-column board is "no column 9", ``e5`` in the cube "no
    pillar e5"; a move that fits the board is "not your turn"."""

    async def scenario() -> None:
        async with online_shell(tmp_path, broker_url) as h, Peer(broker_url, nick="bob") as bob:
            await h.wait_screen("Connected to", 10)
            rb = await bob_accepts(h, bob, "connect4 start=me")
            await h.wait_for(lambda: h.controller.online.round.is_my_turn, 20)
            h.send("4")
            await h.wait_for(lambda: rb.game is not None and rb.game.history() == ["4"], 10)
            h.send("9")
            await said(h, "There is no column 9 (1–7).")
            h.send("6")
            await said(h, "It is not your turn – 6 was not played.")
            assert not any("9 was not played" in x for x in h.controller.state.text_lines())
            await rb.leave()
            await said(h, "Round 1 over")
            rc = await bob_accepts(h, bob, "cube ai=1 start=me")
            await h.wait_for(lambda: "Round 2 · To move: Red (you)" in status(h), 20)
            rnd = h.controller.online.round
            await h.type_line(rnd.game.legal_moves()[0])
            await h.wait_for(lambda: len(rc.game.history()) == 1, 10)
            await h.type_line("e5")
            await said(h, "There is no pillar e5 (a1–d4).")
            assert not any("e5 was not played" in x for x in h.controller.state.text_lines())

    run(scenario())
