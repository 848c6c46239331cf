"""A stranger who floods a namespace with junk: used by the flood test and the bench.

``Flood`` prepares its messages first (fresh keys, valid signatures: the attacker's
cost is paid up front) and then publishes them at QoS 0 as fast as the broker takes them,
spread evenly over ``seconds``.  Half of them go to the round's events topic, half to the
lobby topics; each half mixes what a stranger on ``#`` can send:

round topic:  random bytes; moves validly signed by fresh keys; moves that claim a
              member's key with a wrong signature; replays of the round's own honest
              events, copied from the topic as the round goes on.
lobby topics: random bytes; presences and chat lines validly signed by fresh keys;
              ``hello`` from fresh keys.

Run it in its own process (``run_in_process``) so its CPU is not the peers' CPU.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import random
import time
from dataclasses import dataclass
from typing import Any

import aiomqtt

from p2p.protocol import canonical
from p2p.protocol import events as ev
from p2p.protocol.identity import Identity
from p2p.protocol.topics import Topics


@dataclass(frozen=True)
class FloodPlan:
    """What to flood: broker port, namespace, round key/id, one member's key."""

    port: int
    namespace: str
    round_key: str
    round_id: str
    member_pk_hex: str
    count: int = 5000
    seconds: float = 3.0
    seed: int = 1


def prepare(plan: FloodPlan) -> list[tuple[str, bytes | None]]:
    """The junk, in sending order; ``None`` payload: replay the latest honest event."""
    rng = random.Random(plan.seed)
    topics = Topics(plan.namespace)
    events_topic = topics.round_events(plan.round_key).topic
    now = int(time.time() * 1000)
    out: list[tuple[str, bytes | None]] = []
    half = plan.count // 2
    for i in range(half):  # the round's topic
        kind = i % 4
        if kind == 0:
            out.append((events_topic, rng.randbytes(rng.randint(40, 400))))
        elif kind in (1, 2):
            stranger = Identity.from_seed(rng.randbytes(32))
            move = ev.make(
                stranger,
                "move",
                now,
                {"ply": rng.randint(0, 40), "move": str(rng.randint(1, 7)), "state": "0" * 64},
                round=plan.round_id,
                seq=rng.randint(1, 40),
                prev=rng.randbytes(32).hex(),
            )
            if kind == 2:  # claim a member's key: the signature no longer matches
                value = canonical.decode(move.raw)
                value["pk"] = plan.member_pk_hex
                out.append((events_topic, canonical.encode(value)))
            else:
                out.append((events_topic, move.raw))
        else:
            out.append((events_topic, None))
    lobby = [
        topics.lobby_chat().topic,
        topics.hello().topic,
    ]
    for i in range(plan.count - half):  # the lobby's topics
        stranger = Identity.from_seed(rng.randbytes(32))
        kind = i % 4
        if kind == 0:
            out.append((rng.choice(lobby), rng.randbytes(rng.randint(40, 400))))
        elif kind == 1:
            body = {
                "nick": f"spam{i}",
                "status": "online",
                "busy": False,
                "session": rng.randbytes(16).hex(),
                "ttl": 60,
            }
            presence = ev.make(stranger, "presence", now, body)
            out.append((topics.presence(stranger.peer_id).topic, presence.raw))
        elif kind == 2:
            body = {"text": f"buy now {i}", "ns": topics.root}
            chat = ev.make(stranger, "chat", now, body)
            out.append((topics.lobby_chat().topic, chat.raw))
        else:
            body = {"nick": f"spam{i}", "ns": topics.root}
            hello = ev.make(stranger, "hello", now, body)
            out.append((topics.hello().topic, hello.raw))
    rng.shuffle(out)
    return out


async def flood(plan: FloodPlan, messages: list[tuple[str, bytes | None]], go: Any) -> int:
    """Connect, wait for ``go`` (a multiprocessing Event), publish everything; the count."""
    topics = Topics(plan.namespace)
    events_topic = topics.round_events(plan.round_key).topic
    latest: list[bytes] = []
    ours = {payload for _, payload in messages if payload is not None}
    async with aiomqtt.Client(
        "127.0.0.1", plan.port, identifier=f"flooder-{os.getpid()}"
    ) as client:
        await client.subscribe(events_topic, qos=0)

        async def copy_honest() -> None:
            async for message in client.messages:
                payload = message.payload
                honest = isinstance(payload, (bytes, bytearray)) and payload
                if honest and bytes(payload) not in ours:  # our own junk comes back too
                    latest.append(bytes(payload))

        copier = asyncio.create_task(copy_honest())
        while not go.is_set():
            await asyncio.sleep(0.005)
        start = time.monotonic()
        sent = 0
        for index, (topic, payload) in enumerate(messages):
            if payload is None:
                payload = latest[-1] if latest else os.urandom(64)
                ours.add(payload)
            await client.publish(topic, payload, qos=0)
            sent += 1
            ahead = start + plan.seconds * (index + 1) / len(messages) - time.monotonic()
            if ahead > 0:
                await asyncio.sleep(ahead)
        copier.cancel()
        return sent


def _main(plan: FloodPlan, ready: Any, go: Any, done: Any) -> None:
    messages = prepare(plan)

    async def body() -> int:
        task = asyncio.create_task(flood(plan, messages, go))
        await asyncio.sleep(0.2)  # connected and subscribed by now
        ready.set()
        return await task

    done.put(asyncio.run(body()))


class FloodProcess:
    """The flooder in a process of its own: ``start()`` prepares, ``go()`` floods."""

    def __init__(self, plan: FloodPlan) -> None:
        ctx = multiprocessing.get_context("spawn")
        self._ready = ctx.Event()
        self._go = ctx.Event()
        self._done: Any = ctx.Queue()
        self._process = ctx.Process(
            target=_main, args=(plan, self._ready, self._go, self._done), daemon=True
        )

    @property
    def pid(self) -> int:
        """The flooder's process id (once started)."""
        assert self._process.pid is not None, "not started"
        return self._process.pid

    def start(self, timeout: float = 60.0) -> None:
        self._process.start()
        if not self._ready.wait(timeout):
            self.stop()
            raise RuntimeError("the flooder did not get ready")

    def go(self) -> None:
        self._go.set()

    def wait(self, timeout: float = 60.0) -> int:
        """The number of messages sent, once the flood is over."""
        sent = int(self._done.get(timeout=timeout))
        self._process.join(5)
        return sent

    def stop(self) -> None:
        if self._process.is_alive():
            self._process.terminate()
        self._process.join(5)
