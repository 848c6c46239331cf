"""A line shaped like a move is never chat (issue 26.7, docs/shell.md "Input"), in both
languages through the shell's real input: chess from-to with files off the board
(``x9-y3``, ``o5-o6``) is refused like ``a1-a3``, and a number typed with no game on the
board is refused too (it went to lobby chat as "alice: 4")."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from test_shell_life_online import online_shell, run, said, seen_in_lobby

from p2p.shell.testing import HeadlessShell

peer_mod = pytest.importorskip("p2p.peer")
Peer = peer_mod.Peer

NO_SQUARE = {"en": "There is no square {} on this board", "de": "Es gibt kein Feld {} auf diesem Brett"}
NO_GAME = {"en": "No game is running – {} was neither played nor sent as chat",
           "de": "Es läuft kein Spiel – {} wurde weder gezogen noch in den Chat geschickt"}


def chat_lines(h: HeadlessShell) -> list[str]:
    return [line.text for line in h.controller.state.lines if line.sender]


@pytest.mark.parametrize("lang", ["en", "de"])
def test_chess_text_off_the_board_is_refused_not_chat(tmp_path: Path, lang: str) -> None:
    async def scenario() -> None:
        async with HeadlessShell(config_dir=tmp_path, lang=lang, columns=100, rows=30) as h:
            await h.type_line("/play chess4")
            await h.wait_for(lambda: h.controller.match is not None, 20)
            for text, square in (("x9-y3", "x9"), ("o5-o6", "o5"), ("a1-a3", "a1"), ("Nx9-y3", "x9")):
                await h.type_line(text)
                await h.wait_for(lambda square=square: any(NO_SQUARE[lang].format(square) in x
                                                           for x in h.controller.state.text_lines()), 5)
            assert chat_lines(h) == [], chat_lines(h)
            history = h.controller.match.game.history()
            await h.type_line("hello x9")  # words stay chat
            await h.wait_for(lambda: chat_lines(h) == ["hello x9"], 5)
            assert h.controller.match.game.history() == history

    asyncio.run(asyncio.wait_for(scenario(), 60))


@pytest.mark.parametrize("lang", ["en", "de"])
def test_a_number_with_no_game_is_not_lobby_chat(tmp_path: Path, broker_url: str, lang: str) -> None:
    async def scenario() -> None:
        async with Peer(broker_url, nick="alice"), online_shell(tmp_path, broker_url, lang=lang) as h:
            await h.wait_for(lambda: h.controller.online is not None and h.controller.online.connected(), 10)
            await seen_in_lobby(h, "alice")
            await h.type_line("4")
            await said(h, NO_GAME[lang].format("4"))
            await h.type_line("12")
            await said(h, NO_GAME[lang].format("12"))
            await h.type_line("4 in a row?")  # a sentence stays chat
            await h.wait_for(lambda: chat_lines(h) == ["4 in a row?"], 10)
            assert chat_lines(h) == ["4 in a row?"], chat_lines(h)

    run(scenario())
