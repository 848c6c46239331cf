"""``RoundLink``: everything a peer keeps for one round it holds, in one object.

One link per held round, created once when we open, accept, join or resume the round
and never re-pointed: its machine (``p2p.protocol.round_machine``), its topic key, the
round key its payloads are sealed with, its log file, its timers, the lock that lets one
machine step run at a time, and the carrying out of the effects its machine returns.
A held round's routing is fixed at creation (docs/protocol.md §15.3): ``publish`` only
ever sends to this round's own topics, sealed with this round's own key.

The link reaches the rest of the peer through ``RoundHost``, a narrow typed face the
``Peer`` implements (send, notify, warn, labels, the lobby's view of who is offline).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from p2p.peer import config
from p2p.peer.files import write_atomic
from p2p.peer.handles import Round
from p2p.peer.notifications import (
    ChatMessage,
    Equivocated,
    MovedWhileAway,
    Notification,
    Notifications,
    Resynced,
    RoundNotice,
    RoundOver,
    RoundUpdate,
    YourTurn,
)
from p2p.peer.store_link import StoreLink
from p2p.protocol import sealing
from p2p.protocol.admission import Members
from p2p.protocol.effects import (
    Acknowledged,
    Applied,
    ChatLine,
    Dropped,
    Effect,
    Equivocation,
    Notice,
    Publish,
    Rewound,
)
from p2p.protocol.events import Event
from p2p.protocol.lobby import Lobby
from p2p.protocol.round import Phase, RoundState, Seat
from p2p.protocol.round_machine import ActionError, RoundMachine
from p2p.protocol.topics import Topics

log = logging.getLogger("p2p.peer")

Step = Callable[[], list[Effect]]
Action = Callable[[RoundMachine, int], list[Effect]]


class RoundHost(Protocol):
    """What a round link needs from its peer (``Peer`` implements it)."""

    lobby: Lobby
    topics: Topics
    listeners: list[Notifications]

    def now_ms(self) -> int: ...

    @property
    def closed(self) -> bool: ...

    def publish_for(self, link: RoundLink, effect: Publish) -> None:
        """Seal ``effect`` for ``link``'s round and publish it (``Edge.seal``)."""

    def publish_raw(
        self, topic: str, payload: bytes, qos: int, retain: bool, expiry: int | None = None
    ) -> asyncio.Future[None] | None:
        """Publish bytes as they are (a retained genesis or store, their clearing); the
        future, if any, resolves once the broker took them."""

    @property
    def connected(self) -> bool: ...

    def follow_stores(self, key: str, owners: Iterable[str]) -> None:
        """Subscribe exactly to these members' retained stores (``Edge.follow_stores``)."""

    def retained_to(self) -> str | None:
        """To whom our broker hands retained messages (``Broker.retained_to``)."""

    def notify(self, note: Notification) -> None: ...

    def warn(
        self, text: str, round_id: str | None, reason: str, kind: str, sender: str = ""
    ) -> None: ...

    def label_of(self, public_key: bytes, nick: str = "") -> str: ...

    def remember_members(self, state: RoundState) -> None: ...

    def count_drop(self, reason: str) -> None: ...

    def count_applied(self) -> None: ...

    async def after_step(self) -> None:
        """Anything that depends on all rounds (our busy flag in the lobby)."""


@dataclass
class _Clock:
    """The link's own timers (monotonic seconds unless named otherwise)."""

    resync_count: int = 0
    away_movers: list[bytes] = field(default_factory=list)
    """Signers of the others' moves a sync brought in since the last ``Resynced``."""
    resync_flush: asyncio.Handle | None = None
    parked_since: float | None = None
    last_sync_request: float = 0.0
    last_change: float = field(default_factory=time.monotonic)
    genesis_repair: asyncio.TimerHandle | None = None


