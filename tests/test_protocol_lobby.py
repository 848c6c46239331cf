"""Presence, Last Will, lobby chat and invitations."""

from __future__ import annotations

import pytest

from p2p.protocol import canonical, events
from p2p.protocol.effects import ChatLine, Dropped, Notice, Publish
from p2p.protocol.identity import Identity, fingerprint
from p2p.protocol.lobby import HEARTBEAT_MS, SILENCE_MS, Lobby, plan_seats
from p2p.protocol.loopback import Loopback
from p2p.protocol.round import Phase
from p2p.protocol.round_machine import RoundMachine
from p2p.protocol.topics import Topics

ALICE, BOB, CAROL, MALLORY = (
    Identity.from_seed(bytes([i]) * 32) for i in (21, 22, 23, 24)
)
T0 = 1_700_000_000_000


def session(i: int) -> bytes:
    return bytes([i]) * 16


def publishes(effects: list) -> list[Publish]:
    return [e for e in effects if isinstance(e, Publish)]


def meet() -> tuple[Lobby, Lobby]:
    alice, bob = Lobby(ALICE, "alice", session(1)), Lobby(BOB, "bob", session(2))
    for me, other in ((alice, bob), (bob, alice)):
        me.will(T0)
        for p in publishes(me.connect(T0)):
            for answer in publishes(other.receive(p.event, T0, p.route.topic)):
                me.receive(answer.event, T0, answer.route.topic)
    return alice, bob


def test_presence_hello_and_online_count() -> None:
    alice, bob = meet()
    assert [p.nick for p in alice.online()] == ["bob"] and alice.online_count == 2
    assert [p.nick for p in bob.online()] == ["alice"]
    assert alice.online()[0].label == f"bob ({fingerprint(BOB.public_key)})"


def test_busy_flag_and_heartbeat_and_silence() -> None:
    alice, bob = meet()
    (p,) = publishes(bob.set_busy(True, T0 + 10))
    alice.receive(p.event, T0 + 10, p.route.topic)
    assert alice.online()[0].busy
    assert (
        publishes(bob.tick(T0 + 10 + HEARTBEAT_MS - 1)) == []
    )  # set_busy announced at +10
    (beat,) = publishes(bob.tick(T0 + 10 + HEARTBEAT_MS))
    assert beat.route.retain and beat.event.body["status"] == "online"
    heard = T0 + 10 + HEARTBEAT_MS
    alice.receive(beat.event, heard, beat.route.topic)
    alice.tick(heard + SILENCE_MS - 1)
    assert [p.nick for p in alice.online()] == ["bob"]
    effects = alice.tick(heard + SILENCE_MS)
    assert any(isinstance(e, Notice) and "silent" in e.text for e in effects)
    assert alice.online() == []


def test_last_will_removes_the_peer_and_fakes_do_not() -> None:
    alice, bob = meet()
    will = bob.will(T0)  # what the broker holds for Bob's connection
    topic = bob.will_route().topic
    # a fake, unsigned Will on Bob's topic does not even parse
    fake = canonical.encode(
        {"v": 1, "kind": "presence", "pk": BOB.pk_hex, "status": "offline"}
    )
    assert isinstance(alice.receive_bytes(fake, T0 + 5, topic)[0], Dropped)
    # a signed offline of Mallory's on Bob's topic is refused
    mallory = Lobby(MALLORY, "bob", session(9))
    forged = mallory.will(T0)
    assert "another peer's topic" in alice.receive(forged, T0 + 5, topic)[0].reason
    # an old Will of an earlier Bob session is ignored
    old = Lobby(BOB, "bob", session(7)).will(T0 - 100_000)
    assert "another session" in alice.receive(old, T0 + 5, topic)[0].reason
    # an empty retained payload (someone deleting Bob's presence) changes nothing
    assert alice.receive_bytes(b"", T0 + 5, topic) == []
    assert [p.nick for p in alice.online()] == ["bob"]
    # the real Will, although signed before Bob's later heartbeats, removes him
    (beat,) = publishes(bob.tick(T0 + HEARTBEAT_MS))
    alice.receive(beat.event, T0 + HEARTBEAT_MS, topic)
    effects = alice.receive(will, T0 + HEARTBEAT_MS + 5, topic)
    assert any(isinstance(e, Notice) and "left" in e.text for e in effects)
    assert alice.online() == []


def test_stale_and_future_presence_are_refused() -> None:
    alice, bob = meet()
    (p,) = publishes(bob.set_busy(True, T0 + 50))
    alice.receive(p.event, T0 + 50)
    replay = bob._presence("online", T0 + 10)
    assert "older" in alice.receive(replay, T0 + 60)[0].reason
    carol = Lobby(CAROL, "carol", session(3))
    future = carol._presence("online", T0 + 10 * 60_000)
    assert "future" in alice.receive(future, T0)[0].reason
    ancient = carol._presence("online", T0 - 3_600_000)
    assert "expired" in alice.receive(ancient, T0)[0].reason


