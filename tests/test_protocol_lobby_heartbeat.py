"""The heartbeat grows with the lobby (issue 28 item 4), pure: each peer beats every
N / R seconds (never more often than every 20 s, never less than every
``MAX_HEARTBEAT_MS``), announces it in the ``ttl`` of its signed presence, and receivers
drop it after the silence that ``ttl`` announced, bounded; up to 100 peers nothing
changes.  The live version is in tests/test_integration_lobby_heartbeat.py."""

from __future__ import annotations

import pytest

from p2p.protocol import events
from p2p.protocol import lobby as rules
from p2p.protocol.effects import Dropped, Notice, Publish
from p2p.protocol.identity import Identity
from p2p.protocol.lobby import (
    ESTABLISHED_MS,
    HEARTBEAT_MS,
    MAX_HEARTBEAT_MS,
    PRESENCE_TTL_S,
    SILENCE_MS,
    STALE_MS,
    Lobby,
    announced_beat_ms,
    heartbeat_interval_ms,
    presence_ttl_s,
    silence_ms,
    stale_ms,
)

ME, BOB, MALLORY = (Identity.from_seed(bytes([i]) * 32) for i in (61, 62, 63))
T0 = 1_700_000_000_000


def keys(n: int, salt: int = 0) -> list[Identity]:
    return [Identity.from_seed(i.to_bytes(4, "big") + bytes([salt]) * 28) for i in range(n)]


def presence(who: Identity, ts: int, ttl: int | None = None, status: str = "online") -> events.Event:
    return Lobby(who, "peer", bytes([7]) * 16)._presence(status, ts, ttl)


def hear(lobby: Lobby, who: Identity, ts: int, ttl: int | None = None) -> list:
    return lobby.receive(presence(who, ts, ttl), ts, None)


def beats(effects: list) -> list[events.Event]:
    return [e.event for e in effects if isinstance(e, Publish)]


def connected(n_others: int) -> Lobby:
    """Our lobby, connected at T0, with ``n_others`` peers heard at T0."""
    lobby = Lobby(ME, "me", bytes(16))
    lobby.will(T0)
    lobby.connect(T0)
    for who in keys(n_others):
        assert not any(isinstance(e, Dropped) for e in hear(lobby, who, T0))
    return lobby


def test_the_interval_grows_with_the_lobby_and_is_bounded() -> None:
    assert [heartbeat_interval_ms(n) for n in (1, 2, 50, 100)] == [HEARTBEAT_MS] * 4
    assert heartbeat_interval_ms(101) > HEARTBEAT_MS
    assert heartbeat_interval_ms(200) == 40_000 and heartbeat_interval_ms(1_000) == 200_000
    assert heartbeat_interval_ms(10**6) == MAX_HEARTBEAT_MS
    # what a peer receives per second from everybody's heartbeats: N / interval
    for n in (200, 1_000, 1_500):
        assert n * 1000 / heartbeat_interval_ms(n) == pytest.approx(rules.PRESENCE_RATE)
    # the ttl a peer signs, and what a receiver reads back from it
    for n in (1, 100, 101, 1_000, 1_500, 10**6):
        beat = heartbeat_interval_ms(n)
        ttl = presence_ttl_s(beat)
        assert announced_beat_ms(ttl) >= beat  # it promises no beat sooner than it sends
        assert announced_beat_ms(ttl) - beat < 1000
        assert silence_ms(ttl) > 2 * beat + 5_000 and stale_ms(ttl) >= beat + 5_000
    assert presence_ttl_s(HEARTBEAT_MS) == PRESENCE_TTL_S == 60


def test_old_presences_keep_todays_rules() -> None:
    """A ``ttl`` up to 60 s (every peer of before signs 60) means the fixed rules."""
    for ttl in (1, 5, 59, 60):
        assert silence_ms(ttl) == SILENCE_MS == 65_000
        assert stale_ms(ttl) == STALE_MS == 25_000
        assert announced_beat_ms(ttl) == HEARTBEAT_MS


