"""What ``Peer.events()`` yields (the bounded iterator that yields it is
``p2p.peer.stream.Notifications``, re-exported here)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from p2p.peer.stream import Listening as Listening
from p2p.peer.stream import Notification as Notification
from p2p.peer.stream import Notifications as Notifications
from p2p.protocol.events import Event
from p2p.protocol.identity import label
from p2p.protocol.lobby import PeerInfo
from p2p.protocol.outcome import RoundOutcome

if TYPE_CHECKING:
    from p2p.peer.handles import Invitation, Round

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