class RoundLink:
    """One held round: machine, topic key, round key, log file, timers, lock, publishing."""

    def __init__(
        self, host: RoundHost, machine: RoundMachine, sealing_key: bytes, log_dir: Path | None
    ) -> None:
        self._host = host
        self.machine = machine
        self.key: str = machine.key
        """The topic key, fixed for the life of the link (its routing, §15.3)."""
        self.sealing_key: bytes = sealing_key
        """The round key every payload on the round's topics is sealed with."""
        self.members = Members()
        self.lock = asyncio.Lock()  # one machine step at a time
        self.stepping = False
        """True while a machine step runs in a worker thread (the live engine may change)."""
        self.clock = _Clock()
        self.genesis_payload: bytes | None = None  # our retained genesis, as sealed
        self.genesis_cleared = False
        self._told_over: tuple[Phase, str, tuple[int, ...]] | None = None
        self._has_computers = any(seat.is_computer for seat in machine.state.seats)
        self.log_path: Path | None = None
        self._written: list[bytes] | None = None
        """The lines the log file holds as we last wrote it (``None``: rewrite it whole)."""
        self._mark: tuple[object, ...] = ()
        if log_dir is not None:
            self.log_path = log_dir / f"round-{machine.state.round_id}.log"
        self.handle = Round(self)
        """The public handle users act through (``p2p.peer.handles.Round``)."""
        self.store = StoreLink(self)
        """A slow round's retained store on the broker (``p2p.peer.store_link``)."""

    # -- queries the handle and the edge ask -------------------------------------------

    @property
    def id(self) -> str:
        return self.machine.state.round_id

    @property
    def is_over(self) -> bool:
        return self.machine.is_over

    def has_member(self, public_key: bytes) -> bool:
        """True if ``public_key`` holds a seat (``p2p.protocol.admission``)."""
        return self.members.admits(self.machine.state, public_key)

    def label_of(self, public_key: bytes, nick: str = "") -> str:
        return self._host.label_of(public_key, nick)

    def topic(self, channel: str) -> str:
        """The MQTT topic of one of the round's channels (events, sync, chat, genesis)."""
        topics = self._host.topics
        routes = {
            "events": topics.round_events,
            "sync": topics.round_sync,
            "chat": topics.round_chat,
            "genesis": topics.round_genesis,
        }
        return routes[channel](self.key).topic

    def sealed(self, payload: bytes, channel: str) -> bytes:
        """``payload`` sealed with the round key, as a member sends it on ``channel``."""
        return sealing.seal_round(
            self.sealing_key, os.urandom(sealing.NONCE_SIZE), channel, payload
        )

    def notifications_filter(self, note: Notification) -> bool:
        return getattr(note, "round", None) is self.handle

    def events(self) -> Notifications:
        """Notifications about this round only (``Round.events``)."""
        return Notifications(self._host, self.notifications_filter)

    def echo_chat(self, line: str) -> None:
        """Tell our own listeners the round chat ``line`` we just said (``Round.say``)."""
        host = self._host
        me = self.machine.me.public_key
        host.notify(ChatMessage(me, host.lobby.nick, line, self.id, host.now_ms()))

    @property
    def host(self) -> RoundHost:
        return self._host

    # -- the log file --------------------------------------------------------------------

    def start_log(self, write_key: Callable[[Path], None]) -> None:
        """Write the log file (a resumed round's is written again from its machine, which
        holds all its log held) and the key file beside it."""
        if self.log_path is None:
            return
        try:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            write_key(self.log_path.with_suffix(".key"))
        except OSError as err:
            log.warning("cannot write the round log %s: %s", self.log_path, err)
        self.write_log()

    def write_log(self) -> None:
        """Make the log file hold exactly ``machine.log_events()`` (after every step).

        What only grew is appended (and flushed to disk once the round is over); any
        other change -- a rewind, a forfeit that replaced an event, an equivocation
        proof, an ack of a new end -- rewrites the file atomically (``write_atomic``),
        so the file on disk always replays to the machine's head, phase and result.
        """
        if self.log_path is None:
            return
        machine = self.machine
        st = machine.state
        mark = (  # what the file depends on: most steps (chat, a dropped event) change none
            id(st), len(st.chain), st.head.id, st.phase, machine.ended_by_proof,
            tuple(e.id for e in machine.conflict_evidence()),
            tuple(e.id for (kind, _), e in machine.side.items() if kind == "ack"),
        )
        if mark == self._mark and self._written is not None:
            return
        self._mark = mark
        lines = [e.raw for e in machine.log_events()]
        old = self._written
        if lines == old:
            return
        try:
            if old is not None and len(lines) > len(old) and lines[: len(old)] == old:
                with self.log_path.open("ab") as handle:
                    handle.write(b"".join(line + b"\n" for line in lines[len(old) :]))
                    if self.is_over:
                        handle.flush()
                        os.fsync(handle.fileno())
            else:
                write_atomic(self.log_path, b"".join(line + b"\n" for line in lines))
            self._written = lines
        except OSError as err:
            self._written = None  # rewritten whole on the next step
            log.warning("cannot write the round log %s: %s", self.log_path, err)

    # -- machine steps -------------------------------------------------------------------

    async def act(self, action: Action) -> None:
        """Run a user action on the machine (``ActionError`` passes to the caller)."""
        if self._host.closed:
            raise ActionError("this peer is closed", "closed")
        effects = await self.step(lambda: action(self.machine, self._host.now_ms()))
        await self.run_effects(effects)

    async def step(self, step: Step) -> list[Effect]:
        """Run one step of the machine, one at a time.

        In a round with computer seats a step may include a computer move (the admin
        plays it, every other member recomputes it to check it), which takes up to about
        a second at the strongest levels.  Such steps run in a worker thread so the event
        loop -- the shell's screen, the other rounds, the MQTT keepalive -- never stalls.
        The engines' computer players search on a copy of the position, so the round's
        state only changes in the short moment a move is applied.
        """
        async with self.lock:
            if config.OFFLOAD_COMPUTER_MOVES and self._has_computers:
                self.stepping = True  # Round.game keeps its last copy meanwhile
                try:
                    effects = await asyncio.to_thread(step)
                finally:
                    self.stepping = False
            else:
                effects = step()
            self.write_log()  # the file follows the machine, step by step
            return effects

    async def receive(self, event: Event, channel: str, retained: bool) -> None:
        """An event that arrived on one of our topics (``Edge.dispatch``)."""
        host = self._host
        if (
            event.seq is None  # a side event or chat: signed with its own clock
            and channel in ("events", "chat")  # live, not a sync answer
            and not retained
            and event.pk != self.machine.me.public_key
            and self.has_member(event.pk)
        ):
            host.lobby.clocks.observe(event.pk, event.ts, host.now_ms())
        effects = await self.step(lambda: self.machine.receive(event, host.now_ms()))
        await self.run_effects(effects, source=channel)

    def _contradicted(self, notice: Notice, source: str) -> bool:
        """A "we saw it online" about a forfeit that our own lobby contradicts: the machine
        judges by members offline for the whole grace on our last tick, the forfeiter by
        its own clock, so a fair forfeit that lands just before our grace runs out (or
        reaches us in a sync answer, after the fact) is no sign of a lie."""
        if notice.code != "forfeit_seen_online":
            return False
        if source == "sync":
            return True
        seat = notice.params.get("seat")
        seats = self.machine.state.seats
        pk = seats[seat].pk if isinstance(seat, int) and 0 <= seat < len(seats) else None
        return pk is not None and self._host.lobby.is_offline(pk)

    async def run_effects(self, effects: list[Effect], source: str = "") -> None:
        """Carry out what the machine asked for, in order."""
        host = self._host
        changed = noticed = ours = False
        applied_from_sync = 0
        for effect in effects:
            if isinstance(effect, Publish):
                host.publish_for(self, effect)
                ours = True
            elif isinstance(effect, Applied):
                changed = True
                host.count_applied()
                self._on_applied(effect)
                if source == "sync":
                    applied_from_sync += 1
                    event = effect.event
                    if event.kind == "move" and event.pk != self.machine.me.public_key:
                        self.clock.away_movers.append(event.pk)  # moved while we were away
            elif isinstance(effect, Dropped):
                host.warn(effect.describe(), self.id, effect.reason, effect.kind, effect.sender)
            elif isinstance(effect, Equivocation):
                log.warning("%s", effect.describe())
                host.count_drop("equivocation")
                host.notify(Equivocated(self.handle, effect.first, effect.second))
            elif isinstance(effect, ChatLine):
                info = host.lobby.peers.get(effect.sender)
                nick = effect.nick or (info.nick if info else "?")
                host.notify(ChatMessage(effect.sender, nick, effect.text, effect.round, effect.ts))
            elif isinstance(effect, Notice):
                log.info("%s", effect.text)
                if self._contradicted(effect, source):
                    continue
                host.notify(RoundNotice(self.handle, effect.text, effect.code, effect.params))
                noticed = True  # e.g. a take-back request: ``wait_until`` may be waiting
            elif isinstance(effect, Rewound):
                changed = True
                self._on_rewound(effect)
            elif isinstance(effect, Acknowledged):
                changed = True
        await host.after_step()
        if self.is_over:
            changed = True  # a local end (expiry, equivocation) changes no chain
        if changed:
            # a slow round: the others find it on the broker (an echo of their events
            # a little later, with what comes meanwhile: ``STORE_ECHO_MS``)
            self.store.changed(ours or not source)
            self._tell_over()
            self.clock.last_change = time.monotonic()
            self._clear_private_genesis()
            if applied_from_sync:
                self._note_resync(applied_from_sync)
            await self.handle.wake_waiters()
            if self.handle.is_my_turn:
                host.notify(YourTurn(self.handle))
        elif noticed:
            await self.handle.wake_waiters()

    def _on_applied(self, applied: Applied) -> None:
        event = applied.event
        if event.kind == "start":
            self._host.remember_members(self.machine.state)
        text = event.kind
        seat = applied.seat
        if event.kind == "move":
            signer = self._host.label_of(event.pk)
            text = f"ply {event.body['ply']}: {event.body['move']} (seat {seat}, signed by {signer})"
        elif event.kind == "forfeit":
            text = f"seat {event.body['seat']} forfeited ({event.body['reason']})"
        elif event.kind == "draw":
            text = f"starter seat {event.body['starter']} (seed {event.body['seed'][:12]})"
        self._host.notify(RoundUpdate(self.handle, event.kind, event.seq or 0, text, seat))
        self._tell_over()

    def _tell_over(self) -> None:
        """``RoundOver`` once per outcome (a chain event, a local end, an equivocation)."""
        machine = self.machine
        if not machine.is_over:
            return  # (its outcome is worked out only once there is one: not per move)
        winners = machine.state.winners()
        outcome = (machine.phase, machine.end_reason, winners)
        if self._told_over != outcome:
            self._told_over = outcome
            self._host.notify(
                RoundOver(self.handle, winners, machine.end_reason, machine.outcome)
            )

    def _on_rewound(self, effect: Rewound) -> None:
        """Chain events were replaced (the log file followed in ``step``): say so."""
        chain = self.machine.state.chain
        now = chain[effect.seq].kind if effect.seq < len(chain) else "proof of equivocation"
        log.warning(
            "round %s: %d chain event(s) from position %d were replaced (now: %s)",
            self.id[:8],
            len(effect.replaced),
            effect.seq,
            now,
        )

    def _note_resync(self, applied: int) -> None:
        clock = self.clock
        clock.resync_count += applied
        if clock.resync_flush is not None:
            return

        def flush() -> None:
            clock.resync_flush = None
            count, clock.resync_count = clock.resync_count, 0
            movers, clock.away_movers = clock.away_movers, []
            head = len(self.machine.state.chain) - 1
            self._host.notify(Resynced(self.handle, count, head))
            if movers:  # the others moved while we were away: say so once, with whose turn
                self._host.notify(MovedWhileAway(
                    self.handle, len(movers), tuple(dict.fromkeys(movers)), self.handle.is_my_turn))

        clock.resync_flush = asyncio.get_running_loop().call_later(0.2, flush)

    # -- timers ----------------------------------------------------------------------------

    async def tick(self, now: int, deciding: bool) -> None:
        """The round's timers (``Peer``'s timer loop, every ``TICK_S``).

        ``deciding``: we are connected and settled; while we are cut off or just back,
        nobody's silence counts (only the closing acks are still asked for).
        """
        machine = self.machine
        self.store.refresh_if_due()  # a store not yet published (e.g. just resumed)
        self.store.check_broker()
        if self.is_over:
            if deciding and machine.asks_for_acks(now):  # an ack missing
                await self.run_effects(await self.step(functools.partial(machine.tick, now)))
            return
        if not deciding:
            return
        lobby = self._host.lobby
        lobby.keep(s.pk for s in machine.state.seats if s.pk is not None)  # e.g. a joiner
        me = machine.me.public_key
        grace = config.offline_grace_ms(machine.timeouts.offline_ms)
        seats = machine.state.seats
        step = functools.partial(
            machine.tick,
            now,
            offline_members(lobby, seats, me, grace, now),
            offline_evidence(lobby, seats, me, grace, now),
        )
        await self.run_effects(await self.step(step))
        await self._maybe_resync()

    async def _maybe_resync(self) -> None:
        """Events parked for long mean we missed one: ask the members for the chain."""
        clock = self.clock
        if not self.machine.pending:  # (the machine's tick exchanges heads every 15 s)
            clock.parked_since = None
            return
        if clock.parked_since is None:
            clock.parked_since = time.monotonic()
            return
        quiet = time.monotonic() - clock.last_sync_request
        if (
            time.monotonic() - clock.parked_since >= config.RESYNC_AFTER_S
            and quiet >= config.RESYNC_AFTER_S
        ):
            await self.request_sync()

    async def request_sync(self) -> None:
        """Ask the other members for the chain from our head on."""
        self.clock.last_sync_request = time.monotonic()
        await self.act(lambda m, now: m.request_sync(now))

    # -- the retained genesis of a private round -------------------------------------------

    def _clear_private_genesis(self) -> None:
        """Once a private round has started, its retained genesis has done its job."""
        st = self.machine.state
        if (
            self.genesis_cleared
            or not st.private
            or not self.machine.is_admin
            or st.phase is Phase.FORMING
        ):
            return
        self.genesis_cleared = True
        route = self._host.topics.round_genesis(self.key)
        self._host.publish_raw(route.topic, b"", route.qos, True)

    def watch_genesis(self, payload: bytes) -> None:
        """Someone deleted or overwrote our private round's retained genesis: repair it."""
        if (
            not self.machine.is_admin
            or self.genesis_payload is None
            or self.genesis_cleared  # our own clearing, echoed (a broker without noLocal)
            or self.machine.phase is not Phase.FORMING
            or payload == self.genesis_payload  # our own copy, echoed
        ):
            return
        what = "deleted" if not payload else "overwritten"
        self._host.count_drop(f"retained genesis {what}")
        if self.clock.genesis_repair is None:  # one log line and one repair per interval
            log.warning("round %s: the retained genesis was %s", self.id[:8], what)
            self.clock.genesis_repair = asyncio.get_running_loop().call_later(
                config.GENESIS_REPAIR_S, self.repair_genesis
            )

    def repair_genesis(self) -> None:
        """Publish our private round's genesis again, retained, while joiners may come."""
        self.clock.genesis_repair = None
        if (
            self.genesis_payload is None
            or self.genesis_cleared
            or not self.machine.is_admin
            or self.machine.phase is not Phase.FORMING
            or self._host.closed
        ):
            return
        route = self._host.topics.round_genesis(self.key)
        self._host.publish_raw(route.topic, self.genesis_payload, route.qos, True)


