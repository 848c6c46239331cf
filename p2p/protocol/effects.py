"""What the pure state machines ask their driver to do or to show.

The lobby and round machines never do I/O; their methods return lists of these and the
driver (``p2p.peer``) carries them out in order:

* ``Publish``: publish ``event.raw`` to ``route.topic`` with ``route.qos``/``route.retain``
  (a held round's payloads are sealed with that round's key; a decline carries the key of
  the invitation it answers in ``sealed_with``);
* ``Applied``: a chain event became part of the round;
* ``Dropped``: an incoming event was refused; log ``describe()`` (who, what, why);
* ``Equivocation``: one sender signed two conflicting events; both are the evidence;
* ``ChatLine``: show a chat line (already sanitized and rate-limited);
* ``Notice``: anything else worth telling the user (round started, starter drawn ...);
* ``Rewound``: chain events from ``seq`` on were replaced by a forfeit that won the race
  for that position (or a timely move replaced a forfeit, or a proof cut the chain);
* ``Acknowledged``: a member's closing acknowledgement (``ack``) of the final head and
  state hash, ours or another's.

The round log is no effect: the driver writes ``RoundMachine.log_events()`` after every
step (docs/protocol.md §9), so it always replays to the machine's state.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from p2p.protocol.events import Event
from p2p.protocol.topics import Route


@dataclass(frozen=True)
class Publish:
    """Publish ``event`` on ``route``.  ``sealed_with``: the round key to seal it with
    when it goes to a round we do not hold (our decline of an invitation, sealed with
    the key that invitation carried); a held round's own key is never taken from here."""

    route: Route
    event: Event
    sealed_with: bytes | None = field(default=None, repr=False)

    @property
    def payload(self) -> bytes:
        return self.event.raw


@dataclass(frozen=True)
class Applied:
    """``event`` is now part of the chain; ``seat``: for a move, the seat that made it
    (the seat to move before it; a computer seat's move is signed by the admin)."""

    event: Event
    seat: int | None = None


@dataclass(frozen=True)
class Dropped:
    event_id: str | None
    sender: str
    """Short fingerprint of the sender, or ``"?"`` when the bytes did not even parse."""
    kind: str
    reason: str

    def describe(self) -> str:
        ident = f" {self.event_id[:12]}" if self.event_id else ""
        return f"dropped {self.kind}{ident} from {self.sender}: {self.reason}"


@dataclass(frozen=True)
class Equivocation:
    first: Event
    second: Event

    def describe(self) -> str:
        return (
            f"equivocation by {self.first.pk.hex()[:8]}: {self.first.kind} {self.first.id[:12]}"
            f" and {self.second.kind} {self.second.id[:12]} claim the same place"
        )


@dataclass(frozen=True)
class ChatLine:
    sender: bytes
    nick: str
    text: str
    round: str | None
    ts: int


@dataclass(frozen=True)
class Notice:
    """A line for the user: ``text`` (English, for logs) plus a stable ``code`` and its
    ``params`` so a user interface can say it in its own language without parsing text.

    Codes (params): ``forfeit`` (seat, reason, waited, by), ``forfeit_ahead`` (seat, secs),
    ``forfeit_seen_online`` (seat), ``forfeit_early`` (seat, secs, limit), ``rewound``
    (count, seq), ``starts`` (seat, how: drawn|named), ``reveal_left_out`` (seat),
    ``drawing``, ``over`` (reason), ``cancelled`` (reason: a ``cancel_reason`` code, seat),
    ``expired``, ``draw_stalled``, ``event_ahead`` (kind, secs), ``forfeit_replaced`` (count,
    seq, seat); ``cancelled`` also has reason ``abandoned`` and ``void`` (local ends; ``goes_on``:
    an abandoned round moves on after all), ``peer_left`` / ``peer_online`` / ``peer_silent``
    (nick), ``auto_declined``, ``invited`` (nick, game), ``invitation_cancelled`` (reason,
    seat), ``invitation_expired``, ``takeback_asked`` (seat), ``takeback_declined`` (seat: the asker, by: the
    player to move who said no), ``disputed`` (seq, forfeiter,
    seat, kept: forfeit|move; docs/protocol.md §8 R3), ``other_version`` (nick, theirs,
    ours: a peer of another protocol version, once per peer).
    """

    text: str
    code: str = ""
    params: dict[str, object] = field(default_factory=dict, hash=False)


@dataclass(frozen=True)
class Rewound:
    seq: int
    replaced: tuple[Event, ...]


@dataclass(frozen=True)
class Acknowledged:
    """A member acknowledged the final head: its ``ack`` side event and the seat it holds
    (the round is closed for everyone once every member has acknowledged)."""

    event: Event
    seat: int


@dataclass(frozen=True)
class Backoff:
    """The lobby asks its driver: call ``Lobby.answer_due(now)`` after a random delay of
    at most ``max_ms`` (so not every member answers a hello at once)."""

    max_ms: int


Effect = (
    Publish
    | Applied
    | Dropped
    | Equivocation
    | ChatLine
    | Notice
    | Rewound
    | Acknowledged
    | Backoff
)


def dropped(event: Event, reason: str) -> Dropped:
    """A ``Dropped`` effect for a parsed event."""
    return Dropped(event.id, event.pk.hex()[:8], event.kind, reason)


CANCEL_EXPIRED = "the invitation expired"
"""The ``reason`` of the admin's cancel when nobody filled the round in time."""


CANCEL_NO_COMMIT = "did not commit to the draw in time"
CANCEL_NO_REVEAL = "did not reveal for the draw in time"
"""Ends of the admin's cancel reason ``seat N ...`` (or ``seats N, M ...``) when a draw
cannot go ahead without every seat (docs/protocol.md §7)."""


def cancel_reason(text: str) -> tuple[str, int | None]:
    """The code of a cancel's wire ``reason``: ``declined``/``left``/``no_commit``/
    ``no_reveal`` (with the (first) seat), ``expired``, or ``other`` (free text the admin
    chose; shown as it is)."""
    if text == CANCEL_EXPIRED:
        return "expired", None
    for code, tail in (("no_commit", CANCEL_NO_COMMIT), ("no_reveal", CANCEL_NO_REVEAL)):
        first = text.removesuffix(" " + tail).removeprefix("seats ").removeprefix("seat ")
        first = first.split(",")[0]
        if text.endswith(" " + tail) and text.startswith("seat") and first.isdigit():
            return code, int(first)
    words = text.split()
    if len(words) == 3 and words[0] == "seat" and words[1].isdigit() and words[2] in ("declined", "left"):
        return words[2], int(words[1])
    return "other", None
