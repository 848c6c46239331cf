"""Attacks on the network edge (``Peer.edge.classify`` + ``p2p.net.inbound``), pure: a real
peer that is never started, real signed and sealed events, the real lanes and budgets on
a clock of our own.  Each test is an attack that worked before its fix (the issue-10
red-team pass): a stranger or a hostile round member using up the budget of somebody
else, so that this somebody's real events are dropped."""

from __future__ import annotations

import asyncio
import os
import time

from p2p.net.inbound import Inbound, InboundQueues, Lane
from p2p.peer import Peer
from p2p.protocol import events as ev
from p2p.protocol import sealing
from p2p.protocol.identity import Identity, peer_id
from p2p.protocol.lobby import MAX_INVITATIONS


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _presence(who: Identity, ts: int, session: str = "11" * 16, status: str = "online") -> ev.Event:
    body = {"busy": False, "nick": "bob", "session": session, "status": status, "ttl": 60}
    return ev.make(who, "presence", ts, body)


def test_replayed_presences_of_a_known_peer_do_not_use_up_its_budget() -> None:
    """A stranger replays a listed peer's validly signed presences -- its current one on
    a thousand other presence topics (a new topic is a new digest for the 3 s duplicate
    check) and its older ones on its own topic -- to use up that peer's budget in the
    ``known`` lane. Before the fix the peer's next real heartbeat was dropped ("known
    sender over budget"): enough of that and a round member looks silent (offline after
    65 s, which costs a seat, §6.6)."""

    async def body() -> None:
        alice = Peer("mqtt://127.0.0.1:1", nick="alice")  # never started: no network
        bob = Identity.from_seed(bytes(range(40, 72)))
        now = int(time.time() * 1000)
        topics = alice.topics
        own = topics.presence(bob.peer_id).topic
        old = [_presence(bob, now - 20_000 * k) for k in range(40, 0, -1)]
        current = _presence(bob, now)
        assert not [e for e in alice.lobby.receive(current, now, own) if type(e).__name__ == "Dropped"]
        assert bob.public_key in alice.lobby.peers
        clock = Clock()
        queues = InboundQueues(alice.edge.classify, clock=clock)
        refused = 0
        for k in range(1000):  # the current presence on other peers' topics
            other = topics.presence(peer_id(os.urandom(32))).topic
            refused += not queues.offer(Inbound(other, current.raw))
        for e in old:  # its older presences on its own topic
            refused += not queues.offer(Inbound(own, e.raw))
        clock.now += 4.0  # past the duplicate window: the same bytes again
        refused += not queues.offer(Inbound(own, current.raw))
        assert refused == 1041, "every replay is dropped"
        assert not any("over budget" in k for k in queues.stats), queues.stats
        assert queues.size(Lane.KNOWN) == 0
        # bob's next real heartbeat gets through
        fresh = _presence(bob, now + 20_000)
        assert queues.offer(Inbound(own, fresh.raw)), queues.stats
        assert queues.size(Lane.KNOWN) == 1
        # a Will of another session is a replay too; bob's own Will still counts
        assert not queues.offer(Inbound(own, _presence(bob, now - 99, "22" * 16, "offline").raw))
        assert queues.offer(Inbound(own, _presence(bob, now - 99, status="offline").raw))
        await alice.close()

    asyncio.run(body())


def test_replayed_lobby_chat_of_a_known_peer_is_dropped_before_its_budget() -> None:
    """The same for lobby chat: a line bob said, replayed after the duplicate window,
    is a duplicate by id (the lobby's replay memory), not a charge on bob's budget."""

    async def body() -> None:
        alice = Peer("mqtt://127.0.0.1:1", nick="alice")
        bob = Identity.from_seed(bytes(range(40, 72)))
        now = int(time.time() * 1000)
        alice.lobby.receive(_presence(bob, now), now, alice.topics.presence(bob.peer_id).topic)
        assert bob.public_key in alice.lobby.peers
        chat = alice.topics.lobby_chat().topic
        line = ev.make(bob, "chat", now, {"text": "hi", "ns": alice.topics.root})
        clock = Clock()
        queues = InboundQueues(alice.edge.classify, clock=clock)
        assert queues.offer(Inbound(chat, line.raw))
        alice.lobby.receive(line, now, chat)  # what the reader does with it
        for _ in range(100):
            clock.now += 3.5
            assert not queues.offer(Inbound(chat, line.raw))
        assert queues.stats.get("dropped: duplicate") == 100, queues.stats
        again = ev.make(bob, "chat", now + 1, {"text": "still here", "ns": alice.topics.root})
        assert queues.offer(Inbound(chat, again.raw))
        await alice.close()

    asyncio.run(body())


