"""The adversarial member: a real machine under a driver that signs whatever it likes.

The adversary holds a seat and its own key, nothing more.  Its ``RoundMachine`` keeps it
informed (it plays on at random like everyone else), but its driver chooses what of the
machine's output leaves it, and signs events of its own beside it (``events.make`` with
its key, so every one of them is validly signed; the honest machines judge by the rules):

* ``silence``: nothing goes out for a while (no moves, no acks, no head exchanges);
* ``withhold_acks``: its closing acks never go out;
* ``selective``: each event goes to some members only, and late (up to 60 s);
* ``forfeit``: forfeits at the pending or the last position where it is the forfeiter,
  dated exactly at the limit, later, at its clock, or 10 s ahead of it;
* ``name_head``: sync requests naming any head it knows (its own forfeits too), dated up
  to 10 s ahead (the most any receiver takes);
* ``ack``: acks of any head it knows, with that branch's state hash;
* ``equivocate``: two different moves for its own turn, each to some members;
* ``draw`` (as a guest): a second ``accept`` with another commitment beside its own, each
  to some members, and its reveal withheld unless the draw, once every other reveal has
  reached it, makes it the starter (an abort of a draw it would lose, which the rules
  allow and name: the admin cancels at the reveal timeout);
* ``silent_loser``: issue 23's attack: it receives the victim's timely move (at the end
  of the game, or mid-game), stays silent, and ``D`` s after ``prev + limit`` (30 s in the
  report; drawn from 0..45 s) signs a ``silent`` forfeit of it dated exactly
  ``prev + limit``, its own sync request naming the forfeit dated 40 s later, and an ack
  of the end the forfeit makes.  In three seats it attacks the turn before its own, and
  the third member goes away (10 min) when that turn begins, or its inbound link lags by
  1 to 3 min for 10 min (so the move and the forfeit reach it late, in either order).
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from p2p.protocol import draw, events
from p2p.protocol.events import Event
from p2p.protocol.round import ChainError, Phase, RoundError, RoundState, verify_chain
from p2p.sim.scenario import AHEAD_MS as MAX_AHEAD_MS

if TYPE_CHECKING:
    from p2p.sim.world import Member, World

HELD_FINAL_MS = 40_000
"""The silent loser names its forfeit as its head this long after the forfeit's date (the
report's 40 s: the old rules' 30 s settle time plus the 10 s a sign may be dated ahead).
The attacker's own number, kept here so the attack does not move with the rules."""
RATE = 0.03
"""Chance per second that the adversary tries one of its random attacks."""


