"""Our own outage is not the others' silence (docs/protocol.md, "Time and faults"): pure
rules of the lobby and the ``Peer``'s forfeit grace, no broker."""

from __future__ import annotations

from test_protocol_lobby import BOB, T0, meet

from p2p.protocol.lobby import SILENCE_MS


def test_silence_is_not_counted_while_we_are_cut_off() -> None:
    """Alice's connection is down for 5 min: bob stays in her lobby all along (she cannot
    hear anyone), and after she is back his silence counts from then on only."""
    alice, _bob = meet()
    cut = T0 + 1_000
    for t in range(cut, cut + 300_000, 1_000):
        assert not [e for e in alice.tick(t, listening=False) if "silent" in str(e)]
    back = cut + 300_000
    alice.tick(back)  # listening again
    assert BOB.public_key in alice.peers and alice.offline_since(BOB.public_key) is None
    alice.tick(back + SILENCE_MS - 2_000)  # heard at T0, deaf for 5 min: not silent yet
    assert BOB.public_key in alice.peers
    alice.tick(back + SILENCE_MS)
    assert BOB.public_key not in alice.peers
    assert alice.offline_since(BOB.public_key) is None  # a stranger: not watched
    # the old rule (every tick listening) drops him during her outage
    old, _ = meet()
    old.tick(cut + SILENCE_MS)
    assert BOB.public_key not in old.peers


def test_a_partner_counts_as_offline_for_forfeits_only_after_the_grace() -> None:
    """A partner whose Will fired is not yet 'offline' for the forfeit rule: only after
    ``offline_grace_ms`` in our view (4 min by default)."""
    from p2p.peer.config import offline_grace_ms
    from p2p.protocol.round import DEFAULT_TIMEOUTS

    alice, _bob = meet()
    alice.keep([BOB.public_key])
    alice.tick(T0 + SILENCE_MS)  # his silence (a Will works the same way)
    assert alice.offline_since(BOB.public_key) == T0 + SILENCE_MS
    grace = offline_grace_ms(DEFAULT_TIMEOUTS.offline_ms)
    assert grace >= 180_000 + 60_000  # a 3 min outage and a minute to come back

    from p2p.peer.round_link import offline_members
    from p2p.protocol.round import Seat

    seats = [Seat(0, None, None, ""), Seat(1, BOB.public_key, None, "")]
    gone = T0 + SILENCE_MS
    me = b"\x00" * 32
    assert offline_members(alice, seats, me, grace, gone + grace - 1) == frozenset()
    assert offline_members(alice, seats, me, grace, gone + grace) == {BOB.public_key}