def test_lobby_chat_is_cleaned_and_rate_limited() -> None:
    alice, bob = meet()
    (p,) = publishes(bob.chat("  hi\x1b there \n", T0))
    assert p.event.body["text"] == "hi there" and p.route == Topics().lobby_chat()
    (line,) = alice.receive(p.event, T0)
    assert isinstance(line, ChatLine) and line.nick == "bob"
    results = [alice.receive(bob.chat(f"x{i}", T0)[0].event, T0) for i in range(6)]
    assert (
        sum(isinstance(r[0], ChatLine) for r in results) == 4
    )  # 5 per burst, 1 used above
    assert isinstance(results[-1][0], Dropped)
    with pytest.raises(ValueError):
        bob.chat("\x07", T0)


def test_invitation_accept_flow_and_busy_auto_decline() -> None:
    _alice, bob = meet()
    carol = Lobby(CAROL, "carol", session(3))
    seats = plan_seats(
        "cube", {"players": 3}, ALICE.public_key, [BOB.public_key, CAROL.public_key]
    )
    admin, effects = RoundMachine.open(
        ALICE, T0, "ab" * 16, "cube", {"players": 3}, seats, None, bytes(32)
    )
    inbox = {
        p.route.topic: p.event for p in publishes(effects) if "/inbox/" in p.route.topic
    }
    assert set(inbox) == {
        Topics().inbox(BOB.peer_id).topic,
        Topics().inbox(CAROL.peer_id).topic,
    }
    genesis = admin.state.genesis
    notice = bob.receive(genesis, T0 + 1)
    assert "invites you to cube" in notice[0].text and genesis.round in bob.invitations
    assert isinstance(bob.receive(genesis, T0 + 2)[0], Dropped)  # duplicate copy
    carol.set_busy(True, T0)
    (decline, _) = carol.receive(genesis, T0 + 1)
    assert decline.event.kind == "decline" and decline.route == Topics().round_events(
        "ab" * 16
    )
    # the admin gets Carol's automatic decline and cancels; Bob's pending invitation goes away
    net = Loopback()
    net.add("alice", admin)
    invitation = bob.take_invitation(genesis.round)
    member = RoundMachine(BOB, invitation.genesis, bytes([1]) * 32)
    net.add("bob", member, member.accept(T0 + 3))
    net.post("carol", [decline])
    net.run()
    assert admin.phase is member.phase is Phase.CANCELLED
    cancel = admin.state.head
    bob.invitations[genesis.round] = invitation
    assert "cancelled" in bob.receive(cancel, T0 + 5)[0].text and not bob.invitations


def test_invitation_expires_and_strangers_cannot_cancel() -> None:
    _alice, bob = meet()
    seats = plan_seats("connect4", {}, ALICE.public_key, [BOB.public_key])
    admin, _ = RoundMachine.open(
        ALICE, T0, "cd" * 16, "connect4", {}, seats, 0, bytes(32)
    )
    bob.receive(admin.state.genesis, T0)
    genesis_round = admin.state.round_id
    fake_cancel = events.make(
        MALLORY,
        "cancel",
        T0,
        {"reason": "x"},
        round="cd" * 16,
        seq=1,
        prev=admin.state.genesis.id,
    )
    assert isinstance(bob.receive(fake_cancel, T0 + 1)[0], Dropped) and bob.invitations
    bob.tick(T0 + 1000)
    assert genesis_round in bob.invitations
    effects = bob.tick(admin.state.expires)
    assert (
        any(isinstance(e, Notice) and "expired" in e.text for e in effects)
        and not bob.invitations
    )


def test_plan_seats_limits() -> None:
    a, b, c, _d = (p.public_key for p in (ALICE, BOB, CAROL, MALLORY))
    assert len(plan_seats("connect4", {}, a, [b])) == 2
    with pytest.raises(ValueError, match="room for 1"):
        plan_seats("connect4", {}, a, [b, c])
    assert len(plan_seats("cube", {"players": 3}, a, [b, c])) == 3
    with pytest.raises(ValueError, match="computer"):
        plan_seats("cube", {"players": 3}, a, [b])
    assert plan_seats("cube", {"players": 3}, a, [b], level="normal")[2] == {
        "pk": None,
        "level": "normal",
    }
    with pytest.raises(ValueError, match="one seat"):
        plan_seats("cube", {"players": 3}, a, [a, b])


