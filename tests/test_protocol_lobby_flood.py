"""The lobby under attack, pure: fake presences, key-rotating chat, invitation spam,
replayed chat and hellos (issue 10 items 2-4, issue 12 item 1).  Every attack event is
validly signed; the live versions are in tests/test_integration_lobby_flood.py."""

from __future__ import annotations

from p2p.protocol import events
from p2p.protocol.effects import ChatLine, Dropped, Publish
from p2p.protocol.freshness import ReplayGuard
from p2p.protocol.identity import Identity
from p2p.protocol.lobby import (
    ESTABLISHED_MS,
    HEARTBEAT_MS,
    MAX_INVITATIONS,
    REPLAY_WINDOW_MS,
    SILENCE_MS,
    Backoff,
    Lobby,
    plan_seats,
)
from p2p.protocol.round_machine import RoundMachine
from p2p.protocol.topics import Topics

ME, REAL, PARTNER, FRIEND = (
    Identity.from_seed(bytes([i]) * 32) for i in (41, 42, 43, 44)
)
T0 = 1_700_000_000_000
TOPICS = Topics()


def keys(n: int, salt: int = 0) -> list[Identity]:
    return [
        Identity.from_seed(i.to_bytes(4, "big") + bytes([salt]) * 28) for i in range(n)
    ]


def presence(who: Identity, ts: int, session: int = 1) -> events.Event:
    return Lobby(who, "peer", bytes([session]) * 16)._presence("online", ts)


def hear(lobby: Lobby, who: Identity, ts: int, now: int | None = None) -> list:
    return lobby.receive(presence(who, ts), ts if now is None else now, None)


def publishes(effects: list) -> list[Publish]:
    return [e for e in effects if isinstance(e, Publish)]


def test_a_flood_of_fresh_keys_evicts_only_new_strangers() -> None:
    lobby = Lobby(
        ME, "me", bytes(16), is_friend=lambda pk: pk == FRIEND.public_key, max_peers=50
    )
    lobby.keep([PARTNER.public_key])
    for who in (REAL, PARTNER, FRIEND):
        hear(lobby, who, T0)
        hear(lobby, who, T0 + ESTABLISHED_MS)  # heard over 15 s: established
    assert lobby.peers[REAL.public_key].established
    fakes = keys(300)
    now = T0 + ESTABLISHED_MS + 1
    for fake in fakes:
        assert not any(isinstance(e, Dropped) for e in hear(lobby, fake, now))
    assert {
        REAL.public_key,
        PARTNER.public_key,
        FRIEND.public_key,
    } <= lobby.peers.keys()
    assert len(lobby.peers) <= 50 + 2  # the bound; partner and friend come on top
    # the newest fakes are the ones held: eviction is least recently heard, not first-come
    assert (
        fakes[-1].public_key in lobby.peers and fakes[0].public_key not in lobby.peers
    )
    # a real newcomer after the flood gets in, and its heartbeat keeps it in
    newcomer = Identity.from_seed(bytes([45]) * 32)
    hear(lobby, newcomer, now + 1)
    assert newcomer.public_key in lobby.peers
    for fake in keys(30, salt=1):  # more fakes: the older fakes go first
        hear(lobby, fake, now + 2)
    hear(lobby, newcomer, now + HEARTBEAT_MS)
    assert newcomer.public_key in lobby.peers
    assert lobby.ranked()[0].pk in (PARTNER.public_key, FRIEND.public_key)


def test_established_strangers_are_only_evicted_when_they_miss_heartbeats() -> None:
    lobby = Lobby(ME, "me", bytes(16), max_peers=3)
    settled = keys(3, salt=2)
    for who in settled:
        hear(lobby, who, T0)
        hear(lobby, who, T0 + ESTABLISHED_MS)
    fake = Identity.from_seed(bytes([46]) * 32)
    (refused,) = hear(lobby, fake, T0 + ESTABLISHED_MS + 1)
    assert isinstance(refused, Dropped) and refused.reason == "lobby full"
    for who in settled[1:]:
        hear(lobby, who, T0 + ESTABLISHED_MS + HEARTBEAT_MS)
    # settled[0] missed its heartbeat: now a newcomer may take its place
    later = T0 + ESTABLISHED_MS + HEARTBEAT_MS + 6_000
    assert not any(isinstance(e, Dropped) for e in hear(lobby, fake, later))
    assert settled[0].public_key not in lobby.peers and fake.public_key in lobby.peers


