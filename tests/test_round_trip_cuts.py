"""What the round-trip cuts of issue 28 rely on, checked by behaviour and by counted work
(never by time), over real peers on a real Mosquitto."""

from __future__ import annotations

import asyncio
import sys
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
