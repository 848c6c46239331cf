"""The simulated world: members, their clocks, logs and links, and the network between them.

Every member runs a real ``RoundMachine`` and is driven as ``p2p.peer.round_link`` drives
one: ``tick`` once a second while connected and settled (not in the first 5 s after a
reconnect, ``SETTLE_S``), a sync request after a reconnect, a restart or events parked
for 2 s, the log file written after every step as ``RoundLink.write_log`` writes it
(exactly ``RoundMachine.log_events()``), a restart resumes as ``p2p.peer.opening.resume``
does (``replay_log`` of the file, then ``p2p.protocol.resume.machine_from_replay``, the
same code), and the clock offsets
are fed from live side events and from the lobby's presence heartbeats (every 20 s).
Honest members move at random after a random think time; the adversary
(``p2p.sim.adversary``) drives its own machine the same way but chooses what leaves it.

True time ``T`` (ms) runs in steps of one second; messages are delivered at their own
millisecond, in the order their delays give, each to the receiver's machine with the
receiver's clock (``T`` plus its offset).  Nothing reads a wall clock, and every random
choice comes from streams seeded by the scenario's seed: a schedule replays exactly.
"""

from __future__ import annotations

import hashlib
import heapq
import random
from collections.abc import Iterable
from dataclasses import dataclass, field

from p2p.protocol.conflicts import RULES_VERSION
from p2p.protocol.effects import Applied, Effect, Equivocation, Publish, Rewound
from p2p.protocol.events import Event
from p2p.protocol.identity import Identity
from p2p.protocol.replay import LogError, replay_log
from p2p.protocol.resume import machine_from_replay
from p2p.protocol.round import Phase
from p2p.protocol.round_machine import ActionError, RoundMachine
from p2p.sim.scenario import LIVE, SLOW_TURN_S, Scenario

STEP_MS = 1_000
SETTLE_MS = 5_000
"""After a reconnect the timers decide nothing this long (``p2p.peer.config.SETTLE_S``)."""
RESYNC_AFTER_MS = 2_000
"""Events parked this long: ask for a sync (``p2p.peer.config.RESYNC_AFTER_S``)."""
HEARTBEAT_MS = 20_000
"""The lobby's presence heartbeat: a clock sample of every connected member."""
OFFLINE_AFTER_MS = 20_000
"""A member cut off this long shows offline in the others' lobbies (the broker sends its
Will); the round timers count it offline only after the grace period on top
(``p2p.peer.config.offline_grace_ms``, as ``round_link.offline_members``)."""
MAX_T = 3_600_000
"""No schedule runs longer than an hour of true time."""
FINAL_ENDS = (Phase.OVER, Phase.CANCELLED)
Verdict = tuple[str, str, str, tuple[int, ...]]
"""A member's result: phase, head id, state hash, winners."""
EPOCH = 1_000_000_000
"""Every clock reads this plus the true time plus its offset (signed times stay positive)."""


@dataclass
class Member:
    """One simulated peer process: its key, clock, link, machine and log file."""

    index: int
    identity: Identity
    offset: int
    honest: bool
    machine: RoundMachine | None = None
    log: list[bytes] = field(default_factory=list)
    """The round log file, line by line, as ``RoundLink`` writes it."""
    link: str = "up"
    """``up``, ``cut`` (nothing in or out), ``held`` (out: queued until the heal)."""
    away: bool = False
    fault: str | None = None
    """The fault this member is in (``p2p.sim.scenario.Fault.kind``), if any."""
    down_since: int | None = None
    settle_until: int = 0
    plan: tuple[str, int] | None = None
    """(head id, true time) of the move we plan at that head."""
    parked_since: int | None = None
    last_sync: int = -10**9
    replaced_own: list[Event] = field(default_factory=list)
    """Our own chain events a forfeit took out of our chain (``Rewound``)."""
    notes: list[str] = field(default_factory=list)

    def clock(self, t: int) -> int:
        """What this member's clock says at true time ``t``."""
        return EPOCH + t + self.offset

    @property
    def pk(self) -> bytes:
        return self.identity.public_key

    @property
    def connected(self) -> bool:
        return self.machine is not None and self.link == "up"


@dataclass
class Signed:
    """A chain event an honest member signed: when (true time), by whom, on what."""

    event: Event
    member: int
    at: int
    prev_at: int | None
    """True time its ``prev`` was first signed (``None``: not known)."""
    prev_ts: int | None
    ends_game: bool


