"""Canonical encoding, identities, the signed envelope, topics and the key file."""

from __future__ import annotations

import json
import os
import stat

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from p2p import keystore
from p2p.protocol import canonical, events, topics
from p2p.protocol.identity import (
    Identity,
    fingerprint,
    label,
    peer_id,
    sanitize_nickname,
    verify,
)

ALICE = Identity.from_seed(bytes(range(32)))
BOB = Identity.from_seed(bytes(range(1, 33)))
ROUND = "ab" * 16

# -- canonical -------------------------------------------------------------------------

keys = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)
texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=20)
values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(canonical.INT_MIN, canonical.INT_MAX)
    | texts,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(values)
def test_canonical_round_trip(value: object) -> None:
    data = canonical.encode(value)
    assert canonical.decode(data) == value
    assert canonical.encode(canonical.decode(data)) == data


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(keys, st.integers(-5, 5), min_size=2, max_size=6))
def test_canonical_rejects_reordered_or_spaced(value: dict[str, int]) -> None:
    data = canonical.encode(value)
    reversed_text = json.dumps(
        dict(reversed(list(value.items()))), separators=(",", ":")
    )
    if reversed_text.encode() != data:
        with pytest.raises(canonical.CanonicalError):
            canonical.decode(reversed_text.encode())
    with pytest.raises(canonical.CanonicalError):
        canonical.decode(
            json.dumps(value, sort_keys=True).encode()
        )  # default ", " separators


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=64))
def test_canonical_decode_never_crashes(data: bytes) -> None:
    try:
        value = canonical.decode(data)
    except canonical.CanonicalError:
        return
    assert canonical.encode(value) == data


@pytest.mark.parametrize(
    "data, reason",
    [
        (b'{"a":1.5}', "floats"),
        (b'{"a":1e3}', "floats"),
        (b"NaN", "NaN"),
        (b'{"a":1,"a":2}', "duplicate"),
        (b'{"A":1}', "key"),
        (b'{"a":"\\u0041"}', "canonical"),
        (b'"\\ud800"', "surrogate"),
        (b"\xff", "UTF-8"),
        (b"[" * 40 + b"]" * 40, "deeper"),
        (b"[" * 5000 + b"]" * 5000, "deeper"),
        (b"99999999999999999999", "range"),
        (b"1" * 5000, "JSON"),
        (b" 1", "canonical"),
        (b"{}", ""),
    ],
)
def test_canonical_rejections(data: bytes, reason: str) -> None:
    if not reason:
        assert canonical.decode(data) == {}
        return
    with pytest.raises(canonical.CanonicalError, match=reason):
        canonical.decode(data)


def test_canonical_encode_rejects_floats_and_bad_keys() -> None:
    for bad in (1.0, {"Key": 1}, {1: 2}, (1, 2), b"x", 2**64):
        with pytest.raises(canonical.CanonicalError):
            canonical.encode(bad)  # type: ignore[arg-type]


def test_canonical_size_cap_checked_first() -> None:
    with pytest.raises(canonical.CanonicalError, match="exceeds"):
        canonical.decode(b"1" * 100, max_size=10)


# -- identity ----------------------------------------------------------------------------


def test_identity_fingerprints_and_signatures() -> None:
    assert ALICE.peer_id == peer_id(ALICE.public_key) and len(ALICE.peer_id) == 32
    assert ALICE.short_id == ALICE.peer_id[:8] and ALICE.peer_id != BOB.peer_id
    sig = ALICE.sign(b"data")
    assert verify(ALICE.public_key, sig, b"data")
    assert not verify(BOB.public_key, sig, b"data")
    assert not verify(ALICE.public_key, sig, b"date")
    assert not verify(ALICE.public_key, sig[:10], b"data")
    assert Identity.from_seed(ALICE.seed()).public_key == ALICE.public_key
    assert label("alice", ALICE.public_key) == f"alice ({fingerprint(ALICE.public_key)})"
    assert len(fingerprint(ALICE.public_key).replace(" ", "")) * 4 == 64


