"""What ``Peer.events()`` yields, and the bounded iterator that yields it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, Self

from p2p.protocol.events import Event
from p2p.protocol.identity import label
from p2p.protocol.lobby import PeerInfo
from p2p.protocol.outcome import RoundOutcome

if TYPE_CHECKING:
    from p2p.peer.handles import Invitation, Round

@dataclass(frozen=True)
class Notification:
    """Base class of everything ``Peer.events()`` yields."""


@dataclass(frozen=True)
class ChatMessage(Notification):
    sender: bytes
    nick: str
    text: str
    round_id: str | None  # None: lobby chat
    ts: int

    @property
    def label(self) -> str:
        return label(self.nick, self.sender)


@dataclass(frozen=True)
class PresenceChanged(Notification):
    peer: PeerInfo
    online: bool
    retained: bool = False
    """Learnt from a retained presence: the peer was already online when we subscribed."""


@dataclass(frozen=True)
class InvitationReceived(Notification):
    invitation: Invitation


@dataclass(frozen=True)
class RoundUpdate(Notification):
    """A chain event became part of a round (``kind``: start, draw, move, seal ...)."""

    round: Round
    kind: str
    seq: int
    text: str
    seat: int | None = None  # for a move: the seat that made it


@dataclass(frozen=True)
class YourTurn(Notification):
    """After a change of ``round`` it is our human seat's turn (``Round.is_my_turn``;
    a computer seat we host is never announced)."""

    round: Round


@dataclass(frozen=True)
class RoundOver(Notification):
    """The round is over for us: ``outcome`` says how, typed (``reason`` is its English
    line; ``winners`` the same as ``outcome.winners``)."""

    round: Round
    winners: tuple[int, ...]
    reason: str
    outcome: RoundOutcome | None = None


@dataclass(frozen=True)
class RoundNotice(Notification):
    """A protocol notice: ``text`` in English for logs, ``code`` and ``params`` for a UI
    (see ``p2p.protocol.effects.Notice``)."""

    round: Round | None
    text: str
    code: str = ""
    params: dict[str, object] = field(default_factory=dict, hash=False)


@dataclass(frozen=True)
class Rejected(Notification):
    """An incoming event was refused (who sent what, and why)."""

    text: str
    round_id: str | None = None
    reason: str = ""
    kind: str = ""
    sender: str = ""
    """Short fingerprint of the signer, ``"?"`` or empty when unknown."""
    routine: bool = False
    """Everyday traffic of honest peers (``p2p.peer.checks.is_routine``): worth the log,
    not a warning on screen."""


@dataclass(frozen=True)
class Equivocated(Notification):
    """One key signed two conflicting events; both are the evidence."""

    round: Round | None
    first: Event
    second: Event

    @property
    def text(self) -> str:
        return (
            f"equivocation by {self.first.pk.hex()[:8]}: {self.first.kind} {self.first.id[:12]}"
            f" and {self.second.kind} {self.second.id[:12]}"
        )


@dataclass(frozen=True)
class ConnectionChanged(Notification):
    state: str  # "connected", "lost", "reconnected", "closed"
    detail: str


@dataclass(frozen=True)
class Resynced(Notification):
    round: Round
    applied: int
    head: int


@dataclass(frozen=True)
class MovedWhileAway(Notification):
    """A resume or sync brought in moves of the others that we had not seen (they were
    made while we were away: offline, or cut off).  Sent once per catch-up, after its
    ``Resynced``; ``your_turn`` says whether it is now our turn in ``round``."""

    round: Round
    moves: int
    movers: tuple[bytes, ...]
    """The keys that signed those moves, each once, in the order they moved."""
    your_turn: bool


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

    def _push(self, note: Notification | None) -> None:
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
        self._push(None)

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
