"""What the round-trip cuts of issue 28 rely on, checked by behaviour and by counted work
(never by time), over real peers on a real Mosquitto."""

from __future__ import annotations

import asyncio
import sys
import time
from collections import Counter
from typing import Any

import pytest
from conftest import Peers, eventually, invitation, run, start_round

from p2p.net.transport import Transport


def test_the_admin_invites_before_its_subscriptions_are_acknowledged(
    peers: Peers, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The admin of a new round hands its SUBSCRIBE packets to the connection and sends
    the invitations at once, without waiting a round trip for the broker's SUBACK:
    ``invite`` returns while the acknowledgements are held back here, the round still
    starts (the SUBSCRIBE went first on the same connection, so the guest's accept
    reaches the admin), and guests still wait for theirs before they accept."""

    async def body() -> None:
        async with peers("alice", "bob") as (alice, bob):
            gate = asyncio.Event()
            acknowledged: list[tuple[str, str]] = []
            real = Transport._subscribe_one

            async def held_back(self: Transport, client: Any, topic: str, *a: Any) -> None:
                await real(self, client, topic, *a)  # SUBSCRIBE sent, SUBACK in
                if "/round/" in topic:
                    who = "alice" if self is alice.edge.transport else "bob"
                    if who == "alice":
                        await gate.wait()  # the caller sees no acknowledgement until let go
                    acknowledged.append((who, topic))

            monkeypatch.setattr(Transport, "_subscribe_one", held_back)
            rnd = await asyncio.wait_for(alice.invite([bob.peer_id], "connect4", start=0), 10)
            assert not any(who == "alice" for who, _ in acknowledged)  # returned before
            pending = await invitation(bob, rnd.id)
            theirs = await pending.accept()
            assert any(who == "bob" for who, _ in acknowledged)  # the guest waited for its own
            await rnd.wait_started(15)
            await theirs.wait_started(15)
            gate.set()
            await rnd.play("4")
            assert await theirs.wait_turn(15)

    run(body())


def test_a_store_that_repeats_what_we_hold_is_read_without_working_out_ours(
    peers: Peers, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a slow round every member republishes its store after every change and reads
    the others' (three stores per move with four seats): reading one that brings nothing
    new works out our own store again only when it shows that member holds every ack of
    the end (then ours may be cleared), not after every read.  Counted: the refreshes
    ``StoreLink.receive`` makes, against the stores it read; and the ending still clears
    every store once each member holds all acks."""
    from p2p.peer.store_link import StoreLink

    reads: Counter[str] = Counter()
    worked: Counter[str] = Counter()
    real_refresh, real_receive = StoreLink.refresh, StoreLink.receive
    code = real_receive.__code__

    async def receive(self: StoreLink, owner: str, plaintext: object) -> None:
        reads[owner] += 1
        await real_receive(self, owner, plaintext)

    def refresh(self: StoreLink) -> None:
        if sys._getframe(1).f_code is code:  # called at the end of a store read
            worked[self.topic()] += 1
        real_refresh(self)

    monkeypatch.setattr(StoreLink, "receive", receive)
    monkeypatch.setattr(StoreLink, "refresh", refresh)

    async def body() -> None:
        async with peers("alice", "bob", "carol") as (alice, bob, carol):
            rounds = await start_round(alice, [bob, carol], "cube", turn_limit=3600)
            by_seat = {r.my_seat: r for r in rounds}
            for _ in range(6):
                mover = by_seat[rounds[0].game.to_move()]
                plies = len(mover.log())
                await mover.play(mover.game.legal_moves()[0])
                for r in rounds:
                    await eventually(lambda r=r, n=plies: len(r.log()) > n, 15, "the move")
            await asyncio.gather(rounds[1].resign(), rounds[2].resign())
            for r in rounds:
                await eventually(lambda r=r: r.is_over and r.agreed, 15, "every ack")
            stores = [r._link.store for r in rounds]
            await eventually(lambda: all(s._cleared for s in stores), 15, "the stores cleared")
            assert sum(reads.values()) >= 2 * 6  # every move brought stores to read
            # at most: once per (reader, member) that it holds every ack, and a first
            # publication of ours; before, once for every store read
            assert sum(worked.values()) <= 3 * 2 + 3, (worked, reads)

    run(body())


@pytest.mark.parametrize("turn_limit", [None, 3600], ids=["live", "slow"])
def test_a_live_ending_goes_out_at_the_end_and_once_more_with_every_ack(
    peers: Peers, monkeypatch: pytest.MonkeyPatch, turn_limit: int | None
) -> None:
    """A live round's ending (its retained store, for a member cut off at the end) is
    published when the round ends and once more when every member's ack is in, not after
    each ack in between (``ENDING_GATHER_MS``; four seats: four stores a member before,
    each sent and read by all); so is a slow round's store after its end.  Every member
    still agrees and clears its store."""
    from p2p.peer.store_link import StoreLink

    published: Counter[str] = Counter()
    real_publish = StoreLink._publish

    def publish(self: StoreLink, payload: bytes) -> None:
        if self._link.machine.is_over:  # (a slow round's store goes out all along)
            published[self.topic()] += 1
        real_publish(self, payload)

    monkeypatch.setattr(StoreLink, "_publish", publish)

    async def body() -> None:
        async with peers("alice", "bob", "carol", "dave") as (alice, bob, carol, dave):
            rounds = await start_round(alice, [bob, carol, dave], "chess4", turn_limit=turn_limit)
            assert not published
            await asyncio.gather(*(r.resign() for r in rounds[1:]))
            for r in rounds:
                await eventually(lambda r=r: r.is_over and r.agreed, 15, "every ack")
            stores = [r._link.store for r in rounds]
            await eventually(lambda: all(s._cleared for s in stores), 15, "the stores cleared")
            assert len(published) == 4 and all(n <= 2 for n in published.values()), published

    run(body())


def test_a_slow_rounds_echo_stores_go_together_and_the_newest_reaches_the_broker(
    peers: Peers, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a slow round in play, a member's store after another member's move (an echo:
    it holds only what the mover's store holds) goes at most ``STORE_ECHO_MS`` after its
    store before it, with every change meanwhile; a change of its own (its move) goes at
    once.  Counted: the stores published while six quick moves are played, against the
    bound the spacing allows (before: one store per member and move, 18); and once play
    stops, every member's newest store, holding the last move, is taken by the broker.
    The ending still clears every store."""
    from p2p.peer import store_link
    from p2p.peer.store_link import StoreLink
    from p2p.protocol import round_store

    window_s = 1.0
    monkeypatch.setattr(store_link, "STORE_ECHO_MS", int(window_s * 1000))
    published: Counter[str] = Counter()
    counting = False
    real_publish = StoreLink._publish

    def publish(self: StoreLink, payload: bytes) -> None:
        if counting:
            published[self.topic()] += 1
        real_publish(self, payload)

    monkeypatch.setattr(StoreLink, "_publish", publish)

    async def body() -> None:
        nonlocal counting
        async with peers("alice", "bob", "carol") as (alice, bob, carol):
            rounds = await start_round(alice, [bob, carol], "cube", turn_limit=3600)
            by_seat = {r.my_seat: r for r in rounds}
            stores = [r._link.store for r in rounds]
            # the start's stores (and echoes of it) are out before we count
            await eventually(lambda: all(s._echo_timer is None for s in stores), 15, "quiet")
            counting = True
            t0 = time.monotonic()
            for _ in range(6):
                mover = by_seat[rounds[0].game.to_move()]
                plies = len(mover.log())
                await mover.play(mover.game.legal_moves()[0])
                for r in rounds:
                    await eventually(lambda r=r, n=plies: len(r.log()) > n, 15, "the move")
            counting = False
            played_s = time.monotonic() - t0
            # each mover's own store at once (6); a member's echoes at least a window apart
            bound = 6 + 3 * (1 + int(played_s / window_s))
            assert sum(published.values()) <= bound, (published, played_s)

            def newest_out(r: Any) -> bool:
                link = r._link
                st = link.machine.state
                held = round_store.encode(round_store.store_events(st, link.machine.me.public_key, []))
                sent = link.store._last_sent
                return link.store._written == held and sent is not None and sent.done()

            for r in rounds:
                await eventually(lambda r=r: newest_out(r), 15, "the newest store on the broker")
            await asyncio.gather(rounds[1].resign(), rounds[2].resign())
            for r in rounds:
                await eventually(lambda r=r: r.is_over and r.agreed, 15, "every ack")
            await eventually(lambda: all(s._cleared for s in stores), 15, "the stores cleared")

    run(body())


def test_a_slow_rounds_store_held_back_goes_when_the_peer_closes(
    peers: Peers, mosquitto: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A member's store after the other's move (an echo) is held back (``STORE_ECHO_MS``,
    here a minute); when the member closes in that time, it goes before the peer
    disconnects: the broker keeps that store with the move in it (the third member is
    not known to hold it)."""
    import aiomqtt

    from p2p.peer import store_link
    from p2p.protocol import round_store, sealing

    monkeypatch.setattr(store_link, "STORE_ECHO_MS", 60_000)

    async def body() -> None:
        async with peers("alice", "bob", "carol") as members:
            rounds = await start_round(members[0], list(members[1:]), "cube", turn_limit=3600)
            mover = next(r for r in rounds if r.game.to_move() == r.my_seat)
            at = next(i for i, r in enumerate(rounds) if r is not mover)
            other, who = rounds[at], members[at]
            plies = len(other.log())
            await mover.play(mover.game.legal_moves()[0])
            await eventually(lambda: len(other.log()) > plies, 15, "the move")
            store = other._link.store
            assert store._echo_timer is not None  # held back
            move = other.log()[-1]
            assert move.kind == "move"
            topic = store.topic()
            key = other.sealing_key
            await who.close()
        async with aiomqtt.Client("127.0.0.1", mosquitto.port, identifier="reader") as reader:
            await reader.subscribe(topic, qos=1)
            async with asyncio.timeout(5):
                async for message in reader.messages:
                    plain = sealing.open_round(key, "store", bytes(message.payload))
                    assert move.raw in [bytes(line) for line in round_store.decode(plain)]
                    break

    run(body())