@pytest.mark.parametrize(
    "raw, clean",
    [
        ("  alice  ", "alice"),
        ("al\x00i\x1bce", "alice"),
        ("a\u202eb", "ab"),  # bidi override
        ("a\n\tb", "a b"),
        ("x" * 40, "x" * 24),
        ("\x07\x08", ""),
    ],
)
def test_sanitize_nickname(raw: str, clean: str) -> None:
    assert sanitize_nickname(raw) == clean


# -- events ------------------------------------------------------------------------------


def presence(who: Identity = ALICE, **body: object) -> events.Event:
    fields = {
        "nick": "alice",
        "status": "online",
        "busy": False,
        "session": "00" * 16,
        "ttl": 60,
    }
    fields.update(body)
    return events.make(who, "presence", 1000, fields)


def test_event_round_trip_and_id() -> None:
    event = presence()
    again = events.parse(event.raw)
    assert again == event
    assert event.id == events.event_id(
        {k: v for k, v in event.value().items() if k != "sig"}
    )
    assert len(event.raw) < 512


def test_event_tampering_is_detected() -> None:
    event = presence()
    value = event.value()
    value["body"]["nick"] = "mallory"
    with pytest.raises(events.EventError, match="bad signature"):
        events.parse(canonical.encode(value))
    value = event.value()
    value["pk"] = BOB.pk_hex  # claim someone else's key
    with pytest.raises(events.EventError, match="bad signature"):
        events.parse(canonical.encode(value))


@pytest.mark.parametrize(
    "payload, reason",
    [
        (b"", "empty"),
        (b"x" * (events.MAX_EVENT_SIZE + 1), "exceeds"),
        (b"not json", "JSON"),
        (b"[]", "envelope"),
        (b'{"a":1}', "envelope"),
    ],
)
def test_parse_rejects_garbage(payload: bytes, reason: str) -> None:
    with pytest.raises(events.EventError, match=reason):
        events.parse(payload)


def test_parse_rejects_wrong_version_and_unknown_kind() -> None:
    for version in (6, 4, 3, 2, 1, True, "5", None):  # v1-v4 only in old logs; true is not 1
        value = presence().value()
        value["v"] = version
        with pytest.raises(events.EventError, match="version"):
            events.parse(canonical.encode(value))
    value = presence().value()
    value["kind"] = "teleport"
    with pytest.raises(events.EventError, match="unknown kind"):
        events.parse(canonical.encode(value))


@pytest.mark.parametrize(
    "kind, body, context, reason",
    [
        ("presence", {"nick": "a"}, {}, "body must have"),
        (
            "presence",
            {
                "nick": " a",
                "status": "online",
                "busy": False,
                "session": "00" * 16,
                "ttl": 5,
            },
            {},
            "sanitized",
        ),
        ("chat", {"text": "x" * 281, "ns": "p2p/v1/public"}, {}, "at most"),
        ("chat", {"text": "bell\x07", "ns": "p2p/v1/public"}, {}, "control"),
        ("chat", {"text": "hi"}, {}, "body must have exactly: ns, text"),
        ("chat", {"text": "hi", "ns": "public"}, {}, "namespace"),
        ("chat", {"text": "hi", "ns": "x"}, {"round": ROUND}, "exactly: text"),
        ("hello", {"nick": "a"}, {}, "exactly: nick, ns"),
        ("chat", {"text": "hi"}, {"round": ROUND, "seq": 3}, "no seq"),
        (
            "move",
            {"ply": 0, "move": "a1", "state": "00" * 32},
            {"round": ROUND, "seq": 0},
            "genesis",
        ),
        (
            "move",
            {"ply": -1, "move": "a1", "state": "00" * 32},
            {"round": ROUND, "seq": 2, "prev": "00" * 32},
            "ply",
        ),
        (
            "accept",
            {"seat": 1},
            {"round": ROUND, "seq": 1, "prev": "00" * 32},
            "no seq",
        ),
        ("accept", {"seat": 1}, {"round": "AB" * 16, "prev": "00" * 32}, "hex"),
        (
            "presence",
            {
                "nick": "a",
                "status": "online",
                "busy": 0,
                "session": "00" * 16,
                "ttl": 5,
            },
            {},
            "true or false",
        ),
    ],
)
def test_make_refuses_invalid_events(
    kind: str, body: dict, context: dict, reason: str
) -> None:
    with pytest.raises(events.EventError, match=reason):
        events.make(ALICE, kind, 1, body, **context)


