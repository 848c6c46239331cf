"""The ``Peer``'s clock: round and lobby ticks, resync of a round that missed an event."""

from __future__ import annotations

import asyncio
import functools
import logging
import time

from p2p.peer.config import (
    RESYNC_AFTER_S,
    TICK_S,
)
from p2p.peer.handles import Round
from p2p.protocol.effects import Publish

log = logging.getLogger("p2p.peer")


class Timers:
    """The ``Peer``'s clock: round and lobby ticks, resync of a round that missed an
    event."""

    async def _timer_loop(self) -> None:
        while True:
            await asyncio.sleep(TICK_S)
            try:
                now = self.now_ms()
                for rnd in list(self.rounds.values()):
                    if rnd.is_over:
                        continue
                    self.lobby.keep(
                        s.pk for s in rnd.chain_state.seats if s.pk is not None
                    )  # e.g. a joiner who entered the code
                    step = functools.partial(
                        rnd.machine.tick, now, self._offline_members(rnd)
                    )
                    await self._run_effects(rnd, await self._call(rnd, step))
                    await self._maybe_resync(rnd)
                effects = self.lobby.tick(now)
                if not self.transport.connected:
                    effects = [e for e in effects if not isinstance(e, Publish)]
                await self._run_lobby_effects(effects)
            except Exception:
                log.exception("internal error in the timer loop")

    def _offline_members(self, rnd: Round) -> frozenset[bytes]:
        """Members of ``rnd`` whose own Last Will or goodbye, or whose silence, took them
        out of the lobby -- never members a lobby flood kept out of the list."""
        return frozenset(
            seat.pk
            for seat in rnd.chain_state.seats
            if seat.pk is not None
            and seat.pk != self.public_key
            and self.lobby.is_offline(seat.pk)
        )

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