def test_a_stranger_flooding_our_inbox_does_not_crowd_out_a_known_inviter() -> None:
    """A stranger sends our inbox 300 pieces of junk and 300 invitations validly sealed to
    us from fresh keys, faster than the inbox lane's budget refills. Before the fix the
    inbox's lane-wide budget (all senders together) was empty and bob's real invitation
    (sent once, it expires) was dropped. Now the edge opens inbox messages (one X25519):
    junk is dropped unread, a known inviter is charged only its own budget, and a replay
    of bob's invitation is a duplicate."""

    async def body() -> None:
        alice = Peer("mqtt://127.0.0.1:1", nick="alice")
        bob = Peer("mqtt://127.0.0.1:1", nick="bob")
        now = int(time.time() * 1000)
        presence = _presence(bob.identity, now)
        alice.lobby.receive(presence, now, alice.topics.presence(bob.peer_id).topic)
        inbox = alice.topics.inbox(alice.peer_id).topic
        clock = Clock()
        queues = InboundQueues(alice.edge.classify, clock=clock)
        for _ in range(300):
            queues.offer(Inbound(inbox, os.urandom(700)))
        for k in range(300):  # fresh keys, each sealing a signed event to us
            fresh = Identity.from_seed(os.urandom(32))
            inner = ev.make(fresh, "chat", now, {"text": f"spam {k}", "ns": alice.topics.root})
            sealed = sealing.seal_invitation(
                os.urandom(32), fresh.seed(), fresh.public_key, alice.public_key,
                "ab" * 16, os.urandom(32), os.urandom(16), inner.raw,
            )
            queues.offer(Inbound(inbox, sealed))
        assert queues.stats.get("dropped: inbox lane over budget", 0) > 0, queues.stats
        assert queues.stats.get("dropped: not sealed to us") == 300
        rnd = await bob.invite([alice.public_key], "connect4", start=0)
        genesis = rnd.log()[0]
        real = bob.edge.seal(inbox, genesis.raw, genesis)
        assert real is not None
        assert queues.offer(Inbound(inbox, real)), queues.stats
        item = None
        while (nxt := queues.get_nowait()) is not None:
            item = nxt
        assert item is not None and item.payload == real  # served after the spam it let in
        await alice.edge.dispatch(item)
        assert genesis.round in alice.lobby.invitations
        clock.now += 10.0  # bob's invitation replayed after the duplicate window
        again = sealing.seal_invitation(
            os.urandom(32), bob.identity.seed(), bob.public_key, alice.public_key, rnd.id,
            rnd.sealing_key, bytes.fromhex(rnd.machine.key), genesis.raw,
        )
        assert not queues.offer(Inbound(inbox, again))
        assert queues.stats.get("dropped: duplicate") == 1, queues.stats
        for p in (alice, bob):
            await p.close()

    asyncio.run(body())


def test_a_members_events_of_another_round_do_not_use_up_its_round_budget() -> None:
    """A hostile member of this round and of another one with bob replays bob's validly signed events of
    the other round, sealed again with this round's key (a fresh nonce each time, so the
    duplicate check never sees the same bytes), to a third member. Before the fix they
    went to the ``round`` lane on bob's budget (1500, then 200 per s) and then bob's real
    move was dropped. Now an event of another round is dropped at the edge."""

    async def body() -> None:
        alice = Peer("mqtt://127.0.0.1:1", nick="alice")
        bob = Identity.from_seed(bytes(range(40, 72)))
        two = await alice.invite([bob.public_key], "connect4", start=0)
        now = int(time.time() * 1000)
        move = {"ply": 0, "move": "4", "state": "0" * 64}
        g2 = two.log()[0]
        # bob's move in another round (one he played with the hostile member)
        old = ev.make(bob, "move", now, move, round="cd" * 16, seq=1, prev="ef" * 32)
        clock = Clock()
        queues = InboundQueues(alice.edge.classify, clock=clock)
        refused = sum(not queues.offer(Inbound(two.topic("events"), two.sealed(old.raw))) for _ in range(1600))
        assert refused == 1600
        assert queues.stats.get("dropped: event of another round") == 1600, queues.stats
        real = ev.make(bob, "move", now, move, round=two.id, seq=1, prev=g2.id)
        assert queues.offer(Inbound(two.topic("events"), two.sealed(real.raw))), queues.stats
        assert queues.size(Lane.ROUND) == 1
        await alice.close()

    asyncio.run(body())