class Adversary:
    def __init__(self, world: World, member: Member) -> None:
        self.w = world
        self.member = member
        sc = world.sc
        self.rng = random.Random(f"adversary/{sc.family}/{sc.seed}")
        self.attacks = set(sc.attacks)
        self.silent_until = 0
        self.forged: list[Event] = []
        """Chain events it signed beside its machine (forfeits, second moves)."""
        self.armed = False
        """Three seats, silent loser: attack the victim's next move."""
        self.plot: tuple[Event, RoundState, int] | None = None
        """(victim's move, state before it, our clock time to strike) once chosen."""
        self.struck = False
        self.equivocate_next = False
        self.mid_game = self.rng.random() < 0.35
        self._looked_at = ""
        self.later: list[tuple[int, Event]] = []
        """(true time, forged event) to name as its head or ack then."""
        self.held_reveal: tuple[Event, str] | None = None
        """The ``draw`` attack: its own reveal, held until it would start."""

    # -- what the world asks -----------------------------------------------------------------

    def silences(self, m: Member) -> bool:
        """True while ``m`` (the adversary) keeps quiet: it signs no move."""
        return m is self.member and self._silent()

    def _silent(self) -> bool:
        return self.w.t < self.silent_until or (self.plot is not None and not self.struck) or (
            self.struck and "silent_loser" in self.attacks)

    def quiet(self) -> bool:
        """Nothing planned any more (the world may end the schedule)."""
        return (self.plot is None or self.struck) and not self.later

    def note(self, text: str) -> None:
        self.w.note(f"adversary {self.member.index}: {text}")

    # -- its machine's output ----------------------------------------------------------------

    def outgoing(self, event: Event, channel: str) -> None:
        """An event its machine wants published: the adversary decides where it goes."""
        if self._silent():
            return
        if event.kind == "ack" and "withhold_acks" in self.attacks:
            return
        if "draw" in self.attacks and self._draw_attack(event, channel):
            return
        to, extra = None, 0
        if "selective" in self.attacks and self.rng.random() < 0.5:
            to, extra = self._some(), self.rng.choice((0, 0, 5_000, 30_000, 60_000))
        self.w.publish(self.member, event, channel, to, extra)

    def _draw_attack(self, event: Event, channel: str) -> bool:
        """The ``draw`` attack on its machine's ``accept`` and ``reveal`` (a guest only):
        True if it sent the event its own way."""
        if self.member.index == 0:
            return False  # the admin: its commitment is in the genesis it signed
        if event.kind == "accept" and "commit" in event.body and self.rng.random() < 0.5:
            other = self.rng.randbytes(32)
            assert event.round is not None
            twin = self._sign("accept", event.ts, dict(
                event.body, commit=draw.commitment(event.round, self.member.pk, other)),
                prev=event.prev)
            first = self._some()
            rest = [m.index for m in self.w.members
                    if m is not self.member and m.index not in first]
            self.note(f"accepts twice with two commitments (to {first} and {rest})")
            self.w.publish(self.member, event, channel, first)
            self.w.publish(self.member, twin, channel, rest)
            return True
        if event.kind == "reveal" and self.rng.random() < 0.7:
            self.note("holds its reveal until the draw would make it the starter")
            self.held_reveal = (event, channel)
            return True
        return False

    def _release_reveal(self) -> None:
        """Send the held reveal if, with every other reveal in, it would start."""
        machine = self.member.machine
        if self.held_reveal is None or machine is None:
            return
        st = machine.state
        if st.phase is not Phase.REVEAL:
            self.held_reveal = None
            return
        event, channel = self.held_reveal
        if st.chain[-1].id != event.prev:
            return
        by_seat = {st.seat_of(e.pk): bytes.fromhex(e.body["nonce"])
                   for e in machine.pooled("reveal")}
        by_seat[st.seat_of(self.member.pk)] = bytes.fromhex(event.body["nonce"])
        if set(by_seat) < set(st.commits):
            return
        _seed, starter = st.draw_result(by_seat)  # type: ignore[arg-type]
        if starter == st.seat_of(self.member.pk):
            self.note("the draw makes it the starter: it reveals")
            self.held_reveal = None
            self.w.publish(self.member, event, channel)

    def _some(self) -> list[int]:
        others = [m.index for m in self.w.members if m is not self.member]
        return [i for i in others if self.rng.random() < 0.5]

    def incoming(self, event: Event) -> None:
        """An event about to reach its machine (the silent loser watches for its move)."""
        machine = self.member.machine
        if "silent_loser" not in self.attacks or self.plot is not None or machine is None:
            return
        st = machine.state
        if (event.kind != "move" or event.seq != len(st.chain) or event.prev != st.head.id
                or st.phase is not Phase.PLAY):
            return
        target = st.forfeit_target()
        if target is None or target[1] != self.member.pk or st.seats[target[0]].pk != event.pk:
            return
        trial = st.snapshot()
        try:
            trial.apply(event)
        except RoundError:
            return
        my_seat = st.seat_of(self.member.pk)
        lost = trial.phase is Phase.OVER and my_seat not in trial.winners()
        if not (lost or self.armed or (len(st.seats) == 2 and self.mid_game
                                        and self.rng.random() < 0.3)):
            return
        delay = 30_000 if self.rng.random() < 0.5 else self.rng.randint(0, 45_000)
        strike = st.head.ts + self.w.sc.limit + delay
        self.plot = (event, st.snapshot(), strike)
        self.note(f"plots the silent loser on move #{event.seq} (ends game: {lost}),"
                  f" strikes at its clock {strike}")

    def before_own_move(self) -> None:
        """Its machine is about to move: perhaps it signs a second move beside it."""
        if "equivocate" in self.attacks and self.rng.random() < 0.2:
            self.equivocate_next = True

    def _arm(self) -> None:
        """Three seats: the victim's turn begins (the seat before ours in move order),
        the third member has just moved; with some chance, attack this turn, and the
        third member goes away (10 min), as in the report."""
        machine = self.member.machine
        if (len(self.w.members) != 3 or self.armed or self.plot is not None
                or machine is None):
            return
        st = machine.state
        if st.phase is not Phase.PLAY or st.game is None:
            return
        if st.game.to_move() != self._victim_seat() or st.head.id == self._looked_at:
            return
        self._looked_at = st.head.id
        if self.rng.random() >= 0.35:
            return
        self.armed = True
        third = next(m for m in self.w.members
                     if m is not self.member and m.index != self._victim_seat())
        kind = self.rng.choice(("away", "slow"))
        self.note(f"arms the silent loser; member {third.index}: {kind}")
        self.w.begin_fault(third, kind)
        self.w.sc_away.append((third, self.w.t + 600_000, kind))

    def _victim_seat(self) -> int:
        """The seat that moves just before ours (3 seats: 0 -> 1 -> 2 -> 0)."""
        seats = len(self.w.members)
        return (self.member.index - 1) % seats

    # -- acting on its own ---------------------------------------------------------------

    def act(self) -> None:
        m = self.member
        if m.machine is None or not m.connected:
            return
        if "silent_loser" in self.attacks:
            self._arm()
        if self.plot is not None and not self.struck:
            self._strike()
        if self.held_reveal is not None:
            self._release_reveal()
        if self.equivocate_next:
            self._equivocate()
        for due in [x for x in self.later if x[0] <= self.w.t]:
            self.later.remove(due)
            if self.rng.random() < 0.7:
                self._name_head(due[1])
            else:
                self._ack(due[1])
        if self.rng.random() >= RATE:
            return
        choice = self.rng.choice(sorted(self.attacks))
        if choice == "silence":
            self.silent_until = self.w.t + self.rng.choice((5_000, 30_000, 90_000, 200_000))
            self.note(f"goes silent until {self.silent_until / 1000:.0f}s")
        elif choice == "forfeit":
            self._random_forfeit()
        elif choice == "name_head":
            self._name_head(self._known_head())
        elif choice == "ack":
            self._ack(self._known_head())

    def _sign(self, kind: str, ts: int, body: dict[str, Any], seq: int | None = None,
              prev: str | None = None) -> Event:
        return events.make(self.member.identity, kind, ts, body, round=self.w.round_id,
                           seq=seq, prev=prev)

    def _send(self, event: Event, channel: str = "events", selective: bool = True) -> None:
        to, extra = None, 0
        if selective and "selective" in self.attacks and self.rng.random() < 0.5:
            to, extra = self._some(), self.rng.choice((0, 5_000, 30_000))
        self.w.publish(self.member, event, channel, to, extra)

    def _strike(self) -> None:
        assert self.plot is not None
        move, base, strike = self.plot
        now = self.member.clock(self.w.t)
        if now < strike:
            return
        self.struck = True
        prev = base.head
        target = base.forfeit_target()
        assert target is not None
        body = {"seat": target[0], "reason": "silent"}
        forfeit = self._sign("forfeit", prev.ts + self.w.sc.limit, body, move.seq, prev.id)
        self.forged.append(forfeit)
        sync = self._sign("sync_request", forfeit.ts + HELD_FINAL_MS,
                          {"from_seq": (move.seq or 0) + 1}, prev=forfeit.id)
        self.note(f"strikes: forfeit #{forfeit.seq} dated prev+limit, sync request naming"
                  f" it dated +{HELD_FINAL_MS // 1000}s")
        self.w.publish(self.member, forfeit, "events")
        self.w.publish(self.member, sync, "sync")
        trial = base.snapshot()
        try:
            trial.apply(forfeit)
        except RoundError as err:
            self.note(f"its forfeit does not fit: {err}")
            return
        if trial.phase in (Phase.OVER, Phase.CANCELLED):
            ack = self._sign("ack", max(now, forfeit.ts), {"state": trial.state_hash()},
                             prev=forfeit.id)
            self.w.publish(self.member, ack, "events")

    def _known_head(self) -> Event | None:
        machine = self.member.machine
        assert machine is not None
        known = list(machine.state.chain[-3:]) + self.forged[-3:]
        return self.rng.choice(known) if known else None

    def _name_head(self, head: Event | None) -> None:
        if head is None or head.seq is None:
            return
        now = self.member.clock(self.w.t)
        ts = now + self.rng.choice((0, MAX_AHEAD_MS))
        if head in self.forged and head.ts + HELD_FINAL_MS <= now + MAX_AHEAD_MS:
            ts = max(ts, head.ts + HELD_FINAL_MS)
        self.note(f"names #{head.seq} {head.kind} as its head")
        self._send(self._sign("sync_request", ts, {"from_seq": head.seq + 1}, prev=head.id),
                   "sync")

    def _branch_state(self, head: Event) -> RoundState | None:
        machine = self.member.machine
        assert machine is not None and head.seq is not None
        chain = machine.state.chain
        try:
            return verify_chain([*chain[: head.seq], head], machine.timeouts)
        except ChainError:
            return None

    def _ack(self, head: Event | None) -> None:
        if head is None:
            return
        state = self._branch_state(head)
        if state is None:
            return
        now = self.member.clock(self.w.t)
        self.note(f"acks #{head.seq} {head.kind}")
        self._send(self._sign("ack", max(now, head.ts), {"state": state.state_hash()},
                              prev=head.id))

    def _random_forfeit(self) -> None:
        machine = self.member.machine
        assert machine is not None
        chain = machine.state.chain
        seq = self.rng.choice((len(chain), len(chain) - 1))
        if seq < 2:
            return
        if seq == len(chain):
            base = machine.state.snapshot()
        else:
            try:
                base = verify_chain(list(chain[:seq]), machine.timeouts)
            except ChainError:
                return
        target = base.forfeit_target()
        if target is None or target[1] != self.member.pk:
            return
        prev = base.head
        limit = base.timeouts.limit("silent")
        now = self.member.clock(self.w.t)
        ts = self.rng.choice((
            prev.ts + limit, prev.ts + limit + self.rng.randint(0, 60_000),
            max(now, prev.ts), now + MAX_AHEAD_MS, prev.ts + limit - 1,
        ))
        forfeit = self._sign("forfeit", ts, {"seat": target[0], "reason": "silent"}, seq, prev.id)
        self.forged.append(forfeit)
        self.note(f"forfeits seat {target[0]} at #{seq} dated prev+{(ts - prev.ts) // 1000}s")
        self._send(forfeit)
        if self.rng.random() < 0.6:  # and names it as its head (again) later, or acks it
            for _ in range(self.rng.randint(1, 3)):
                after = self.rng.randint(0, 60_000)
                self.later.append((self.w.t + after, forfeit))
            if "silence" in self.attacks:  # and vouches for nothing meanwhile
                self.silent_until = max(self.silent_until, self.w.t + 60_000)

    def _equivocate(self) -> None:
        """Its machine just moved (or is about to): sign a second move for that position."""
        machine = self.member.machine
        assert machine is not None
        st = machine.state
        head = st.head
        if head.kind != "move" or head.pk != self.member.pk or head.seq is None:
            return
        self.equivocate_next = False
        base = self._branch_state(st.chain[head.seq - 1])
        if base is None or base.game is None:
            return
        others = [t for t in sorted(base.game.legal_moves()) if t != head.body["move"]]
        if not others:
            return
        text = self.rng.choice(others)
        trial = base.game.copy()
        trial.push(text)
        body = {"ply": base.ply, "move": text, "state": trial.state_hash()}
        second = self._sign("move", head.ts, body, head.seq, head.prev)
        self.forged.append(second)
        self.note(f"equivocates at #{head.seq}: {head.body['move']} and {text}")
        self._send(second)
