"""End-to-end sealing: round traffic only a round's members can read.

Pure functions; every key and nonce comes in as an argument (``p2p.peer`` draws them
from ``os.urandom``).  Two kinds of sealed payload (``docs/protocol.md`` §12):

* **round payloads** -- everything on ``round/<key>/events|sync|chat|genesis`` (and a
  slow round's retained ``store/<peer id>``, channel ``store``):
  ``nonce (12) ‖ ChaCha20-Poly1305(round key, nonce, event bytes, aad)`` with
  ``aad = "p2p/seal/round" ‖ 0x00 ‖ channel`` (the topic's last segment), so a payload
  cannot be moved to another channel.  The round key is 32 random bytes chosen by the
  admin, or, for a private round, derived from the join code (``private_round_key``):
  whoever opens a payload with it holds the code or was invited.
* **invitations** -- what goes to ``inbox/<peer id>`` (a genesis or a cancel), sealed to
  the invitee's X25519 key with a fresh ephemeral key (ECIES):
  ``eph_pk (32) ‖ ChaCha20-Poly1305(kek, 0, round key ‖ auth ‖ topic key ‖ event, aad)``,
  ``kek = HKDF(X25519(eph, invitee))``.  The nonce is zero because every kek is used
  once.  The topic key (16 bytes) names the round's topics: the round id, or a private
  round's code-derived key, which an invitee cannot compute without the code.
  ``auth = HMAC(HKDF(X25519(sender, invitee)), round id ‖ round key ‖ topic key)``
  proves that the signer of the enclosed event (the admin) chose these for us: a fellow
  invitee cannot hand us wrong ones, and the sender stays hidden from anyone but the
  invitee.

Every peer's X25519 key follows from its Ed25519 identity (RFC 7748 / RFC 8032: the
private scalar is the first half of SHA-512(seed), the public key is the birational map
of the Edwards point, as libsodium's ``crypto_sign_ed25519_pk_to_curve25519``), so no
extra key is announced, an invitation can be sealed to any key we know, and a restarted
peer still opens what was sealed to it.

Opening never raises anything but ``SealError`` (one line); a failed open costs one
Poly1305 check (round payloads) or one X25519 (invitations) -- before any signature.
"""

from __future__ import annotations

import functools
import hashlib
import hmac

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric.x25519 import (
    X25519PrivateKey,
    X25519PublicKey,
)
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

KEY_SIZE = 32
"""Round keys, X25519 keys and secrets: 32 bytes."""
NONCE_SIZE = 12
TAG_SIZE = 16
ROUND_OVERHEAD = NONCE_SIZE + TAG_SIZE
"""Bytes a sealed round payload adds to the event."""
TOPIC_KEY_SIZE = 16
INVITE_OVERHEAD = KEY_SIZE + TAG_SIZE + KEY_SIZE + 32 + TOPIC_KEY_SIZE
"""Bytes a sealed invitation adds to the event (eph key, tag, round key, auth, topic key)."""
CHANNELS = ("events", "sync", "chat", "genesis", "store")
"""The round topics' last segments; each is bound into its payloads."""

_P = 2**255 - 19
_ROUND_TAG = b"p2p/seal/round\x00"
_INVITE_TAG = b"p2p/seal/invite\x00"
_AUTH_TAG = b"p2p/seal/key-auth\x00"
_PRIVATE_TAG = b"p2p/seal/private-round-key\x00"
_ZERO_NONCE = bytes(NONCE_SIZE)


class SealError(ValueError):
    """A payload that cannot be opened (or a key that cannot be used); one line."""


def _hkdf(ikm: bytes, info: bytes) -> bytes:
    return HKDF(
        algorithm=hashes.SHA256(), length=KEY_SIZE, salt=None, info=info
    ).derive(ikm)


# -- keys --------------------------------------------------------------------------------


def private_round_key(secret: bytes) -> bytes:
    """The round key of a private round, from its join code's 32-byte scrypt secret.

    Only the secret half (bytes 16..31) goes in: bytes 0..15 are the public topic key.
    """
    if len(secret) != KEY_SIZE:
        raise SealError("a join code secret has 32 bytes")
    return _hkdf(secret[16:], _PRIVATE_TAG)


def x25519_private(seed: bytes) -> X25519PrivateKey:
    """The X25519 key of the Ed25519 identity with this 32-byte seed."""
    if len(seed) != KEY_SIZE:
        raise SealError("an Ed25519 seed has 32 bytes")
    return X25519PrivateKey.from_private_bytes(hashlib.sha512(seed).digest()[:32])


@functools.lru_cache(maxsize=4096)
def x25519_public(ed25519_pk: bytes) -> bytes:
    """The X25519 public key (32 bytes) of an Ed25519 public key: u = (1 + y) / (1 - y)."""
    if len(ed25519_pk) != KEY_SIZE:
        raise SealError("an Ed25519 public key has 32 bytes")
    y = int.from_bytes(ed25519_pk, "little") & ((1 << 255) - 1)
    if y >= _P or y == 1:
        raise SealError("not a usable Ed25519 public key")
    u = (1 + y) * pow(1 - y, _P - 2, _P) % _P
    return u.to_bytes(KEY_SIZE, "little")


def _exchange(private: X25519PrivateKey, public: bytes) -> bytes:
    try:
        return private.exchange(X25519PublicKey.from_public_bytes(public))
    except ValueError as err:  # a low-order point: the shared secret would be zero
        raise SealError(f"unusable key exchange: {err}") from None


