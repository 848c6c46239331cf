"""MQTT topic names, with the QoS and retain flag each one is published with.

Everything lives under ``<app>/v<protocol version>/<namespace>`` (default
``p2p/v2/public``); a different namespace is a separate lobby.  Per topic:

=================================  ======================================  ===  ======
topic (under the root)             what                                    QoS  retain
=================================  ======================================  ===  ======
``lobby/presence/<peer id>``       the peer's latest signed ``presence``   0    yes
``lobby/hello``                    ``hello``: "re-announce if lost"        0    no
``lobby/chat``                     lobby ``chat``                          0    no
``inbox/<peer id>``                invitations (a copy of the genesis)     1    no
``round/<key>/events``             chain and side events of the round      1    no
``round/<key>/genesis``            private rounds: the genesis, for joiners  1    yes
``round/<key>/sync``               ``sync_request`` and the answers        1    no
``round/<key>/chat``               round ``chat``                          0    no
``round/<key>/store/<peer id>``    slow rounds: what that member keeps     1    yes
=================================  ======================================  ===  ======

``<key>`` is the round id for a public round.  A private round is joined by a 6-character
code (alphabet ``CODE_ALPHABET``: no 0/O/1/I/L); its key is derived from the code with
scrypt, so the topic does not show the code and the code cannot be cheaply recovered from
the topic.  A join carries a proof that the joiner knows the code (``join_proof``).

Note: MQTT brokers let anyone subscribe to ``#``; a wildcard eavesdropper sees every
topic name, but what travels on ``inbox/`` and ``round/`` topics is sealed
(``p2p.protocol.sealing``): it cannot read a round, nor join a private one without the code.
"""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass

TOPIC_VERSION = 2
"""The topics' version (``p2p/v2/...``): unchanged by protocol v3, v4 and v5, so peers of
every version meet in one lobby and a peer tells its user when it meets one of another
version (docs §3)."""
CODE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
"""31 characters that are easy to read aloud: no 0/O, 1/I/L."""
CODE_LENGTH = 6
_NAMESPACE = re.compile(r"[a-z0-9][a-z0-9-]{0,31}\Z")
_SCRYPT = {"n": 2**14, "r": 8, "p": 1}


class TopicError(ValueError):
    """A namespace or join code that cannot be used; one-line message."""


@dataclass(frozen=True)
class Route:
    """Where and how to publish: topic, QoS and retain flag."""

    topic: str
    qos: int
    retain: bool = False


def make_code(random_bytes: bytes) -> str:
    """A join code from at least 8 random bytes supplied by the caller."""
    if len(random_bytes) < 8:
        raise ValueError("a join code needs at least 8 random bytes")
    number = int.from_bytes(random_bytes[:8], "big")
    chars = []
    for _ in range(CODE_LENGTH):
        number, digit = divmod(number, len(CODE_ALPHABET))
        chars.append(CODE_ALPHABET[digit])
    return "".join(chars)


def normalize_code(text: str) -> str:
    """The canonical form of a code typed by a person (case, spaces and dashes ignored)."""
    code = "".join(ch for ch in text.upper() if ch not in " -")
    if len(code) != CODE_LENGTH:
        raise TopicError(f"a join code has {CODE_LENGTH} characters")
    bad = sorted({ch for ch in code if ch not in CODE_ALPHABET})
    if bad:
        raise TopicError(f"a join code never contains {''.join(bad)}")
    return code


def code_secret(code: str) -> bytes:
    """The 32-byte secret of a join code (scrypt: deliberately slow, compute it once)."""
    return hashlib.scrypt(
        normalize_code(code).encode("ascii"),
        salt=b"p2p/v1/private-round",
        dklen=32,
        **_SCRYPT,
    )


def private_key(code: str, secret: bytes | None = None) -> str:
    """The topic key of the private round behind ``code`` (32 hex characters)."""
    return (secret or code_secret(code))[:16].hex()


def join_proof(
    code: str, round_id: str, public_key: bytes, secret: bytes | None = None
) -> str:
    """Proof that the holder of ``public_key`` knows the code of round ``round_id``.

    Pass ``secret = code_secret(code)`` when checking many joins.
    """
    secret = secret or code_secret(code)
    return hashlib.sha256(
        b"p2p/v1/join\x00" + secret + bytes.fromhex(round_id) + public_key
    ).hexdigest()


@dataclass(frozen=True)
class Place:
    """Where a topic of our namespace points (``Topics.parse``).

    ``area`` is its first level (``lobby``, ``inbox``, ``round``, or anything else: an
    unknown topic); ``name`` what follows it (an inbox's peer id, ``presence/<peer id>``).
    A round topic of the form ``round/<key>/<channel>`` has ``key`` and ``channel`` set;
    any other shape under ``round/`` has both empty (not a round topic we know).
    """

    area: str
    name: str = ""
    key: str = ""
    channel: str = ""
    owner: str = ""
    """The member a slow round's ``round/<key>/store/<peer id>`` belongs to (§9.1)."""

    @property
    def is_round(self) -> bool:
        """A well-formed round topic: ``round/<key>/<channel>``."""
        return self.area == "round" and bool(self.key)


