"""A slow round's retained store on the broker, for one held round (docs/protocol.md §9.1).

``StoreLink`` keeps our store -- the signed events the other members may lack, sealed
with the round key, retained on ``round/<key>/store/<our peer id>`` -- up to date after
every change and after every (re)connect (a restarted broker may have forgotten it), and
reads the others' stores: each event in them goes to the round machine like any event
from the network, so nothing there is taken on trust.  Slow rounds (a genesis with
``turn``, §6.7) keep a store for their whole life; a live round keeps one only for its
ending (``live_ending``: from its end until every member holds every ack, or
``ACK_ASK_MS`` later), so a member cut off at the end learns it with nobody else online.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Iterable
from typing import Protocol

from p2p.net.inbound import Lane, Verdict
from p2p.peer.handles import Round
from p2p.peer.notifications import Notification, RoundNotice
from p2p.protocol import events as ev
from p2p.protocol import round_store, sealing
from p2p.protocol.events import Event, EventError
from p2p.protocol.identity import peer_id
from p2p.protocol.round import Phase
from p2p.protocol.round_machine import ACK_ASK_MS, RoundMachine
from p2p.protocol.sealing import SealError
from p2p.protocol.topics import Topics

log = logging.getLogger("p2p.peer")

NO_RETAINED = (
    "This broker keeps no retained messages: this slow round goes on only while its "
    "players are online together (nothing is lost; a broker that keeps them lets you "
    "take turns at different times)."
)
"""The notice (code ``broker_no_retained``) of a slow round on such a broker."""

ENDING_GATHER_MS = 1_000
"""A live round's ending (and a slow round's store) is published at once when the round
ends (with the acks we hold), then again once it holds every member's ack -- not after
each ack in between, for this long after the end (``StoreLink.refresh``; the timer
publishes what waited when it is over).  The acks come within a round trip or two, and a store republished
after each of them cost every member two or three more sealed stores to send and to
read at the very moment the acks are on their way (issue 28: the 3- and 4-seat ends).
A member cut off at the end finds the ending, with the end and our ack, all the same."""

STORE_ECHO_MS = 400
"""While a slow round is in play, a store that only echoes the others' events (a change
in which we signed nothing: a move of another member reached us) goes at most this long
after our store before it; changes within that time go together in the newest store
(``StoreLink.changed``).  Each member republished its store on every move of every other
member, and with the event that follows that used up the connection's publish pacer
(``PUBLISH_RATE_PER_S``, 9 a second): a 4-seat slow round at one move per round trip
published about 11 messages a second per member, so the admin's seals and ack at the end
and the next round's draw waited 1-2 round trips for a token (issue 28).  What an echo
store holds is in the mover's own store already; a change of ours (our move, seal, ack)
and every change once the round is over still publish at once."""


class StoreHost(Protocol):
    """What a store asks of the peer (a part of ``p2p.peer.round_link.RoundHost``)."""

    topics: Topics

    def now_ms(self) -> int: ...

    @property
    def closed(self) -> bool: ...

    @property
    def connected(self) -> bool: ...

    def publish_raw(
        self, topic: str, payload: bytes, qos: int, retain: bool, expiry: int | None = None
    ) -> asyncio.Future[None] | None: ...

    def follow_stores(self, key: str, owners: Iterable[str]) -> None: ...

    def retained_to(self) -> str | None: ...

    def notify(self, note: Notification) -> None: ...

    def count_drop(self, reason: str) -> None: ...


class StoreSide(Protocol):
    """What a store asks of its round link (``p2p.peer.round_link.RoundLink`` implements it)."""

    @property
    def machine(self) -> RoundMachine: ...

    @property
    def key(self) -> str: ...

    @property
    def id(self) -> str: ...

    @property
    def sealing_key(self) -> bytes: ...

    @property
    def is_over(self) -> bool: ...

    @property
    def handle(self) -> Round: ...

    @property
    def host(self) -> StoreHost: ...

    def sealed(self, payload: bytes, channel: str) -> bytes: ...

    async def receive(self, event: Event, channel: str, retained: bool) -> None: ...


class StoreLink:
    """Our retained store of one slow round, and what we read from the others' stores."""

    def __init__(self, link: StoreSide) -> None:
        self._link = link
        body = link.machine.state.genesis.body
        self.turn_s: int | None = body.get("turn")
        """The round's turn limit in seconds; ``None``: a live round (a store only for its end)."""
        self._written: bytes | None = None
        """The plaintext we last published (``None``: publish on the next refresh)."""
        self._repair = round_store.StoreRepair()
        """Our stores as sealed and published, to tell our copy from an overwrite, and
        when to repair an overwrite (at most once per interval, after a random back-off)."""
        self._repair_timer: asyncio.TimerHandle | None = None
        self._cleared = False
        self._log_acks: dict[bytes, Event] = {}
        """Closing acks read from our log when we resumed (the machine starts without)."""
        self.all_acked: set[str] = set()
        """Peer ids whose store showed every human seat's ack of our final head."""
        self._told_no_retained = False
        self._followed: tuple[bytes, ...] | None = None
        """The members whose stores we follow (``refresh``)."""
        self._waiting = False
        """A change of an ending held back by ``_gathering``, not yet published."""
        self._end_head: str | None = None
        """The final head our last store published after the end showed (``_gathering``)."""
        self._last_sent: asyncio.Future[None] | None = None
        """The publication of our newest store, until a broker took it (``_clear``)."""
        self._published_at = 0.0
        """When we last published our store (``time.monotonic()``; ``changed``)."""
        self._echo_timer: asyncio.TimerHandle | None = None
        """An echo's change waiting for ``STORE_ECHO_MS`` after our last store."""

    @property
    def enabled(self) -> bool:
        """A slow round: it keeps a store for its whole life (and is never "busy")."""
        return self.turn_s is not None

    @property
    def live_ending(self) -> bool:
        """A live round that ended here by its chain (or a proof), less than
        ``ACK_ASK_MS`` ago, in which we hold a seat: we leave the ending on the broker
        for a member that was cut off and comes back when nobody else is online
        (docs/protocol.md §9.1, "The ending of a live round")."""
        machine = self._link.machine
        return (
            self.turn_s is None
            and machine.state.phase in (Phase.OVER, Phase.CANCELLED)
            and not machine.ended_here
            and machine.my_seat is not None
            and self._link.host.now_ms() - machine.phase_since < ACK_ASK_MS
        )

    @property
    def keeps_store(self) -> bool:
        """We publish a store now: a slow round, or the ending of a live one."""
        return self.enabled or self.live_ending

    def topic(self) -> str:
        host = self._link.host
        return host.topics.round_store(self._link.key, peer_id(self._link.machine.me.public_key)).topic

    def remember_acks(self, acks: Iterable[Event]) -> None:
        """The acks our log holds (``Peer.resume``): our store carries them on."""
        for ack in acks:
            self._log_acks[ack.pk] = ack
        self._written = None  # what the store should hold changed: publish on the next tick

    def _acks(self) -> list[Event]:
        """The acks of our final head we hold, one per member (the machine's first)."""
        st = self._link.machine.state
        if not self._link.machine.is_over:
            return []
        found = dict(self._log_acks)
        found.update({a.pk: a for a in self._link.machine.acks().values()})
        return [a for a in found.values() if a.prev == st.head.id]

    def _done(self, acks: list[Event]) -> bool:
        """Every human seat acknowledged our end and every other member's store showed
        it holds all those acks: nobody needs our store any more (§9.1)."""
        st = self._link.machine.state
        humans = {s.pk for s in st.seats if s.pk is not None}
        if {a.pk for a in acks} < humans or not acks:
            return False
        me = self._link.machine.me.public_key
        return all(peer_id(pk) in self.all_acked for pk in humans if pk != me)

    # -- out ------------------------------------------------------------------------------

    def changed(self, ours: bool) -> None:
        """The round changed (``ours``: by an event we signed in that step): publish our
        store, or, for an echo of the others' events in play, a little later with what
        comes meanwhile (``STORE_ECHO_MS``)."""
        echo = (
            not ours
            and self.enabled
            and self._written is not None
            and not self._link.machine.is_over
        )
        if self._echo_timer is not None:
            if echo:
                return  # the timer publishes the newest store
            self._echo_timer.cancel()
            self._echo_timer = None
        if echo:
            wait = self._published_at + STORE_ECHO_MS / 1000 - time.monotonic()
            if wait > 0:
                self._echo_timer = asyncio.get_running_loop().call_later(wait, self._echo_due)
                return
        self.refresh()

    def flush(self) -> None:
        """Publish a store held back by ``changed`` now (the peer closes)."""
        if self._echo_timer is not None:
            self._echo_timer.cancel()
            self._echo_timer = None
            self.refresh()

    def _echo_due(self) -> None:
        self._echo_timer = None
        self.refresh()

    def refresh(self) -> None:
        """Publish our store again if what it should hold changed (or was asked for)."""
        link = self._link
        host = link.host
        # every round follows the members' stores: a slow round's, and a live round's
        # ending that a member left for us when we were cut off (§9.1); worked out again
        # only when the members change, not after every move (issue 28)
        members = tuple(s.pk for s in link.machine.state.seats if s.pk is not None)
        if members != self._followed:
            self._followed = members
            host.follow_stores(link.key, [peer_id(pk) for pk in members])
        if self._cleared or host.closed or not host.connected:
            return
        if not self.keeps_store:
            if self._written is not None:  # a live ending past its time: nobody needs it
                self._clear("the ending's time is over")
            return
        acks = self._acks()
        if self._done(acks):
            self._clear("every member holds the end")
            return
        if self._gathering(acks):
            self._waiting = True  # (the timer's ``refresh_if_due`` publishes it later)
            return
        self._waiting = False
        plaintext = round_store.encode(round_store.store_events(
            link.machine.state, link.machine.me.public_key, acks))
        if plaintext == self._written:
            return
        self._written = plaintext
        self._end_head = link.machine.state.head.id if link.machine.is_over else None
        self._publish(link.sealed(plaintext, "store"))

    def _gathering(self, acks: list[Event]) -> bool:
        """An ending (a live round's, or a slow round's last store) published already
        for this final head, younger than ``ENDING_GATHER_MS``, whose acks are not all
        in: a new ack waits for the others, to go out with all of them."""
        machine = self._link.machine
        if not machine.is_over or self._end_head != machine.state.head.id:
            return False
        humans = {s.pk for s in machine.state.seats if s.pk is not None}
        if humans <= {a.pk for a in acks}:
            return False
        return self._link.host.now_ms() - machine.phase_since < ENDING_GATHER_MS

    def _publish(self, payload: bytes) -> None:
        host = self._link.host
        route = host.topics.round_store(self._link.key, peer_id(self._link.machine.me.public_key))
        self._repair.published(payload, host.now_ms())
        self._published_at = time.monotonic()
        # on a broker with message expiry the store vanishes by itself two turns later
        # (a live round's ending: once the members stop asking for acks)
        expiry = 2 * self.turn_s if self.turn_s is not None else ACK_ASK_MS // 1000
        self._last_sent = host.publish_raw(route.topic, payload, route.qos, True, expiry)

    def _clear(self, why: str) -> None:
        """Publish an empty retained message on our store: the broker forgets it -- once
        a broker took our newest store.  That one shows we hold every ack, and the others
        clear theirs only when they read it: an empty message queued behind it would
        replace it in the outbox (a newer retained message on its topic does), and then
        the other members' stores stayed on the broker for good."""
        self._cleared = True
        pending, self._last_sent = self._last_sent, None
        if pending is not None and not pending.done():
            pending.add_done_callback(lambda _: self._send_clear(why))
            return
        self._send_clear(why)

    def _send_clear(self, why: str) -> None:
        link = self._link
        host = link.host
        if host.closed:
            return
        route = host.topics.round_store(link.key, peer_id(link.machine.me.public_key))
        host.publish_raw(route.topic, b"", route.qos, True)
        log.info("round %s: %s; our store is cleared", link.id[:8], why)

    def _overwritten(self, payload: bytes) -> None:
        """Something arrived on our own store topic: ours, or an overwrite to repair
        (once per interval at most, after a random back-off: junk costs no more)."""
        host = self._link.host
        if not self._repair.ours(payload):
            host.count_drop("retained store overwritten")
        wait = self._repair.seen(payload, host.now_ms())
        if wait is None or self._repair_timer is not None:
            return
        delay = (wait[0] + random.uniform(0, wait[1])) / 1000
        self._repair_timer = asyncio.get_running_loop().call_later(delay, self._repair_due)

    def _repair_due(self) -> None:
        self._repair_timer = None
        host = self._link.host
        latest = self._repair.latest
        if not self._repair.due(host.now_ms()) or latest is None:
            return
        if self._cleared or host.closed or not host.connected:
            return  # (a reconnect publishes it anyway)
        log.info("round %s: our retained store was overwritten; published again",
                 self._link.id[:8])
        self._publish(latest)

    def check_broker(self) -> None:
        """Tell the user once if the broker keeps no retained messages: then the store
        cannot carry this slow round between visits (the timer asks, every tick)."""
        link = self._link
        if not self.enabled or self._told_no_retained or link.is_over:
            return
        if link.host.retained_to() == "none":
            self._told_no_retained = True
            log.warning("round %s: %s", link.id[:8], NO_RETAINED)
            link.host.notify(RoundNotice(link.handle, NO_RETAINED, "broker_no_retained"))

    def refresh_if_due(self) -> None:
        """The timer's check: publish only a store never published or asked for again
        (a change of the round publishes at once, ``refresh``), so an idle round costs
        no encoding per tick."""
        if self._cleared:
            return
        if self._written is None:
            if self.keeps_store:
                self.refresh()
        elif self.turn_s is None and not self.live_ending:
            self.refresh()  # a live ending past its time: cleared
        elif self._waiting:
            self.refresh()  # an ending's change that waited for the other acks

    def republish(self) -> None:
        """After a (re)connect: the broker may have lost our store (restart without
        persistence), or a stranger emptied it meanwhile: publish it again."""
        self._written = None
        self.refresh()

    # -- in -------------------------------------------------------------------------------

    def classify(self, owner: str, payload: bytes) -> Verdict:
        """The edge's cheap checks for a store message (``Edge._classify_round``)."""
        link = self._link
        if owner == peer_id(link.machine.me.public_key):
            if not self._cleared:
                self._overwritten(payload)
            return Verdict(None, reason="our own store")
        members = {peer_id(s.pk) for s in link.machine.state.seats if s.pk is not None}
        if owner not in members:
            return Verdict(None, reason="a store of a non-member")
        if not payload:
            return Verdict(None, reason="an emptied store")
        try:
            opened = sealing.open_round(link.sealing_key, "store", payload)
        except SealError:
            return Verdict(None, reason="not sealed with the round key")
        return Verdict(Lane.ROUND_OTHER, None, parsed=opened)

    async def receive(self, owner: str, plaintext: object) -> None:
        """Every event in another member's store goes to the machine (verified there)."""
        link = self._link
        if not isinstance(plaintext, bytes):
            return
        events: list[Event] = []
        # what we hold already (most of a store, republished on every change) is taken
        # by its bytes, not parsed and its signature checked again
        machine = link.machine
        held = {e.raw: e for e in (*machine.log_events(), *machine.side.values())}
        for line in round_store.decode(plaintext):
            known = held.get(bytes(line))
            if known is not None:
                events.append(known)
                continue
            try:
                events.append(ev.parse(line, held=machine.held))
            except EventError as err:
                link.host.count_drop("store: " + str(err))
        now = link.host.now_ms()
        for event in events:
            if event.round != link.id:
                link.host.count_drop("store: event of another round")
                continue
            if event.kind != "sync_request" and machine.replayed(event, now) == "duplicate":
                # the machine would drop it unseen (``RoundMachine.replayed``): a store
                # repeats what we hold, republished on every change, so a step per event
                # cost four peers ~20 ms of CPU a move in a slow round (issue 28)
                link.host.count_drop("duplicate")
                continue
            await link.receive(event, "sync", True)
        st = link.machine.state
        learned = False
        if link.machine.is_over:
            humans = {s.pk for s in st.seats if s.pk is not None}
            shown = {e.pk for e in events if e.kind == "ack" and e.prev == st.head.id}
            if humans <= shown and owner not in self.all_acked:
                self.all_acked.add(owner)
                learned = True
        # what the store brought that changed the round was applied above, and each such
        # step refreshed our store already; a store that repeats what we hold (most of
        # them: every member republishes on every change) changes ours only when it
        # shows a member holds every ack (then ours may be cleared), or when ours was
        # never published (issue 28: three stores per move, each working ours out again)
        if learned or self._written is None:
            self.refresh()
