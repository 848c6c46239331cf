"""The words of issue 26.11, in both languages through the real shell: one word for
"online" in the lobby title, no "options: -", a chess4 invitation names its computer
seats, the German chess board says whose pieces "ü" marks, a 2-hour turn is not "1 hour
left", one line for one disconnect, and several unreachable brokers are a list."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from test_shell_life_online import bob_accepts, online_shell, run, said

from p2p.protocol.round import TurnTimeouts
from p2p.shell.connect import attach
from p2p.shell.i18n import Translator
from p2p.shell.settings import Settings
from p2p.shell.testing import HeadlessShell
from p2p.shell.turn_limit import say_time_left

peer_mod = pytest.importorskip("p2p.peer")
Peer = peer_mod.Peer


@pytest.mark.parametrize("lang", ["en", "de"])
def test_an_invitation_names_its_computer_seats_and_no_empty_options(tmp_path: Path, broker_url: str,
                                                                     lang: str) -> None:
    plain, computers = {"en": ("    starter: alice (chosen)", "2 computer seats (easy)"),
                        "de": ("    wer beginnt: alice (gewählt)", "2 Computerplätze (einfach)")}[lang]

    async def scenario() -> None:
        async with Peer(broker_url, nick="alice") as alice, online_shell(tmp_path, broker_url, lang=lang) as h:
            await h.wait_for(lambda: h.controller.online is not None and h.controller.online.connected(), 10)
            my_id = h.controller.online.peer.peer_id
            await h.wait_for(lambda: alice.find_peer(my_id[:8]) is not None, 10)
            await alice.invite([my_id[:8]], "connect4", start=0)
            await said(h, plain)
            assert not any("options: -" in x or "Optionen: -" in x for x in h.controller.state.text_lines())
            await h.type_line("/decline")
            await h.wait_for(lambda: not alice.busy, 10)
            await alice.invite([my_id[:8]], "chess4", computers=["einfach", "einfach"], start=0)
            line = await said(h, computers)
            assert f"{plain.strip()} · {computers}" in line, line

    run(scenario())


@pytest.mark.parametrize(("lang", "title"), [("en", "Lobby club-7 (1 online)"), ("de", "Lobby club-7 (1 online)")])
def test_the_lobby_title_says_online_in_both_kinds_of_lobby(tmp_path: Path, broker_url: str, lang: str,
                                                            title: str) -> None:
    async def scenario() -> None:
        settings = Settings(nick="tester", namespace="club-7")
        async with HeadlessShell(config_dir=tmp_path, lang=lang, broker=broker_url, settings=settings,
                                 startup=attach(broker_url), rows=30, columns=100) as h:
            await h.wait_screen(title, 10)

    asyncio.run(asyncio.wait_for(scenario(), 30))


def test_the_german_chess_board_says_whose_pieces_the_letters_mark(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with HeadlessShell(config_dir=tmp_path, lang="de", rows=30, columns=100, color=False) as h:
            await h.type_line("/play chess4")
            screen = await h.wait_screen("üB", 20)
            assert "r=Rot 0" in screen and "b=Blau 0" in screen and "g=Gelb 0" in screen and "ü=Grün 0" in screen

    asyncio.run(asyncio.wait_for(scenario(), 30))


@pytest.mark.parametrize(("lang", "two", "day"), [("en", "2 hours", "1 day"), ("de", "2 Stunden", "1 Tag")])
def test_a_fresh_two_hour_turn_has_two_hours_left(lang: str, two: str, day: str) -> None:
    t = Translator(lang)
    assert say_time_left(t, 2 * 3600 - 1) == two
    assert say_time_left(t, 2 * 3600 - 1200) == two  # 1 h 40 min
    assert say_time_left(t, 86_400 - 5).startswith("24")
    assert say_time_left(t, 2 * 86_400 - 5) == say_time_left(t, 2 * 86_400)
    assert say_time_left(t, 0).startswith("0")
    assert say_time_left(t, 20).startswith("1 ")  # at least 1 min while any is left
    assert day  # (days are said from a day and a half on)


@pytest.mark.parametrize("lang", ["en", "de"])
def test_one_disconnect_is_one_line(tmp_path: Path, broker_url: str, lang: str) -> None:
    fast = TurnTimeouts(silent_ms=600_000, offline_ms=60_000)
    offline, left = {"en": ("bob went offline", "bob left."), "de": ("bob ist offline gegangen", "bob ist weg.")}[lang]

    async def scenario() -> None:
        async with online_shell(tmp_path, broker_url, lang=lang, peer_options={"turn_timeouts": fast}) as h:
            await h.wait_for(lambda: h.controller.online is not None and h.controller.online.connected(), 10)
            bob = Peer(broker_url, nick="bob", turn_timeouts=fast)
            await bob.start()
            try:
                rb = await bob_accepts(h, bob, "connect4 start=bob")
                await rb.wait_turn(20)
            finally:
                await bob.close()
            await said(h, offline, 10)
            assert not any(x.endswith(left) for x in h.controller.state.text_lines()), h.controller.state.text_lines()

    run(scenario())


@pytest.mark.parametrize(("lang", "joined"), [("en", "mqtt://127.0.0.1:2, mqtt://127.0.0.1:3 and mqtt://127.0.0.1:4"),
                                              ("de", "mqtt://127.0.0.1:2, mqtt://127.0.0.1:3 und mqtt://127.0.0.1:4")])
def test_several_unreachable_brokers_are_a_list(tmp_path: Path, lang: str, joined: str) -> None:
    urls = "mqtt://127.0.0.1:2 mqtt://127.0.0.1:3 mqtt://127.0.0.1:4"

    async def scenario() -> None:
        async with HeadlessShell(config_dir=tmp_path, lang=lang, broker=urls, startup=attach(urls),
                                 rows=30, columns=100) as h:
            await said(h, joined, 15)

    asyncio.run(asyncio.wait_for(scenario(), 30))


@pytest.mark.parametrize(("lang", "left", "wrong"), [("en", "2 hours left", "1 hour left"),
                                                     ("de", "noch 2 Stunden", "noch 1 Stunde")])
def test_a_two_hour_turn_just_begun_is_listed_with_two_hours_left(tmp_path: Path, broker_url: str, lang: str,
                                                                   left: str, wrong: str) -> None:
    """Issue 26.11 through the real shell: ``/rounds`` right after a 2-hour turn began said
    "1 hour left" (rounded down)."""

    async def scenario() -> None:
        async with online_shell(tmp_path, broker_url, lang) as h, Peer(broker_url, nick="bob") as bob:
            await h.wait_for(lambda: h.controller.online is not None and h.controller.online.connected(), 10)
            rb = await bob_accepts(h, bob, "connect4 turn=2h start=me")
            await rb.wait_started(20)
            await h.wait_for(lambda: h.controller.online.round is not None and h.controller.online.round.is_my_turn, 20)
            await h.type_line("/rounds")
            line = await said(h, left, 10)
            texts = h.controller.state.text_lines()
            assert not any(wrong in x for x in texts), line

    run(scenario())
