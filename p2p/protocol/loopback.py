"""An in-process stand-in for the broker, for tests and examples without a network.

Machines (anything with ``receive(event, now) -> list[Effect]``) are registered under a
name; ``post(name, effects)`` queues what a machine asked to publish, and ``run()``
delivers queued events to every other machine until nothing is left.  Delivery order is
chosen by ``pick(n) -> index`` (default: first in, first out); pass
``random.Random(seed).randrange`` to shuffle deterministically.  ``drop(src, dst, event)``
returning True loses that delivery (a withheld reveal, a peer that is offline).
Every non-publish effect is kept in ``seen`` as ``(machine name, effect)``.  ``now`` is the
machines' shared clock: one millisecond per delivery, and never behind the ``ts`` of an
event posted (machines refuse events dated ahead of their clock).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from p2p.protocol.effects import Effect, Publish
from p2p.protocol.events import Event


class Receiver(Protocol):
    def receive(self, event: Event, now: int) -> list[Effect]: ...


class Loopback:
    """Deliver published events between named machines, in a chosen order."""

    def __init__(
        self,
        pick: Callable[[int], int] | None = None,
        drop: Callable[[str, str, Event], bool] | None = None,
    ) -> None:
        self.machines: dict[str, Receiver] = {}
        self.queue: list[tuple[str, Publish]] = []
        self.seen: list[tuple[str, Effect]] = []
        self.published: list[tuple[str, Publish]] = []
        self.pick = pick or (lambda n: 0)
        self.drop = drop
        self.now = 0

    def add(
        self, name: str, machine: Receiver, effects: list[Effect] | None = None
    ) -> None:
        self.machines[name] = machine
        if effects:
            self.post(name, effects)

    def post(self, name: str, effects: list[Effect]) -> None:
        for effect in effects:
            if isinstance(effect, Publish):
                # the shared clock: nothing is delivered before it was made
                self.now = max(self.now, effect.event.ts)
                self.queue.append((name, effect))
                self.published.append((name, effect))
            else:
                self.seen.append((name, effect))

    def run(self, max_deliveries: int = 100_000) -> int:
        """Deliver until the queue is empty; returns the number of deliveries."""
        count = 0
        while self.queue:
            source, publish = self.queue.pop(self.pick(len(self.queue)))
            for name, machine in list(self.machines.items()):
                if name == source:
                    continue
                if self.drop is not None and self.drop(source, name, publish.event):
                    continue
                self.now += 1
                count += 1
                if count > max_deliveries:
                    raise RuntimeError(
                        "the machines keep talking: delivery limit reached"
                    )
                self.post(name, machine.receive(publish.event, self.now))
        return count

    def effects_of(self, kind: type, name: str | None = None) -> list[Effect]:
        """Recorded effects of one type, optionally of one machine."""
        return [
            e
            for n, e in self.seen
            if isinstance(e, kind) and (name is None or n == name)
        ]
