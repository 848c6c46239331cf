"""Connect time to a 3.1.1-only broker against a v5 one, side by side in one run.

Run: python bench/bench_connect.py [--runs 7] [--markdown]

For each broker, the time from ``Transport.start()`` until the connection is up and the
retained-delivery probe is done (what a peer waits before it announces itself), medians
over ``--runs`` connects:

* *first*: nothing known about the broker (``p2p.net.known`` forgotten before each
  connect): a 3.1.1-only broker costs the refused or closed v5 attempt plus the probe;
* *known*: the facts of the first connect kept (the next start of the shell).

Brokers: Mosquitto (v5); amqtt (3.1.1 only, refuses v5 with a CONNACK); Mosquitto behind
a proxy that closes every v5 CONNECT without an answer (as RabbitMQ 3.x does); and
RabbitMQ itself when ``rabbitmq-server`` is installed (it takes ~10 s to start).
"""

from __future__ import annotations

import argparse
import asyncio
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


async def _connect_ms(url: str, forget: bool) -> tuple[float, str, str | None]:
    if forget:
        known.forget()
    begin = time.perf_counter()
    transport = Transport(url)
    await transport.start(wait=15)
    took = (time.perf_counter() - begin) * 1000
    facts = transport.protocol_version, transport.retained_to()
    await transport.close()
    return took, *facts


async def _measure(url: str, runs: int) -> dict[str, object]:
    first = [await _connect_ms(url, forget=True) for _ in range(runs)]
    known.forget()
    await _connect_ms(url, forget=False)
    again = [await _connect_ms(url, forget=False) for _ in range(runs)]
    return {
        "first": statistics.median(t for t, _, _ in first),
        "known": statistics.median(t for t, _, _ in again),
        "protocol": first[-1][1],
        "retained": first[-1][2],
    }


async def main(runs: int, markdown: bool, rabbitmq: bool = True) -> None:
    rows: list[tuple[str, dict[str, object]]] = []
    async with LocalBroker() as mosquitto:
        rows.append(("Mosquitto 2 (v5)", await _measure(mosquitto.url, runs)))
        async with MqttLimits(mosquitto.port, refuse_v5=True) as proxy:
            rows.append(("v5 CONNECT closed, no CONNACK (proxy)", await _measure(proxy.url, runs)))
    amqtt = Mqtt311Broker()
    await asyncio.to_thread(amqtt.start)
    try:
        rows.append(("amqtt (3.1.1 only, refuses v5)", await _measure(amqtt.url, runs)))
    finally:
        amqtt.stop()
    rabbit = RabbitBroker()
    try:
        if not rabbitmq:
            raise Unavailable("--no-rabbitmq")
        await asyncio.to_thread(rabbit.start)
    except Unavailable as err:
        print(f"RabbitMQ skipped: {err}", file=sys.stderr)
    else:
        try:
            rows.append(("RabbitMQ 3.10 MQTT plugin (3.1.1)", await _measure(rabbit.url, runs)))
        finally:
            rabbit.stop()
    machine = f"{platform.node()} · {os.cpu_count()} cores · Python {platform.python_version()}"
    load = os.getloadavg()[0]
    head = ("broker", "speaks", "retained to", "first connect ms", "known broker ms")
    lines = [
        (name, str(r["protocol"]), str(r["retained"]), f"{r['first']:.1f}", f"{r['known']:.1f}")
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
        print(f"{head[0]:<40} {head[1]:>7} {head[2]:>12} {head[3]:>17} {head[4]:>16}")
        for line in lines:
            print(f"{line[0]:<40} {line[1]:>7} {line[2]:>12} {line[3]:>17} {line[4]:>16}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--no-rabbitmq", action="store_true", help="skip RabbitMQ (10 s to start)")
    args = parser.parse_args()
    logging.getLogger("p2p.net.mqtt").setLevel(logging.CRITICAL)  # paho on the refused v5
    asyncio.run(main(args.runs, args.markdown, not args.no_rabbitmq))