def test_up_to_100_peers_nothing_changes() -> None:
    lobby = connected(99)  # 100 with us
    assert lobby.heartbeat_ms() == HEARTBEAT_MS
    assert beats(lobby.tick(T0 + HEARTBEAT_MS - 1)) == []
    (beat,) = beats(lobby.tick(T0 + HEARTBEAT_MS))
    assert beat.body["ttl"] == 60
    (beat,) = beats(lobby.tick(T0 + 2 * HEARTBEAT_MS))
    assert beat.body["ttl"] == 60


def test_a_big_lobby_beats_slower_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rules, "PRESENCE_RATE", 1)  # 41 peers: a 41 s heartbeat
    lobby = Lobby(ME, "me", bytes(16))
    lobby.will(T0)
    (first,) = beats(lobby.connect(T0))
    assert first.body["ttl"] == 60  # alone when it connected: the 20 s heartbeat
    for who in keys(40):
        hear(lobby, who, T0 + 1)
    assert lobby.heartbeat_ms() == 41_000
    # the next beat comes when the last one said (20 s), and announces 41 s
    (beat,) = beats(lobby.tick(T0 + HEARTBEAT_MS))
    assert beat.body["ttl"] == 123 and announced_beat_ms(123) == 41_000
    assert beats(lobby.tick(T0 + HEARTBEAT_MS + 41_000 - 1)) == []
    (beat,) = beats(lobby.tick(T0 + HEARTBEAT_MS + 41_000))
    assert beat.body["ttl"] == 123
    # the lobby shrinks (a goodbye each): the next beat comes sooner, no later than
    # announced, and says 20 s again
    for who in keys(40):
        off = presence(who, T0 + 70_000, status="offline")
        lobby.receive(off, T0 + 70_000, None)
    assert lobby.online_count == 1 and lobby.heartbeat_ms() == HEARTBEAT_MS
    (beat,) = beats(lobby.tick(T0 + HEARTBEAT_MS + 41_000 + HEARTBEAT_MS))
    assert beat.body["ttl"] == 60


def test_a_peer_is_dropped_after_the_silence_it_announced() -> None:
    lobby = connected(0)
    hear(lobby, BOB, T0, ttl=600)  # a peer of a lobby of 1,000: beats every 200 s
    old = Identity.from_seed(bytes([64]) * 32)
    hear(lobby, old, T0, ttl=60)  # a peer of before
    lobby.tick(T0 + SILENCE_MS)
    assert BOB.public_key in lobby.peers and old.public_key not in lobby.peers
    # its next heartbeat keeps it (200 s later: longer than the fixed 65 s)
    hear(lobby, BOB, T0 + 200_000, ttl=600)
    lobby.tick(T0 + 200_000 + 605_000 - 1)
    assert BOB.public_key in lobby.peers
    effects = lobby.tick(T0 + 200_000 + 605_000)
    assert BOB.public_key not in lobby.peers
    assert [e.code for e in effects if isinstance(e, Notice)] == ["peer_silent"]


def test_a_shorter_ttl_later_shortens_the_wait() -> None:
    lobby = connected(0)
    hear(lobby, BOB, T0, ttl=600)
    hear(lobby, BOB, T0 + 10_000, ttl=60)  # the lobby shrank: 20 s again
    lobby.tick(T0 + 10_000 + SILENCE_MS)
    assert BOB.public_key not in lobby.peers


