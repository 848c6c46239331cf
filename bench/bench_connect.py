"""Connect time to a 3.1.1-only broker against a v5 one, side by side in one run.

Run: python bench/bench_connect.py [--runs 7] [--markdown]

For each broker, the time from ``Transport.start()`` until the connection is up and the
retained-delivery probe is done (what a peer waits before it announces itself), medians
over ``--runs`` connects:

* *first*: nothing known about the broker (``p2p.net.known`` forgotten before each
  connect): a 3.1.1-only broker costs the refused or closed v5 attempt plus the probe;
* *known*: the facts of the first connect kept (the next start of the shell).

Like for like: one Mosquitto, reached directly and through the same small proxy
(``tests/faults.py``, ``MqttLimits``) in three ways -- passing v5 through, answering a v5
CONNECT with a 3.1.1 CONNACK "unacceptable protocol version" (what MQTT 3.1.1 asks of a
broker that speaks only 3.1.1), and closing the socket at a v5 CONNECT (RabbitMQ 3.x) --
so the 3.1.1 rows differ from the v5 row through the proxy only by the refused v5
attempt.  Then, for what other broker software costs: amqtt (3.1.1 only, a Python
broker) and RabbitMQ when ``rabbitmq-server`` is installed (it takes ~10 s to start).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from brokers import RabbitBroker, Unavailable
from faults import MqttLimits
from mqtt311_broker import Mqtt311Broker

from p2p.net import known
from p2p.net.broker import LocalBroker
from p2p.net.transport import Transport


class _FallbackStamp(logging.Handler):
    """When the transport gave up on v5 (its log line says so): the refused attempt."""

    def __init__(self) -> None:
        super().__init__()
        self.at: float | None = None

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if self.at is None and ("refused MQTT v5" in text or "no CONNACK to an MQTT v5" in text):
            self.at = time.perf_counter()


STAMP = _FallbackStamp()
REFUSED: dict[str, list[float]] = {}
"""Per URL: ms from the start until the v5 attempt had failed (first connects)."""


async def _connect_ms(url: str, fresh: bool) -> tuple[float, str, str | None]:
    if fresh:
        known.drop(url)  # a first connect: nothing known about this broker
    STAMP.at = None
    begin = time.perf_counter()
    transport = Transport(url)
    await transport.start(wait=15)
    took = (time.perf_counter() - begin) * 1000
    if fresh and STAMP.at is not None:
        REFUSED.setdefault(url, []).append((STAMP.at - begin) * 1000)
    facts = transport.protocol_version, transport.retained_to()
    await transport.close()
    return took, *facts


async def _measure(urls: dict[str, str], runs: int) -> dict[str, dict[str, object]]:
    """Every broker in turn, ``runs`` rounds of first connects, then of known ones: load
    from other jobs that comes and goes falls on every row alike."""
    first: dict[str, list[tuple[float, str, str | None]]] = {name: [] for name in urls}
    again: dict[str, list[float]] = {name: [] for name in urls}
    for _ in range(runs):
        for name, url in urls.items():
            first[name].append(await _connect_ms(url, fresh=True))
    for url in urls.values():
        await _connect_ms(url, fresh=True)  # learned, kept for the known connects
    for _ in range(runs):
        for name, url in urls.items():
            again[name].append((await _connect_ms(url, fresh=False))[0])
    return {
        name: {
            "first": statistics.median(t for t, _, _ in first[name]),
            "refused": statistics.median(REFUSED[url]) if REFUSED.get(url) else None,
            "known": statistics.median(again[name]),
            "protocol": first[name][-1][1],
            "retained": first[name][-1][2],
        }
        for name, url in urls.items()
    }


async def main(runs: int, markdown: bool, rabbitmq: bool = True) -> None:
    known.forget()
    urls: dict[str, str] = {}
    async with contextlib.AsyncExitStack() as stack:
        mosquitto = await stack.enter_async_context(LocalBroker())
        urls["Mosquitto 2, direct (v5)"] = mosquitto.url
        ways: list[tuple[str, bool | str]] = [
            ("the same through the proxy (v5)", False),
            ("the same, v5 refused by a CONNACK (proxy)", "connack"),
            ("the same, v5 CONNECT closed, no CONNACK (proxy)", True),
        ]
        for name, refuse in ways:
            proxy = await stack.enter_async_context(MqttLimits(mosquitto.port, refuse_v5=refuse))
            urls[name] = proxy.url
        amqtt = Mqtt311Broker()
        await asyncio.to_thread(amqtt.start)
        stack.callback(amqtt.stop)
        urls["amqtt (3.1.1 only, refuses v5)"] = amqtt.url
        rabbit = RabbitBroker()
        try:
            if not rabbitmq:
                raise Unavailable("--no-rabbitmq")
            await asyncio.to_thread(rabbit.start)
        except Unavailable as err:
            print(f"RabbitMQ skipped: {err}", file=sys.stderr)
        else:
            stack.callback(rabbit.stop)
            urls["RabbitMQ 3.10 MQTT plugin (3.1.1)"] = rabbit.url
        measured = await _measure(urls, runs)
    rows = list(measured.items())
    machine = f"{platform.node()} · {os.cpu_count()} cores · Python {platform.python_version()}"
    load = os.getloadavg()[0]
    head = ("broker", "speaks", "retained to", "first connect ms", "of it refused v5 ms",
            "known broker ms")
    lines = [
        (name, str(r["protocol"]), str(r["retained"]), f"{r['first']:.1f}",
         "--" if r["refused"] is None else f"{r['refused']:.1f}", f"{r['known']:.1f}")
        for name, r in rows
    ]
    if markdown:
        print(f"Medians of {runs} connects; {machine}; load average {load:.1f}\n")
        print("| " + " | ".join(head) + " |")
        print("|" + "|".join("---" for _ in head) + "|")
        for line in lines:
            print("| " + " | ".join(line) + " |")
    else:
        print(f"medians of {runs} connects · {machine} · load {load:.1f}")
        print(f"{head[0]:<48} {head[1]:>7} {head[2]:>12} {head[3]:>17} {head[4]:>20} {head[5]:>16}")
        for line in lines:
            print(f"{line[0]:<48} {line[1]:>7} {line[2]:>12} {line[3]:>17} {line[4]:>20} {line[5]:>16}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--no-rabbitmq", action="store_true", help="skip RabbitMQ (10 s to start)")
    args = parser.parse_args()
    logging.getLogger("p2p.net.mqtt").setLevel(logging.CRITICAL)  # paho on the refused v5
    logging.getLogger("p2p.net").setLevel(logging.INFO)
    logging.getLogger("p2p.net").addHandler(STAMP)
    logging.getLogger("p2p.net").propagate = False  # the stamps only, not the lines
    asyncio.run(main(args.runs, args.markdown, not args.no_rabbitmq))