_KEPT_TOPIC = 160
"""The longest topic ``_place`` keeps (ours have at most about 110 characters; a
stranger's topic may have 65,535, and 256 of those are not kept)."""


@functools.lru_cache(maxsize=256)
def _place(root: str, topic: str) -> Place | None:
    """``Topics.parse``, kept for the topics parsed most recently: a move's topic is taken
    apart by its mover (to seal it) and twice by each receiver (its lane, its dispatch),
    the same few topics of the rounds we hold every time (issue 28); a ``Place`` is
    frozen, so one can be handed out many times.  256: our rounds' topics many times
    over; a flood of other topics only cycles it."""
    if not topic.startswith(root):
        return None
    area, _, name = topic[len(root) :].partition("/")
    if area == "round":
        parts = name.split("/")
        if len(parts) == 2 and parts[0]:
            return Place(area, name, parts[0], parts[1])
        if len(parts) == 3 and parts[0] and parts[1] == "store" and re.fullmatch(r"[0-9a-f]{32}", parts[2]):
            return Place(area, name, parts[0], "store", parts[2])  # a member's store
    return Place(area, name)


@dataclass(frozen=True)
class Topics:
    """The topic names of one namespace; all methods are pure string building."""

    namespace: str = "public"
    app: str = "p2p"

    def __post_init__(self) -> None:
        if not _NAMESPACE.match(self.namespace):
            raise TopicError("a namespace is 1-32 characters of a-z, 0-9 and '-'")
        if not _NAMESPACE.match(self.app):
            raise TopicError("an app prefix is 1-32 characters of a-z, 0-9 and '-'")

    @functools.cached_property
    def root(self) -> str:
        """``app/vN/namespace``: the first levels of every topic (built once: each
        message's topic is taken apart against it)."""
        return f"{self.app}/v{TOPIC_VERSION}/{self.namespace}"

    # lobby
    def presence(self, peer_id: str) -> Route:
        return Route(f"{self.root}/lobby/presence/{peer_id}", 0, retain=True)

    def presence_filter(self) -> str:
        """Subscription filter for everyone's presence."""
        return f"{self.root}/lobby/presence/+"

    def hello(self) -> Route:
        return Route(f"{self.root}/lobby/hello", 0)

    def lobby_chat(self) -> Route:
        return Route(f"{self.root}/lobby/chat", 0)

    def inbox(self, peer_id: str) -> Route:
        return Route(f"{self.root}/inbox/{peer_id}", 1)

    # rounds
    def round_events(self, key: str) -> Route:
        return Route(f"{self.root}/round/{key}/events", 1)

    def round_genesis(self, key: str) -> Route:
        return Route(f"{self.root}/round/{key}/genesis", 1, retain=True)

    def round_sync(self, key: str) -> Route:
        return Route(f"{self.root}/round/{key}/sync", 1)

    def round_chat(self, key: str) -> Route:
        return Route(f"{self.root}/round/{key}/chat", 0)

    def round_store(self, key: str, peer_id: str) -> Route:
        """A slow round's retained store of one member (docs/protocol.md §9.1)."""
        return Route(f"{self.root}/round/{key}/store/{peer_id}", 1, retain=True)

    def lobby_subscriptions(self, my_peer_id: str) -> list[tuple[str, int]]:
        """(filter, QoS) pairs a peer subscribes to while online."""
        return [
            (self.presence_filter(), 0),
            (self.hello().topic, 0),
            (self.lobby_chat().topic, 0),
            (self.inbox(my_peer_id).topic, 1),
        ]

    def round_subscriptions(self, key: str) -> list[tuple[str, int]]:
        """(filter, QoS) pairs a member subscribes to while in round ``key``."""
        return [
            (self.round_genesis(key).topic, 1),
            (self.round_events(key).topic, 1),
            (self.round_sync(key).topic, 1),
            (self.round_chat(key).topic, 0),
        ]  # a slow round's stores: one exact subscription per member (``Edge.follow_stores``)

    def parse(self, topic: str) -> Place | None:
        """Where ``topic`` points in this namespace, ``None`` for a foreign topic.

        The one place that takes a topic apart (the edge, the sealing and the lobby ask
        here).

        >>> t = Topics()
        >>> t.parse(t.root + "/round/ab12/events")
        Place(area='round', name='ab12/events', key='ab12', channel='events', owner='')
        >>> t.parse(t.root + "/inbox/00ff").name
        '00ff'
        >>> t.parse(t.root + "/round/ab12").is_round, t.parse("p2p/v2/other/lobby/hello")
        (False, None)
        """
        if len(topic) > _KEPT_TOPIC:
            return _place.__wrapped__(self.root + "/", topic)
        return _place(self.root + "/", topic)

    def parse_presence(self, topic: str) -> str | None:
        """The peer id in a presence topic of this namespace, else ``None``."""
        place = self.parse(topic)
        if place is not None and place.area == "lobby":
            kind, _, rest = place.name.partition("/")
            if kind == "presence" and re.fullmatch(r"[0-9a-f]{32}", rest):
                return rest
        return None
