"""Several brokers without a live round: URL lists, the CLI option, clear errors."""

from __future__ import annotations

import argparse
import asyncio

import pytest

from p2p.commands import shell as shell_command
from p2p.net.broker import free_port
from p2p.net.multi import MultiTransport
from p2p.net.transport import DEFAULT_BROKER_URLS, split_brokers
from p2p.peer import ActionError, Peer
from p2p.shell.connect import broker_list


def test_broker_lists_from_strings_lists_and_defaults() -> None:
    assert split_brokers("mqtt://a:1 mqtt://b:2,mqtt://a:1") == ["mqtt://a:1", "mqtt://b:2"]
    assert split_brokers(["mqtt://a:1", " mqtt://b:2 "]) == ["mqtt://a:1", "mqtt://b:2"]
    assert split_brokers("") == []
    assert broker_list("") == list(DEFAULT_BROKER_URLS)
    assert len(DEFAULT_BROKER_URLS) >= 2


def test_broker_may_be_given_more_than_once_on_the_command_line() -> None:
    parser = argparse.ArgumentParser()
    shell_command.add_arguments(parser)
    args = parser.parse_args(["--broker", "mqtt://a:1", "--broker", "wss://b/mqtt"])
    assert args.broker == ["mqtt://a:1", "wss://b/mqtt"]


def test_no_reachable_broker_is_one_clear_error_naming_each() -> None:
    async def body() -> None:
        urls = [f"mqtt://127.0.0.1:{free_port()}", f"mqtt://127.0.0.1:{free_port()}"]
        multi = MultiTransport(urls)
        with pytest.raises(ConnectionError, match="cannot connect to any broker") as err:
            await multi.start(wait=1.0)
        assert all(url in str(err.value) for url in urls)
        assert not multi.connected

    asyncio.run(body())


def test_a_peer_with_a_bad_or_empty_broker_list_says_so() -> None:
    with pytest.raises(ActionError, match="no broker"):
        Peer([], nick="x")
    with pytest.raises(ActionError, match="bad broker URL"):
        Peer(["mqtt://127.0.0.1:1883", "http://nope"], nick="x")


def test_both_transports_are_brokers() -> None:
    """The peer depends only on ``p2p.net.face.Broker``: one connection and several
    brokers both fit it (every member of the face is there; mypy checks the types)."""
    import asyncio

    from p2p.net.face import Broker
    from p2p.net.multi import MultiTransport
    from p2p.net.transport import Transport

    async def body() -> None:
        one = Transport("mqtt://127.0.0.1:1")
        many = MultiTransport(["mqtt://127.0.0.1:1", "mqtt://127.0.0.1:2"])
        for broker in (one, many):
            assert isinstance(broker, Broker)
            assert not broker.is_reconnect()
        assert one.brokers() == [("mqtt://127.0.0.1:1", False)]
        assert [url for url, _ in many.brokers()] == ["mqtt://127.0.0.1:1", "mqtt://127.0.0.1:2"]

    asyncio.run(body())
