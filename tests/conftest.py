"""Shared fixtures: a real Mosquitto on a free loopback port for the integration tests.

The broker is started once per test session, and only if a test asks for it.  Without
``mosquitto`` installed those tests are skipped with a clear message -- except in CI
(env ``CI`` set), where ``.ci/run`` installs it and a missing broker is a failure.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from p2p.net.broker import BrokerError, LocalBroker, mosquitto_path


def _require_mosquitto() -> None:
    if mosquitto_path() is not None:
        return
    message = "mosquitto is not installed (apt-get install mosquitto); integration tests need it"
    if os.environ.get("CI"):
        pytest.fail(message + " -- and CI is set, so this is an error", pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="session")
def mosquitto() -> Iterator[LocalBroker]:
    """One local Mosquitto for the whole session (do not restart it: others share it)."""
    _require_mosquitto()
    broker = LocalBroker()
    try:
        broker.start()
    except BrokerError as err:
        pytest.fail(f"local mosquitto did not start: {err}", pytrace=False)
    yield broker
    broker.close()


@pytest.fixture()
def private_mosquitto() -> Iterator[LocalBroker]:
    """A broker of the test's own, which it may stop and restart (reconnect tests)."""
    _require_mosquitto()
    broker = LocalBroker()
    try:
        broker.start()
    except BrokerError as err:
        pytest.fail(f"local mosquitto did not start: {err}", pytrace=False)
    yield broker
    broker.close()


@pytest.fixture()
def broker_url(mosquitto: LocalBroker) -> str:
    """URL of the shared session broker."""
    return mosquitto.url
