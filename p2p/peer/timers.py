"""The ``Peer``'s clock: round and lobby ticks, resync of a round that missed an event."""

from __future__ import annotations

import asyncio
import functools
import logging
import time

from p2p.peer.config import (
    RESYNC_AFTER_S,
    TICK_S,
    offline_grace_ms,
)
from p2p.peer.handles import Round
from p2p.protocol.effects import Publish
from p2p.protocol.events import Event

log = logging.getLogger("p2p.peer")


class Timers:
    """The ``Peer``'s clock: round and lobby ticks, resync of a round that missed an
    event."""

    async def _timer_loop(self) -> None:
        while True:
            await asyncio.sleep(TICK_S)
            try:
                now = self.now_ms()
                listening = self.transport.connected
                deciding = listening and time.monotonic() >= self._settle_until
                for rnd in list(self.rounds.values()):
                    if rnd.is_over:
                        if deciding and rnd.machine.asks_for_acks(now):  # an ack missing
                            step = functools.partial(rnd.machine.tick, now)
                            await self._run_effects(rnd, await self._call(rnd, step))
                        continue
                    if not deciding:
                        continue  # cut off or just back: nobody's silence counts yet
                    self.lobby.keep(
                        s.pk for s in rnd.chain_state.seats if s.pk is not None
                    )  # e.g. a joiner who entered the code
                    step = functools.partial(
                        rnd.machine.tick,
                        now,
                        self._offline_members(rnd, now),
                        self._offline_evidence(rnd, now),
                    )
                    await self._run_effects(rnd, await self._call(rnd, step))
                    await self._maybe_resync(rnd)
                effects = self.lobby.tick(now, listening)
                if not listening:
                    effects = [e for e in effects if not isinstance(e, Publish)]
                await self._run_lobby_effects(effects)
            except Exception:
                log.exception("internal error in the timer loop")

    def _offline_members(self, rnd: Round, now: int) -> frozenset[bytes]:
        """Members of ``rnd`` whose own Last Will or goodbye, or whose silence, took them
        out of the lobby at least ``offline_grace_ms`` ago -- never members a lobby flood
        kept out of the list, nor one whose outage may still end."""
        grace = offline_grace_ms(rnd.machine.timeouts.offline_ms)
        found = []
        for seat in rnd.chain_state.seats:
            if seat.pk is None or seat.pk == self.public_key:
                continue
            since = self.lobby.offline_since(seat.pk)
            if since is not None and now - since >= grace:
                found.append(seat.pk)
        return frozenset(found)

    def _offline_evidence(self, rnd: Round, now: int) -> dict[bytes, tuple[Event, int]]:
        """Members of ``rnd`` that their own signed Last Will or goodbye took out of the
        lobby, unrevoked: that presence and when it arrived (evidence for a forfeit).

        The chain accepts an ``offline`` forfeit once the evidence has stood
        ``offline_ms``; we, the forfeiter, wait ``offline_grace_ms`` (a third longer), so
        a member whose outage lasts the whole limit still has time to reconnect and be
        heard before we sign anything."""
        grace = offline_grace_ms(rnd.machine.timeouts.offline_ms)
        found = {}
        for seat in rnd.chain_state.seats:
            if seat.pk is None or seat.pk == self.public_key:
                continue
            held = self.lobby.offline_evidence(seat.pk)
            if held is not None and now - held[1] >= grace:
                found[seat.pk] = held
        return found

    async def _maybe_resync(self, rnd: Round) -> None:
        """Events parked for long mean we missed one: ask the members for the chain."""
        if not rnd.machine.pending:  # (the machine's tick exchanges heads every 15 s)
            rnd._parked_since = None
            return
        if rnd._parked_since is None:
            rnd._parked_since = time.monotonic()
            return
        quiet = time.monotonic() - rnd._last_sync_request
        if (
            time.monotonic() - rnd._parked_since >= RESYNC_AFTER_S
            and quiet >= RESYNC_AFTER_S
        ):
            await rnd.request_sync()
