"""``Round`` and ``Invitation``: the handles a user of ``Peer`` acts through."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Protocol

from p2p.games import Game
from p2p.games.base import OptionValue
from p2p.peer.stream import Notifications
from p2p.protocol.chat import clean_line
from p2p.protocol.effects import Effect
from p2p.protocol.events import Event
from p2p.protocol.lobby import Invitation as LobbyInvitation
from p2p.protocol.outcome import RoundOutcome
from p2p.protocol.round import (
    Phase,
    RoundState,
)
from p2p.protocol.round_machine import RoundMachine


class RoundSide(Protocol):
    """What a ``Round`` handle asks of its round link (``p2p.peer.round_link.RoundLink``
    implements it): the machine to read, and the calls that act, publish and listen."""

    machine: RoundMachine
    sealing_key: bytes
    log_path: Path | None
    stepping: bool
    """True while a machine step runs in a worker thread (the live engine may change)."""

    def label_of(self, public_key: bytes, nick: str = "") -> str: ...

    def topic(self, channel: str) -> str: ...

    def sealed(self, payload: bytes, channel: str) -> bytes: ...

    async def act(self, action: Callable[[RoundMachine, int], list[Effect]]) -> None: ...

    def echo_chat(self, line: str) -> None:
        """Tell our own listeners the round chat ``line`` we just said."""

    async def request_sync(self) -> None: ...

    def events(self) -> Notifications:
        """Notifications about this round only."""


class InvitationHost(Protocol):
    """What an ``Invitation`` handle answers through (``Peer`` implements it)."""

    def label_of(self, public_key: bytes, nick: str = "") -> str: ...

    def accept_invitation(self, round_id: str) -> Awaitable[Round]: ...

    def decline_invitation(self, round_id: str) -> Awaitable[None]: ...


class Round:
    """One round this peer takes part in (as admin, invited member or code joiner).

    ``round.game`` is a copy of the round's rules engine (``None`` until play starts), equal on
    every member; ``round.phase`` says where the round is; the action methods sign and
    publish our part and raise ``ActionError`` when the action is not possible now.
    A handle talks only to its round link (``p2p.peer.round_link.RoundLink``), which holds
    the machine, the keys, the log and the timers of the round.
    """

    def __init__(self, link: RoundSide) -> None:
        self._link = link
        self.machine: RoundMachine = link.machine
        self.invited_by: bytes = link.machine.state.genesis.pk
        self.code: str | None = link.machine.code
        self._waiters: dict[asyncio.Future[None], None] = {}
        """The ``wait_until`` calls waiting for a change, in the order they began."""
        self._snapshot: tuple[tuple[int, int, str], Game, bytes] | None = None

    @property
    def sealing_key(self) -> bytes:
        """The round key every payload on the round's topics is sealed with
        (``p2p.protocol.sealing``): chosen by the admin and sealed to each invitee in
        the invitation, or derived from the join code of a private round."""
        return self._link.sealing_key

    @property
    def log_path(self) -> Path | None:
        """The round's log file (``Peer(log_dir=...)``), else ``None``."""
        return self._link.log_path

    # -- queries ---------------------------------------------------------------------

    @property
    def id(self) -> str:
        return self.machine.state.round_id

    @property
    def chain_state(self) -> RoundState:
        """The verified chain and everything derived from it."""
        return self.machine.state

    @property
    def game(self) -> Game | None:
        """A copy of the rules engine after the moves so far (``None`` before play).

        Never the machine's live engine: the round's position changes only inside the
        machine's step, so a caller that ``push``es on what it got changes nothing in the
        round.  The copy is made again when the chain has changed (or the caller changed
        it).  While a step runs in a worker thread (``RoundLink.stepping``) the copy is
        taken again until the chain did not change during it.
        """
        snap = self._snapshot
        for _ in range(3):
            live = self.machine.state.game
            if live is None:
                return None
            key = self._chain_key(live)
            if snap is not None and snap[0] == key and snap[1].encode() == snap[2]:
                return snap[1]
            copy = live.copy()
            snap = self._snapshot = (key, copy, copy.encode())
            if not self._link.stepping or self._chain_key(live) == key:
                break
        return snap[1] if snap is not None else None

    def _chain_key(self, live: Game) -> tuple[int, int, str]:
        """What identifies the round's position: the engine, the chain's length and head."""
        chain = self.machine.state.chain
        return (id(live), len(chain), chain[-1].id if chain else "")

    state = game  # the brief's name for it: ``round.state`` is the engine

    @property
    def game_name(self) -> str:
        return self.machine.state.game_name

    @property
    def phase(self) -> Phase:
        """Where the round is for us: its chain's phase, or ``CANCELLED`` once it ended
        here by a local rule (``RoundMachine.local_end``; the chain says nothing of it)."""
        return self.machine.phase

    @property
    def is_over(self) -> bool:
        return self.phase in (Phase.OVER, Phase.CANCELLED)

    @property
    def outcome(self) -> RoundOutcome | None:
        """How the round ended for us, typed (``RoundMachine.outcome``); ``None`` while
        it runs."""
        return self.machine.outcome

    @property
    def end_reason(self) -> str:
        """Why the round ended (its chain's reason, or our local end's), else ``''``."""
        return self.machine.end_reason

    @property
    def my_seat(self) -> int | None:
        """The seat our key holds in this round (0-based; ``None`` when it holds none),
        as the chain's seats say (``RoundState.seat_of``)."""
        return self.machine.my_seat

    @property
    def is_admin(self) -> bool:
        """We are this round's admin: we signed its genesis, seal its start and its draw,
        and may cancel it before play (docs/protocol.md)."""
        return self.machine.is_admin

    @property
    def admin(self) -> bytes:
        return self.machine.state.admin

    @property
    def seats(self) -> list[str]:
        """A label per seat: nickname with fingerprint, computer level, or ``open``."""
        out = []
        for seat in self.machine.state.seats:
            if seat.is_computer:
                out.append(f"computer ({seat.level})")
            elif seat.pk is None:
                out.append("open")
            else:
                out.append(self._link.label_of(seat.pk, seat.nick))
        return out

    @property
    def turn_limit(self) -> int | None:
        """A slow round's limit per turn in seconds, from its genesis (``None``: a live
        round with the protocol's timeouts), docs/protocol.md §6.7."""
        return self._link.machine.state.genesis.body.get("turn")

    @property
    def is_my_turn(self) -> bool:
        st = self.machine.state
        if st.phase is not Phase.PLAY or st.game is None:
            return False
        seat = st.game.to_move()
        return (
            seat is not None and seat == self.my_seat and not st.seats[seat].is_computer
        )

    @property
    def state_hash(self) -> str:
        return self.machine.state.state_hash()

    @property
    def winners(self) -> tuple[int, ...]:
        return self.machine.state.winners()

    @property
    def seed(self) -> bytes | None:
        return self.machine.state.seed

    @property
    def starter(self) -> int | None:
        return self.machine.state.starter

    @property
    def agreed(self) -> bool:
        """True once every human seat signed the final head and state hash (``ack``)."""
        return self.machine.agreed()

    def log(self) -> list[Event]:
        """The verified chain, genesis first."""
        return self.machine.log()

    def topic(self, channel: str = "events") -> str:
        """The MQTT topic of one of the round's channels (events, sync, chat, genesis)."""
        return self._link.topic(channel)

    def sealed(self, payload: bytes, channel: str = "events") -> bytes:
        """``payload`` sealed with the round key, as a member sends it on ``channel``.

        For tests and tools that publish a member's own bytes (e.g. a hostile member's
        signed event) through a client of their own.
        """
        return self._link.sealed(payload, channel)

    def __repr__(self) -> str:
        return f"Round({self.id[:8]} {self.game_name} {self.phase.value})"

    # -- actions ---------------------------------------------------------------------

    async def play(self, move: str) -> None:
        """Play ``move`` (canonical or as a person types it) for our seat."""
        await self._link.act(lambda m, now: m.move(move, now))

    async def resign(self) -> None:
        """Give up our seat."""
        await self._link.act(lambda m, now: m.resign(now))

    async def leave(self) -> None:
        """Leave the round (in play: resigns; the admin role passes on)."""
        await self._link.act(lambda m, now: m.leave(now))

    async def request_takeback(self) -> None:
        """Ask the others to take back our last move (once per round, before it is answered)."""
        await self._link.act(lambda m, now: m.request_takeback(now))

    async def accept_takeback(self) -> None:
        """As the player to move: agree to take back the last move its mover asked about."""
        await self._link.act(lambda m, now: m.accept_takeback(now))

    async def decline_takeback(self) -> None:
        """As the player to move: say no to the take-back asked about, at once (the asker
        and every member get ``RoundNotice`` ``takeback_declined`` (seat: the asker, by:
        the decliner); without it, the move we play next is the answer)."""
        await self._link.act(lambda m, now: m.decline_takeback(now))

    @property
    def takeback_asked(self) -> int | None:
        """The seat asking to take back the last move (``None``: nobody asks)."""
        request = self.machine.takeback_request()
        return None if request is None else self.machine.state.seat_of(request.pk)

    async def cancel(self, reason: str = "cancelled by the admin") -> None:
        """The admin calls the round off before play."""
        await self._link.act(lambda m, now: m.cancel(reason, now))

    async def say(self, text: str) -> None:
        """A round chat line."""
        line = clean_line(text)
        await self._link.act(lambda m, now: m.chat(text, now))
        self._link.echo_chat(line)

    async def request_sync(self) -> None:
        """Ask the other members for the chain from our head on."""
        await self._link.request_sync()

    # -- waiting ---------------------------------------------------------------------

    async def wake_waiters(self) -> None:
        """Let every ``wait_until`` look at the round again (its link calls it after a step)."""
        waiting, self._waiters = self._waiters, {}
        for waiter in waiting:
            if not waiter.done():
                waiter.set_result(None)

    async def wait_until(
        self, predicate: Callable[[Round], bool], timeout: float | None = None
    ) -> None:
        """Wait until ``predicate(round)`` holds; ``asyncio.TimeoutError`` after ``timeout``.

        The calling task itself waits (no task of its own, as ``asyncio.wait_for`` would
        start): woken by a change, it runs in the event loop's next turn (issue 28).  It
        waits on a future of its own that the change resolves (a lock, as an
        ``asyncio.Condition`` takes and gives back on both sides, is not needed: the
        predicate is asked on the event loop, between two steps)."""
        async with asyncio.timeout(timeout):
            while not predicate(self):
                waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
                self._waiters[waiter] = None
                try:
                    await waiter
                finally:
                    self._waiters.pop(waiter, None)

    async def wait_started(self, timeout: float | None = 60) -> None:
        """Wait until play begins (or the round is cancelled)."""
        await self.wait_until(
            lambda r: r.phase in (Phase.PLAY, Phase.OVER, Phase.CANCELLED), timeout
        )

    async def wait_over(self, timeout: float | None = None) -> None:
        """Wait until the round is over or cancelled."""
        await self.wait_until(lambda r: r.is_over, timeout)

    async def wait_turn(self, timeout: float | None = None) -> bool:
        """Wait until it is our turn (``True``) or the round is over (``False``)."""
        await self.wait_until(lambda r: r.is_my_turn or r.is_over, timeout)
        return self.is_my_turn

    def events(self) -> Notifications:
        """Notifications about this round only."""
        return self._link.events()


class Invitation:
    """A round someone invited us to, not answered yet: ``accept()`` or ``decline()``."""

    def __init__(self, peer: InvitationHost, pending: LobbyInvitation, expires: int) -> None:
        self._peer = peer
        self.genesis = pending.genesis
        body = pending.genesis.body
        self.round_id: str = pending.round_id
        self.admin: bytes = pending.admin
        self.game: str = body["game"]
        self.options: dict[str, OptionValue] = dict(body["options"])
        self.expires: int = expires
        """When the invitation expires, on our clock (the admin signed it on its own)."""
        self.drawn: bool = body["start"] is None
        self.turn_limit: int | None = body.get("turn")
        """A slow round's limit per turn in seconds (``None``: a live round), §6.7."""

    @property
    def admin_label(self) -> str:
        return self._peer.label_of(self.admin)

    async def accept(self) -> Round:
        """Take our seat; returns the round (play starts once every seat accepted)."""
        return await self._peer.accept_invitation(self.round_id)

    async def decline(self) -> None:
        """Say no; the admin then calls the round off."""
        await self._peer.decline_invitation(self.round_id)

    def __repr__(self) -> str:
        return f"Invitation({self.round_id[:8]} {self.game} from {self.admin_label})"