class World:
    """One schedule: build the round, run it to the end and keep what the checks need."""

    def __init__(self, scenario: Scenario, rules: int = RULES_VERSION) -> None:
        self.sc = scenario
        self.rules = rules
        """The conflict table the members judge by (``RoundMachine.rules``): 2 shows the
        hole of the old table (``python -m p2p.sim --rules 2``)."""
        seed = scenario.seed
        tag = f"{scenario.family}/{seed}"
        self.net_rng = random.Random(f"net/{tag}")
        self.think_rng = random.Random(f"think/{tag}")
        self.move_rngs = [random.Random(f"moves/{tag}/{i}") for i in range(scenario.seats)]
        self.round_id = hashlib.sha256(f"sim/{tag}".encode()).hexdigest()[:32]
        self.members = [
            Member(i, Identity.from_seed(bytes([i + 1]) * 32), scenario.offsets[i],
                   honest=i != scenario.adversary)
            for i in range(scenario.seats)
        ]
        self.t = 0
        self.queue: list[tuple[int, int, int, int, Event, str]] = []
        self._n = 0
        self.held: dict[int, list[tuple[int, Event, str]]] = {}
        self.trace: list[str] = []
        self.signed: dict[str, Signed] = {}
        self.first_signed: dict[str, int] = {}
        self.delivered: dict[tuple[int, str], int] = {}
        self.violations: list[tuple[str, str]] = []
        self.agreed_at: tuple[int, Verdict] | None = None
        """(true time, verdict) of the first moment every honest member held one agreed
        end (each holding every human seat's ack of it)."""
        self.ended_at: int | None = None
        self.adversary = None
        if scenario.adversary is not None:
            from p2p.sim.adversary import Adversary

            self.adversary = Adversary(self, self.members[scenario.adversary])
        self.turn_s = SLOW_TURN_S if scenario.slow else None
        self.outages: list[tuple[int, int, int | None]] = []
        """(member, start, end) of every time a member was cut off, away or down."""
        offline_ms = scenario.limit if scenario.slow else LIVE.offline_ms
        self._grace = offline_ms + offline_ms // 3
        self.sc_away: list[tuple[Member, int, str]] = []
        """Faults the adversary starts (a member, until a true time, the fault's kind)."""
        self.reveals: list[tuple[int, Event]] = []
        """(member, event) of every reveal an honest member published (the ``draw``
        invariant: none before a start that closed every commitment)."""

    # -- tracing ---------------------------------------------------------------------------

    def note(self, text: str) -> None:
        self.trace.append(f"{self.t / 1000:9.3f}s {text}")

    def violation(self, code: str, text: str) -> None:
        if (code, text) not in self.violations:
            self.violations.append((code, text))
            self.note(f"VIOLATION {code}: {text}")

    # -- the round ---------------------------------------------------------------------------

    def open(self) -> None:
        sc = self.sc
        admin = self.members[0]
        seats = [{"pk": m.identity.pk_hex, "level": None} for m in self.members]
        nonce = random.Random(f"nonce/{sc.family}/{sc.seed}/0").randbytes(32)
        machine, effects = RoundMachine.open(
            admin.identity, admin.clock(0), self.round_id, sc.game, dict(sc.options), seats,
            None, nonce, timeouts=LIVE, turn_s=self.turn_s,
        )
        admin.machine = machine
        machine.rules = self.rules
        admin.log = [e.raw for e in machine.log()]
        genesis = machine.state.genesis
        for m in self.members[1:]:
            nonce = random.Random(f"nonce/{sc.family}/{sc.seed}/{m.index}").randbytes(32)
            m.machine = RoundMachine(m.identity, genesis, nonce, now=m.clock(0), timeouts=LIVE)
            m.machine.rules = self.rules
            m.log = [genesis.raw]
        self._met()
        self.run_effects(admin, effects)
        for m in self.members[1:]:
            assert m.machine is not None
            self.run_effects(m, m.machine.accept(m.clock(1)))

    def _met(self) -> None:
        """The members met in the lobby before the invitation (an invitation goes to a
        member seen online): each has a presence heartbeat of every other as a clock
        sample, as the peer's machine shares the lobby's estimates
        (``p2p.peer.opening``: ``machine.clocks = peer.lobby.clocks``)."""
        for m in self.members:
            assert m.machine is not None
            for other in self.members:
                if other is not m:
                    sent = -HEARTBEAT_MS // 2  # (no draw from the network's stream)
                    m.machine.clocks.observe(other.pk, other.clock(sent), m.clock(sent + 100))

    def run(self) -> World:
        """Run the schedule to its end; the checks read the result."""
        self.open()
        last_fault = max((f.start + f.length for f in self.sc.faults), default=0)
        while self.t < MAX_T:
            self.t += STEP_MS
            self._faults()
            self._deliver_until(self.t)
            for m in self.members:
                self._step(m)
            if self.adversary is not None:
                self.adversary.act()
            self._watch_final()
            if self._done(last_fault):
                break
        self._end()
        return self

    def _done(self, last_fault: int) -> bool:
        honest = [m for m in self.members if m.honest]
        if self.t < last_fault + SETTLE_MS or any(m.machine is None for m in self.members):
            return False
        if any(m.link != "up" for m in self.members) or self.sc_away:
            return False
        ended = all(m.machine is not None and m.machine.phase in FINAL_ENDS for m in honest)
        if not ended:
            self.ended_at = None
            return False
        if self.ended_at is None:
            self.ended_at = self.t
        # the adversary may strike up to limit + 45 s after a move; acks need their asks
        limit = self.sc.limit
        return self.t - self.ended_at >= limit + 120_000 and (
            self.adversary is None or self.adversary.quiet()
        )

    def _end(self) -> None:
        for m in self.members:  # a member still down comes back for the verdict
            if m.machine is None:
                self._resume(m)

    # -- faults ------------------------------------------------------------------------------

    def _faults(self) -> None:
        for m, until, kind in list(self.sc_away):
            if self.t >= until:
                self.sc_away.remove((m, until, kind))
                self.end_fault(m, kind)
        for f in self.sc.faults:
            m = self.members[f.member]
            if f.start <= self.t < f.start + STEP_MS:
                self.begin_fault(m, f.kind)
            if f.start + f.length <= self.t < f.start + f.length + STEP_MS:
                self.end_fault(m, f.kind)

    def connected_throughout(self, index: int, start: int, end: int) -> bool:
        """Member ``index`` was up and connected from ``start`` to ``end`` (true time)."""
        return not any(
            i == index and a <= end and (b is None or b >= start) for i, a, b in self.outages)

    def begin_fault(self, m: Member, kind: str) -> None:
        if m.fault is not None:  # one fault at a time per member
            return
        self.note(f"fault: member {m.index} {kind}")
        m.fault = kind
        self.outages.append((m.index, self.t, None))
        if kind == "restart":
            m.machine = None
            m.down_since = self.t
            m.plan = None
        elif kind == "slow":
            self.outages.pop()  # connected all along: what reaches it arrives late
        else:
            m.link = "held" if kind == "held" else "cut"
            m.away = kind == "away"
            m.down_since = self.t

    def end_fault(self, m: Member, kind: str) -> None:
        if m.fault != kind:
            return
        m.fault = None
        self.note(f"heal: member {m.index} {kind}")
        if kind == "restart":
            if m.machine is None:
                self._resume(m)
            return
        if kind == "slow" or m.link == "up":
            return
        m.link, m.away, m.down_since = "up", False, None
        for dst, event, channel in self.held.pop(m.index, []):
            self._send(m.index, dst, event, channel, self.t + self._delay())
        self._reconnect(m)

    def _reconnect(self, m: Member) -> None:
        self.outages = [
            (i, a, self.t if i == m.index and b is None else b) for i, a, b in self.outages]
        m.settle_until = self.t + SETTLE_MS
        if m.machine is not None and m.machine.phase not in FINAL_ENDS:
            m.last_sync = self.t
            self.run_effects(m, m.machine.request_sync(m.clock(self.t)))

    def _resume(self, m: Member) -> None:
        """A restart: the log file is replayed and the round taken up from it (as
        ``p2p.peer.opening.resume``); then a sync request."""
        try:
            replay = replay_log(m.log, LIVE)
        except LogError as err:
            self.violation("own-log", f"member {m.index}'s own log does not replay: {err}")
            m.machine = RoundMachine.from_log(
                m.identity, _chain_of(m.log), random.Random(self.t).randbytes(32),
                now=m.clock(self.t), timeouts=LIVE)
        else:
            m.machine = machine_from_replay(  # as p2p.peer.opening.resume
                m.identity, replay, random.Random(self.t).randbytes(32),
                now=m.clock(self.t), timeouts=LIVE)
        m.machine.rules = self.rules
        m.log = [e.raw for e in m.machine.log_events()]  # RoundLink.start_log
        m.down_since = None
        m.link = "up"
        self.note(f"member {m.index} resumed from its log ({len(m.machine.log())} chain events)")
        self._reconnect(m)

    # -- one member, one step ---------------------------------------------------------------

    def _offline(self, me: Member) -> frozenset[bytes]:
        return frozenset(
            m.pk for m in self.members
            if m is not me and m.down_since is not None
            and self.t - m.down_since >= OFFLINE_AFTER_MS + self._grace
        )

    def _step(self, m: Member) -> None:
        machine = m.machine
        if machine is None or not m.connected:
            return
        now = m.clock(self.t)
        if self.t % HEARTBEAT_MS == 0:  # the lobby's presences: clock samples
            for other in self.members:
                if other is not m and other.connected:
                    machine.clocks.observe(other.pk, other.clock(self.t), now + self._delay())
        deciding = self.t >= m.settle_until
        silenced = self.adversary is not None and self.adversary.silences(m)
        if deciding or (machine.phase in FINAL_ENDS and machine.asks_for_acks(now)):
            self.run_effects(m, machine.tick(now, self._offline(m)))
        if machine.pending:  # RoundLink._maybe_resync
            if m.parked_since is None:
                m.parked_since = self.t
            elif (self.t - m.parked_since >= RESYNC_AFTER_MS
                  and self.t - m.last_sync >= RESYNC_AFTER_MS):
                m.last_sync = self.t
                self.run_effects(m, machine.request_sync(now))
        else:
            m.parked_since = None
        if deciding and not silenced:
            self._play(m)

    def _play(self, m: Member) -> None:
        machine = m.machine
        assert machine is not None
        st = machine.state
        if st.phase is not Phase.PLAY or st.game is None or st.owner() != m.pk:
            return
        to_move = st.game.to_move()
        if to_move is None or st.seats[to_move].is_computer:
            return
        head = st.head.id
        if m.plan is None or m.plan[0] != head:
            m.plan = (head, self.t + self._think())
        if self.t < m.plan[1]:
            return
        rng = self.move_rngs[m.index]
        now = m.clock(self.t)
        if (self.sc.game == "chess4" and st.ply >= 8 and rng.random() < 0.15
                and ("resign", m.pk) not in machine.side):  # random chess4 never ends alone
            self.note(f"member {m.index} resigns")
            self.run_effects(m, machine.resign(now))
            return
        moves = sorted(st.game.legal_moves())
        text = rng.choice(moves)
        if self.adversary is not None and self.adversary.member is m:
            self.adversary.before_own_move()
        try:
            effects = machine.move(text, now)
        except ActionError as err:
            self.note(f"member {m.index} could not move {text}: {err}")
            m.plan = None
            return
        self.run_effects(m, effects)

    def _think(self) -> int:
        r = self.think_rng.random()
        limit = self.sc.limit
        if r < 0.85:
            return self.think_rng.randint(300, 8_000)
        if r < 0.95:
            return self.think_rng.randint(10_000, 40_000)
        return self.think_rng.randint(limit - 15_000, limit + 20_000)  # races the forfeit

    # -- effects, the log file, the network --------------------------------------------------

    def run_effects(self, m: Member, effects: Iterable[Effect]) -> None:
        """What ``RoundLink.step`` and ``run_effects`` do after a machine step: the log
        file made to hold exactly ``log_events()`` (``RoundLink.write_log``), then the
        effects."""
        if m.machine is not None:
            m.log = [e.raw for e in m.machine.log_events()]
        for effect in effects:
            if isinstance(effect, Publish):
                self._publish_of(m, effect)
            elif isinstance(effect, Applied):
                event = effect.event
                if event.pk == m.pk and event.id not in self.first_signed:
                    self._signed(m, event)
            elif isinstance(effect, Equivocation):
                self.note(f"member {m.index}: {effect.describe()}")
            elif isinstance(effect, Rewound):
                self._rewound(m, effect)

    def _signed(self, m: Member, event: Event) -> None:
        self.first_signed[event.id] = self.t
        if not m.honest or m.machine is None:
            return
        st = m.machine.state
        prev_at = self.first_signed.get(event.prev or "")
        ends = event.kind == "move" and st.head.id == event.id and st.phase is Phase.OVER
        seq = event.seq or 0
        prev_ts = st.chain[seq - 1].ts if 0 < seq <= len(st.chain) else None
        self.signed[event.id] = Signed(event, m.index, self.t, prev_at, prev_ts, ends)
        self.note(f"member {m.index} signed {event.kind} #{event.seq}"
                  f" ts={event.ts} {event.body.get('move', event.body.get('seat', ''))}")

    def _rewound(self, m: Member, effect: Rewound) -> None:
        machine = m.machine
        assert machine is not None
        self.note(f"member {m.index}: REWOUND {len(effect.replaced)} from #{effect.seq}"
                  f" ({', '.join(e.kind for e in effect.replaced)})")
        st = machine.state
        if len(st.chain) > effect.seq and st.chain[effect.seq].kind == "forfeit":
            # a forfeit took the place (not an end by an equivocation proof)
            m.replaced_own += [e for e in effect.replaced if e.pk == m.pk]

    def _publish_of(self, m: Member, effect: Publish) -> None:
        channel = effect.route.topic.rsplit("/", 1)[-1]
        if m.honest and effect.event.kind == "reveal":
            self.reveals.append((m.index, effect.event))
        if self.adversary is not None and self.adversary.member is m:
            self.adversary.outgoing(effect.event, channel)
            return
        self.publish(m, effect.event, channel)

    def publish(
        self, m: Member, event: Event, channel: str,
        to: Iterable[int] | None = None, extra: int = 0,
    ) -> None:
        """``m`` publishes ``event``: each other member gets a copy after its own delay
        (lost, duplicated, held or dropped as the link and the scenario say)."""
        if m.machine is None or m.link == "cut":
            return
        targets = [d for d in (to if to is not None else range(len(self.members))) if d != m.index]
        for dst in targets:
            if m.link == "held":
                self.held.setdefault(m.index, []).append((dst, event, channel))
                continue
            if self.sc.loss and self.net_rng.random() < self.sc.loss:
                continue
            late = 0
            if self.members[dst].fault == "slow":  # its inbound link lags by minutes
                late = self.net_rng.randint(60_000, 180_000)
            self._send(m.index, dst, event, channel, self.t + extra + late + self._delay())
            if self.sc.duplicate and self.net_rng.random() < self.sc.duplicate:
                self._send(m.index, dst, event, channel, self.t + extra + self._delay() * 3)

    def _delay(self) -> int:
        return self.net_rng.randint(1, self.sc.max_delay)

    def _send(self, src: int, dst: int, event: Event, channel: str, at: int) -> None:
        self._n += 1
        heapq.heappush(self.queue, (at, self._n, src, dst, event, channel))

    def _deliver_until(self, t: int) -> None:
        step_t = self.t
        while self.queue and self.queue[0][0] <= t:
            at, _, src, dst, event, channel = heapq.heappop(self.queue)
            self.t = max(at, step_t - STEP_MS)
            m = self.members[dst]
            if m.machine is None or m.link != "up":
                continue  # a subscriber that is not connected misses it
            self.delivered.setdefault((dst, event.id), self.t)
            now = m.clock(self.t)
            if event.seq is None and channel in ("events", "chat") and event.pk != m.pk:
                m.machine.clocks.observe(event.pk, event.ts, now)
            if self.adversary is not None and self.adversary.member is m:
                self.adversary.incoming(event)
            self.run_effects(m, m.machine.receive(event, now))
        self.t = step_t

    # -- watching for a result that changes after it was final -------------------------------

    def verdict(self, m: Member) -> Verdict:
        machine = m.machine
        assert machine is not None
        st = machine.state
        # the member's view: a local end (``RoundMachine.local_end``) is its verdict beside
        # the chain, so its phase is the machine's, not the chain state's
        return (machine.phase.value, st.head.id, st.state_hash(), st.winners())

    def _watch_final(self) -> None:
        honest = [m for m in self.members if m.honest]
        if any(m.machine is None for m in honest):
            return
        verdicts = {self.verdict(m) for m in honest}
        if self.agreed_at is None:
            if len(verdicts) == 1 and all(
                m.machine is not None and m.machine.agreed() and m.machine.phase in FINAL_ENDS
                for m in honest
            ):
                self.agreed_at = (self.t, next(iter(verdicts)))
                self.note(f"every honest member holds the agreed end {self.agreed_at[1][0]}"
                          f" winners {self.agreed_at[1][3]}")
            return
        for m in honest:
            if self.verdict(m) != self.agreed_at[1]:
                self.violation(
                    "final-changed",
                    f"member {m.index}'s result changed after every honest member held it"
                    f" agreed (was {self.agreed_at[1][0]} winners {self.agreed_at[1][3]},"
                    f" now {self.verdict(m)[0]} winners {self.verdict(m)[3]})",
                )


def _chain_of(lines: list[bytes]) -> list[Event]:
    """The chain events of a log in order (a log ``replay_log`` refused; best effort)."""
    from p2p.protocol.events import parse

    by_seq: dict[int, Event] = {}
    for line in lines:
        event = parse(line, legacy=True)
        if event.seq is not None:
            by_seq.setdefault(event.seq, event)
    return [by_seq[i] for i in range(len(by_seq)) if i in by_seq]
