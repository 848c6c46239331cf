"""``Broker``: the one face of the network that the peer depends on; ``Service``: what is
started by ``async with`` and closed on leaving it (a transport, the peer).

Two classes implement it: ``p2p.net.transport.Transport`` (one MQTT connection) and
``p2p.net.multi.MultiTransport`` (several brokers at once, one view).  The peer holds a
``Broker`` and never asks which one it has, so a test double, a proxy or a future
transport only has to fit this protocol (checked by mypy and by
``tests/test_net_multi.py::test_both_transports_are_brokers``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from typing import Protocol, Self, TypedDict, Unpack, runtime_checkable

from p2p.net.inbound import Inbound

StateCallback = Callable[..., None]
"""``callback(state: ConnectionState, detail: str)`` on every change of the connection."""


def tell_state(callbacks: list[StateCallback], state: object, detail: str) -> None:
    """Call every state listener; one that fails is logged and the others still hear it."""
    for callback in list(callbacks):
        try:
            callback(state, detail)
        except Exception:
            logging.getLogger("p2p.net").exception("connection state listener failed")


class Sending(TypedDict, total=False):
    """How one message is sent; every key may be left out."""

    qos: int
    """MQTT quality of service, 0 (the default) or 1."""
    retain: bool
    """The broker keeps it for later subscribers (default no)."""
    expiry: int | None
    """Seconds the broker may hold it (v5 only); ``None`` (the default): no limit."""
    droppable: bool
    """Discard it rather than queue it while disconnected (heartbeats: a stale one is
    worthless after a reconnect); default no."""


class Service(Protocol):
    """Started on entering ``async with``, closed on leaving it; a class that names this
    protocol as its base gets the two methods below and writes only ``start``/``close``."""

    async def start(self) -> None:
        """Come up (connect, subscribe, announce ...)."""
        ...

    async def close(self) -> None:
        """Go down for good."""
        ...

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


@runtime_checkable
class Broker(Service, Protocol):
    """Subscribe, publish through an outbox, receive in lanes; reconnects by itself.

    ``Transport`` and ``MultiTransport`` name it as their base, so ``publish`` and the
    ``async with`` methods are written once, here."""

    @property
    def connected(self) -> bool:
        """At least one connection is up now."""
        ...

    @property
    def protocol_version(self) -> str:
        """``"5"``, ``"3.1.1"`` (or ``"mixed"`` for several brokers)."""
        ...

    @property
    def outbox_size(self) -> int:
        """Messages waiting to be sent (the largest outbox of several brokers)."""
        ...

    @property
    def stats(self) -> dict[str, int]:
        """Counters: published, published_bytes, received, dropped."""
        ...

    def brokers(self) -> list[tuple[str, bool]]:
        """Every broker's URL and whether it is connected now, in the order given."""
        ...

    def retained_to(self) -> str | None:
        """To whom the broker hands retained messages: ``"wildcard"``, ``"exact"`` or
        ``"none"`` (``p2p.net.known.RETAINED``), ``None`` while unknown.  Inside an
        ``on_connected`` hook: the broker that connected; else the weakest of them."""
        ...

    def is_reconnect(self) -> bool:
        """True inside an ``on_connected`` hook for a connection that was up before
        (then the peer catches up on its rounds); false for the first connect."""
        ...

    def on_state(self, callback: StateCallback) -> None:
        """Call ``callback(state, detail)`` on every connection state change."""
        ...

    def on_refused(self, callback: Callable[..., None]) -> None:
        """Call ``callback(refused)`` (``p2p.net.transport.Refused``) for every message
        not sent because it is larger than a broker takes."""
        ...

    async def start(self, wait: float | None = 10.0) -> None:
        """Connect; wait up to ``wait`` s for the first connection (``ConnectionError``)."""
        ...

    async def close(self, flush: float = 2.0) -> None:
        """Send what is pending (up to ``flush`` s) and disconnect for good."""
        ...

    def interrupt(self, hold: float = 0.0) -> None:
        """Cut the connection as a failure would; it comes back after ``hold`` s."""
        ...

    async def subscribe(
        self, topic: str, qos: int = 1, *, retained: bool = False, no_local: bool = False
    ) -> None:
        """Subscribe now and after every reconnect."""
        ...

    async def unsubscribe(self, topic: str) -> None:
        """Forget a subscription."""
        ...

    def publish_nowait(
        self, topic: str, payload: bytes, **how: Unpack[Sending]
    ) -> asyncio.Future[None]:
        """Queue in the outbox; the future resolves once a broker took it (``Sending``
        says how)."""
        ...

    async def publish(
        self, topic: str, payload: bytes, *, wait: bool = False, **how: Unpack[Sending]
    ) -> None:
        """Publish through the outbox; with ``wait=True`` return once a broker took it."""
        done = self.publish_nowait(topic, payload, **how)
        if wait:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(done)

    def messages(self) -> AsyncIterator[Inbound]:
        """Inbound messages, most important lane first, until ``close()``."""
        ...
