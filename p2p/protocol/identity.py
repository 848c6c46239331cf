"""Who a peer is: an Ed25519 key pair, its fingerprint, and a sanitized nickname.

A peer's identity *is* its public key.  The peer id is the first 16 bytes of
SHA-256(public key) in hex (32 characters).  The fingerprint shown next to every nickname
is its first 64 bits as four groups of four hex digits (``1a2b 3c4d 5e6f 7081``): making
a key whose fingerprint matches a given one takes about 2^64 tries, so two "alice" can be
told apart at a glance.  ``short_id`` (8 hex) names a peer in logs and task names only.

No randomness lives here: a new identity is made from 32 random bytes that the caller
supplies (``Identity.from_seed(os.urandom(32))`` at the edge, see ``p2p.keystore``).

>>> me = Identity.from_seed(bytes(32))
>>> len(me.public_key), len(me.peer_id), len(me.short_id)
(32, 32, 8)
>>> fingerprint(me.public_key) == " ".join(me.peer_id[i : i + 4] for i in (0, 4, 8, 12))
True
>>> verify(me.public_key, me.sign(b"hi"), b"hi")
True
>>> sanitize_nickname("  al\\x07ice\\n ")
'alice'
"""

from __future__ import annotations

import functools
import hashlib
import unicodedata

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

PUBLIC_KEY_SIZE = 32
SIGNATURE_SIZE = 64
SEED_SIZE = 32
NICKNAME_MAX = 24
"""Longest nickname in characters after sanitizing."""

_STRIPPED_CATEGORIES = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}
"""Control, format (bidi overrides), surrogate, private-use, unassigned, line/paragraph separators."""


def peer_id(public_key: bytes) -> str:
    """The peer id of a raw 32-byte public key: 32 lowercase hex characters."""
    return hashlib.sha256(public_key).hexdigest()[:32]


def short_id(public_key: bytes) -> str:
    """8 hex characters of the peer id: a compact name for logs (not for people to compare)."""
    return peer_id(public_key)[:8]


FINGERPRINT_BITS = 64


def fingerprint(public_key: bytes) -> str:
    """The fingerprint people compare: 64 bits as ``1a2b 3c4d 5e6f 7081``."""
    digits = peer_id(public_key)[: FINGERPRINT_BITS // 4]
    return " ".join(digits[i : i + 4] for i in range(0, len(digits), 4))


def strip_controls(text: str) -> str:
    """``text`` without control and format characters; tabs and newlines become spaces."""
    out = []
    for ch in text:
        if ch in "\t\n\r":
            out.append(" ")
        elif unicodedata.category(ch) not in _STRIPPED_CATEGORIES:
            out.append(ch)
    return "".join(out)


def sanitize_nickname(text: str) -> str:
    """A displayable nickname: controls stripped, whitespace collapsed, at most 24 characters.

    May return ``""``; callers decide whether an empty name is acceptable.
    """
    cleaned = " ".join(strip_controls(text).split())
    return cleaned[:NICKNAME_MAX].strip()


@functools.lru_cache(maxsize=8_192)
def _public_key(public_key: bytes) -> Ed25519PublicKey:
    """The key object of a raw public key, kept for the keys verified most recently (a
    lobby peer checks every other's presence each heartbeat: 8,192 is twice the
    lobby's ``MAX_PEERS``); a key that does not load raises as before, uncached."""
    return Ed25519PublicKey.from_public_bytes(public_key)


def verify(public_key: bytes, signature: bytes, data: bytes) -> bool:
    """True if ``signature`` is a valid Ed25519 signature of ``data`` by ``public_key``."""
    if len(public_key) != PUBLIC_KEY_SIZE or len(signature) != SIGNATURE_SIZE:
        return False
    try:
        _public_key(bytes(public_key)).verify(signature, data)
    except (InvalidSignature, ValueError):
        return False
    return True


class Identity:
    """An Ed25519 private key and what follows from it."""

    __slots__ = ("_key", "public_key")

    def __init__(self, key: Ed25519PrivateKey) -> None:
        self._key = key
        self.public_key: bytes = key.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )

    @classmethod
    def from_seed(cls, seed: bytes) -> Identity:
        """The identity whose private key is the 32-byte ``seed`` (random bytes from the edge)."""
        if len(seed) != SEED_SIZE:
            raise ValueError(f"an Ed25519 seed has {SEED_SIZE} bytes, not {len(seed)}")
        return cls(Ed25519PrivateKey.from_private_bytes(bytes(seed)))

    def seed(self) -> bytes:
        """The 32 raw private-key bytes (what ``p2p.keystore`` writes to disk)."""
        return self._key.private_bytes(
            serialization.Encoding.Raw,
            serialization.PrivateFormat.Raw,
            serialization.NoEncryption(),
        )

    @property
    def pk_hex(self) -> str:
        """The public key as 64 lowercase hex characters (how events carry it)."""
        return self.public_key.hex()

    @property
    def peer_id(self) -> str:
        return peer_id(self.public_key)

    @property
    def short_id(self) -> str:
        return short_id(self.public_key)

    def sign(self, data: bytes) -> bytes:
        """The 64-byte Ed25519 signature of ``data``."""
        return self._key.sign(data)

    def __repr__(self) -> str:
        return f"Identity({self.short_id})"


@functools.lru_cache(maxsize=512)
def label(nickname: str, public_key: bytes) -> str:
    """How a peer is shown: ``alice (1a2b 3c4d 5e6f 7081)``.

    Kept for the labels shown most recently: every applied move names its signer
    (``RoundUpdate``), and sanitizing the nickname and hashing the key for it took
    about as long as the machine's own step on a receiver (issue 28).  512: a round's
    members many times over; a flood of fresh lobby keys only cycles it."""
    name = sanitize_nickname(nickname) or "?"
    return f"{name} ({fingerprint(public_key)})"
