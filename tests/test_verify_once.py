"""Each event is signed once by its author and its signature checked once by each
receiver (issue 28): counted by wrapping the Ed25519 check itself, over a real round
between real peers on a real Mosquitto."""

from __future__ import annotations

from collections import Counter

import pytest
from conftest import Peers, play_out, run, start_round

from p2p.peer import checks
from p2p.protocol import canonical, events, identity
from p2p.protocol.identity import Identity


@pytest.fixture()
def verifications(monkeypatch: pytest.MonkeyPatch) -> Counter[tuple[bytes, bytes, bytes]]:
    """Every Ed25519 check made in this process, counted by (key, signature, data)."""
    counted: Counter[tuple[bytes, bytes, bytes]] = Counter()
    real = identity.verify

    def counting(public_key: bytes, signature: bytes, data: bytes) -> bool:
        counted[(bytes(public_key), bytes(signature), bytes(data))] += 1
        return real(public_key, signature, data)

    for module in (identity, events, checks):
        monkeypatch.setattr(module, "verify", counting)
    return counted


def test_every_move_checked_once_per_receiver_and_never_by_its_author(
    peers: Peers, verifications: Counter[tuple[bytes, bytes, bytes]]
) -> None:
    async def body() -> None:
        async with peers("alice", "bob", "carol") as (alice, bob, carol):
            rounds = await start_round(alice, [bob, carol], "cube")
            await play_out(rounds)
            chain = rounds[0].log()
            checked = [*chain, *(inner for e in chain for inner in e.sealed())]
            assert sum(e.kind == "move" for e in checked) >= 7
            assert {"accept", "reveal"} <= {e.kind for e in checked}
            for e in checked:
                # two receivers, one check each; the author checks nothing it signed;
                # a side event sealed into the chain is not checked again
                assert verifications[(e.pk, e.sig, bytes.fromhex(e.id))] == 2, e.describe()

    run(body())


def test_an_event_we_sign_is_not_checked_again_and_parses_to_itself(
    verifications: Counter[tuple[bytes, bytes, bytes]],
) -> None:
    me = Identity.from_seed(bytes(32))
    made = events.make(me, "chat", 5, {"text": "hi", "ns": "p2p/v3/public"})
    assert not verifications  # signed once, not verified by its author
    assert made.raw == canonical.encode(made.value())  # the spliced wire bytes are canonical
    parsed = events.parse(made.raw)
    assert (parsed.id, parsed.raw, parsed.sig) == (made.id, made.raw, made.sig)
    assert sum(verifications.values()) == 1


def test_a_signature_claimed_checked_is_only_trusted_for_those_very_inputs(
    verifications: Counter[tuple[bytes, bytes, bytes]],
) -> None:
    """``parse(..., signed=)`` skips its own check only for the key, signature and id it
    names; a claim about other bytes, or a forged signature, is checked and refused."""
    me, other = Identity.from_seed(bytes(32)), Identity.from_seed(bytes([1]) * 32)
    made = events.make(me, "chat", 5, {"text": "hi", "ns": "p2p/v3/public"})
    claim = checks._unverified(made.raw, me.public_key)
    assert claim is not None and checks._checked(claim)
    assert events.parse(made.raw, signed=claim).id == made.id
    assert sum(verifications.values()) == 1  # the edge's one check, not the parse's
    forged = made.raw.replace(made.sig.hex().encode(), bytes(64).hex().encode())
    with pytest.raises(events.EventError, match="bad signature"):
        events.parse(forged, signed=claim)  # the claim names another signature
    wrong_key = events.Signed(other.public_key, made.sig, made.id)
    assert events.parse(made.raw, signed=wrong_key).id == made.id  # checked itself
    assert sum(verifications.values()) == 3


def test_the_id_the_edge_hashed_is_taken_for_those_very_bytes_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The edge cuts ``sig`` out of a payload and hashes the rest (``_unverified``);
    ``parse`` of those very bytes takes that id instead of cutting and hashing them
    again, and any other bytes are cut and hashed as before (so a claim made for one
    payload gives no id to another)."""
    cuts = 0
    real = events._unsigned_bytes

    def counting(raw: bytes, sig: str) -> bytes | None:
        nonlocal cuts
        cuts += 1
        return real(raw, sig)

    monkeypatch.setattr(events, "_unsigned_bytes", counting)
    me = Identity.from_seed(bytes(32))
    made = events.make(me, "chat", 5, {"text": "hi", "ns": "p2p/v3/public"})
    other = events.make(me, "chat", 6, {"text": "ho", "ns": "p2p/v3/public"})
    claim = checks._unverified(made.raw, me.public_key)
    assert claim is not None and claim.payload == made.raw
    assert events.parse(bytes(made.raw), signed=claim).id == made.id
    assert cuts == 0
    assert events.parse(other.raw, signed=claim).id == other.id  # hashed itself
    assert events.parse(made.raw).id == made.id  # no claim: hashed itself
    assert cuts == 2


def test_a_sealed_copy_is_taken_only_if_byte_for_byte_the_event_held() -> None:
    """A start event sealing an accept: the accept we hold is reused, a different
    value under the same kind and key is checked (and a forged one refused)."""
    admin, guest = Identity.from_seed(bytes(32)), Identity.from_seed(bytes([1]) * 32)
    rnd, prev = "ab" * 16, "cd" * 32
    accept = events.make(guest, "accept", 7, {"seat": 1}, round=rnd, prev=prev)
    start = events.make(
        admin, "start", 8, {"sealed": [accept.value()]}, round=rnd, seq=1, prev=prev
    )
    assert start.sealed() == [accept] and start.sealed()[0] is accept
    parsed = events.parse(start.raw, held=lambda value: accept)
    assert parsed.sealed()[0] is accept
    tampered = accept.value()
    tampered["body"] = {"seat": 0}
    with pytest.raises(events.EventError, match="bad signature"):
        events.make(admin, "start", 8, {"sealed": [tampered]}, round=rnd, seq=1, prev=prev)
