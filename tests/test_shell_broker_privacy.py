"""Privacy of the brokers (issue 26.14), through the real shell: a plain ``/connect``
after ``--broker URL`` goes back to that broker (it switched to the three public ones the
user never chose); the privacy note counts as read only once a broker was reached; a
broker given for the session says it is not saved, nor its rounds resumed by a plain start.

The test broker runs on 127.0.0.1, which the shell takes as this machine (no privacy
note); the tests that need a "remote" broker take 127.0.0.1 off that list."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from test_shell_life_online import said

from p2p.net.transport import DEFAULT_BROKER_URLS
from p2p.shell import connect as connect_mod
from p2p.shell.connect import attach
from p2p.shell.settings import load as load_settings
from p2p.shell.testing import HeadlessShell

pytest.importorskip("p2p.peer")


def shell(tmp_path: Path, broker: str, lang: str = "en") -> HeadlessShell:
    return HeadlessShell(config_dir=tmp_path, lang=lang, broker=broker, startup=attach(broker),
                         rows=30, columns=120)


@pytest.mark.parametrize(("lang", "connected"), [("en", "Connected to"), ("de", "Verbunden mit")])
def test_connect_after_broker_goes_back_to_that_broker(tmp_path: Path, broker_url: str, lang: str,
                                                       connected: str) -> None:
    async def scenario() -> None:
        async with shell(tmp_path, broker_url, lang) as h:
            await said(h, f"{connected} {broker_url}", 10)
            await h.type_line("/connect")
            await h.wait_for(lambda: sum(f"{connected} {broker_url}" in x
                                         for x in h.controller.state.text_lines()) == 2, 15)
            texts = "\n".join(h.controller.state.text_lines())
            assert not any(url in texts for url in DEFAULT_BROKER_URLS), texts

    asyncio.run(asyncio.wait_for(scenario(), 40))


@pytest.mark.parametrize("lang", ["en", "de"])
def test_the_privacy_note_is_saved_only_once_a_broker_was_reached(
        tmp_path: Path, broker_url: str, lang: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(connect_mod, "LOCAL_HOSTS", ("localhost", "::1"))  # 127.0.0.1 counts as remote
    nowhere = "mqtt://nowhere.invalid:1883"
    note, session = {"en": ("public", "is for this session only"),
                     "de": ("öffentlich", "gilt nur für diese Sitzung")}[lang]

    async def scenario() -> None:
        async with shell(tmp_path / "a", nowhere, lang) as h:
            await h.wait_for(lambda: any(nowhere in x and ("reached" in x or "erreichbar" in x)
                                         for x in h.controller.state.text_lines()), 20)
        assert nowhere not in load_settings(tmp_path / "a")[0].public_broker_ok
        async with shell(tmp_path / "b", broker_url, lang) as h:
            await said(h, broker_url, 10)
            await h.wait_for(lambda: h.controller.online is not None and h.controller.online.connected(), 10)
            await said(h, session, 10)
            assert any(note in x.lower() for x in h.controller.state.text_lines())
        assert broker_url in load_settings(tmp_path / "b")[0].public_broker_ok

    asyncio.run(asyncio.wait_for(scenario(), 60))
