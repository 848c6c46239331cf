"""Issue 23, item 7: a peer that meets a member or a lobby peer of another protocol
version says so in one line (once per key), instead of the two silently disagreeing.

A real peer that is never started (its real edge), real events signed under protocol
version 2 (the previous release), and the shell's catalogue in both languages."""

from __future__ import annotations

import time

from p2p.peer import Peer
from p2p.peer.notifications import RoundNotice
from p2p.protocol import canonical
from p2p.protocol import events as ev
from p2p.protocol.identity import Identity
from p2p.shell.i18n import Translator

BOB = Identity.from_seed(bytes(range(50, 82)))


def _signed(who: Identity, version: int, kind: str, ts: int, body: dict) -> bytes:
    """An event as a peer of protocol ``version`` signs it (canonical bytes)."""
    unsigned = {"v": version, "kind": kind, "pk": who.pk_hex, "ts": ts, "round": None,
                "seq": None, "prev": None, "body": body}
    eid = ev.event_id(unsigned)
    value = dict(unsigned, sig=who.sign(bytes.fromhex(eid)).hex())
    return canonical.encode(value)


def _presence(version: int, ts: int) -> bytes:
    body = {"busy": False, "nick": "bob", "session": "11" * 16, "status": "online", "ttl": 60}
    return _signed(BOB, version, "presence", ts, body)


def _offer(peer: Peer, payload: bytes) -> str:
    verdict = peer.edge.classify(peer.topics.presence(BOB.peer_id).topic, payload)
    while verdict.confirm is not None:
        verdict = verdict.confirm()
    return verdict.reason


def test_a_lobby_peer_of_protocol_v2_is_named_once_in_both_languages() -> None:
    alice = Peer("mqtt://127.0.0.1:1", nick="alice")  # never started: no network
    notes: list = []
    alice.notify = notes.append  # type: ignore[method-assign]
    now = int(time.time() * 1000)
    assert _offer(alice, _presence(2, now)) == "another protocol version"
    (note,) = notes
    assert isinstance(note, RoundNotice) and note.code == "other_version"
    assert note.params == {"nick": "bob", "theirs": 2, "ours": ev.PROTOCOL_VERSION}
    assert note.text == "bob runs protocol v2, this client v5: you can play together once one of you updates"
    # once per key: its next heartbeats say nothing more
    for k in range(1, 5):
        assert _offer(alice, _presence(2, now + 1_000 * k)) == "another protocol version"
    assert len(notes) == 1
    # junk that only claims bob's key (no valid signature) is not "another version"
    forged = _presence(2, now + 9_000).replace(b'"ttl":60', b'"ttl":61')
    assert _offer(alice, forged) == "forged"
    # both languages, from the shell's catalogue
    for lang, word in (("en", "runs protocol v2"), ("de", "nutzt Protokoll v2")):
        text = Translator(lang).t("notice.other_version", **note.params)
        assert word in text and "bob" in text and "v5" in text


def test_a_lobby_peer_of_protocol_v4_is_told_in_one_line() -> None:
    """v5 changed the draw (commitments with the invitation): a v4 peer could not judge
    our rounds, so it is named once, as any other version is."""
    alice = Peer("mqtt://127.0.0.1:1", nick="alice")
    notes: list = []
    alice.notify = notes.append  # type: ignore[method-assign]
    now = int(time.time() * 1000)
    assert _offer(alice, _presence(4, now)) == "another protocol version"
    assert _offer(alice, _presence(4, now + 1_000)) == "another protocol version"
    (note,) = notes
    assert note.code == "other_version" and note.params["theirs"] == 4
    assert note.text == "bob runs protocol v4, this client v5: you can play together once one of you updates"


def test_our_own_version_is_never_reported() -> None:
    alice = Peer("mqtt://127.0.0.1:1", nick="alice")
    notes: list = []
    alice.notify = notes.append  # type: ignore[method-assign]
    now = int(time.time() * 1000)
    assert _offer(alice, _presence(ev.PROTOCOL_VERSION, now)) == ""
    assert notes == []
