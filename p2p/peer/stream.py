"""The bounded iterator ``Peer.events()`` returns, and the base class of what it yields.

Low in the peer's module graph (it imports no other part of ``p2p.peer``), so the round
handles can hand out an iterator without importing the notifications that name them."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, Self


@dataclass(frozen=True)
class Notification:
    """Base class of everything ``Peer.events()`` yields."""


class Listening(Protocol):
    """Whatever notifications are registered with (the ``Peer``)."""

    listeners: list[Notifications]


class Notifications:
    """An async iterator over notifications, registered the moment it is created.

    Bounded: if the consumer falls far behind, the oldest notifications are dropped.
    ``close()`` it (or use ``with peer.events() as notes:``) when you stop reading; the
    peer closes all of them when it closes.
    """

    def __init__(
        self,
        owner: Listening,
        accept: Callable[[Notification], bool] | None = None,
        maxsize: int = 10_000,
    ) -> None:
        self._owner = owner
        self._accept = accept
        self._queue: asyncio.Queue[Notification | None] = asyncio.Queue(maxsize)
        owner.listeners.append(self)

    def put(self, note: Notification | None) -> None:
        """Queue ``note`` if this iterator wants it (``None`` ends the iteration); the
        peer calls it for every notification.  The oldest is dropped when full."""
        if note is not None and self._accept is not None and not self._accept(note):
            return
        if self._queue.full():
            with contextlib.suppress(asyncio.QueueEmpty):
                self._queue.get_nowait()
        self._queue.put_nowait(note)

    def close(self) -> None:
        """Stop listening (the iteration ends)."""
        with contextlib.suppress(ValueError):
            self._owner.listeners.remove(self)
        self.put(None)

    def __aiter__(self) -> Notifications:
        return self

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __anext__(self) -> Notification:
        note = await self._queue.get()
        if note is None:
            raise StopAsyncIteration
        return note

    async def next(self, timeout: float | None = None) -> Notification:
        """The next notification; ``asyncio.TimeoutError`` after ``timeout`` seconds."""
        return await asyncio.wait_for(self.__anext__(), timeout)