def test_a_stranger_announcing_a_huge_interval_is_bounded() -> None:
    lobby = connected(0)
    hear(lobby, MALLORY, T0, ttl=3_600)  # the most the schema lets anyone sign
    hear(lobby, BOB, T0, ttl=60)
    longest = MAX_HEARTBEAT_MS * 3 + 5_000  # three of the longest beats, plus the margin
    assert silence_ms(3_600) == longest == 905_000
    lobby.tick(T0 + SILENCE_MS)
    assert BOB.public_key not in lobby.peers  # it stretched its own presence only
    lobby.tick(T0 + longest - 1)
    assert MALLORY.public_key in lobby.peers
    lobby.tick(T0 + longest)
    assert MALLORY.public_key not in lobby.peers
    # its presence on another peer's topic is refused as before: no stretching of others
    topic = Lobby(BOB, "bob", bytes(16)).will_route().topic
    (drop,) = lobby.receive(presence(MALLORY, T0 + 1_000_000, 3_600), T0 + 1_000_000, topic)
    assert isinstance(drop, Dropped) and "another peer's topic" in drop.reason
    # an old retained presence (its age unknown) is judged by the bounded ttl too: one
    # signed with ttl 3,600 is refused once the bounded ttl and the skew allowance passed
    later = T0 + 900_000 + rules.MAX_SKEW_MS + 1
    (drop,) = lobby.receive(presence(MALLORY, T0, 3_600), later, None, retained=True)
    assert isinstance(drop, Dropped) and drop.reason == "expired presence"


def test_a_goodbye_or_will_still_removes_at_once() -> None:
    lobby = connected(0)
    hear(lobby, BOB, T0, ttl=900)
    effects = lobby.receive(presence(BOB, T0 + 5, status="offline"), T0 + 5, None)
    assert BOB.public_key not in lobby.peers
    assert [e.code for e in effects if isinstance(e, Notice)] == ["peer_left"]


def test_an_established_peer_is_evictable_only_after_its_own_heartbeat() -> None:
    lobby = Lobby(ME, "me", bytes(16), max_peers=1)
    hear(lobby, BOB, T0, ttl=600)
    hear(lobby, BOB, T0 + ESTABLISHED_MS, ttl=600)
    assert lobby.peers[BOB.public_key].established
    heard = T0 + ESTABLISHED_MS
    # 30 s later: stale by the fixed rule, not by its own 200 s heartbeat
    (drop,) = hear(lobby, MALLORY, heard + STALE_MS + 5_000)
    assert isinstance(drop, Dropped) and drop.reason == "lobby full"
    assert not any(
        isinstance(e, Dropped) for e in hear(lobby, MALLORY, heard + stale_ms(600))
    )
    assert MALLORY.public_key in lobby.peers and BOB.public_key not in lobby.peers


def test_our_listening_outage_moves_every_deadline() -> None:
    lobby = connected(0)
    hear(lobby, BOB, T0, ttl=600)
    lobby.tick(T0 + 100_000, listening=False)
    lobby.tick(T0 + 700_000, listening=False)  # deaf for 600 s: not Bob's silence
    lobby.tick(T0 + 700_001)
    assert BOB.public_key in lobby.peers
    lobby.tick(T0 + 605_000 + 600_001 - 1)
    assert BOB.public_key in lobby.peers
    lobby.tick(T0 + 605_000 + 600_001)
    assert BOB.public_key not in lobby.peers


def test_a_second_session_of_our_key_brings_the_base_heartbeat_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(rules, "PRESENCE_RATE", 1)
    first = connected(40)  # a 41 s heartbeat, announced from its next beat on
    (beat,) = beats(first.tick(T0 + HEARTBEAT_MS))
    assert beat.body["ttl"] == 123
    # a second session of our key starts: it reads the first one's retained presence,
    # 40 s old, which a 20 s heartbeat would make stale (65 s) only a little later
    second = Lobby(ME, "me", bytes([1]) * 16)
    second.will(T0 + 100_000)
    topic = second.will_route().topic
    second.receive_bytes(beat.raw, T0 + 100_000, topic, retained=True)
    assert second.sessions.others  # fresh by the heartbeat it announced
    assert not second.sessions.acting  # the older session acts
    # the first sees the second's presence: both beat every 20 s from now on
    (hello,) = beats(second.connect(T0 + 100_000))
    first.receive_bytes(hello.raw, T0 + 100_001, topic)
    assert first.sessions.others and first.heartbeat_ms() == HEARTBEAT_MS
    (beat,) = beats(first.tick(T0 + 100_002))
    assert beat.body["ttl"] == 60
