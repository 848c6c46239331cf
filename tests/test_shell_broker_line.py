"""The shell says in one line what the broker it connected to allows (issue 25), as
``p2p doctor`` does, in the user's language."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from p2p.net import known
from p2p.net.broker import LocalBroker
from p2p.shell.connect import attach
from p2p.shell.testing import HeadlessShell


@pytest.mark.parametrize("lang, line", [
    ("en", "MQTT 5 · retained messages to wildcard"),
    ("de", "MQTT 5 · gespeicherte Nachrichten"),
])
def test_the_shell_shows_what_the_broker_allows(tmp_path: Path, broker_url: str, lang: str, line: str) -> None:
    async def scenario() -> None:
        async with HeadlessShell(config_dir=tmp_path, lang=lang, broker=broker_url,
                                 startup=attach(broker_url)) as h:
            await h.wait_screen(line, 10)

    asyncio.run(asyncio.wait_for(scenario(), 60))


def test_the_shell_says_a_broker_keeps_no_retained_messages(tmp_path: Path) -> None:
    known.forget()

    async def scenario() -> None:
        async with LocalBroker(extra_config="retain_available false\n") as bare:
            async with HeadlessShell(config_dir=tmp_path, lang="en", broker=bare.url,
                                     startup=attach(bare.url)) as h:
                await h.wait_screen("MQTT 5 · no retained messages", 10)

    asyncio.run(asyncio.wait_for(scenario(), 60))
