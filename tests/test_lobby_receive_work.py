"""What receiving a presence costs, counted (issue 28, the lobby at 1,000 peers): the
work a cut relies on, never a timing.  Each peer of a lobby of N checks N presences per
heartbeat, so each repeated step there is paid N times over; the checks themselves stay
(a forged, replayed or flooded presence is refused: tests/test_protocol_lobby*.py,
tests/test_integration_lobby_flood.py)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from p2p.protocol import canonical, events
from p2p.protocol.effects import Publish
from p2p.protocol.identity import Identity
from p2p.protocol.lobby import Lobby
from p2p.protocol.topics import Topics

V = events.PROTOCOL_VERSION
ME = Identity.from_seed(bytes(32))
OTHER = Identity.from_seed(bytes([7]) * 32)


def _samples() -> list[events.Event]:
    """Events of every shape, with text that looks like a ``sig`` field inside the body."""
    lobby = Lobby(ME, "alice", bytes(16), Topics())
    lobby.will(1_000)
    (presence,) = lobby.connect(2_000)
    tricky = ',"sig":"' + "ab" * 64 + f'","ts":1,"v":{V}}}'
    chat = events.make(ME, "chat", 3, {"text": tricky, "ns": "p2p/v2/public"})
    round_id = "0" * 32
    genesis = events.make(
        ME, "genesis", 4,
        {"game": "cube", "options": {}, "seats": [{"pk": ME.pk_hex, "level": None},
                                                  {"pk": OTHER.pk_hex, "level": None}],
         "start": 0, "expires": 10**9, "private": False},
        round=round_id, seq=0,
    )
    accept = events.make(OTHER, "accept", 5, {"seat": 1}, round=round_id, prev=genesis.id)
    start = events.make(
        ME, "start", 6, {"sealed": [accept.value()]}, round=round_id, seq=1, prev=genesis.id
    )
    assert isinstance(presence, Publish)
    return [presence.event, chat, genesis, accept, start]


def test_a_received_event_is_encoded_once_and_keeps_its_id(monkeypatch: pytest.MonkeyPatch) -> None:
    """``parse`` checks that the bytes are canonical (one encoding of the decoded value)
    and takes the id from those very bytes less their ``sig``: the envelope is not
    encoded a second time for its id (before: twice per presence)."""
    calls: Counter[str] = Counter()
    real = canonical.encode

    def counting(value: Any) -> bytes:
        calls["encode"] += 1
        return real(value)

    monkeypatch.setattr(canonical, "encode", counting)
    for made in _samples():
        calls.clear()
        parsed = events.parse(made.raw)
        encoded = calls["encode"]
        value = canonical.decode(made.raw)
        assert isinstance(value, dict)
        # the id as defined: SHA-256 of the canonical envelope without ``sig``
        assert parsed.id == made.id == events.event_id(events._unsigned(value)), made.kind
        assert (parsed.raw, parsed.sig, parsed.pk) == (made.raw, made.sig, made.pk)
        if not made.inner:
            assert encoded == 1, (made.kind, encoded)


def test_bytes_that_are_not_the_signed_event_are_refused() -> None:
    """The cut takes nothing on trust: a changed body, ``ts`` or ``sig`` (also where the
    body holds text that looks like a ``sig`` field) fails the signature check."""
    for made in _samples():
        raw = made.raw
        at = raw.rfind(b'"ts":')
        changes = [
            raw.replace(b'"ts":' + str(made.ts).encode(), b'"ts":' + str(made.ts + 1).encode()),
            raw.replace(made.sig.hex().encode(), OTHER.sign(b"x").hex().encode()),
            raw[:at] + raw[at:].replace(b'"v":%d' % V, b'"v":%d' % (V - 1)),
        ]
        for changed in changes:
            assert changed != raw
            with pytest.raises(events.EventError):
                events.parse(changed)
    chat = _samples()[1]
    body_sig = chat.raw.replace(b"abab", b"abac", 1)  # the look-alike inside the text
    with pytest.raises(events.EventError, match="bad signature"):
        events.parse(body_sig)


def test_unsigned_bytes_refuse_what_the_encoding_would_not_put_there() -> None:
    assert events._unsigned_bytes(b'{"seq":null,"sig":"ab","ts":1}', "cd") is None
    assert events._unsigned_bytes(b'{"seq":null,"ts":1}', "ab") is None
    assert events._unsigned_bytes(b'{"seq":null,"sig":"ab"}', "ab") is None


def _presences(who: Identity, count: int, topics: Topics) -> list[events.Event]:
    lobby = Lobby(who, "bob", bytes(16), topics)
    lobby.will(1_000)
    out = []
    for i in range(count):
        (effect,) = lobby.set_busy(False, 2_000 + i)
        assert isinstance(effect, Publish)
        out.append(effect.event)
    return out


def test_a_known_key_is_not_loaded_or_hashed_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """Per presence of a key heard before, the lobby hashes no peer id for its topic
    check and the signature check loads no key object: both are kept (bounded) for the
    keys heard most recently.  The checks stay: a presence on another key's topic, or
    with a bad signature, is refused as before."""
    from p2p.protocol import identity
    from p2p.protocol import lobby as lobby_module

    topics = Topics()
    mine = Lobby(ME, "alice", bytes(16), topics)
    mine.will(1_000)
    lobby_module._presence_topic.cache_clear()
    identity._public_key.cache_clear()
    hashed: Counter[bytes] = Counter()
    real_peer_id = lobby_module.peer_id

    def counting(pk: bytes) -> str:
        hashed[pk] += 1
        return real_peer_id(pk)

    monkeypatch.setattr(lobby_module, "peer_id", counting)
    sent = _presences(OTHER, 5, topics)
    topic = topics.presence(OTHER.peer_id).topic
    for event in sent:
        parsed = events.parse(event.raw)
        assert mine.replayed(parsed, 3_000, topic) is None
        assert not [e for e in mine.receive(parsed, 3_000, topic) if hasattr(e, "reason")]
    assert mine.peers[OTHER.public_key].ts == sent[-1].ts
    assert hashed[OTHER.public_key] == 1  # once for ten topic checks
    assert identity._public_key.cache_info().misses == 1  # one key object for five checks
    # the same checks as ever
    later = _presences(OTHER, 7, topics)[-1]
    elsewhere = topics.presence(ME.peer_id).topic
    assert mine.replayed(later, 3_000, elsewhere) == "presence on another peer's topic"
    assert [getattr(e, "reason", "") for e in mine.receive(later, 3_000, elsewhere)] == [
        "presence on another peer's topic"
    ]
    foreign = Topics("other").presence(OTHER.peer_id).topic
    assert mine.replayed(later, 3_000, foreign) == "presence on another peer's topic"
    forged = later.raw.replace(later.sig.hex().encode(), ME.sign(b"x").hex().encode())
    with pytest.raises(events.EventError, match="bad signature"):
        events.parse(forged)


def test_canonical_bytes_build_no_json_coder_per_message(monkeypatch: pytest.MonkeyPatch) -> None:
    """``json.dumps``/``json.loads`` with arguments build a new encoder or decoder per
    call; the canonical encoding uses one of each, built at import."""
    import json

    built: Counter[str] = Counter()
    for cls in (json.JSONEncoder, json.JSONDecoder):
        real = cls.__init__

        def counting(self: Any, *args: Any, _real: Any = real, _name: str = cls.__name__,
                     **kwargs: Any) -> None:
            built[_name] += 1
            _real(self, *args, **kwargs)

        monkeypatch.setattr(cls, "__init__", counting)
    for made in _samples():
        assert canonical.encode(canonical.decode(made.raw)) == made.raw
        events.parse(made.raw)
    assert not built
