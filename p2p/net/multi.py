"""Several brokers at once: one ``Transport`` per broker, one view for the peer.

``MultiTransport`` has the interface of ``Transport`` (the peer uses either) and fans out:

* **publish** -- every message goes into every broker's outbox.  A broker that is down
  keeps it (bounded) and sends it when it is back, so the peers that only reach that
  broker catch up; events are idempotent by id, so the copies are harmless;
* **subscribe** -- on every broker, now and after every reconnect;
* **receive** -- all brokers deliver into one shared ``InboundQueues``: a copy of a
  message that already came from another broker is dropped there for the cost of one
  hash (events are signed, so a copy from any broker is as good as another), and presence
  is merged by the lobby as if it came from one broker;
* **connection state** -- connected while at least one broker is; ``brokers()`` tells
  which (the shell shows it); the ``on_connected`` hook runs per broker, and what it
  publishes (the re-announcement after a reconnect) goes to that broker only.

``start()`` waits until the first broker is up (``ConnectionError`` if none is within
``wait``); the others keep trying in the background with backoff, as a broker that goes
away mid-round is tried again until it returns.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Unpack

from p2p.net.face import Broker, Sending, tell_state
from p2p.net.inbound import Inbound, InboundQueues
from p2p.net.transport import (
    BrokerAddress,
    ConnectionState,
    StateCallback,
    Transport,
    WillMessage,
)

__all__ = ["MultiTransport"]

log = logging.getLogger("p2p.net")

_ANNOUNCING: contextvars.ContextVar[Transport | None] = contextvars.ContextVar(
    "p2p_multi_announcing", default=None
)
"""Set while one broker's ``on_connected`` hook runs: its publishes go to that broker."""