def _stranger_invitation(to: Identity, now: int, game: str = "poker") -> bytes:
    """An invitation validly signed by a fresh key and sealed to ``to`` (its game is
    junk: it is dropped by the lobby, but only after the peer kept its round key)."""
    fresh = Identity.from_seed(os.urandom(32))
    rid = os.urandom(16).hex()
    body = {
        "game": game,
        "options": {},
        "seats": [{"pk": fresh.pk_hex, "level": None}, {"pk": to.pk_hex, "level": None}],
        "start": None,
        "expires": now + 60_000,
        "private": False,
    }
    genesis = ev.make(fresh, "genesis", now, body, round=rid, seq=0)
    return sealing.seal_invitation(
        os.urandom(32), fresh.seed(), fresh.public_key, to.public_key, rid,
        os.urandom(32), bytes.fromhex(rid), genesis.raw,
    )


def test_stranger_invitations_do_not_push_out_the_round_key_of_a_pending_one() -> None:
    """The round key of an invitation lives with the lobby's pending invitation, so
    invitations sealed to us by fresh keys (usable ones and junk alike) cannot push it
    out: the lobby keeps a known inviter's invitation first, and accepting it uses the
    key it came with (once, 64 fresh invitations pushed out bob's key and the accept
    failed with "the invitation carried no round key")."""

    async def body() -> None:
        alice = Peer("mqtt://127.0.0.1:1", nick="alice")
        bob = Peer("mqtt://127.0.0.1:1", nick="bob")
        now = int(time.time() * 1000)
        alice.lobby.receive(_presence(bob.identity, now), now, alice.topics.presence(bob.peer_id).topic)
        inbox = alice.topics.inbox(alice.peer_id).topic
        rnd = await bob.invite([alice.public_key], "connect4", start=0)
        genesis = rnd.log()[0]
        await alice.edge.dispatch(Inbound(inbox, bob.edge.seal(inbox, genesis.raw, genesis)))
        assert genesis.round in alice.lobby.invitations
        for i in range(100):
            game = "connect4" if i % 2 else "poker"
            await alice.edge.dispatch(Inbound(inbox, _stranger_invitation(alice.identity, now, game)))
        assert len(alice.lobby.invitations) <= MAX_INVITATIONS  # still bounded
        pending = alice.lobby.invitations[genesis.round]
        assert pending.round_key == rnd.sealing_key
        assert pending.route_key == rnd.machine.key
        for p in (alice, bob):
            await p.close()

    asyncio.run(body())


