"""Bad input stops at the door (issue 19), through the headless shell's real input:
broker URLs checked as in the CLI, a damaged key file named with its fix (once, and
/local starts nothing for it), a refused connection reported within two seconds with an
unbroken line, the privacy note for several brokers, and the offline lobby pane."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from p2p.shell.connect import attach, attach_hooks_only, shorten
from p2p.shell.settings import Settings
from p2p.shell.testing import HeadlessShell


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 60))


def lines(h: HeadlessShell) -> list[str]:
    return h.controller.state.text_lines()


async def said(h: HeadlessShell, text: str, timeout: float = 5.0) -> str:
    await h.wait_for(lambda: any(text in line for line in lines(h)), timeout)
    return next(line for line in lines(h) if text in line)


async def hooks(shell) -> None:
    attach_hooks_only(shell)


def test_broker_refuses_what_is_not_a_broker_url_and_keeps_the_setting(tmp_path: Path) -> None:
    """/broker http://foo was saved (and its privacy note marked as shown)."""
    async def scenario(lang: str, expect: str) -> None:
        (tmp_path / lang).mkdir()
        settings = Settings(nick="tester", broker="mqtt://127.0.0.1:1883")
        async with HeadlessShell(config_dir=tmp_path / lang, lang=lang, settings=settings, startup=hooks) as h:
            await h.type_line("/broker http://foo")
            line = await said(h, expect)
            assert "http://foo" in line
            assert h.controller.settings.broker == "mqtt://127.0.0.1:1883"
            await h.type_line("/broker 127.0.0.1:1884 wss://b.example:8084/mqtt")
            assert h.controller.settings.broker == "mqtt://127.0.0.1:1884 wss://b.example:8084/mqtt"
            assert h.controller.settings.public_broker_ok == []

    run(scenario("en", "Bad broker address http://foo"))
    run(scenario("de", "Ungültige Broker-Adresse http://foo"))


def test_a_saved_bad_broker_is_refused_before_any_privacy_note(tmp_path: Path) -> None:
    async def scenario() -> None:
        settings = Settings(nick="tester", broker="http://example.com")
        async with HeadlessShell(config_dir=tmp_path, settings=settings,
                                 startup=attach("http://example.com")) as h:
            await said(h, "Bad broker address http://example.com")
            assert not any("is public" in line for line in lines(h))
            assert h.controller.settings.public_broker_ok == []

    run(scenario())


@pytest.mark.parametrize("content", [b"", b"garbage that is no key"])
def test_a_damaged_key_file_is_named_with_its_fix_once(tmp_path: Path, content: bytes) -> None:
    """An empty identity.key said the broker "cannot be reached (…identity.key is not a
    p2p key file)"; /local said it again after starting a broker."""
    (tmp_path / "identity.key").write_bytes(content)

    async def scenario() -> None:
        async with HeadlessShell(config_dir=tmp_path, startup=attach("mqtt://127.0.0.1:1")) as h:
            line = await said(h, "Your key file")
            assert str(tmp_path / "identity.key") in line and "mv " in line
            assert not any("cannot be reached" in x for x in lines(h))
            await h.type_line("/local")
            await asyncio.sleep(0.3)
            assert sum("Your key file" in x for x in lines(h)) == 2
            assert not any("Starting a local broker" in x for x in lines(h))

    run(scenario())


def test_a_refused_connection_is_reported_within_two_seconds(tmp_path: Path) -> None:
    """It took 8-10 s (the transport retries a refusal until its timeout)."""
    async def scenario() -> None:
        started = time.monotonic()
        async with HeadlessShell(config_dir=tmp_path, startup=attach("mqtt://127.0.0.1:1", timeout=6.0)) as h:
            line = await said(h, "cannot be reached", 6)
            assert time.monotonic() - started < 2.5
            assert "(connection refused)" in line
            assert "offline" in h.controller.status_text()

    run(scenario())


def test_the_unreachable_line_is_never_cut_inside_a_bracket() -> None:
    reason = "cannot connect to any broker (wss://broker.emqx.io:8084/mqtt: [Errno -3] Temporary failure " \
             "in name resolution; wss://broker.hivemq.com:8884/mqtt: [Errno -3] Temporary failure)"
    short = shorten(reason, 120)
    assert len(short) <= 120 and short.endswith("…")
    assert short.count("(") == short.count(")") and short.count("[") == short.count("]")
    assert shorten("short", 120) == "short"


def test_several_public_brokers_are_named_as_a_list_that_are_public(tmp_path: Path) -> None:
    """"the broker wss://…, wss://…, wss://… is public"."""
    urls = "mqtt://192.0.2.1:1 mqtt://192.0.2.2:1 mqtt://192.0.2.3:1"

    async def scenario() -> None:
        async with HeadlessShell(config_dir=tmp_path, startup=attach(urls, timeout=0.5)) as h:
            line = await said(h, "are public")
            assert "the brokers mqtt://192.0.2.1:1, mqtt://192.0.2.2:1 and mqtt://192.0.2.3:1 are public" in line
            assert "Their operators" in line

    run(scenario())


def test_the_offline_lobby_pane_says_what_to_do(tmp_path: Path) -> None:
    """The lobby pane showed a lone "-" when offline."""
    async def scenario() -> None:
        async with HeadlessShell(config_dir=tmp_path, lang="de", startup=hooks) as h:
            await h.wait_screen("(nicht verbunden: /connect oder /local)")
            assert "│-" not in h.screen()

    run(scenario())


def test_the_start_rule_against_the_computer_reads_as_a_sentence(tmp_path: Path) -> None:
    """"Start: the start alternates."."""
    async def scenario() -> None:
        async with HeadlessShell(config_dir=tmp_path, lang="en") as h:
            await h.type_line("/play connect4 ai")
            await said(h, "You and the computer take turns to start")
            assert not any("Start: the start" in x for x in lines(h))

    run(scenario())


@pytest.mark.parametrize("url", [
    "mqtt://127.0.0.1:1883", "localhost:1883", "wss://broker.emqx.io:8084/mqtt", "ws://h/mqtt", "mqtts://h",
    "http://example.com", "bogus://x", "mqtt://", "mqtt://h:99999", "wss://:8084/mqtt",
])
def test_the_front_door_accepts_exactly_what_the_transport_can_use(url: str) -> None:
    """One check for every entry point; it never lets through a URL the transport refuses."""
    from p2p.config import check_broker_urls
    from p2p.net.transport import parse_broker_url

    try:
        parse_broker_url(url)
        transport_ok = True
    except ValueError:
        transport_ok = False
    try:
        check_broker_urls(url)
        door_ok = True
    except ValueError:
        door_ok = False
    assert door_ok == transport_ok, url