def offline_members(
    lobby: Lobby, seats: Sequence[Seat], me: bytes, grace_ms: int, now: int
) -> frozenset[bytes]:
    """Members (``seats``) whose own Last Will or goodbye, or whose silence, took them out
    of the lobby at least ``grace_ms`` ago -- never members a lobby flood kept out of the
    list, nor one whose outage may still end (``config.offline_grace_ms``)."""
    found = []
    for seat in seats:
        if seat.pk is None or seat.pk == me:
            continue
        since = lobby.offline_since(seat.pk)
        if since is not None and now - since >= grace_ms:
            found.append(seat.pk)
    return frozenset(found)


def offline_evidence(
    lobby: Lobby, seats: Sequence[Seat], me: bytes, grace_ms: int, now: int
) -> dict[bytes, tuple[Event, int]]:
    """Members that their own signed Last Will or goodbye took out of the lobby,
    unrevoked: that presence and when it arrived (evidence for a forfeit).

    The chain accepts an ``offline`` forfeit once the evidence has stood ``offline_ms``;
    we, the forfeiter, wait ``grace_ms`` (a third longer), so a member whose outage lasts
    the whole limit still has time to reconnect and be heard before we sign anything."""
    found = {}
    for seat in seats:
        if seat.pk is None or seat.pk == me:
            continue
        held = lobby.offline_evidence(seat.pk)
        if held is not None and now - held[1] >= grace_ms:
            found[seat.pk] = held
    return found


class RoundLinks:
    """The rounds a peer holds, by round id and by topic key, and the code joins we wait
    for: the one table the edge routes by.  A link is added once and never re-pointed."""

    def __init__(self) -> None:
        self.by_id: dict[str, RoundLink] = {}
        self.by_key: dict[str, RoundLink] = {}
        self.joining: dict[str, tuple[asyncio.Future[Event], bytes]] = {}
        """Topic key -> (the retained genesis we wait for, the code's round key)."""

    def add(self, link: RoundLink) -> None:
        self.by_id[link.id] = link
        self.by_key[link.key] = link

    def __iter__(self) -> Iterator[RoundLink]:
        """The links, as a list taken now (a step may add a round meanwhile)."""
        return iter(list(self.by_id.values()))
