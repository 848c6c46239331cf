"""What the shell can do, done in the page: two ``p2p web`` processes in Chromium.

A private round by code, round chat, a take-back asked and allowed, the round to its end
and the solver's chart of it, another round (the score runs on), a resignation, the language switched, and the "your
turn" notification with the tab in the background, then "moved while you were away".
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from conftest import run
from webface import (
    background,
    chromium,
    notifying_page,
    open_page,
    play_when_my_turn,
    require_browser,
    status,
    wait_status,
    web_process,
)


async def _play(page, move: str) -> None:
    before = (await status(page))["moves"]
    await wait_status(page, lambda s: s["my_turn"] == "yes", 20, f"the turn for {move}")
    await page.fill("#move-input", move)
    await page.press("#move-input", "Enter")
    await wait_status(page, lambda s: s["moves"] != before, 20, f"{move} on the board")


def test_private_round_takeback_again_resign_and_notifications(broker_url: str, tmp_path: Path) -> None:
    require_browser()

    async def body() -> None:
        common = ("--broker", broker_url, "--namespace", "web-rounds", "--lang", "en")
        async with web_process(tmp_path / "alice", *common, "--nick", "alice") as wa, \
                web_process(tmp_path / "bob", *common, "--nick", "bob") as wb, chromium() as browser:
            alice = await open_page(browser, wa)
            bob = await notifying_page(browser, wb)  # notifications allowed; the tab goes to the background
            for page in (alice, bob):
                await page.wait_for_selector("#conn[data-state=connected]", timeout=20_000)
            # a private Connect Four round behind a code; bob joins by it
            await alice.select_option("#new-game", "connect4")
            await alice.select_option("#new-start", "me")
            await alice.click("#btn-private")
            st = await wait_status(alice, lambda s: "Code" in s["status"], 20, "the code")
            code = re.search(r"Code for friends: (\w{3}) (\w{3})", st["status"])
            assert code is not None, st
            await bob.click("#join-box summary")
            await bob.fill("#join-code", code.group(1) + code.group(2))
            await bob.press("#join-code", "Enter")
            await wait_status(alice, lambda s: s["my_turn"] == "yes", 30, "the round to start")
            # round chat
            await wait_status(bob, lambda s: s["status"].startswith("Round 1"), 20, "bob's board")
            await bob.select_option("#chat-target", index=1)
            await bob.fill("#chat-input", "good luck <b>alice</b>")
            await bob.press("#chat-input", "Enter")
            await alice.wait_for_selector("#log .chat .text:text('good luck <b>alice</b>')", timeout=15_000)
            assert await alice.locator("#log b").count() == 0  # chat is text, never markup
            # a take-back asked by alice, allowed by bob (the player to move)
            await _play(alice, "4")
            await alice.click("#btn-takeback")
            await bob.click("#btn-allow", timeout=15_000)
            await wait_status(alice, lambda s: s["moves"] == "" and s["my_turn"] == "yes", 15, "the move taken back")
            # the round to its end: alice's four in column 1
            for move, page in zip("1212121", [alice, bob] * 4):
                await _play(page, move)
            for page in (alice, bob):
                st = await wait_status(page, lambda s: s["over"] == "yes", 20, "the end")
                assert "Red" in st["result"] and "wins" in st["result"]
                assert st["round_no"] == "1" and "alice 1" in st["score"] and "bob 0" in st["score"]
            # the solver's evaluation of the finished round, under the board
            await alice.click("#btn-analysis")
            await alice.wait_for_selector("#chart:not([hidden]) > *", timeout=30_000)
            # another round, bob starts; bob's tab is in the background when his turn comes
            assert await bob.evaluate("window.__notes") == []  # his turns in round 1 came while he looked
            await background(bob, True)
            await alice.click("#btn-again")
            await bob.click("[data-invitation] button.accept", timeout=20_000)
            for _ in range(200):  # (no wait_for_function: the page's CSP forbids eval)
                notes = await bob.evaluate("window.__notes")
                if notes:
                    break
                await asyncio.sleep(0.1)
            assert notes[0][0] == "Your move – p2p" and "Connect Four" in notes[0][1], notes
            assert notes[0][2] == "granted"  # the browser's own Notification, allowed for the page
            assert (await bob.title()).startswith("●")
            # back to the tab: the title is restored
            await background(bob, False)
            assert not (await bob.title()).startswith("●")
            st = await wait_status(bob, lambda s: s["my_turn"] == "yes", 20, "bob to start round 2")
            assert st["round_no"] == "2"
            await background(bob, True)
            await play_when_my_turn(bob)
            await _play(alice, "7")
            # bob comes back: the page says alice moved while he was away
            await background(bob, False)
            await bob.wait_for_selector("#banner:not([hidden])", timeout=10_000)
            assert "while you were away" in await bob.text_content("#banner")
            # bob switches to German, then resigns round 2
            await bob.click("#lang")
            await wait_status(bob, lambda s: s["status"].startswith("Runde 2"), 10, "German")
            await bob.click("#btn-resign")
            for page, word in ((alice, "Round 2"), (bob, "Runde 2")):
                st = await wait_status(page, lambda s: s["over"] == "yes", 20, "the resignation")
                assert st["status"].startswith(word)
            st = await wait_status(alice, lambda s: "alice 2" in s["score"], 10, "the score after two rounds")
            assert "bob 0" in st["score"]

    run(body(), 180)


def test_a_restarted_page_process_resumes_the_round_and_says_who_moved(broker_url: str, tmp_path: Path) -> None:
    """``p2p web`` stopped mid-round and started again with the same config dir takes the
    round up from its log; the other player's move made meanwhile is on the board and the
    page says it was made while we were away."""
    require_browser()
    from conftest import eventually

    from p2p.peer import Peer

    async def body() -> None:
        common = ("--broker", broker_url, "--namespace", "web-resume", "--lang", "en", "--nick", "anna")
        async with Peer(broker_url, nick="bob", namespace="web-resume") as bob, chromium() as browser:
            async with web_process(tmp_path / "anna", *common) as web:
                page = await open_page(browser, web)
                await page.wait_for_selector('#lobby li[data-nick="bob"] input', timeout=20_000)
                await page.check('#lobby li[data-nick="bob"] input')
                await page.select_option("#new-game", "connect4")
                await page.select_option("#new-start", "me")
                await page.click("#btn-invite")
                await eventually(lambda: bool(bob.invitations), 20, "bob's invitation")
                rnd = await bob.invitations[-1].accept()
                await _play(page, "4")
                await rnd.wait_turn(20)
                await page.close()
            await rnd.play("5")  # made while anna's process is down
            async with web_process(tmp_path / "anna", *common) as web:
                page = await open_page(browser, web)
                st = await wait_status(page, lambda s: s["moves"] == "4 5" and s["my_turn"] == "yes", 30,
                                       "the resumed round")
                assert st["round_no"] == "1"
                await page.wait_for_selector("#log li:has-text('while you were away')", timeout=20_000)
                await _play(page, "4")
                await eventually(lambda: rnd.game.history() == ["4", "5", "4"], 20, "bob to see the move")

    run(body(), 120)


def test_local_broker_with_a_computer_player_from_the_page(tmp_path: Path) -> None:
    """No internet: the page's /local starts a Mosquitto on this machine with a computer
    player in its lobby; inviting it plays a Connect Four round against it."""
    require_browser()

    async def body() -> None:
        async with web_process(tmp_path / "anna", "--local", "--lang", "en", "--nick", "anna") as web, \
                chromium() as browser:
            page = await open_page(browser, web)
            assert await page.get_attribute("#conn", "data-state") == "offline"
            await page.click("#settings-box summary")
            await page.click("#settings-form button:has-text('Local with computer')")
            await page.wait_for_selector("#conn[data-state=connected]", timeout=30_000)
            await page.wait_for_selector('#lobby li[data-nick="computer"] input', timeout=20_000)
            await page.check('#lobby li[data-nick="computer"] input')
            await page.select_option("#new-game", "connect4")
            await page.select_option("#new-start", "me")
            await page.click("#btn-invite")
            for _ in range(3):
                await wait_status(page, lambda s: s["my_turn"] == "yes", 30, "our turn")
                assert await play_when_my_turn(page)
            st = await wait_status(page, lambda s: len(s["moves"].split()) >= 5, 30, "the computer's answers")
            assert "computer" in await page.text_content("#rounds")
            assert st["round_no"] == "1"

    run(body(), 120)


def test_a_lost_broker_is_shown_and_the_page_comes_back(private_mosquitto, tmp_path: Path) -> None:
    """The broker goes away: the page says the connection is lost and that it reconnects;
    once the broker is back it says connected again. When the process itself goes away,
    the page says that it is reconnecting (to the process)."""
    require_browser()
    from faults import kill_broker

    async def body() -> None:
        async with web_process(tmp_path / "anna", "--broker", private_mosquitto.url, "--nick", "anna",
                               "--lang", "en") as web, chromium() as browser:
            page = await open_page(browser, web)
            await page.wait_for_selector("#conn[data-state=connected]", timeout=20_000)
            await asyncio.to_thread(kill_broker, private_mosquitto)
            await page.wait_for_selector("#conn[data-state=lost]", timeout=30_000)
            assert "reconnecting" in await page.text_content("#conn")
            await asyncio.to_thread(private_mosquitto.restart)
            await page.wait_for_selector("#conn[data-state=connected]", timeout=60_000)
            # the page's own connection: the process goes away, the page says it reconnects
            web.proc.terminate()
            await web.proc.wait()
            await page.wait_for_selector("#banner:not([hidden])", timeout=20_000)
            assert "reconnecting" in await page.text_content("#banner")

    run(body(), 120)


def test_lobby_friends_impostors_and_clocks(broker_url: str, tmp_path: Path) -> None:
    """The lobby as the shell's /who shows it: fingerprints, a friend marked (and kept in
    the config dir), someone else using the friend's name flagged, a clock far off said;
    then another namespace chosen in the settings: a lobby of its own."""
    require_browser()
    from conftest import eventually

    from p2p.peer import Peer, now_ms

    ns = "web-lobby"

    async def body() -> None:
        async with web_process(tmp_path / "anna", "--broker", broker_url, "--namespace", ns, "--nick", "anna",
                               "--lang", "en") as web, \
                Peer(broker_url, nick="bob", namespace=ns, clock=lambda: now_ms() + 600_000) as bob, \
                chromium() as browser:
            page = await open_page(browser, web)
            entry = page.locator('#lobby li[data-nick="bob"]')
            await entry.wait_for(timeout=20_000)
            fp = bob.peer_id[:4]
            text = await entry.text_content()
            assert fp in text.replace(" ", "")
            await page.wait_for_selector('#lobby li[data-nick="bob"]:has-text("clock 10 min ahead")', timeout=20_000)
            await entry.locator("button").click()  # ★ friend
            await page.click("#friends-box summary")
            await page.wait_for_selector('#friends li:has-text("bob")', timeout=10_000)
            from p2p import friends as friends_mod

            saved = friends_mod.load(web.config_dir / friends_mod.FILE_NAME)
            assert saved.is_friend(bob.public_key)
            async with Peer(broker_url, nick="bob", namespace=ns):
                await page.wait_for_selector('#lobby .warn:has-text("not your friend bob")', timeout=20_000)
            # another namespace from the settings: a lobby of its own (saved, reconnected at once)
            assert bob.find_peer("anna") is not None
            await page.click("#settings-box summary")
            await page.fill('#settings-form input[name="namespace"]', ns + "-other")
            await page.click('#settings-form button[type="submit"]')
            await eventually(lambda: bob.find_peer("anna") is None, 30, "anna to leave bob's lobby")
            await page.wait_for_selector("#conn[data-state=connected]", timeout=20_000)
            await page.wait_for_selector("#lobby li.muted", timeout=10_000)  # nobody else there

    run(body(), 90)


def test_a_slow_round_and_a_live_round_listed_with_whose_turn_and_time_left(broker_url: str, tmp_path: Path) -> None:
    """Invitations with every option from the form: a slow Connect Four round (a day per
    move, 8x7, Pop Out) and a live cube round beside it; the list of held rounds says for
    each whose turn it is, how long is left and whether it is slow or live."""
    require_browser()
    from conftest import eventually

    from p2p.peer import Peer

    ns = "web-many"

    async def body() -> None:
        async with web_process(tmp_path / "anna", "--broker", broker_url, "--namespace", ns, "--nick", "anna",
                               "--lang", "en") as web, \
                Peer(broker_url, nick="bob", namespace=ns) as bob, chromium() as browser:
            page = await open_page(browser, web)
            await page.wait_for_selector('#lobby li[data-nick="bob"] input', timeout=20_000)
            await page.check('#lobby li[data-nick="bob"] input')
            await page.select_option("#new-game", "connect4")
            await page.fill("#opt-width", "8")
            await page.fill("#opt-height", "7")
            await page.check("#opt-popout")
            await page.fill("#new-turn", "1d")
            await page.select_option("#new-start", "me")
            await page.click("#btn-invite")
            await eventually(lambda: bool(bob.invitations), 20, "the slow invitation")
            slow = bob.invitations[-1]
            assert slow.turn_limit == 86_400 and slow.options["width"] == 8 and slow.options["popout"] is True
            await slow.accept()
            await page.wait_for_selector("#rounds li[data-turn=me]", timeout=20_000)
            await page.select_option("#new-game", "cube")
            await page.fill("#new-turn", "")
            await page.select_option("#new-start", bob.public_key.hex())  # bob starts the live one
            await page.click("#btn-invite")
            await eventually(lambda: len(bob.invitations) == 1 and bob.invitations[0].game == "cube", 20,
                             "the live invitation")
            await bob.invitations[0].accept()
            rows = page.locator("#rounds li")
            await page.wait_for_selector("#rounds li:has-text('3D Connect Four')", timeout=20_000)
            await page.wait_for_selector("#rounds li:has-text('bob to move')", timeout=20_000)
            texts = await rows.all_text_contents()
            c4 = next(t for t in texts if "Connect Four" in t and "3D" not in t)
            cube = next(t for t in texts if "3D Connect Four" in t)
            assert "your turn" in c4 and "slow (1 d per move)" in c4 and "left" in c4, c4
            assert "bob to move" in cube and "live" in cube and "left" in cube, cube

    run(body(), 90)


def test_a_second_session_of_the_key_watches_until_it_takes_over(broker_url: str, tmp_path: Path) -> None:
    """The same key open twice (two ``p2p web`` on one config dir): the later one watches
    and says so; "Play here" takes over, and the other one then watches."""
    require_browser()
    common = ("--broker", broker_url, "--namespace", "web-twice", "--nick", "anna", "--lang", "en")

    async def body() -> None:
        async with web_process(tmp_path / "anna", *common) as first, chromium() as browser:
            one = await open_page(browser, first)
            await one.wait_for_selector("#conn[data-state=connected]", timeout=20_000)
            async with web_process(tmp_path / "anna", *common) as second:
                two = await open_page(browser, second)
                await two.wait_for_selector("#watching:not([hidden])", timeout=30_000)
                assert "watches" in await two.text_content("#watching")
                assert await one.is_hidden("#watching")
                await two.click("#btn-takeover")
                await one.wait_for_selector("#watching:not([hidden])", timeout=30_000)
                await two.wait_for_selector("#watching[hidden]", state="attached", timeout=30_000)

    run(body(), 120)