def test_2500_fake_presences_hide_no_real_peer_at_the_default_capacity() -> None:
    lobby = Lobby(ME, "me", bytes(16))
    hear(lobby, REAL, T0)
    for fake in keys(2_500, salt=3):
        hear(lobby, fake, T0 + 1)
    late = Identity.from_seed(bytes([47]) * 32)
    assert not any(isinstance(e, Dropped) for e in hear(lobby, late, T0 + 2))
    assert {REAL.public_key, late.public_key} <= lobby.peers.keys()


def test_a_flood_never_marks_a_round_member_offline() -> None:
    lobby = Lobby(ME, "me", bytes(16), max_peers=10)
    member = Lobby(PARTNER, "partner", bytes([9]) * 16)
    will = member.will(T0, bytes([9]) * 16)
    lobby.keep([PARTNER.public_key, REAL.public_key])
    lobby.receive(
        member._presence("online", T0), T0, TOPICS.presence(PARTNER.peer_id).topic
    )
    for fake in keys(100, salt=4):
        hear(lobby, fake, T0 + 1)
    assert PARTNER.public_key in lobby.peers and not lobby.is_offline(
        PARTNER.public_key
    )
    # a member our lobby never saw (REAL) is not "offline": silence on the round decides
    assert not lobby.is_offline(REAL.public_key)
    # its own signed Will does make it offline ...
    lobby.receive(will, T0 + 2, TOPICS.presence(PARTNER.peer_id).topic)
    assert lobby.is_offline(PARTNER.public_key)
    # ... until it is back; and its silence makes it offline again
    hear(lobby, PARTNER, T0 + 3)
    assert not lobby.is_offline(PARTNER.public_key)
    lobby.tick(T0 + 3 + SILENCE_MS)
    assert lobby.is_offline(PARTNER.public_key)


def test_silence_sweep_reports_changes_and_keeps_the_heard() -> None:
    lobby = Lobby(ME, "me", bytes(16))
    hear(lobby, REAL, T0)
    hear(lobby, PARTNER, T0 + 30_000)
    assert [(i.pk, up) for i, up in lobby.take_changes()] == [
        (REAL.public_key, True),
        (PARTNER.public_key, True),
    ]
    lobby.tick(T0 + SILENCE_MS)
    assert list(lobby.peers) == [PARTNER.public_key]
    assert [(i.pk, up) for i, up in lobby.take_changes()] == [(REAL.public_key, False)]


def chat(who: Identity, text: str, ts: int, ns: str = TOPICS.root) -> events.Event:
    return events.make(who, "chat", ts, {"text": text, "ns": ns})


def test_key_rotating_chat_flood_is_bounded_by_the_global_budget() -> None:
    lobby = Lobby(ME, "me", bytes(16), is_friend=lambda pk: pk == FRIEND.public_key)
    lobby.keep([PARTNER.public_key])
    hear(lobby, REAL, T0 - ESTABLISHED_MS)
    hear(lobby, REAL, T0)  # an established stranger
    shown = 0
    for i, spammer in enumerate(keys(400, salt=5)):
        now = T0 + i  # 400 fresh keys within 0.4 s
        effects = lobby.receive(chat(spammer, f"spam {i}", now), now)
        shown += isinstance(effects[0], ChatLine)
    assert shown <= 5  # the newcomers' burst; one line per 2 s after that
    # honest lines still pass: partner, friend and the established stranger
    for who in (PARTNER, FRIEND, REAL):
        (line,) = lobby.receive(chat(who, "gg", T0 + 500), T0 + 500)
        assert isinstance(line, ChatLine) and line.text == "gg"


def test_replayed_stale_and_foreign_chat_is_dropped() -> None:
    lobby = Lobby(ME, "me", bytes(16))
    line = chat(REAL, "I resign, gg", T0)
    assert isinstance(lobby.receive(line, T0)[0], ChatLine)
    assert lobby.receive(line, T0 + 10)[0].reason == "duplicate"
    later = T0 + REPLAY_WINDOW_MS + 1
    assert lobby.receive(line, later)[0].reason == "outside the replay window"
    assert (
        "replay window"
        in lobby.receive(chat(REAL, "x", later + REPLAY_WINDOW_MS + 5), later)[0].reason
    )
    foreign = chat(REAL, "hi", T0, ns=Topics("friends").root)
    assert lobby.receive(foreign, T0)[0].reason == "signed for another lobby"


def hello(who: Identity, ts: int) -> events.Event:
    return events.make(who, "hello", ts, {"nick": "new", "ns": TOPICS.root})