class MultiTransport(Broker):
    """Several resilient MQTT connections that behave as one (see the module doc)."""

    def __init__(
        self,
        urls: Sequence[str],
        *,
        on_connected: Callable[[], Awaitable[None]] | None = None,
        will: Callable[[], WillMessage | None] | None = None,
        tls_context: ssl.SSLContext | None = None,
        inbound: InboundQueues | None = None,
        **options: object,
    ) -> None:
        unique = list(dict.fromkeys(u.strip() for u in urls if u.strip()))
        if not unique:
            raise ValueError("no broker URL given")
        self.inbound = inbound if inbound is not None else InboundQueues()
        self._on_connected = on_connected
        self._state_callbacks: list[StateCallback] = []
        self._announcing: set[Transport] = set()
        self.transports: list[Transport] = []
        for url in unique:
            transport = Transport(
                url,
                on_connected=None,
                will=will,
                tls_context=tls_context,
                inbound=self.inbound,
                # the remaining Transport keywords (limits, backoff, protocol), passed on
                # unchanged: Transport checks them, ``object`` here cannot
                **options,  # type: ignore[arg-type]
            )
            transport._on_connected = self._hook(transport)
            transport.on_state(self._child_state(transport))
            self.transports.append(transport)
        self.state = ConnectionState.CONNECTING
        self._ever_connected = False
        self._closing = False

    # -- what the peer asks ------------------------------------------------------------

    @property
    def address(self) -> BrokerAddress:
        """The first broker's address (the one named first)."""
        return self.transports[0].address

    @property
    def connected(self) -> bool:
        return any(t.connected for t in self.transports)

    def brokers(self) -> list[tuple[str, bool]]:
        """Every broker's URL and whether it is connected now, in the order given."""
        return [(str(t.address), t.connected) for t in self.transports]

    @property
    def stats(self) -> dict[str, int]:
        total: dict[str, int] = {}
        for transport in self.transports:
            for key, value in transport.stats.items():
                if key == "largest_published":
                    total[key] = max(total.get(key, 0), value)
                else:
                    total[key] = total.get(key, 0) + value
        return total

    @property
    def outbox_size(self) -> int:
        return max(t.outbox_size for t in self.transports)

    @property
    def protocol_version(self) -> str:
        versions = {t.protocol_version for t in self.transports}
        return versions.pop() if len(versions) == 1 else "mixed"

    def retained_to(self) -> str | None:
        """The announcing broker's retained delivery inside its hook; else the weakest
        known one (``none`` < ``exact`` < ``wildcard``)."""
        broker = self.announcing()
        if broker is not None:
            return broker.retained_to()
        found = [t.retained_to() for t in self.transports]
        for how in ("none", "exact", "wildcard"):
            if how in found:
                return how
        return None

    def is_reconnect(self) -> bool:
        """True inside the ``on_connected`` hook of a broker that had been up before."""
        broker = self.announcing()
        return broker is not None and broker.is_reconnect()

    def announcing(self) -> Transport | None:
        """The broker whose ``on_connected`` hook is running in this task, if any."""
        current = _ANNOUNCING.get()
        return current if current in self._announcing else None

    # -- lifecycle ---------------------------------------------------------------------

    def on_refused(self, callback: Callable[..., None]) -> None:
        """Every broker's messages too large for it (``Transport.on_refused``)."""
        for transport in self.transports:
            transport.on_refused(callback)

    def on_state(self, callback: StateCallback) -> None:
        """``callback(state, detail)``: connected / lost (all brokers) / reconnected / closed;
        a change of one broker while another is up is reported as ``connected`` or
        ``lost`` with ``detail`` naming that broker and how many are up."""
        self._state_callbacks.append(callback)

    async def start(self, wait: float | None = 10.0) -> None:
        """Start every connection; wait up to ``wait`` s for the first one to come up."""
        for transport in self.transports:
            await transport.start(wait=None)
        if wait is None:
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait
        while not self.connected:
            if loop.time() > deadline:
                reasons = "; ".join(
                    f"{t.address}: {t._last_error}" for t in self.transports
                )
                await self.close()
                raise ConnectionError(f"cannot connect to any broker ({reasons})")
            await asyncio.sleep(0.02)

    async def close(self, flush: float = 2.0) -> None:
        if self._closing:
            return
        self._closing = True
        await asyncio.gather(
            *(t.close(flush) for t in self.transports), return_exceptions=True
        )
        self.inbound.close()
        self._set_state(ConnectionState.CLOSED, "")

    def interrupt(self, hold: float = 0.0) -> None:
        """Cut every connection, as a network failure of this machine would."""
        for transport in self.transports:
            transport.interrupt(hold)

    # -- subscriptions and publishing ---------------------------------------------------

    async def subscribe(
        self, topic: str, qos: int = 1, *, retained: bool = False, no_local: bool = False
    ) -> None:
        await asyncio.gather(  # every broker at once: one round trip, not one each
            *(
                transport.subscribe(topic, qos, retained=retained, no_local=no_local)
                for transport in self.transports
            )
        )

    async def unsubscribe(self, topic: str) -> None:
        for transport in self.transports:
            await transport.unsubscribe(topic)

    def publish_nowait(
        self, topic: str, payload: bytes, **how: Unpack[Sending]
    ) -> asyncio.Future[None]:
        """Into every broker's outbox (only the announcing broker's during its hook);
        the future resolves once the first broker took it."""
        only = _ANNOUNCING.get()
        # a timer or task created inside a hook inherits the context: honour the variable
        # only while that hook is still running
        targets = [only] if only in self._announcing else self.transports
        futures = [t.publish_nowait(topic, payload, **how) for t in targets]
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def settle(_: asyncio.Future[None]) -> None:
            if done.done():
                return
            if any(f.done() and not f.cancelled() for f in futures):
                done.set_result(None)
            elif all(f.done() for f in futures):
                done.cancel()

        for future in futures:
            future.add_done_callback(settle)
        return done

    def messages(self) -> AsyncIterator[Inbound]:
        """Inbound messages of every broker, most important lane first, until ``close()``."""
        return self.inbound.drain()

    # -- per-broker plumbing -------------------------------------------------------------

    def _hook(self, transport: Transport) -> Callable[[], Awaitable[None]]:
        async def connected() -> None:
            if self._on_connected is None:
                return
            token = _ANNOUNCING.set(transport)
            self._announcing.add(transport)
            try:
                await self._on_connected()
            finally:
                self._announcing.discard(transport)
                _ANNOUNCING.reset(token)

        return connected

    def _child_state(self, transport: Transport) -> StateCallback:
        def changed(state: ConnectionState, detail: str) -> None:
            if self._closing or state is ConnectionState.CLOSED:
                return
            others = sum(t.connected for t in self.transports if t is not transport)
            if state in (ConnectionState.CONNECTED, ConnectionState.RECONNECTED):
                up = others + 1  # the callback runs just before its flag is set
                if not self._ever_connected:
                    self._ever_connected = True
                    self._set_state(ConnectionState.CONNECTED, self._summary(transport, up))
                elif self.state is ConnectionState.LOST:
                    self._set_state(ConnectionState.RECONNECTED, self._summary(transport, up))
                else:
                    self._set_state(ConnectionState.CONNECTED, self._summary(transport, up))
            elif state is ConnectionState.LOST:
                self._set_state(
                    ConnectionState.LOST if others == 0 else ConnectionState.CONNECTED,
                    self._summary(transport, others, lost=True),
                )

        return changed

    def _summary(self, transport: Transport, up: int, lost: bool = False) -> str:
        what = "lost" if lost else "up"
        return f"{transport.address} {what} ({up} of {len(self.transports)} brokers connected)"

    def _set_state(self, state: ConnectionState, detail: str) -> None:
        self.state = state
        log.info("brokers %s %s", state.value, detail)
        tell_state(self._state_callbacks, state, detail)