def test_sealed_events_are_verified() -> None:
    genesis_id = "11" * 32
    accept = events.make(BOB, "accept", 5, {"seat": 1}, round=ROUND, prev=genesis_id)
    start = events.make(
        ALICE,
        "start",
        6,
        {"sealed": [accept.value()]},
        round=ROUND,
        seq=1,
        prev=genesis_id,
    )
    assert events.parse(start.raw).sealed() == [accept]
    forged = accept.value()
    forged["body"]["seat"] = 2
    with pytest.raises(events.EventError, match="sealed event: bad signature"):
        events.make(
            ALICE, "start", 6, {"sealed": [forged]}, round=ROUND, seq=1, prev=genesis_id
        )
    commit = events.make(
        BOB, "commit", 5, {"commit": "22" * 32}, round=ROUND, prev=genesis_id
    )
    with pytest.raises(events.EventError, match="cannot be sealed"):
        events.make(
            ALICE,
            "start",
            6,
            {"sealed": [commit.value()]},
            round=ROUND,
            seq=1,
            prev=genesis_id,
        )


# -- topics ------------------------------------------------------------------------------


def test_topics_layout() -> None:
    t = topics.Topics()
    assert t.root == "p2p/v2/public"
    assert t.presence(ALICE.peer_id) == topics.Route(
        f"p2p/v2/public/lobby/presence/{ALICE.peer_id}", 0, True
    )
    assert t.parse_presence(t.presence(ALICE.peer_id).topic) == ALICE.peer_id
    assert t.parse_presence("p2p/v2/other/lobby/presence/" + ALICE.peer_id) is None
    assert t.round_events(ROUND).qos == 1 and not t.round_events(ROUND).retain
    assert topics.Topics("friends").hello().topic == "p2p/v2/friends/lobby/hello"
    with pytest.raises(topics.TopicError):
        topics.Topics("Bad/Name")


def test_join_codes() -> None:
    code = topics.make_code(os.urandom(8))
    assert len(code) == 6 and set(code) <= set(topics.CODE_ALPHABET)
    assert not set("01OIL") & set(topics.CODE_ALPHABET)
    assert topics.normalize_code(code.lower()[:3] + "-" + code[3:]) == code
    with pytest.raises(topics.TopicError, match="never contains"):
        topics.normalize_code("ABC10O")
    key = topics.private_key("abcdef")
    assert key == topics.private_key("ABC DEF") and len(key) == 32
    assert key != topics.private_key("ABCDEG")
    assert code not in key
    proof = topics.join_proof("ABCDEF", ROUND, BOB.public_key)
    assert proof != topics.join_proof("ABCDEF", ROUND, ALICE.public_key)


# -- key file ----------------------------------------------------------------------------


def test_keystore_creates_once_with_mode_0600(tmp_path) -> None:
    path = tmp_path / "cfg" / "identity.key"
    first = keystore.load_or_create(path, random_bytes=lambda n: bytes(range(n)))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again = keystore.load_or_create(path, random_bytes=lambda n: bytes(n))
    assert again.public_key == first.public_key == ALICE.public_key


def test_keystore_rejects_corrupt_file(tmp_path) -> None:
    path = tmp_path / "identity.key"
    path.write_text("hello world\n")
    with pytest.raises(keystore.KeyFileError, match="not a p2p key file"):
        keystore.load(path)
    path.write_text("p2p-ed25519-seed-v1 abcd\n")
    with pytest.raises(keystore.KeyFileError, match="wrong size"):
        keystore.load(path)


@settings(max_examples=200, deadline=None)
@given(
    st.text(
        st.characters(blacklist_categories=("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp")),
        min_size=1,
        max_size=280,
    )
)
def test_chat_events_round_trip(text: str) -> None:
    event = events.make(ALICE, "chat", 5, {"text": text, "ns": "p2p/v1/public"})
    assert events.parse(event.raw) == event


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_any_single_byte_change_is_rejected(data: st.DataObject) -> None:
    raw = bytearray(presence().raw)
    index = data.draw(st.integers(0, len(raw) - 1))
    new = data.draw(st.integers(0, 255).filter(lambda b: b != raw[index]))
    raw[index] = new
    with pytest.raises(events.EventError):
        events.parse(bytes(raw))