def test_hello_is_answered_only_when_our_retained_presence_is_missing() -> None:
    lobby = Lobby(ME, "me", bytes(16))
    own = lobby.will_route().topic
    (mine,) = publishes(lobby.connect(T0))
    assert lobby.receive(hello(REAL, T0 + 1), T0 + 1) == [Backoff(1_000)]
    assert lobby.receive(hello(PARTNER, T0 + 1), T0 + 1) == []  # one answer pending
    lobby.receive_bytes(mine.payload, T0 + 2, own)  # our echo: the broker holds it
    assert lobby.answer_due(T0 + 500) == []  # suppressed
    assert lobby.receive(hello(FRIEND, T0 + 3), T0 + 3) == []
    # a replayed hello is dropped before anything else
    replay = hello(FRIEND, T0 + 3)
    assert lobby.receive(replay, T0 + 4)[0].reason == "duplicate"
    # someone deletes our retained presence: we re-publish after a back-off
    assert lobby.receive_bytes(b"", T0 + 5, own) == [Backoff(1_000)]
    (again,) = publishes(lobby.answer_due(T0 + 600))
    assert again.route.retain and again.event.body["status"] == "online"
    # the broker's retained copy when we subscribe is no damage
    assert lobby.receive_bytes(b"junk", T0 + 700, own, retained=True) == []


def test_hello_flood_and_repairs_are_budgeted() -> None:
    lobby = Lobby(ME, "me", bytes(16))
    own = lobby.will_route().topic
    lobby.connect(T0)
    results = [lobby.receive(hello(who, T0), T0) for who in keys(50, salt=6)]
    assert sum(bool(r) and isinstance(r[0], Dropped) for r in results) == 45
    repairs = 0
    for i in range(20):  # someone overwrites our retained presence over and over
        lobby.receive_bytes(b"garbage", T0 + i * 100, own)
        repairs += len(publishes(lobby.answer_due(T0 + i * 100 + 50)))
    assert repairs == 3


def invite(admin: Identity, rid: str, ts: int = T0) -> events.Event:
    seats = plan_seats("connect4", {}, admin.public_key, [ME.public_key])
    machine, _ = RoundMachine.open(admin, ts, rid, "connect4", {}, seats, 0, bytes(32))
    return machine.state.genesis


def test_invitation_spam_never_pushes_out_a_real_invitation() -> None:
    lobby = Lobby(ME, "me", bytes(16))
    lobby.keep([PARTNER.public_key])
    hear(lobby, REAL, T0 - ESTABLISHED_MS)
    hear(lobby, REAL, T0)
    lobby.receive(invite(PARTNER, "01" * 16), T0)
    lobby.receive(invite(REAL, "02" * 16), T0)
    spam = keys(MAX_INVITATIONS * 2, salt=7)
    for i, spammer in enumerate(spam):
        lobby.receive(invite(spammer, f"{i + 16:032x}"), T0 + 1 + i)
    assert {"01" * 16, "02" * 16} <= lobby.invitations.keys()
    assert len(lobby.invitations) == MAX_INVITATIONS
    # one pending invitation per inviter: the newest replaces it, an older one is refused
    lobby.receive(invite(REAL, "03" * 16, T0 + 5), T0 + 100)
    assert "03" * 16 in lobby.invitations and "02" * 16 not in lobby.invitations
    (old,) = lobby.receive(invite(REAL, "04" * 16, T0 - 5), T0 + 101)
    assert isinstance(old, Dropped) and "04" * 16 not in lobby.invitations


def test_busy_declines_from_strangers_are_budgeted() -> None:
    lobby = Lobby(ME, "me", bytes(16))
    lobby.set_busy(True, T0)
    sent = [
        publishes(lobby.receive(invite(s, f"{i + 1:032x}"), T0))
        for i, s in enumerate(keys(20, salt=8))
    ]
    assert sum(len(p) for p in sent) == 4


def test_replay_guard_memory_is_bounded_and_never_forgets_into_a_replay() -> None:
    guard = ReplayGuard(window_ms=1_000, capacity=3)
    for i in range(10):
        assert guard.check(f"id{i}", T0 + i, T0 + i) is None
        guard.add(f"id{i}", T0 + i, T0 + i)
        assert len(guard) <= 3
    assert guard.check("id0", T0, T0 + 10) == "older than the replay memory"
    assert guard.check("id9", T0 + 9, T0 + 10) == "duplicate"
    guard.add("late", T0 + 5_000, T0 + 5_000)  # the window moved on: old ids pruned
    assert len(guard) == 1