def test_a_friends_bytes_sealed_to_our_inbox_by_a_stranger_do_not_use_up_its_budget() -> None:
    """Authenticate, then charge (issue 16). Anyone can seal anything to anyone: a
    stranger seals bob's public, validly signed presence to alice, a fresh envelope (new
    bytes) every 0.5 s, and replays bob's own sealed invitation of 20 minutes ago (bytes
    it copied from alice's inbox topic) the same way. Before the fix the edge charged
    both to *bob's* inbox budget (burst 8, then 1 per s) before the key-auth check, so
    bob's real invitation was dropped as "inbox sender over budget". Now neither is bob's
    own fresh invitation or cancel (not an invitation; round key not sealed by bob; stale
    by its signed time): dropped before any budget of bob's is touched."""

    async def body() -> None:
        alice = Peer("mqtt://127.0.0.1:1", nick="alice")
        bob = Peer("mqtt://127.0.0.1:1", nick="bob")
        mallory = Identity.from_seed(os.urandom(32))
        now = int(time.time() * 1000)
        presence = _presence(bob.identity, now)
        alice.lobby.receive(presence, now, alice.topics.presence(bob.peer_id).topic)
        assert bob.public_key in alice.lobby.peers
        inbox = alice.topics.inbox(alice.peer_id).topic
        old_body = {
            "game": "connect4", "options": {}, "expires": now - 1_140_000, "private": False,
            "seats": [{"pk": bob.identity.pk_hex, "level": None}, {"pk": alice.identity.pk_hex, "level": None}],
            "start": 0,
        }
        rid = os.urandom(16).hex()
        old = ev.make(bob.identity, "genesis", now - 1_200_000, old_body, round=rid, seq=0)
        clock = Clock()
        queues = InboundQueues(alice.edge.classify, clock=clock)
        for k in range(60):
            clock.now += 0.5
            if k % 2:
                payload = sealing.seal_invitation(
                    os.urandom(32), mallory.seed(), mallory.public_key, alice.public_key,
                    "ab" * 16, os.urandom(32), os.urandom(16), presence.raw,
                )
            else:
                payload = sealing.seal_invitation(
                    os.urandom(32), bob.identity.seed(), bob.public_key, alice.public_key,
                    rid, os.urandom(32), bytes.fromhex(rid), old.raw,
                )
            assert not queues.offer(Inbound(inbox, payload))
        assert not any("over budget" in k for k in queues.stats), queues.stats
        assert queues.stats.get("dropped: not an invitation or cancel") == 30, queues.stats
        assert queues.stats.get("dropped: stale invitation or cancel") == 30, queues.stats
        # bob's real invitation still gets through, and only bob's budget pays for it
        rnd = await bob.invite([alice.public_key], "connect4", start=0)
        genesis = rnd.log()[0]
        real = bob.edge.seal(inbox, genesis.raw, genesis)
        assert real is not None
        assert queues.offer(Inbound(inbox, real)), queues.stats
        item = queues.get_nowait()
        assert item is not None
        await alice.edge.dispatch(item)
        assert genesis.round in alice.lobby.invitations
        for p in (alice, bob):
            await p.close()

    asyncio.run(body())


def test_a_strangers_bytes_replayed_in_the_lobby_are_charged_to_the_lane_not_to_their_signer() -> None:
    """The same rule for a key we do not know yet (a real new peer): junk that names
    carol's key, and carol's own first presence replayed on other peers' topics, are
    charged to the ``stranger`` lane they arrived on, never to carol's budget in it
    (burst 10, then 2 per s). Before, the edge charged carol's budget for whatever named
    her key, unchecked, and her real first presence was dropped "over budget"."""

    async def body() -> None:
        alice = Peer("mqtt://127.0.0.1:1", nick="alice")
        carol = Identity.from_seed(os.urandom(32))
        now = int(time.time() * 1000)
        topics = alice.topics
        first = _presence(carol, now - 5_000)
        clock = Clock()
        queues = InboundQueues(alice.edge.classify, clock=clock)
        for k in range(60):  # 10 per s, each message new bytes
            clock.now += 0.1
            if k % 2:  # carol's key on junk: the signature no longer matches
                junk = first.raw.replace(b'"nick":"bob"', f'"nick":"b{k:02d}"'.encode())
                queues.offer(Inbound(topics.presence(carol.peer_id).topic, junk))
            else:
                other = topics.presence(peer_id(os.urandom(32))).topic
                queues.offer(Inbound(other, first.raw))
        real = _presence(carol, now)
        assert queues.offer(Inbound(topics.presence(carol.peer_id).topic, real.raw)), queues.stats
        # a stranger's signature is checked when its message is taken from the lane
        taken = list(iter(queues.get_nowait, None))
        assert [m.payload for m in taken] == [real.raw], queues.stats
        assert not any("over budget" in k for k in queues.stats), queues.stats
        assert queues.stats.get("dropped: forged") == 30, queues.stats
        assert queues.stats.get("dropped: presence on another peer's topic") == 30, queues.stats
        await alice.close()

    asyncio.run(body())
