"""``p2p doctor [--broker URL]...``: what a broker supports and which features that allows.

Per broker: the MQTT version it speaks (v5, or 3.1.1 only), to whom it hands retained
messages (wildcard and exact subscriptions, exact only, or none; found by the
transport's probe, ``p2p.net.transport``), the round trip of a QoS 1 message to our own
subscription (median of 5), and what works there (``p2p.peer.broker_report``).  The
findings are kept in ``brokers.json`` in the config directory, as the shell keeps them.
Exit status 0 if every broker answered, 1 if one could not be reached (one line each).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time

from p2p.cli import UsageError

PINGS = 5


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--broker", action="append", metavar="URL",
                        help="a broker to check (repeatable; default: the saved brokers, "
                             "else the public ones)")
    parser.add_argument("--lang", choices=("de", "en"), help="language of the report")
    parser.add_argument("--timeout", type=float, default=10.0,
                        help="seconds to wait for each broker (default 10)")


_WORDS = {
    "broker": ("Broker", "Broker"),
    "speaks": ("spricht", "speaks"),
    "v5": ("MQTT 5", "MQTT 5"),
    "v311": ("nur MQTT 3.1.1", "MQTT 3.1.1 only"),
    "retained": ("Retained", "retained"),
    "rtt": ("Umlaufzeit", "round trip"),
    "works": ("damit", "so"),
    "unreachable": ("nicht erreichbar", "unreachable"),
}


def _w(key: str, lang: str) -> str:
    de, en = _WORDS[key]
    return de if lang == "de" else en


async def _round_trip(url: str, protocol: str, timeout: float) -> float:
    """Median ms from publishing a QoS 1 message to receiving it on our subscription."""
    import secrets
    import ssl

    import aiomqtt

    from p2p.net.transport import NODELAY, parse_broker_url

    address = parse_broker_url(url)
    topic = f"p2p/doctor/{secrets.token_hex(8)}"
    client = aiomqtt.Client(
        address.host, address.port, username=address.username, password=address.password,
        protocol=aiomqtt.ProtocolVersion.V5 if protocol == "5" else aiomqtt.ProtocolVersion.V311,
        transport="websockets" if address.websockets else "tcp",
        websocket_path=address.path or None, timeout=timeout,
        tls_context=ssl.create_default_context() if address.tls else None,
        socket_options=[NODELAY] if not address.websockets else (),
    )
    times = []
    async with client:
        await client.subscribe(topic, qos=1)
        messages = client.messages
        for i in range(PINGS):
            begin = time.perf_counter()
            await client.publish(topic, str(i).encode(), qos=1)
            async with asyncio.timeout(timeout):
                async for message in messages:
                    if message.payload == str(i).encode():
                        break
            times.append((time.perf_counter() - begin) * 1000)
    return statistics.median(times)


async def _check(url: str, lang: str, timeout: float) -> tuple[bool, list[str]]:
    from p2p.net import known
    from p2p.net.transport import Transport, parse_broker_url
    from p2p.peer.broker_report import features, text

    known.drop(str(parse_broker_url(url)))  # look again, whatever was kept
    transport = Transport(url)
    try:
        await transport.start(wait=timeout)
    except ConnectionError as err:
        return False, [f"{_w('broker', lang)} {url}: {_w('unreachable', lang)} ({err})"]
    try:
        protocol = transport.protocol_version
        retained = transport.retained_to()
    finally:
        await transport.close()
    try:
        rtt = f"{await _round_trip(url, protocol, timeout):.1f} ms"
    except Exception as err:  # noqa: BLE001 - reported in the line, never a traceback
        rtt = f"? ({type(err).__name__})"
    return True, [
        f"{_w('broker', lang)} {transport.address}",
        f"  {_w('speaks', lang)}: {_w('v5' if protocol == '5' else 'v311', lang)}",
        f"  {text(f'retained.{retained}', lang)}",
        f"  {_w('rtt', lang)}: {rtt}",
        f"  {_w('works', lang)}: {text(features(retained), lang)}",
    ]


def run(args: argparse.Namespace) -> int:
    from p2p.config import check_broker_urls, config_dir
    from p2p.net import known
    from p2p.shell import settings as settings_mod
    from p2p.shell.i18n import detect_language

    directory = config_dir()
    settings, _ = settings_mod.load(directory)
    lang = args.lang or settings.lang or detect_language()
    if args.broker:
        try:
            urls = check_broker_urls(args.broker)
        except ValueError as err:
            raise UsageError(str(err)) from None
    elif settings.broker:
        urls = check_broker_urls(settings.broker)
    else:
        from p2p.net.transport import DEFAULT_BROKER_URLS

        urls = list(DEFAULT_BROKER_URLS)
    if args.timeout <= 0:
        raise UsageError("--timeout must be positive")
    import logging

    logging.getLogger("p2p.net.mqtt").setLevel(logging.CRITICAL)  # paho's own lines
    known.attach(directory / "brokers.json")

    async def check_all() -> list[tuple[bool, list[str]]]:
        return [await _check(url, lang, args.timeout) for url in urls]

    results = asyncio.run(check_all())
    for ok, lines in results:
        print("\n".join(lines), file=sys.stdout if ok else sys.stderr)
    return 0 if all(ok for ok, _ in results) else 1
