"""Round machines driven through real ``RoundLink``s that write real log files, without a
broker: for tests of what the file on disk holds after each step (issue 29).

``LinkedMachine`` wraps a ``RoundMachine`` in a ``RoundLink`` with a minimal host (no
network: ``Publish`` effects go to a ``Loopback``), so ``Loopback`` deliveries run the
link's own effect handling and log writing, exactly as a live peer does.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from p2p.peer.round_link import RoundLink
from p2p.protocol.effects import Effect, Publish
from p2p.protocol.events import Event
from p2p.protocol.lobby import Lobby
from p2p.protocol.round_machine import RoundMachine
from p2p.protocol.topics import Topics


class _Host:
    """What a ``RoundLink`` needs from its peer, without a network."""

    def __init__(self, machine: RoundMachine) -> None:
        self.lobby = Lobby(machine.me, "tester", b"s" * 16)
        self.topics = Topics()
        self.listeners: list[Any] = []
        self.closed = False
        self.connected = True
        self.now = 0
        self.raw: list[tuple[str, bytes, bool, int | None]] = []
        """What the link published as it is (retained stores and their clearing)."""

    def now_ms(self) -> int:
        return self.now

    def publish_for(self, link: RoundLink, effect: Publish) -> None:
        pass  # the Loopback carries the machine's Publish effects

    def publish_raw(self, topic: str, payload: bytes, qos: int, retain: bool, expiry: int | None = None) -> None:
        self.raw.append((topic, payload, retain, expiry))

    def follow_stores(self, key: str, owners: Any) -> None:
        pass

    def retained_to(self) -> str | None:
        return None  # not known (as before a broker says)

    def notify(self, note: Any) -> None:
        pass

    def warn(self, text: str, round_id: str | None, reason: str, kind: str, sender: str = "") -> None:
        pass

    def label_of(self, public_key: bytes, nick: str = "") -> str:
        return public_key.hex()[:8]

    def remember_members(self, state: Any) -> None:
        pass

    def count_drop(self, reason: str) -> None:
        pass

    def count_applied(self) -> None:
        pass

    async def after_step(self) -> None:
        pass


class LinkedMachine:
    """A ``Loopback`` receiver: its machine's steps run through a ``RoundLink`` that writes
    ``log_dir/round-<id>.log`` as a live peer does."""

    def __init__(self, machine: RoundMachine, log_dir: Path, loop: asyncio.AbstractEventLoop,
                 effects: list[Effect] | None = None) -> None:
        self.machine = machine
        self.loop = loop
        self.host = _Host(machine)
        self.link = RoundLink(self.host, machine, b"k" * 32, log_dir)  # type: ignore[arg-type]
        self.link.start_log(lambda path: None)
        if effects:
            self.loop.run_until_complete(self.link.run_effects(effects))

    def step(self, step: Callable[[], list[Effect]]) -> list[Effect]:
        """One step of the machine through the link (``RoundLink.step``, which writes the
        log), then the link carries out its effects; returns them."""

        async def both() -> list[Effect]:
            effects = await self.link.step(step)
            await self.link.run_effects(effects)
            return effects

        return self.loop.run_until_complete(both())

    def receive(self, event: Event, now: int) -> list[Effect]:
        self.host.now = now
        return self.step(lambda: self.machine.receive(event, now))

    @property
    def log_path(self) -> Path:
        assert self.link.log_path is not None
        return self.link.log_path


def replayed_verdict(path: Path, machine: RoundMachine) -> str | None:
    """Why the log file at ``path`` does not replay to ``machine``'s verdict (its head,
    phase and winners), or ``None`` if it does.  A local end (expired, abandoned: no
    chain event) shows in the log as the prefix it is: then the head must match and the
    log must say ``prefix``."""
    from p2p.protocol.replay import LogError, replay_log

    try:
        result = replay_log(path.read_bytes().split(b"\n"), machine.timeouts)
    except (OSError, LogError) as err:
        return f"{path}: does not replay: {err}"
    st = machine.state
    got = (result.state.head.id[:12], result.state.phase.value, result.state.winners())
    if machine.ended_here:
        want = (st.head.id[:12], "prefix")
        if (got[0], result.verdict) != want:
            return f"{path}: replays to {got} ({result.verdict}), the machine ended here at {want}"
        return None
    want = (st.head.id[:12], st.phase.value, st.winners())
    if got != want:
        return f"{path}: replays to {got}, the machine holds {want}"
    return None