# -- round payloads ----------------------------------------------------------------------


def _aad(channel: str) -> bytes:
    if channel not in CHANNELS:
        raise SealError(f"no round channel {channel!r}")
    return _ROUND_TAG + channel.encode("ascii")


@functools.lru_cache(maxsize=256)
def _round_cipher(key: bytes) -> ChaCha20Poly1305:
    """The cipher of a round key, kept for the keys used most recently (every payload of
    a round is sealed or opened with its one key; 256 rounds is far more than a peer
    holds at once)."""
    return ChaCha20Poly1305(key)


def seal_round(key: bytes, nonce: bytes, channel: str, plaintext: bytes) -> bytes:
    """Seal one round payload (``nonce``: 12 fresh random bytes, never reused with ``key``)."""
    if len(key) != KEY_SIZE or len(nonce) != NONCE_SIZE:
        raise SealError("a round key has 32 bytes and a nonce 12")
    return nonce + _round_cipher(bytes(key)).encrypt(nonce, plaintext, _aad(channel))


def open_round(key: bytes, channel: str, payload: bytes) -> bytes:
    """The event bytes inside a round payload; ``SealError`` if not sealed with ``key``."""
    if len(key) != KEY_SIZE:
        raise SealError("a round key has 32 bytes")
    if len(payload) < ROUND_OVERHEAD:
        raise SealError("not sealed with the round key")
    try:
        return _round_cipher(bytes(key)).decrypt(
            payload[:NONCE_SIZE], payload[NONCE_SIZE:], _aad(channel)
        )
    except InvalidTag:
        raise SealError("not sealed with the round key") from None


# -- invitations -------------------------------------------------------------------------


def _key_auth(
    shared: bytes,
    sender_pk: bytes,
    recipient_pk: bytes,
    round_id: str,
    key: bytes,
    topic_key: bytes,
) -> bytes:
    auth_key = _hkdf(shared, _AUTH_TAG + sender_pk + recipient_pk)
    data = bytes.fromhex(round_id) + key + topic_key
    return hmac.new(auth_key, data, hashlib.sha256).digest()


def seal_invitation(
    ephemeral: bytes,
    sender_seed: bytes,
    sender_pk: bytes,
    recipient_pk: bytes,
    round_id: str,
    round_key: bytes,
    topic_key: bytes,
    event: bytes,
) -> bytes:
    """Seal ``event`` (a genesis or cancel of ``round_id``, signed by the sender), the
    round key and the topic key to the Ed25519 key ``recipient_pk``.  ``ephemeral``: 32
    fresh random bytes."""
    if len(ephemeral) != KEY_SIZE or len(round_key) != KEY_SIZE:
        raise SealError("ephemeral key and round key have 32 bytes")
    if len(topic_key) != TOPIC_KEY_SIZE:
        raise SealError("a topic key has 16 bytes")
    eph = X25519PrivateKey.from_private_bytes(ephemeral)
    eph_pk = eph.public_key().public_bytes_raw()
    them = x25519_public(recipient_pk)
    kek = _hkdf(_exchange(eph, them), _INVITE_TAG + eph_pk + recipient_pk)
    auth = _key_auth(
        _exchange(x25519_private(sender_seed), them),
        sender_pk,
        recipient_pk,
        round_id,
        round_key,
        topic_key,
    )
    body = round_key + auth + topic_key + event
    return eph_pk + ChaCha20Poly1305(kek).encrypt(_ZERO_NONCE, body, _INVITE_TAG)


def open_invitation(
    my_seed: bytes, my_pk: bytes, payload: bytes
) -> tuple[bytes, bytes, bytes, bytes]:
    """Open an inbox payload sealed to us: ``(round key, auth, topic key, event bytes)``.

    The caller parses the event, then checks ``auth`` with ``check_key_auth`` against the
    event's signer and round before trusting the round key.
    """
    if len(payload) < INVITE_OVERHEAD:
        raise SealError("not sealed to us")
    eph_pk = payload[:KEY_SIZE]
    me = x25519_private(my_seed)
    kek = _hkdf(_exchange(me, eph_pk), _INVITE_TAG + eph_pk + my_pk)
    try:
        body = ChaCha20Poly1305(kek).decrypt(
            _ZERO_NONCE, payload[KEY_SIZE:], _INVITE_TAG
        )
    except InvalidTag:
        raise SealError("not sealed to us") from None
    topic_end = 2 * KEY_SIZE + TOPIC_KEY_SIZE
    return (
        body[:KEY_SIZE],
        body[KEY_SIZE : 2 * KEY_SIZE],
        body[2 * KEY_SIZE : topic_end],
        body[topic_end:],
    )


def check_key_auth(
    my_seed: bytes,
    my_pk: bytes,
    sender_pk: bytes,
    round_id: str,
    round_key: bytes,
    topic_key: bytes,
    auth: bytes,
) -> bool:
    """True if ``sender_pk``'s holder sealed ``round_key`` and ``topic_key`` of
    ``round_id`` to us."""
    try:
        shared = _exchange(x25519_private(my_seed), x25519_public(sender_pk))
    except SealError:
        return False
    expected = _key_auth(shared, sender_pk, my_pk, round_id, round_key, topic_key)
    return hmac.compare_digest(expected, auth)
