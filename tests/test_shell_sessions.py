"""The shell says at once when its key is also online in another session, in both
languages, second person; ``/takeover`` moves the play into this window (issue 17 item 5)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from p2p import keystore
from p2p.protocol.identity import Identity
from p2p.shell.connect import attach
from p2p.shell.testing import HeadlessShell

peer_mod = pytest.importorskip("p2p.peer")

TEXTS = {
    "en": ("Your key is also online in another window", "this window only watches",
           "this window keeps playing", "Your other session took over",
           "You play in this window now", "Your key is online nowhere else"),
    "de": ("Dein Schlüssel ist auch in einer anderen Sitzung online", "schaut nur zu",
           "Dieses Fenster spielt weiter", "Deine andere Sitzung hat übernommen",
           "Du spielst jetzt in diesem Fenster", "Dein Schlüssel ist nirgends sonst online"),
}


@pytest.mark.parametrize("lang", ["en", "de"])
def test_the_shell_tells_of_another_session_and_takes_over(
    tmp_path: Path, broker_url: str, lang: str
) -> None:
    also, watches, plays, took, mine, alone = TEXTS[lang]

    async def scenario() -> None:
        key = Identity.from_seed(os.urandom(32))
        keystore.save(key, tmp_path / keystore.KEY_FILE_NAME)
        async with HeadlessShell(
            config_dir=tmp_path, lang=lang, broker=broker_url, startup=attach(broker_url),
            rows=40, columns=200,
        ) as h:
            await h.wait_for(lambda: h.controller.online is not None, 10)
            await h.type_line("/takeover")
            await h.wait_screen(alone, 10)
            # a second session of our key (another window): this one keeps playing
            other = peer_mod.Peer(broker_url, nick="tester", identity=key)
            await other.start()
            try:
                screen = await h.wait_screen(plays, 10)
                assert also in screen
                await other.take_over()
                await h.wait_screen(took, 10)
                await h.wait_for(lambda: not h.controller.online.peer.acting, 10)
                await h.type_line("/takeover")
                await h.wait_screen(mine, 10)
                await asyncio.sleep(0)
                for _ in range(500):
                    if not other.acting:
                        break
                    await asyncio.sleep(0.02)
                assert not other.acting
            finally:
                await other.close()

    asyncio.run(asyncio.wait_for(scenario(), 60))


@pytest.mark.parametrize("lang", ["en", "de"])
def test_a_later_window_watches_and_says_why(tmp_path: Path, broker_url: str, lang: str) -> None:
    also, watches, *_ = TEXTS[lang]

    async def scenario() -> None:
        key = Identity.from_seed(os.urandom(32))
        keystore.save(key, tmp_path / keystore.KEY_FILE_NAME)
        first = peer_mod.Peer(broker_url, nick="tester", identity=key)
        await first.start()
        try:
            async with HeadlessShell(
                config_dir=tmp_path, lang=lang, broker=broker_url, startup=attach(broker_url),
                rows=40, columns=200,
            ) as h:
                screen = await h.wait_screen(watches, 10)
                assert also in screen
                assert not h.controller.online.peer.acting and first.acting
        finally:
            await first.close()

    asyncio.run(asyncio.wait_for(scenario(), 60))


@pytest.mark.parametrize("lang", ["en", "de"])
def test_a_watching_window_signs_no_lobby_chat(tmp_path: Path, broker_url: str, lang: str) -> None:
    """Issue 26.15: the watching window still sent lobby chat signed with the key the
    other session acts for. It says why and sends nothing; the acting session's chat goes out."""
    _also, watches, *_ = TEXTS[lang]
    why = {"en": "this window watches (/takeover to play here)",
           "de": "dieses Fenster schaut zu (/takeover, um hier zu spielen)"}[lang]

    async def scenario() -> None:
        key = Identity.from_seed(os.urandom(32))
        keystore.save(key, tmp_path / keystore.KEY_FILE_NAME)
        first = peer_mod.Peer(broker_url, nick="tester", identity=key)
        await first.start()
        bob = peer_mod.Peer(broker_url, nick="bob")
        await bob.start()
        heard = bob.events()
        try:
            async with HeadlessShell(
                config_dir=tmp_path, lang=lang, broker=broker_url, startup=attach(broker_url),
                rows=40, columns=200,
            ) as h:
                await h.wait_screen(watches, 10)
                await h.type_line("from the watching window")
                await h.wait_for(lambda: any(why in x for x in h.controller.state.text_lines()), 10)
                await first.say("from the acting session")  # a line that does go out: bob hears it
                said: list[str] = []
                while "from the acting session" not in said:
                    note = await heard.next(10)
                    if isinstance(note, peer_mod.ChatMessage):
                        said.append(note.text)
                assert "from the watching window" not in said, said
                assert not any(line.sender for line in h.controller.state.lines), h.controller.state.text_lines()
        finally:
            await bob.close()
            await first.close()

    asyncio.run(asyncio.wait_for(scenario(), 60))
