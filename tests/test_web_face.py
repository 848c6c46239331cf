"""The shell's commands, done in the page: ``p2p web`` processes in Debian's Chromium.

What ``/decline``, ``/leave``, ``/unfriend``, ``/nick``, ``/broker`` + ``/connect``,
``/rules``, ``/stats``, ``/analyze`` and ``/hint`` do in the shell, clicked in the page;
each checked on the other side too (a scripted peer on the same Mosquitto sees the
decline, the leave, the new name, the new broker). One browser serves the whole module
(its own event loop, kept for the module), each test opens its own context.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import eventually
from webface import (
    background,
    chromium,
    notifying_page,
    open_page,
    require_browser,
    status,
    wait_status,
    web_process,
)

from p2p import friends as friends_mod
from p2p.peer import Peer, RoundNotice


@pytest.fixture(scope="module")
def browser_loop() -> Iterator[tuple[asyncio.AbstractEventLoop, Any]]:
    """One headless Chromium for the module, on a loop of its own (Playwright's objects
    belong to the loop that made them)."""
    require_browser()
    loop = asyncio.new_event_loop()
    opened = chromium()
    browser = loop.run_until_complete(opened.__aenter__())
    try:
        yield loop, browser
    finally:
        loop.run_until_complete(opened.__aexit__(None, None, None))
        loop.close()


def _run(browser_loop: tuple[asyncio.AbstractEventLoop, Any], body: Coroutine[Any, Any, Any], timeout: float) -> Any:
    loop, _browser = browser_loop
    return loop.run_until_complete(asyncio.wait_for(body, timeout))


async def _settings(page: Any, **fields: str) -> None:
    """Type into the settings form and save it."""
    if not await page.is_visible('#settings-form input[name="nick"]'):
        await page.click("#settings-box summary")
    for name, value in fields.items():
        await page.fill(f'#settings-form input[name="{name}"]', value)
    await page.click('#settings-form button[type="submit"]')


async def _notifications(page: Any, on: bool) -> None:
    """``/notify on|off`` in the settings form, saved."""
    if not await page.is_visible('#settings-form input[name="notifications"]'):
        await page.click("#settings-box summary")
    await page.set_checked('#settings-form input[name="notifications"]', on)
    await page.click('#settings-form button[type="submit"]')
    word = "on:" if on else "off."
    await page.wait_for_selector(f"#log li:has-text('Notifications {word}')", timeout=10_000)
    await page.wait_for_selector(f"body[data-notify={'on' if on else 'off'}]", timeout=10_000)  # the snapshot too


def test_decline_leave_unfriend_nick_rules_stats_and_another_broker(
        browser_loop: Any, broker_url: str, private_mosquitto: Any, tmp_path: Path) -> None:
    """alice in the page, bob a scripted peer: alice renames herself, declines bob's
    invitation (bob's round is called off: declined), befriends and forgets bob, invites
    him, leaves the running round (bob wins it), reads the rules and her statistics, then
    moves to another broker and connects there (bob no longer sees her, carol does)."""
    ns = "web-face"
    _loop, browser = browser_loop

    async def body() -> None:
        async with web_process(tmp_path / "alice", "--broker", broker_url, "--namespace", ns, "--nick", "alice",
                               "--lang", "en") as web, \
                Peer(broker_url, nick="bob", namespace=ns) as bob:
            page = await open_page(browser, web)
            await page.wait_for_selector('#lobby li[data-nick="bob"]', timeout=20_000)
            # /nick: saved at once, the others see it with the next presence (a heartbeat)
            await _settings(page, nick="alicia")
            await page.wait_for_selector("#log li:has-text('You are now called alicia.')", timeout=10_000)
            await page.wait_for_selector("#me:has-text('alicia')", timeout=10_000)  # the page's own name at once
            await eventually(lambda: bob.find_peer("alice") is not None, 20, "alice in bob's lobby")
            alice_pk = bob.find_peer("alice").pk
            # /decline: bob's invitation shown with its options, declined from the page
            offer = await bob.invite([alice_pk], "connect4", {"width": 8})
            row = page.locator(f'[data-invitation="{offer.id}"]')
            await row.wait_for(timeout=20_000)
            assert "width=8" in await row.text_content()
            await row.locator("button.decline").click()
            await offer.wait_over(20)
            assert "declined" in offer.chain_state.end_reason
            await row.wait_for(state="detached", timeout=10_000)
            await page.wait_for_selector("#log li:has-text('Declined: Connect Four')", timeout=10_000)
            # /friend then /unfriend: the saved friends follow
            await page.locator('#lobby li[data-nick="bob"] button').click()
            await page.click("#friends-box summary")
            forget = page.locator('#friends li:has-text("bob") button')
            await forget.wait_for(timeout=10_000)
            assert friends_mod.load(web.config_dir / friends_mod.FILE_NAME).is_friend(bob.public_key)
            await forget.click()
            await page.wait_for_selector("#log li:has-text('is no longer a friend')", timeout=10_000)
            await page.wait_for_selector("#friends li", state="detached", timeout=10_000)  # the next snapshot
            assert not friends_mod.load(web.config_dir / friends_mod.FILE_NAME).is_friend(bob.public_key)
            # /rules of the game in the form, in the page's language
            await page.select_option("#new-game", "connect4")
            await page.click("#btn-rules-form")
            await page.wait_for_selector("#info[data-kind=rules]:has-text('Rules: Connect Four')", timeout=10_000)
            assert "tap or click the column" in await page.text_content("#info")
            # /leave: a running round left from the page; bob holds it as won
            await page.check('#lobby li[data-nick="bob"] input')
            await page.select_option("#new-start", "me")
            await page.click("#btn-invite")
            await eventually(lambda: bool(bob.invitations), 20, "alice's invitation")
            rnd = await bob.invitations[-1].accept()
            await wait_status(page, lambda s: s["my_turn"] == "yes", 20, "alice to start")
            await page.fill("#move-input", "4")
            await page.press("#move-input", "Enter")
            await rnd.wait_turn(20)
            await page.click("#btn-leave")
            await rnd.wait_over(20)
            assert [rnd.chain_state.seats[s].pk for s in rnd.winners] == [bob.public_key]
            await page.wait_for_selector("#log li:has-text('Left the round: Connect Four')", timeout=10_000)
            st = await wait_status(page, lambda s: s["over"] == "yes", 20, "the round over on alice's page")
            assert "Yellow" in st["result"] and "wins" in st["result"], st
            assert await page.locator("#btn-resign").count() == 0
            # the rules of the round on the board: its own button there
            await page.click("#btn-rules")
            await page.wait_for_selector("#info[data-kind=rules]", timeout=10_000)
            # /stats: the finished round with bob, from the signed round log
            await page.click("#btn-stats")
            await page.wait_for_selector("#info[data-kind=stats] .stats-online li:has-text('with bob')", timeout=10_000)
            online = await page.text_content("#info .stats-online")
            assert "1 rounds, 0 won, 1 lost, 0 drawn" in online, online
            assert "no finished round yet" in await page.text_content("#info .stats-local")
            # the new name reached bob with alice's next presence
            await eventually(lambda: bob.find_peer("alicia") is not None, 40, "bob to see the new name")
            # /broker and /connect: the other broker, saved and connected to
            async with Peer(private_mosquitto.url, nick="carol", namespace=ns) as carol:
                await _settings(page, broker=private_mosquitto.url)
                await page.wait_for_selector("#log li:has-text('Brokers saved')", timeout=10_000)
                await page.click("#settings-form button:has-text('Connect')")
                await eventually(lambda: carol.find_peer("alicia") is not None, 30, "carol to see alice")
                await eventually(lambda: bob.find_peer("alicia") is None, 30, "alice gone from bob's broker")
                await page.wait_for_selector('#lobby li[data-nick="carol"]', timeout=20_000)
                assert await page.get_attribute("#conn", "data-state") == "connected"
            saved = (web.config_dir / "web.json").read_text()
            assert private_mosquitto.url in saved and '"alicia"' in saved

    _run(browser_loop, body(), 150)


def test_analysis_text_hint_rules_and_statistics_here(browser_loop: Any, tmp_path: Path) -> None:
    """At one page, no network: a hint against the computer, a resignation counted in the
    statistics; then a hot-seat Connect Four round to its end, the solver's review as a
    chart and as the shell's lines (each move, the decisive one, the count of mistakes),
    in German after switching."""
    _loop, browser = browser_loop

    async def body() -> None:
        async with web_process(tmp_path / "anna", "--local", "--lang", "en") as web:
            page = await open_page(browser, web)
            await page.select_option("#new-game", "connect4")
            await page.select_option("#local-seat1", "neuling")
            await page.click("#btn-local")
            await wait_status(page, lambda s: s["my_turn"] == "yes", 10, "our turn")
            await page.click("#btn-hint")
            hint = await page.wait_for_selector("#log li:has-text('Hint: ')", timeout=20_000)
            assert (await hint.text_content()).split("Hint: ")[1].strip() in "1234567"
            await page.click("#btn-resign")
            await wait_status(page, lambda s: s["over"] == "yes", 10, "the resignation")
            await page.click("#btn-stats")
            await page.wait_for_selector("#info[data-kind=stats] .stats-local li:has-text('Connect Four')", timeout=10_000)
            assert "Connect Four, beginner: 0 won, 1 lost, 0 drawn" in await page.text_content("#info .stats-local")
            # hot-seat to Red's four in column 1 (not counted in the statistics)
            await page.select_option("#local-seat1", "")
            await page.click("#btn-local")
            for move in "1212121":
                await wait_status(page, lambda s: s["my_turn"] == "yes", 10, "a person to move")
                before = (await status(page))["moves"]
                await asyncio.sleep(0.3)  # the 0.25 s input lock against a double tap (a wait by design)
                await page.fill("#move-input", move)
                await page.press("#move-input", "Enter")
                await wait_status(page, lambda s, b=before: s["moves"] != b, 10, f"{move} played")
            await wait_status(page, lambda s: s["over"] == "yes", 10, "the end")
            await page.click("#btn-analysis")
            lines = page.locator("#analysis-text li")
            await page.wait_for_selector("#analysis-text li.summary", timeout=30_000)
            texts = await lines.all_text_contents()
            assert len([x for x in texts if x.startswith("Move ")]) == 7, texts
            assert texts[6].startswith("Move 7 Red 1: keeps a win"), texts  # the winning drop, exact
            assert "Yellow 2: loses" in texts[5], texts  # Yellow's last drop let the four through
            moves = [x for x in texts if x.startswith("Move ")]
            mistakes = sum("mistake" in x for x in moves)
            estimated = sum("probable mistake" in x for x in moves)
            assert mistakes >= 1, texts
            summary = next(x for x in texts if x.startswith("Analysis done"))
            if estimated:
                plural = "1 mistake" if mistakes == 1 else f"{mistakes} mistakes"
                assert summary == f"Analysis done: {plural}, {estimated} of them estimated.", texts
            else:
                assert summary == ("Analysis done: 1 mistake." if mistakes == 1 else f"Analysis done: {mistakes} mistakes."), texts
            assert await page.locator("#chart:not([hidden]) > *").count() > 0
            # the language switched: the review and the statistics still shown are said in German
            await page.click("#lang")
            await wait_status(page, lambda s: "gewinnt" in s["result"], 10, "German")
            await page.wait_for_selector("#analysis-text li:has-text('Zug 7 Rot 1: hält den Sieg')", timeout=10_000)
            await page.wait_for_selector("#info .stats-local li:has-text('0 gewonnen, 1 verloren')", timeout=10_000)
            # and the rules, asked for in German, come in German
            await page.click("#btn-rules")
            await page.wait_for_selector("#info[data-kind=rules]:has-text('Regeln: Vier in einer Reihe')", timeout=10_000)

    _run(browser_loop, body(), 120)


def test_a_round_called_off_and_a_private_round_started_now_with_who_joined(
        browser_loop: Any, broker_url: str, tmp_path: Path) -> None:
    """``/cancel`` and ``/start now`` from the page: an invitation bob leaves unanswered is
    called off (bob's invitation goes away); then a private cube round for three, bob
    joins by its code, and *Start now* plays it with the two of them (bob gets a direct
    invitation to a two-seat cube round, and the board comes up on both sides)."""
    import re

    ns = "web-face-start"
    _loop, browser = browser_loop

    async def body() -> None:
        async with web_process(tmp_path / "alice", "--broker", broker_url, "--namespace", ns, "--nick", "alice",
                               "--lang", "en") as web, \
                Peer(broker_url, nick="bob", namespace=ns) as bob:
            page = await open_page(browser, web)
            await page.wait_for_selector('#lobby li[data-nick="bob"] input', timeout=20_000)
            await page.check('#lobby li[data-nick="bob"] input')
            await page.select_option("#new-game", "connect4")
            await page.click("#btn-invite")
            await eventually(lambda: bool(bob.invitations), 20, "bob's invitation")
            await page.click("#btn-cancel", timeout=10_000)
            await eventually(lambda: not bob.invitations, 20, "the invitation called off")
            await wait_status(page, lambda s: s["over"] == "yes", 10, "the called-off round shown as over")
            # a private round behind a code; bob joins by it; alice starts with who is there
            await page.uncheck('#lobby li[data-nick="bob"] input')
            await page.select_option("#new-game", "cube")
            await page.fill("#opt-players", "3")
            await page.fill("#new-open", "2")
            await page.select_option("#new-start", "me")
            await page.click("#btn-private")
            st = await wait_status(page, lambda s: "Code" in s["status"], 20, "the code")
            code = re.search(r"Code for friends: (\w{3}) (\w{3})", st["status"])
            assert code is not None, st
            joined = await bob.join(code.group(1) + code.group(2), timeout=20)
            assert joined.phase.value == "forming"
            await page.click("#btn-start-now", timeout=10_000)
            await eventually(lambda: any(i.game == "cube" for i in bob.invitations), 20, "the direct invitation")
            offer = next(i for i in bob.invitations if i.game == "cube")
            rnd = await offer.accept()
            st = await wait_status(page, lambda s: s["my_turn"] == "yes", 30, "the started round")
            assert st["round_no"] == "1"
            # the page's start reaches bob's peer a moment after the page shows it
            await eventually(lambda: rnd.game is not None, 20, "bob to hold the started round")
            assert rnd.game is not None and rnd.game.players == 2
            await page.fill("#move-input", "b2")
            await page.press("#move-input", "Enter")
            await eventually(lambda: rnd.game is not None and rnd.game.history() == ["b2"], 20, "bob to see b2")

    _run(browser_loop, body(), 120)


def test_take_backs_declined_both_ways_then_another_round_asked_by_a_member(
        browser_loop: Any, broker_url: str, tmp_path: Path) -> None:
    """bob invites alice and starts. A take-back declined both ways, each side told at
    once: bob asks, alice declines in the page (bob gets the signed decline); alice asks,
    bob declines (alice's page says so). Then bob resigns, and ``/again`` is not the
    admin's alone (as in the shell): alice's *Another round* invites bob to the same seats
    with the next seat (alice) starting, and her page shows round 2, the score carried on.
    On the way, ``/notify``: with notifications off in the settings a turn that comes
    while the tab is in the background makes none; switched on, the next one does."""
    ns = "web-face-again"
    _loop, browser = browser_loop

    async def body() -> None:
        async with web_process(tmp_path / "alice", "--broker", broker_url, "--namespace", ns, "--nick", "alice",
                               "--lang", "en") as web, \
                Peer(broker_url, nick="bob", namespace=ns) as bob:
            page = await notifying_page(browser, web)
            await eventually(lambda: bob.find_peer("alice") is not None, 20, "alice in bob's lobby")
            alice_pk = bob.find_peer("alice").pk
            first = await bob.invite([alice_pk], "connect4", {"width": 8}, start=0)
            await page.click(f'[data-invitation="{first.id}"] button.accept', timeout=20_000)
            await _notifications(page, False)
            await background(page, True)
            await first.wait_turn(20)
            await first.play("4")
            # (the your-turn message comes before the snapshot that shows the turn)
            await wait_status(page, lambda s: s["moves"] == "4" and s["my_turn"] == "yes", 20, "bob's move")
            assert await page.evaluate("window.__notes") == [] and not (await page.title()).startswith("●")
            await background(page, False)
            declined: list[Any] = []
            with bob.events() as notes:
                async def listen() -> None:
                    async for note in notes:
                        if isinstance(note, RoundNotice) and note.code == "takeback_declined":
                            declined.append(note)

                listener = asyncio.create_task(listen())
                await first.request_takeback()
                await page.click("#btn-decline-takeback", timeout=15_000)
                await eventually(lambda: bool(declined), 15, "bob told of the decline")
                assert declined[0].params == {"seat": 0, "by": 1}
                assert first.takeback_asked is None and first.game.history() == ["4"]
                listener.cancel()
            await page.wait_for_selector("#log li:has-text('Take-back declined – bob is told at once.')", timeout=10_000)
            await page.wait_for_selector("#takeback-note", state="hidden", timeout=10_000)
            st = await status(page)
            assert st["moves"] == "4" and st["my_turn"] == "yes", st
            await page.fill("#move-input", "5")
            await page.press("#move-input", "Enter")
            await first.wait_turn(20)
            await page.click("#btn-takeback", timeout=10_000)
            await eventually(lambda: first.takeback_asked == 1, 15, "alice's request at bob")
            await first.decline_takeback()
            await page.wait_for_selector("#log li:has-text(\"bob declined to take back alice's last move.\")",
                                         timeout=15_000)
            assert (await status(page))["moves"] == "4 5"
            await _notifications(page, True)
            await background(page, True)
            await first.play("3")
            await wait_status(page, lambda s: s["moves"] == "4 5 3" and s["my_turn"] == "yes", 20, "bob's 3")
            notes = await page.evaluate("window.__notes")
            assert len(notes) == 1 and notes[0][0] == "Your move – p2p" and notes[0][2] == "granted", notes
            assert (await page.title()).startswith("●")
            await background(page, False)
            await first.resign()
            st = await wait_status(page, lambda s: s["over"] == "yes", 20, "bob's resignation")
            assert st["round_no"] == "1" and "alice 1" in st["score"], st
            await page.click("#btn-again")
            await eventually(lambda: bool(bob.invitations), 20, "alice's invitation to another round")
            offer = bob.invitations[-1]
            assert offer.game == "connect4" and offer.options["width"] == 8
            second = await offer.accept()
            st = await wait_status(page, lambda s: s["round_no"] == "2" and s["my_turn"] == "yes", 30,
                                   "round 2, alice (the next seat) to start")
            assert "alice 1" in st["score"] and "bob 0" in st["score"], st
            assert [s.pk for s in second.chain_state.seats] == [bob.public_key, alice_pk]  # colours kept
            await second.wait_started(20)
            assert second.starter == 1 and not second.is_admin

    _run(browser_loop, body(), 90)

