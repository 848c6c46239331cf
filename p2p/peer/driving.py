"""``Peer`` drives the round machines: runs their steps and carries out the effects they
return."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from p2p.peer import config
from p2p.peer.checks import _BENIGN
from p2p.peer.handles import Round
from p2p.peer.notifications import (
    ChatMessage,
    Equivocated,
    Rejected,
    Resynced,
    RoundNotice,
    RoundOver,
    RoundUpdate,
    YourTurn,
)
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
from p2p.protocol.round_machine import ActionError, RoundMachine

log = logging.getLogger("p2p.peer")


class Driving:
    """``Peer`` drives the round machines: runs their steps and carries out the
    effects they return."""

    async def _act(
        self, rnd: Round, action: Callable[[RoundMachine, int], list[Effect]]
    ) -> None:
        """Run a user action on a round's machine (``ActionError`` passes to the caller)."""
        if self._closed:
            raise ActionError("this peer is closed", "closed")
        effects = await self._call(rnd, lambda: action(rnd.machine, self.now_ms()))
        await self._run_effects(rnd, effects)

    async def _call(self, rnd: Round, step: Callable[[], list[Effect]]) -> list[Effect]:
        """Run one step of a round's machine, one at a time per round.

        In a round with computer seats a step may include a computer move (the admin
        plays it, every other member recomputes it to check it), which takes up to about
        a second at the strongest levels.  Such steps run in a worker thread so the event
        loop -- the shell's screen, the other rounds, the MQTT keepalive -- never stalls.
        The engines' computer players search on a copy of the position, so the round's
        state only changes in the short moment a move is applied.
        """
        async with rnd._lock:
            if config.OFFLOAD_COMPUTER_MOVES and rnd._has_computers:
                return await asyncio.to_thread(step)
            return step()

    async def _run_effects(
        self, rnd: Round | None, effects: list[Effect], source: str = ""
    ) -> None:
        """Carry out what a machine asked for, in order."""
        changed = noticed = False
        applied_from_sync = 0
        for effect in effects:
            if isinstance(effect, Publish):
                route = effect.route
                expiry = config.PRESENCE_TTL_S if effect.event.kind == "presence" else None
                topic = route.topic
                payload = self._seal(
                    topic, effect.payload, effect.event, rnd, effect.sealed_with
                )
                if payload is None:
                    continue
                self.transport.publish_nowait(
                    topic,
                    payload,
                    qos=route.qos,
                    retain=route.retain,
                    expiry=expiry,
                )
            elif isinstance(effect, Applied):
                if rnd is not None:
                    changed = True
                    self.stats.applied += 1
                    self._on_applied(rnd, effect)
                    if source == "sync":
                        applied_from_sync += 1
            elif isinstance(effect, Dropped):
                self._warn(
                    effect.describe(),
                    rnd.id if rnd else None,
                    effect.reason,
                    effect.kind,
                    effect.sender,
                )
            elif isinstance(effect, Equivocation):
                if rnd is not None:  # the Rewound that follows writes it to the log
                    rnd._proof = (effect.first, effect.second)
                log.warning("%s", effect.describe())
                self.stats.count_drop("equivocation")
                self._notify(Equivocated(rnd, effect.first, effect.second))
            elif isinstance(effect, ChatLine):
                info = self.lobby.peers.get(effect.sender)
                nick = effect.nick or (info.nick if info else "?")
                self._notify(
                    ChatMessage(
                        effect.sender, nick, effect.text, effect.round, effect.ts
                    )
                )
            elif isinstance(effect, Notice):
                log.info("%s", effect.text)
                self._notify(RoundNotice(rnd, effect.text, effect.code, effect.params))
                noticed = True  # e.g. a take-back request: ``wait_until`` may be waiting
            elif isinstance(effect, Rewound) and rnd is not None:
                changed = True
                self._on_rewound(rnd, effect)
            elif isinstance(effect, Acknowledged) and rnd is not None:
                changed = True
                self._append_log(rnd, effect.event)
        busy = self.busy
        if busy != self.lobby.busy:
            announce = self.lobby.set_busy(busy, self.now_ms())  # also what auto-declines
            if self.transport.connected:  # else the presence after reconnecting says it
                await self._run_effects(None, announce)
        if rnd is not None and rnd.is_over:
            changed = True  # a local end (expiry, equivocation) changes no chain
        if rnd is not None and changed:
            self._tell_over(rnd)
            rnd._last_change = time.monotonic()
            self._clear_private_genesis(rnd)
            if applied_from_sync:
                self._note_resync(rnd, applied_from_sync)
            await rnd._signal()
            if rnd.is_my_turn:
                self._notify(YourTurn(rnd))
        elif rnd is not None and noticed:
            await rnd._signal()

    def _warn(
        self, text: str, round_id: str | None, reason: str, kind: str, sender: str = ""
    ) -> None:
        self.stats.count_drop(reason)
        if reason in _BENIGN:
            log.debug("%s", text)  # QoS 1 redelivery, a retained copy again: normal
            return
        if not self._warn_budget.take():
            log.debug("%s", text)  # a flood: counted, not shouted
            return
        log.warning("%s", text)
        self._notify(Rejected(text, round_id, reason, kind, sender))

    def _append_log(self, rnd: Round, event: Event) -> None:
        """Append one event to the round's log file (chain events, closing acks)."""
        if rnd.log_path is None:
            return
        try:
            with rnd.log_path.open("ab") as handle:
                handle.write(event.raw + b"\n")
        except OSError as err:
            log.warning("cannot write the round log %s: %s", rnd.log_path, err)

    def _on_applied(self, rnd: Round, applied: Applied) -> None:
        event = applied.event
        if event.kind == "start":
            self._remember_members(rnd)
        if event.seq:
            self._append_log(rnd, event)
        text = event.kind
        seat = applied.seat
        if event.kind == "move":
            text = f"ply {event.body['ply']}: {event.body['move']} (seat {seat}, signed by {self.label_of(event.pk)})"
        elif event.kind == "forfeit":
            text = f"seat {event.body['seat']} forfeited ({event.body['reason']})"
        elif event.kind == "draw":
            text = (
                f"starter seat {event.body['starter']} (seed {event.body['seed'][:12]})"
            )
        self._notify(RoundUpdate(rnd, event.kind, event.seq or 0, text, seat))
        self._tell_over(rnd)

    def _tell_over(self, rnd: Round) -> None:
        """``RoundOver`` once per outcome (a chain event, a local end, an equivocation)."""
        st = rnd.machine.state
        outcome = (st.phase, st.end_reason, st.winners())
        if rnd.is_over and rnd._told_over != outcome:
            rnd._told_over = outcome
            self._notify(RoundOver(rnd, st.winners(), st.end_reason))

    def _on_rewound(self, rnd: Round, effect: Rewound) -> None:
        """A forfeit replaced the end of our chain: the log file follows."""
        log.warning(
            "round %s: a forfeit replaced %d chain events from position %d",
            rnd.id[:8],
            len(effect.replaced),
            effect.seq,
        )
        if rnd.log_path is None:
            return
        chain = rnd.machine.log()[: effect.seq]
        proof = rnd._proof
        if proof is not None and rnd.machine._verdict and proof[0].seq == effect.seq:
            chain += list(proof)  # the round ended by it: p2p replay proves the end
        try:
            rnd.log_path.write_bytes(b"".join(e.raw + b"\n" for e in chain))
        except OSError as err:
            log.warning("cannot write the round log %s: %s", rnd.log_path, err)

    def _note_resync(self, rnd: Round, applied: int) -> None:
        rnd._resync_count += applied
        if rnd._resync_flush is not None:
            return

        def flush() -> None:
            rnd._resync_flush = None
            count, rnd._resync_count = rnd._resync_count, 0
            self._notify(Resynced(rnd, count, len(rnd.machine.state.chain) - 1))

        rnd._resync_flush = asyncio.get_running_loop().call_later(0.2, flush)
