"""A round as a hash chain of signed events, and the rules for appending to it.

``RoundState`` is the state every member derives from the same chain; it knows nothing of
networks, clocks or pools of pending events (that is ``p2p.protocol.round_machine``).
``RoundState.from_genesis(g)`` starts a chain, ``state.apply(e)`` appends one chain event
or raises ``RoundError`` and changes nothing; ``verify_chain(events)`` replays a whole log.

The chain, position by position (``seq``), each event naming the id of the one before:

====  ================  ==================================================================
seq   kind              sent by, and what it does
====  ================  ==================================================================
0     ``genesis``       the admin: game, options, seats (public key / computer level /
                        open), named starting seat or ``null`` for a draw, expiry
1     ``start``         the admin: seals every other human's ``accept`` (invited seat)
                        or ``join`` (open seat, filled in listed order); from v5 they carry
                        the commitments to the draw (the admin's: the genesis): it closes them
..    ``commit_close``  the admin (draw only, v1-v4): seals every human seat's commitment
..    ``draw``          the admin (draw only): seals every reveal, states seed and starter
..    ``move``          the position owner: ``ply``, ``move`` text, ``state`` hash after it
..    ``seal``          the position owner: seals ``resign``/``leave`` side events
..    ``cancel``        the admin, before play only
..    ``forfeit``       the admin (or, for the admin's own seat, its successor): puts out
                        a human seat that has not moved for the turn timeout
====  ================  ==================================================================

Every position has exactly one owner, so honest members never race for a position: the
admin before play; in play the human at the seat to move, or the admin for a computer
seat.  Everything members may send at any time (accept, commit, reveal, resign, leave) is
a *side event* that enters the chain only when the owner seals it, so the owner's signed
event is the tie-breaker (two joins for the last open seat: the admin's ``start`` lists the
winner; start and leave at once: the admin cancels if it sees the leave before play, else
the leave is sealed in play as a resignation).  A second, different event by the owner at a filled position is
equivocation (detected by ``round_machine``).

In play, ``resign`` and ``leave`` both give up the seat: the engine's ``resign`` ends the
game (Connect Four); for an engine without resignation the round ends at once, and the
winners are the seats still in with the top score.  If the admin leaves, the admin role
passes to the next human seat after it in seat order that has not left (fixed at start,
recomputed by every peer), who then also plays the computer seats.

Turn timeouts: a human seat to move that stays silent puts nobody else's move at risk but
stalls the round, so the admin may append ``forfeit`` at that seat's position once the
``ts`` of its forfeit is at least ``TurnTimeouts.silent_ms`` (or ``offline_ms``, when the
admin says the seat's lobby presence went offline) after the ``ts`` of the head.  The seat
is then out as if it had left.  At a position the admin owns (its own seat, or a computer
seat) the admin's successor may forfeit the admin's seat the same way; the role passes on.
Which of a forfeit and the forfeited seat's own event at one position counts is decided
by ``p2p.protocol.conflicts`` (a game-ending or timely event wins).  Version 2 adds one
chain rule for every chain event: its ``ts`` is not earlier than its ``prev``'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from p2p.games import Game, MoveError, OptionError, game_class
from p2p.protocol import draw
from p2p.protocol.draw import EARLY_COMMIT_VERSION as EARLY_COMMIT_VERSION
from p2p.protocol.events import Event
from p2p.protocol.evidence import evidence_error as evidence_error
from p2p.protocol.evidence import seat_session as seat_session
from p2p.protocol.outcome import RoundEnd, RoundOutcome
from p2p.protocol.phases import PRE_PLAY as PRE_PLAY
from p2p.protocol.phases import Phase as Phase
from p2p.protocol.phases import advance, out_of_phase
from p2p.protocol.timeouts import DEFAULT_TIMEOUTS as DEFAULT_TIMEOUTS
from p2p.protocol.timeouts import MAX_TURN_S as MAX_TURN_S
from p2p.protocol.timeouts import MIN_TURN_S as MIN_TURN_S
from p2p.protocol.timeouts import TurnTimeouts as TurnTimeouts
from p2p.protocol.timeouts import timeouts_for as timeouts_for

FAIR_DRAW_VERSION = 2
"""Rounds from this protocol version on use the fair draw (docs/protocol.md §7): every
human seat's commitment and reveal must be sealed (else the admin can only cancel), and a
round with computer seats draws its seed even when the admin names the starter.  Older
(v1) logs keep the v1 rules so they still replay."""


class RoundError(ValueError):
    """A chain event that cannot be appended here; ``str(err)`` says why in one line."""


@dataclass
class Seat:
    """One seat: a human (public key, possibly still open) or a computer (level)."""

    index: int
    pk: bytes | None
    level: str | None
    nick: str = ""

    @property
    def is_computer(self) -> bool:
        return self.level is not None


@dataclass
class RoundState:
    """Everything a member knows about a round after replaying its chain."""

    round_id: str
    genesis: Event
    game_name: str
    options: dict[str, Any]
    seats: list[Seat]
    start_seat: int | None
    expires: int
    private: bool
    admin: bytes
    phase: Phase = Phase.FORMING
    chain: list[Event] = field(default_factory=list)
    commits: dict[int, str] = field(default_factory=dict)
    revealed: dict[int, bytes] = field(default_factory=dict)
    seed: bytes | None = None
    starter: int | None = None
    game: Game | None = None
    ply: int = 0
    resigned: list[int] = field(default_factory=list)
    left: list[int] = field(default_factory=list)
    forfeited: list[int] = field(default_factory=list)
    equivocators: list[int] = field(default_factory=list)
    taken_back: list[int] = field(default_factory=list)
    """Seats that have taken back a move (once per seat and round, a chain rule)."""
    """Seats proven to have signed two events for one position (they never win)."""
    ended_by: RoundEnd | None = None
    """What ended the round by its chain (``None`` while it runs); see ``outcome``."""
    end_detail: str = ""
    timeouts: TurnTimeouts = DEFAULT_TIMEOUTS

    @property
    def end_reason(self) -> str:
        """Why the round ended, in one English line (``''`` while it runs)."""
        return "" if self.ended_by is None else RoundOutcome(self.ended_by, detail=self.end_detail).reason

    def _end(self, by: RoundEnd, detail: str = "") -> None:
        self.ended_by, self.end_detail = by, detail

    def outcome(self) -> RoundOutcome | None:
        """How the round ended by its chain, typed (``None`` while it runs)."""
        if self.ended_by is None:
            return None
        return RoundOutcome(
            self.ended_by,
            self.winners(),
            self.game.scores() if self.game is not None else (),
            self.game.outcome() if self.game is not None else None,
            self.end_detail,
        )

    # -- construction ------------------------------------------------------------------

    @classmethod
    def from_genesis(
        cls, genesis: Event, timeouts: TurnTimeouts = DEFAULT_TIMEOUTS
    ) -> RoundState:
        """The state after the genesis event; ``RoundError`` if the genesis is unusable."""
        if genesis.kind != "genesis" or genesis.seq != 0:
            raise RoundError("a round starts with its genesis event")
        timeouts = timeouts_for(genesis, timeouts)  # a slow round names its own limit
        body = genesis.body
        try:
            engine = game_class(body["game"])
        except KeyError as err:
            raise RoundError(str(err.args[0])) from None
        options = dict(body["options"])
        if "first" in options:
            raise RoundError(
                "the starting seat is chosen by 'start', not by the 'first' option"
            )
        try:
            probe = engine.create(options)
        except OptionError as err:
            raise RoundError(f"bad options: {err}") from None
        if "first" not in probe.options():
            raise RoundError(f"game {body['game']} has no 'first' option")
        raw_seats = body["seats"]
        if len(raw_seats) != probe.players:
            raise RoundError(
                f"{body['game']} with these options needs {probe.players} seats"
            )
        seats = [
            Seat(i, None if s["pk"] is None else bytes.fromhex(s["pk"]), s["level"])
            for i, s in enumerate(raw_seats)
        ]
        computer_levels = {s.level for s in seats if s.level is not None}
        if computer_levels:
            try:
                from p2p.ai import levels

                known = levels(body["game"])
            except (ImportError, KeyError):
                raise RoundError(
                    f"there is no computer player for {body['game']}"
                ) from None
            unknown = sorted(computer_levels - set(known))
            if unknown:
                raise RoundError(
                    f"unknown computer level {unknown[0]!r} (known: {', '.join(known)})"
                )
        keys = [s.pk for s in seats if s.pk is not None]
        if len(set(keys)) != len(keys):
            raise RoundError("a public key holds two seats")
        if genesis.pk not in keys:
            raise RoundError("the admin must hold a seat")
        open_seats = [s for s in seats if s.pk is None and s.level is None]
        if open_seats and not body["private"]:
            raise RoundError("only a private round has open seats")
        start = body["start"]
        if start is not None and start >= len(seats):
            raise RoundError(f"there is no seat {start}")
        state = cls(
            round_id=genesis.round or "",
            genesis=genesis,
            game_name=body["game"],
            options=options,
            seats=seats,
            start_seat=start,
            expires=body["expires"],
            private=body["private"],
            admin=genesis.pk,
            timeouts=timeouts,
        )
        if why := state.commitment_error(genesis):
            raise RoundError(why)
        state.chain.append(genesis)
        return state

    def snapshot(self) -> RoundState:
        """An independent copy (to rewind a branch that lost the race to a forfeit).

        Taken before every chain event is applied (mover and receivers), so the fields are
        copied as ``dataclasses.replace`` would, without its ``__init__`` call by name,
        and each mutable one is copied once more."""
        copy = object.__new__(type(self))
        copy.__dict__.update(self.__dict__)
        copy.options = dict(self.options)
        copy.seats = list(self.seats)  # Seat objects are replaced, never changed, after start
        copy.chain = list(self.chain)
        copy.commits = dict(self.commits)
        copy.revealed = dict(self.revealed)
        copy.game = self.game.copy() if self.game is not None else None
        copy.resigned = list(self.resigned)
        copy.left = list(self.left)
        copy.forfeited = list(self.forfeited)
        copy.equivocators = list(self.equivocators)
        copy.taken_back = list(self.taken_back)
        return copy

    # -- queries -------------------------------------------------------------------------

    @property
    def head(self) -> Event:
        return self.chain[-1]

    @property
    def version(self) -> int:
        """The protocol version of the round (its genesis's): the chain rules follow it."""
        return self.genesis.v

    def seat_of(self, pk: bytes) -> int | None:
        """The seat held by ``pk``, or ``None``."""
        for seat in self.seats:
            if seat.pk == pk:
                return seat.index
        return None

    def is_member(self, pk: bytes) -> bool:
        return self.seat_of(pk) is not None

    def human_seats(self) -> list[int]:
        return [s.index for s in self.seats if not s.is_computer]

    @property
    def fair_draw(self) -> bool:
        """True if the round plays by the fair-draw rules (every seat counts, §7)."""
        return self.genesis.v >= FAIR_DRAW_VERSION

    def draws_seed(self) -> bool:
        """True if the round runs the commit-reveal draw (v5: committed with the invitation).

        Always when the starter is drawn; with a named starter only if computer seats use
        the seed (fair-draw rules), so no single member can choose their luck.
        """
        if not self.fair_draw:
            return self.start_seat is None
        return draw.draws(self.start_seat, [s.level for s in self.seats])

    def commits_with_invitation(self) -> bool:
        """True if the round draws and commits to it with the invitation (v5, §7)."""
        return self.version >= EARLY_COMMIT_VERSION and self.draws_seed()

    def commitment_error(self, event: Event) -> str:
        """Why the genesis, an ``accept`` or a ``join`` does not fit this round by the
        commitment it carries, ``''`` if it fits (``draw.commitment_error``)."""
        wants = self.commits_with_invitation()
        return draw.commitment_error(event.kind, event.body, wants, self.version)

    def draw_result(self, revealed: dict[int, bytes]) -> tuple[bytes, int]:
        """``(seed, starter)`` from the revealed nonces by seat (every peer computes it).

        The seed hashes the nonces in seat order.  The starter is the named seat, or
        ``eligible[int(seed) mod len(eligible)]`` with ``eligible`` the revealed seats and
        the computer seats (under the fair-draw rules every human seat has revealed, so
        that is every seat).
        """
        seed = draw.draw_seed(self.round_id, [revealed[s] for s in sorted(revealed)])
        if self.start_seat is not None and self.fair_draw:
            return seed, self.start_seat
        eligible = sorted(set(revealed) | {s.index for s in self.seats if s.is_computer})
        return seed, draw.starter(seed, eligible)

    def owner(self) -> bytes | None:
        """The public key that may append the next chain event (``None``: nobody)."""
        if self.phase in PRE_PLAY:
            return self.admin
        if self.phase is Phase.PLAY and self.game is not None:
            seat = self.game.to_move()
            if seat is None:
                return None
            return self.admin if self.seats[seat].is_computer else self.seats[seat].pk
        return None

    def successor(self) -> bytes | None:
        """Who becomes admin if the admin leaves: the next human seat after it not gone."""
        start = self.seat_of(self.admin)
        if start is None:
            return None
        n = len(self.seats)
        for step in range(1, n):
            seat = self.seats[(start + step) % n]
            if (
                not seat.is_computer
                and seat.pk is not None
                and seat.index not in self.left
            ):
                return seat.pk
        return None

    def forfeit_target(self) -> tuple[int, bytes] | None:
        """``(seat, signer)``: the seat whose turn it is and who may forfeit it, or ``None``.

        A human seat to move (not the admin's) may be forfeited by the admin; at a
        position the admin owns (its own seat or a computer seat) the admin's seat may be
        forfeited by its successor.  Nobody forfeits outside play or when no one is left
        to take over.
        """
        if self.phase is not Phase.PLAY or self.game is None:
            return None
        owner = self.owner()
        seat = None if owner is None else self.seat_of(owner)
        if owner is None or seat is None or seat in self.left:
            return None
        signer = self.successor() if owner == self.admin else self.admin
        if signer is None or signer == owner:
            return None
        return seat, signer

    def winners(self) -> tuple[int, ...]:
        """Winning seats once the round is over (empty while running or cancelled)."""
        if self.phase is not Phase.OVER or self.game is None:
            return ()
        if self.game.is_over():
            won = tuple(w for w in self.game.winners() if w not in self.equivocators)
            if won or not self.equivocators:
                return won
        scores = self.game.scores()
        still_in = [
            i
            for i in range(len(self.seats))
            if i not in self.resigned and i not in self.equivocators
        ]
        if not still_in:
            return ()
        top = max(scores[i] for i in still_in)
        return tuple(i for i in still_in if scores[i] == top)

    def state_hash(self) -> str:
        """The game's state hash (the genesis id before play): equal on every member."""
        return self.game.state_hash() if self.game is not None else self.genesis.id

    # -- appending -----------------------------------------------------------------------

    def apply(self, event: Event, advanced: tuple[Game, str] | None = None) -> None:
        """Append one chain event; ``RoundError`` (state unchanged) if it does not fit.

        ``advanced``: for a move we have just signed, the copy of our game on which we
        played it and its state hash (``round_duties.append_move``): taken as the new
        position instead of playing and encoding the move a second time.
        """
        if event.round != self.round_id:
            raise RoundError("event of another round")
        if event.v != self.genesis.v:
            raise RoundError(f"a v{event.v} event in a v{self.genesis.v} round")
        if event.kind == "genesis" or event.seq is None:
            raise RoundError(f"{event.kind} is not a chain event here")
        if event.seq != len(self.chain):
            raise RoundError(f"expected position {len(self.chain)}, got {event.seq}")
        if event.prev != self.head.id:
            raise RoundError("prev is not the id of the chain head")
        owner = self.owner()
        if owner is None:
            raise RoundError(f"the round is {self.phase.value}")
        if event.kind == "forfeit":
            target = self.forfeit_target()
            if target is None or event.pk != target[1]:
                raise RoundError(
                    f"forfeit by a key that may not forfeit position {event.seq}"
                )
        elif event.pk != owner:
            raise RoundError(
                f"{event.kind} by a key that does not own position {event.seq}"
            )
        if self.version >= 2 and event.ts < self.head.ts:
            raise RoundError("ts is earlier than the ts of the previous event")
        handler = getattr(self, f"_apply_{event.kind}", None)
        if handler is None:
            raise RoundError(f"{event.kind} is not a chain event")
        if event.kind == "move":
            self._apply_move(event, advanced)
        else:
            handler(event)  # each handler validates fully before it changes anything
        self.chain.append(event)

    def _sealed_side(
        self, event: Event, prev: str, kind_names: tuple[str, ...]
    ) -> list[Event]:
        sealed = event.sealed()
        for inner in sealed:
            if inner.kind not in kind_names:
                raise RoundError(f"{event.kind} cannot seal {inner.kind}")
            if inner.round != self.round_id:
                raise RoundError(f"sealed {inner.kind} belongs to another round")
            if inner.prev != prev:
                raise RoundError(f"sealed {inner.kind} answers another event")
        signers = [inner.pk for inner in sealed]
        if len(set(signers)) != len(signers):
            raise RoundError(f"{event.kind} seals two events of one member")
        return sealed

    def _apply_start(self, event: Event) -> None:
        if out_of_phase(self.phase, "start"):
            raise RoundError(out_of_phase(self.phase, "start"))
        if event.ts > self.expires:
            raise RoundError("the invitation had expired")
        sealed = self._sealed_side(event, self.genesis.id, ("accept", "join"))
        seats = [Seat(s.index, s.pk, s.level) for s in self.seats]
        open_seats = [s for s in seats if s.pk is None and not s.is_computer]
        accepted = {self.seat_of(self.admin)}
        commits: dict[int, str] = {}
        for inner in sealed:
            if why := self.commitment_error(inner):
                raise RoundError(why)
            if inner.kind == "accept":
                seat = inner.body["seat"]
                if seat >= len(seats) or seats[seat].pk != inner.pk:
                    raise RoundError(
                        f"accept for seat {seat} by a key not invited to it"
                    )
                accepted.add(seat)
            else:  # join
                if any(s.pk == inner.pk for s in seats):
                    raise RoundError("join by a key that already holds a seat")
                if not open_seats:
                    raise RoundError("more joins than open seats")
                seat_obj = open_seats.pop(0)
                seat_obj.pk = inner.pk
                seat_obj.nick = inner.body["nick"]
                seat = seat_obj.index
                accepted.add(seat)
            if "commit" in inner.body:
                commits[seat] = inner.body["commit"]
        for seat_obj in seats:
            if not seat_obj.is_computer and seat_obj.index not in accepted:
                raise RoundError(f"seat {seat_obj.index} has not accepted")
        self.seats = seats
        if self.commits_with_invitation():  # every seat committed: the reveals follow (§7)
            admin_seat = self.seat_of(self.admin)
            assert admin_seat is not None
            commits[admin_seat] = self.genesis.body["commit"]  # (never an accept's)
            self.commits = dict(sorted(commits.items()))
            advance(self, "start_closing")
        elif self.draws_seed():
            advance(self, "start")
        else:
            assert self.start_seat is not None  # draws_seed() is False only then
            self._begin_play(draw.fixed_seed(self.round_id), self.start_seat, "start_named")

    def _apply_commit_close(self, event: Event) -> None:
        if out_of_phase(self.phase, "commit_close"):
            raise RoundError(out_of_phase(self.phase, "commit_close"))
        sealed = self._sealed_side(event, self.chain[1].id, ("commit",))
        commits: dict[int, str] = {}
        for inner in sealed:
            seat = self.seat_of(inner.pk)
            if seat is None:
                raise RoundError("commitment by a non-member")
            commits[seat] = inner.body["commit"]
        if self.seat_of(self.admin) not in commits:
            raise RoundError("the admin's own commitment is missing")
        missing = [s for s in self.human_seats() if s not in commits]
        if missing and self.fair_draw:
            raise RoundError(f"commit_close leaves out the commitment of {seats_text(missing)}")
        self.commits = commits
        advance(self, "commit_close")

    def _apply_draw(self, event: Event) -> None:
        if out_of_phase(self.phase, "draw"):
            raise RoundError(out_of_phase(self.phase, "draw"))
        sealed = self._sealed_side(event, self.chain[-1].id, ("reveal",))
        revealed: dict[int, bytes] = {}
        for inner in sealed:
            seat = self.seat_of(inner.pk)
            if seat is None or seat not in self.commits:
                raise RoundError("reveal by a member without commitment")
            nonce = bytes.fromhex(inner.body["nonce"])
            if draw.commitment(self.round_id, inner.pk, nonce) != self.commits[seat]:
                raise RoundError(
                    f"the reveal of seat {seat} does not match its commitment"
                )
            revealed[seat] = nonce
        if self.seat_of(self.admin) not in revealed:
            raise RoundError("the admin's own reveal is missing")
        missing = [s for s in self.commits if s not in revealed]
        if missing and self.fair_draw:
            raise RoundError(f"the draw leaves out the reveal of {seats_text(missing)}")
        seed, starter = self.draw_result(revealed)
        if event.body["seed"] != seed.hex() or event.body["starter"] != starter:
            raise RoundError(
                f"the draw states a wrong result (seed {seed.hex()[:12]}, starter {starter})"
            )
        self.revealed = revealed
        self._begin_play(seed, starter, "draw")

    def _begin_play(self, seed: bytes, starter: int, step: str) -> None:
        self.seed = seed
        self.starter = starter
        self.game = game_class(self.game_name).create(
            {**self.options, "first": starter}
        )
        advance(self, step)

    def computer_move(self) -> str:
        """The move the computer seat to move must play (every peer gets the same)."""
        from p2p.ai import choose_move

        assert self.game is not None and self.seed is not None
        seat = self.game.to_move()
        level = None if seat is None else self.seats[seat].level
        assert level is not None
        return choose_move(self.game, level, draw.ply_seed(self.seed, self.ply))

    def _apply_move(self, event: Event, advanced: tuple[Game, str] | None = None) -> None:
        if out_of_phase(self.phase, "move") or self.game is None:
            raise RoundError(out_of_phase(self.phase, "move") or "no move outside play")
        body = event.body
        if body["ply"] != self.ply:
            raise RoundError(f"expected ply {self.ply}, got {body['ply']}")
        text = body["move"]
        try:
            if self.game.normalize(text) != text:
                raise RoundError(f"move {text!r} is not in canonical form")
        except MoveError as err:
            raise RoundError(f"move {text!r}: {err}") from None
        seat = self.game.to_move()
        assert seat is not None
        if self.seats[seat].is_computer:
            expected = self.computer_move()
            if text != expected:
                raise RoundError(
                    f"the computer at seat {seat} plays {expected}, not {text}"
                )
        if (
            advanced is not None
            and advanced[1] == body["state"]
            and advanced[0].history() == [*self.game.history(), text]
        ):
            self.game = advanced[0]  # played and hashed once, by ourselves, just now
            self._moved()
            return
        try:
            self.game.push(text)
        except MoveError as err:
            raise RoundError(f"illegal move {text!r}: {err}") from None
        if self.game.state_hash() != body["state"]:
            self.game.pop()
            raise RoundError(f"state hash after {text!r} does not match")
        self._moved()

    def _moved(self) -> None:
        """A move is on the board: the next ply, and the step it makes."""
        assert self.game is not None
        self.ply += 1
        if self.game.is_over():
            self._end(RoundEnd.GAME_OVER)
            advance(self, "game_over")
        else:
            advance(self, "move")

    def _apply_seal(self, event: Event) -> None:
        if out_of_phase(self.phase, "seal") or self.game is None:
            raise RoundError(out_of_phase(self.phase, "seal") or "seal only in play")
        known = {e.id for e in self.chain}
        sealed = event.sealed()
        if not sealed:
            raise RoundError("seal of nothing")
        if any(inner.kind == "takeback" for inner in sealed):
            if len(sealed) != 1:
                raise RoundError("a takeback is sealed on its own")
            self._take_back(event, sealed[0])
            advance(self, "seal")
            return
        seats: list[int] = []
        for inner in sealed:
            if inner.kind not in ("resign", "leave") or inner.round != self.round_id:
                raise RoundError(f"cannot seal {inner.kind} here")
            if inner.prev not in known:
                raise RoundError(
                    f"sealed {inner.kind} answers an event not in this round"
                )
            seat = self.seat_of(inner.pk)
            if seat is None or seat in seats:
                raise RoundError(f"sealed {inner.kind} by a non-member or twice")
            if seat in self.left or inner.kind == "resign" and seat in self.resigned:
                raise RoundError(
                    f"seat {seat} has already {'left' if seat in self.left else 'resigned'}"
                )
            seats.append(seat)
        leaving = [seat for inner, seat in zip(sealed, seats) if inner.kind == "leave"]
        advance(self, "game_over" if self._put_out(seats, leaving, RoundEnd.RESIGNATION) else "seal")

    def _take_back(self, event: Event, request: Event) -> None:
        """The owner of the position agrees to take back the last move, at its mover's request.

        Both consents are in the chain: the mover signed the ``takeback`` (its ``prev`` is
        that move, which must still be the head), the sealing owner signed the ``seal``.
        """
        head = self.head
        if request.round != self.round_id or request.prev != head.id or head.kind != "move":
            raise RoundError("a takeback answers the last event, which must be a move")
        if request.pk != head.pk or request.body["ply"] != head.body["ply"]:
            raise RoundError("only the player who made the last move may ask to take it back")
        if event.pk == request.pk:
            raise RoundError("a takeback needs another player's consent")
        seat = self.seat_of(request.pk)
        assert self.game is not None and seat is not None  # apply() and the owner check
        trial = self.game.copy()
        try:
            trial.pop()
        except (IndexError, MoveError):
            raise RoundError("there is no move to take back") from None
        if trial.to_move() != seat or self.seats[seat].is_computer:
            raise RoundError("the last move was not made by the asking player's seat")
        if seat in self.taken_back:  # else two accomplices could loop move/take-back forever
            raise RoundError(f"seat {seat} has already taken back a move in this round")
        self.taken_back.append(seat)
        self.game = trial
        self.ply -= 1

    def _apply_forfeit(self, event: Event) -> None:
        target = self.forfeit_target()
        assert target is not None  # apply() checked the signer against it
        seat, reason = event.body["seat"], event.body["reason"]
        if seat != target[0]:
            raise RoundError(f"forfeit of seat {seat}, but seat {target[0]} is to move")
        if reason == "offline":
            self._check_evidence(event, seat)
        elif "evidence" in event.body:
            raise RoundError("only an offline forfeit carries evidence")
        waited = event.ts - self.head.ts
        limit = self.timeouts.limit(reason)
        if waited < limit:
            raise RoundError(
                f"forfeit ({reason}) {waited} ms after the previous event; needs {limit} ms"
            )
        self.forfeited.append(seat)
        advance(self, "game_over" if self._put_out([seat], [seat], RoundEnd.FORFEIT) else "forfeit")

    def _check_evidence(self, event: Event, seat: int) -> None:
        """An ``offline`` forfeit carries the seat's own signed offline presence, dated
        no later than the forfeit, of the session that signed the seat's newest event in
        the chain (a claim of "offline" without it is refused)."""
        if "evidence" not in event.body:
            raise RoundError("an offline forfeit needs the seat's signed offline presence")
        will = event.evidence()  # checked with the forfeit, signature included
        why = evidence_error(self, seat, will, event.ts)
        if why is not None:
            raise RoundError(why)

    def _put_out(self, seats: list[int], leaving: list[int], reason: RoundEnd) -> bool:
        """Seats give up (``leaving`` ones also leave; the admin role passes on).  True if
        the game is over by it (``end_reason`` says why); the caller takes the step."""
        assert self.game is not None
        newly_out = [seat for seat in seats if seat not in self.resigned]
        trial = self.game.copy()
        for seat in newly_out:
            if trial.is_over():
                break
            try:
                trial.resign(seat)
            except MoveError:
                break  # this engine has no resignation: the round ends below
        for seat in seats:
            if seat not in self.resigned:
                self.resigned.append(seat)
            if seat in leaving:  # a resigned admin may still leave to hand on the role
                self.left.append(seat)
                if self.seats[seat].pk == self.admin:
                    successor = self.successor()
                    if successor is not None:
                        self.admin = successor
        self.game = trial
        if trial.is_over():
            self._end(reason)
            return True
        if newly_out:
            # the engine kept going without the seat: only possible if it skips it itself;
            # otherwise (no resignation support) the round ends with the others ranked.
            next_seat = trial.to_move()
            if next_seat is None or next_seat in self.resigned or not self._engine_resigns():
                self._end(reason)
                return True
        return False

    def _engine_resigns(self) -> bool:
        assert self.game is not None
        probe = self.game.copy()
        try:
            probe.resign(probe.to_move() or 0)
        except MoveError:
            return False
        return True

    def end_for_equivocation(self, seat: int, seq: int) -> None:
        """A fixed rule, not a chain event: ``seat`` signed two events for position ``seq``.

        Every member that holds both events (the proof) ends the round on the state
        before that position: before play the round is void (cancelled); in play the
        equivocator is out as if it had left and the round is over, and it never wins.
        """
        if self.phase in PRE_PLAY:
            advance(self, "equivocation")
            self._end(RoundEnd.VOID, f"the admin signed two events for position {seq}")
            return
        if self.phase is Phase.PLAY and seat not in self.left:
            self._put_out([seat], [seat], RoundEnd.EQUIVOCATION)
        if seat not in self.equivocators:
            self.equivocators.append(seat)
        advance(self, "equivocation")
        self._end(RoundEnd.EQUIVOCATION, f"seat {seat} signed two events for position {seq}")

    def _apply_cancel(self, event: Event) -> None:
        if out_of_phase(self.phase, "cancel"):
            raise RoundError(out_of_phase(self.phase, "cancel"))
        advance(self, "cancel")
        self._end(RoundEnd.CANCELLED, event.body["reason"])


def seats_text(seats: list[int]) -> str:
    """``seat 2`` or ``seats 1, 2``: how rule errors and notices name seats."""
    if len(seats) == 1:
        return f"seat {seats[0]}"
    return "seats " + ", ".join(str(s) for s in sorted(seats))


def next_start(state: RoundState) -> int:
    """The named starting seat of "another round" with the same seats: the next seat."""
    starter = 0 if state.starter is None else state.starter
    return (starter + 1) % len(state.seats)


def verify_chain(
    chain: list[Event], timeouts: TurnTimeouts = DEFAULT_TIMEOUTS
) -> RoundState:
    """Replay a complete chain from its genesis; ``ChainError`` names the first bad event."""
    if not chain:
        raise ChainError(0, None, "the log is empty")
    try:
        state = RoundState.from_genesis(chain[0], timeouts)
    except RoundError as err:
        raise ChainError(0, chain[0], str(err)) from None
    for index, event in enumerate(chain[1:], start=1):
        try:
            state.apply(event)
        except RoundError as err:
            raise ChainError(index, event, str(err)) from None
    return state


class ChainError(ValueError):
    """A log that does not verify; names the first bad event."""

    def __init__(self, index: int, event: Event | None, reason: str) -> None:
        where = f"event {index}" + (f" ({event.kind} {event.id[:12]})" if event else "")
        super().__init__(f"{where}: {reason}")
        self.index = index
        self.event = event
        self.reason = reason

