"""The sealing of round payloads and invitations (``p2p.protocol.sealing``), no broker."""

from __future__ import annotations

import hashlib

import pytest
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey
from hypothesis import given, settings
from hypothesis import strategies as st

from p2p.protocol import events as ev
from p2p.protocol import sealing
from p2p.protocol.identity import Identity
from p2p.protocol.sealing import SealError
from p2p.protocol.topics import code_secret, private_key

ALICE = Identity.from_seed(bytes(range(32)))
BOB = Identity.from_seed(bytes(range(1, 33)))
CAROL = Identity.from_seed(bytes(range(2, 34)))
KEY = bytes(range(100, 132))
ROUND = "0f" * 16
TOPIC = bytes(range(16))


@settings(max_examples=40, deadline=None)
@given(st.binary(min_size=32, max_size=32))
def test_x25519_key_follows_from_the_ed25519_identity(seed: bytes) -> None:
    """The public map of the Ed25519 key equals the key of the derived private scalar."""
    me = Identity.from_seed(seed)
    expected = X25519PrivateKey.from_private_bytes(
        hashlib.sha512(seed).digest()[:32]
    ).public_key()
    assert sealing.x25519_public(me.public_key) == expected.public_bytes_raw()
    assert sealing.x25519_private(seed).public_key().public_bytes_raw() == (
        expected.public_bytes_raw()
    )


def test_round_payload_opens_only_with_its_key_and_channel() -> None:
    event = ev.make(ALICE, "chat", 1, {"text": "hi"}, round=ROUND)
    sealed = sealing.seal_round(KEY, bytes(12), "chat", event.raw)
    assert len(sealed) == len(event.raw) + sealing.ROUND_OVERHEAD
    assert event.raw not in sealed and b"hi" not in sealed
    assert sealing.open_round(KEY, "chat", sealed) == event.raw
    for key, channel, payload in (
        (bytes(32), "chat", sealed),  # a stranger's key
        (KEY, "events", sealed),  # moved to another channel
        (KEY, "chat", sealed[:-1] + bytes([sealed[-1] ^ 1])),  # one bit flipped
        (KEY, "chat", sealed[:20]),  # cut short
        (KEY, "chat", event.raw),  # not sealed at all
        (KEY, "chat", b""),
    ):
        with pytest.raises(SealError, match="not sealed with the round key"):
            sealing.open_round(key, channel, payload)
    with pytest.raises(SealError, match="no round channel"):
        sealing.seal_round(KEY, bytes(12), "lobby", event.raw)
    with pytest.raises(SealError):
        sealing.seal_round(KEY[:16], bytes(12), "chat", event.raw)


def test_private_round_key_comes_from_the_secret_half_of_the_code() -> None:
    secret = code_secret("ABC234")
    key = sealing.private_round_key(secret)
    assert key == sealing.private_round_key(code_secret("abc-234"))
    assert key != sealing.private_round_key(code_secret("ABC235"))
    # the public half is the topic key: changing it alone does not change the round key
    assert private_key("ABC234", secret) == secret[:16].hex()
    assert sealing.private_round_key(bytes(16) + secret[16:]) == key
    assert key not in secret and secret[:16] not in key


def _invite(sender: Identity, recipient: Identity, key: bytes = KEY) -> bytes:
    genesis = ev.make(
        sender, "cancel", 5, {"reason": "x"}, round=ROUND, seq=1, prev="0" * 64
    )
    return sealing.seal_invitation(
        bytes(range(50, 82)),
        sender.seed(),
        sender.public_key,
        recipient.public_key,
        ROUND,
        key,
        TOPIC,
        genesis.raw,
    )


def test_invitation_opens_only_for_the_invitee() -> None:
    sealed = _invite(ALICE, BOB)
    key, auth, topic, raw = sealing.open_invitation(BOB.seed(), BOB.public_key, sealed)
    event = ev.parse(raw)
    assert key == KEY and topic == TOPIC and event.pk == ALICE.public_key
    assert sealing.check_key_auth(
        BOB.seed(), BOB.public_key, event.pk, event.round, key, topic, auth
    )
    assert len(sealed) == len(raw) + sealing.INVITE_OVERHEAD
    assert ALICE.public_key not in sealed and KEY not in sealed
    for me in (CAROL, ALICE):  # another peer, or the sender itself
        with pytest.raises(SealError, match="not sealed to us"):
            sealing.open_invitation(me.seed(), me.public_key, sealed)
    with pytest.raises(SealError):
        sealing.open_invitation(BOB.seed(), BOB.public_key, sealed[:-1] + b"\0")


def test_a_fellow_invitee_cannot_hand_us_a_wrong_round_key() -> None:
    """Carol holds alice's signed event but not alice's key: her wrapping fails auth."""
    sealed = _invite(ALICE, BOB)
    _, _, _, raw = sealing.open_invitation(BOB.seed(), BOB.public_key, sealed)
    forged = sealing.seal_invitation(
        bytes(32),
        CAROL.seed(),
        CAROL.public_key,
        BOB.public_key,
        ROUND,
        bytes(32),
        bytes(16),
        raw,
    )
    key, auth, topic, raw2 = sealing.open_invitation(BOB.seed(), BOB.public_key, forged)
    assert raw2 == raw and key == bytes(32)
    assert not sealing.check_key_auth(
        BOB.seed(), BOB.public_key, ALICE.public_key, ROUND, key, topic, auth
    )
    # the genuine auth does not carry over to another round, key or topic
    _, auth, _, _ = sealing.open_invitation(BOB.seed(), BOB.public_key, sealed)
    for rnd, key, topic in (
        ("1f" * 16, KEY, TOPIC),
        (ROUND, bytes(32), TOPIC),
        (ROUND, KEY, bytes(16)),
    ):
        assert not sealing.check_key_auth(
            BOB.seed(), BOB.public_key, ALICE.public_key, rnd, key, topic, auth
        )
    assert sealing.check_key_auth(
        BOB.seed(), BOB.public_key, ALICE.public_key, ROUND, KEY, TOPIC, auth
    )


def test_unusable_public_keys_are_one_line_errors() -> None:
    for bad in (b"\x01" + bytes(31), b"\xff" * 32, b"short"):
        with pytest.raises(SealError):
            sealing.x25519_public(bad)
    assert not sealing.check_key_auth(
        BOB.seed(), BOB.public_key, b"\x01" + bytes(31), ROUND, KEY, TOPIC, bytes(32)
    )