from hypothesis import given, settings
from hypothesis import strategies as st


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_fuzzed_lobby_events_never_crash(data: st.DataObject) -> None:
    alice, _bob = meet()
    values = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-2, 4000),
        st.text(max_size=6),
        st.sampled_from(["online", "offline", "01" * 16, "bob", "cube"]),
    )
    for _ in range(data.draw(st.integers(1, 8))):
        kind = data.draw(
            st.sampled_from(["presence", "hello", "chat", "genesis", "cancel", "move"])
        )
        who = data.draw(st.sampled_from([BOB, CAROL, MALLORY]))
        spec = events.KINDS[kind]
        fields = {**spec.body, **spec.lobby_body}
        body = {name: data.draw(values) for name in fields}
        if "ns" in body and data.draw(st.booleans()):
            body["ns"] = Topics().root
        shape = events.KINDS[kind].shape
        context = {
            "chain": {
                "round": "ee" * 16,
                "seq": 0 if kind == "genesis" else 1,
                "prev": None if kind == "genesis" else "ff" * 32,
            }
        }.get(shape, {})
        try:
            event = events.make(
                who, kind, data.draw(st.integers(0, 2 * T0)), body, **context
            )
        except events.EventError:
            continue
        topic = data.draw(
            st.sampled_from(
                [
                    None,
                    Topics().presence(who.peer_id).topic,
                    Topics().presence(BOB.peer_id).topic,
                ]
            )
        )
        for effect in alice.receive(event, T0 + 1000, topic):
            assert not (
                isinstance(effect, Dropped) and "internal error" in effect.reason
            )
    assert alice.online_count >= 1 and len(alice.invitations) <= 16


def test_an_invitation_that_expires_too_far_ahead_is_refused() -> None:
    """The admin chooses ``expires``: a year ahead would keep an invitee that accepted
    waiting (busy) as long as the admin likes, and the admin could start -- and forfeit
    it -- when it has long gone.  Receivers take at most a private round's 10 min."""
    from p2p.peer import _unjoinable
    from p2p.protocol.lobby import LONGEST_INVITATION_MS
    from p2p.protocol.round_machine import PRIVATE_TTL_MS

    _alice, bob = meet()
    seats = plan_seats("connect4", {}, ALICE.public_key, [BOB.public_key])
    year = 365 * 24 * 3_600_000
    far, _ = RoundMachine.open(ALICE, T0, "ce" * 16, "connect4", {}, seats, 0, bytes(32), ttl_ms=year)
    (refused,) = bob.receive(far.state.genesis, T0)
    assert isinstance(refused, Dropped) and "too far ahead" in refused.reason
    assert not bob.invitations
    longest, _ = RoundMachine.open(ALICE, T0, "cf" * 16, "connect4", {}, seats, 0, bytes(32),
                                   ttl_ms=PRIVATE_TTL_MS)
    bob.receive(longest.state.genesis, T0)
    assert list(bob.invitations) == ["cf" * 16]
    assert LONGEST_INVITATION_MS == PRIVATE_TTL_MS + 300_000
    skewed, _ = RoundMachine.open(ALICE, T0 + 290_000, "c1" * 16, "connect4", {}, seats, 0, bytes(32),
                                  ttl_ms=PRIVATE_TTL_MS)  # an inviter's clock 290 s ahead
    bob.receive(skewed.state.genesis, T0)
    assert "c1" * 16 in bob.invitations
    # the same bound for a genesis found behind a join code
    import time

    now = int(time.time() * 1000)
    private_seats = [{"pk": ALICE.pk_hex, "level": None}, {"pk": None, "level": None}]
    for ttl, why in ((year, "too far ahead"), (PRIVATE_TTL_MS, "")):
        machine, _ = RoundMachine.open(ALICE, now, "d1" * 16, "connect4", {}, private_seats, 0,
                                       bytes(32), code="ABC234", ttl_ms=ttl)
        found = _unjoinable(machine.state.genesis, machine.timeouts, now)
        assert why in found if why else found == ""


def test_a_public_rounds_id_is_on_no_topic_before_every_invitee_has_its_invitation() -> None:
    """A public round's id is visible on ``#`` as soon as a round topic carries it.  Whoever
    learns it first can send an invitee a genesis of its own for that id (validly signed
    and sealed by itself): the invitee then drops the admin's real invitation as a
    duplicate.  So the admin publishes every invitation before anything on the round's
    topics, and a stranger reading ``#`` learns the id only after them."""
    from p2p.protocol.effects import Publish as Pub

    _alice, bob = meet()
    seats = plan_seats("cube", {"players": 3}, ALICE.public_key, [BOB.public_key, CAROL.public_key])
    admin, effects = RoundMachine.open(ALICE, T0, "ca" * 16, "cube", {"players": 3}, seats, 0, bytes(32))
    topics = [e.route.topic for e in effects if isinstance(e, Pub)]
    inboxes = [i for i, t in enumerate(topics) if "/inbox/" in t]
    rounds = [i for i, t in enumerate(topics) if "/round/" in t]
    assert len(inboxes) == 2 and rounds and max(inboxes) < min(rounds), topics
    # what the race would do: a genesis of mallory's own for that id, first, wins the slot
    mallory_seats = plan_seats("connect4", {}, MALLORY.public_key, [BOB.public_key])
    early, _ = RoundMachine.open(MALLORY, T0, "ca" * 16, "connect4", {}, mallory_seats, 0, bytes(32))
    bob.receive(early.state.genesis, T0)
    (late,) = bob.receive(admin.state.genesis, T0)
    assert isinstance(late, Dropped) and late.reason == "duplicate"
