"""The shell on two brokers at once: it says which broker went away and came back."""

from __future__ import annotations

import asyncio
from pathlib import Path

from conftest import _require_mosquitto

from p2p.net.broker import LocalBroker
from p2p.shell.connect import attach
from p2p.shell.testing import HeadlessShell


def test_the_shell_shows_which_of_two_brokers_is_connected(tmp_path: Path) -> None:
    _require_mosquitto()
    with LocalBroker() as first, LocalBroker() as second:
        brokers = f"{first.url} {second.url}"

        async def scenario() -> None:
            async with HeadlessShell(
                config_dir=tmp_path, lang="en", broker=brokers, startup=attach(brokers),
                rows=30, columns=120,
            ) as h:
                await h.wait_screen("Connected to", 10)
                peer = h.controller.online.peer
                await h.wait_for(lambda: all(up for _, up in peer.brokers()), 10)
                await asyncio.to_thread(first.stop)
                await h.wait_screen(f"Broker {first.url} unreachable", 10)
                await h.wait_screen("brokers 1/2 connected", 20)
                assert "Connection lost" not in h.screen()  # still online through the other
                await asyncio.to_thread(first.restart)
                await h.wait_screen(f"Broker {first.url} connected again (2/2)", 20)
                await h.wait_for(lambda: "brokers 1/2" not in h.screen(), 5)

        asyncio.run(asyncio.wait_for(scenario(), 60))
