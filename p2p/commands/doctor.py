"""``p2p doctor [--broker URL]...``: what a broker supports and which features that allows.

Per broker: the MQTT version it speaks (v5, or 3.1.1 only), to whom it hands retained
messages (wildcard and exact subscriptions, exact only, or none; found by the
transport's probe, ``p2p.net.transport``), the round trip of a QoS 1 message to our own
subscription (median of 5), whether the product's largest message comes back through it
(else the largest of a few smaller sizes that does: a broker that drops larger messages
silently, as Mosquitto's ``message_size_limit`` does over MQTT 3.1.1, is found only so),
and what works there (``p2p.peer.broker_report``).  The findings are kept in
``brokers.json`` in the config directory, as the shell keeps them; a size limit found is
then kept to by every peer on this machine (``p2p.net.transport``: larger messages are
not sent, and the user is told).
Exit status 0 if every broker answered, 1 if one could not be reached (one line each).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import aiomqtt

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
    "size": ("größte Nachricht", "largest message"),
    "size.fits": ("{size} Bytes kommen an (die größte, die p2p schickt)",
                  "{size} bytes go through (the largest p2p sends)"),
    "size.limit": ("nur bis etwa {limit} Bytes; Größeres schickt p2p hier nicht und sagt es dir",
                   "only up to about {limit} bytes; p2p sends nothing larger here and tells you"),
    "size.unknown": ("unbekannt (nichts kam zurück)", "unknown (nothing came back)"),
}


def _w(key: str, lang: str) -> str:
    de, en = _WORDS[key]
    return de if lang == "de" else en


async def _round_trip(url: str, protocol: str, timeout: float) -> float:
    """Median ms from publishing a QoS 1 message to receiving it on our subscription."""
    import secrets

    from p2p.net.transport import parse_broker_url

    address = parse_broker_url(url)
    topic = f"p2p/doctor/{secrets.token_hex(8)}"
    client = _client(address, protocol, timeout)
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


SIZES = (8192, 4096, 2048, 1024)
"""Packet sizes tried when the largest message does not come back."""


async def _comes_back(url: str, protocol: str, size: int, timeout: float) -> bool:
    """A QoS 1 message of ``size`` bytes as an MQTT packet comes back on our own
    subscription (a broker that cuts us for it, or drops it, says no)."""
    import secrets

    import aiomqtt

    from p2p.net.transport import packet_size, parse_broker_url

    address = parse_broker_url(url)
    topic = f"p2p/doctor/{secrets.token_hex(8)}"
    payload = b"x" * (size - packet_size(topic, b"", 1, protocol == "5", None))
    client = _client(address, protocol, timeout)
    try:
        async with client:
            await client.subscribe(topic, qos=1)
            await client.publish(topic, payload, qos=1)
            async with asyncio.timeout(min(timeout, 3.0)):
                async for message in client.messages:
                    if message.payload == payload:
                        return True
    except (aiomqtt.MqttError, TimeoutError, OSError):
        return False
    return False


async def _largest(url: str, protocol: str, timeout: float) -> tuple[int, bool] | None:
    """``(size, True)``: the product's largest message comes back; ``(size, False)``: only
    this smaller one does; ``None``: none of them."""
    from p2p.net.transport import MAX_PAYLOAD, packet_size

    largest = packet_size("p2p/v2/" + "n" * 32 + "/round/" + "f" * 64 + "/events",
                          b"x" * MAX_PAYLOAD, 1, protocol == "5", None)
    if await _comes_back(url, protocol, largest, timeout):
        return largest, True
    for size in SIZES:
        if await _comes_back(url, protocol, size, timeout):
            return size, False
    return None


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
    try:
        found = await _largest(url, protocol, timeout)
    except Exception:  # noqa: BLE001 - reported in the line, never a traceback
        found = None
    if found is None:
        size = _w("size.unknown", lang)
    elif found[1]:
        size = _w("size.fits", lang).format(size=found[0])
    else:
        size = _w("size.limit", lang).format(limit=found[0])
        known.note(str(transport.address), max_packet=str(found[0]))
    return True, [
        f"{_w('broker', lang)} {transport.address}",
        f"  {_w('speaks', lang)}: {_w('v5' if protocol == '5' else 'v311', lang)}",
        f"  {text(f'retained.{retained}', lang)}",
        f"  {_w('rtt', lang)}: {rtt}",
        f"  {_w('size', lang)}: {size}",
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


def _client(address: Any, protocol: str, timeout: float) -> aiomqtt.Client:
    """One probe's MQTT client for ``address`` (``parse_broker_url``) speaking ``protocol``
    (``"5"`` or ``"3.1.1"``)."""
    import ssl

    import aiomqtt

    from p2p.net.transport import NODELAY

    return aiomqtt.Client(
        address.host, address.port, username=address.username, password=address.password,
        protocol=aiomqtt.ProtocolVersion.V5 if protocol == "5" else aiomqtt.ProtocolVersion.V311,
        transport="websockets" if address.websockets else "tcp",
        websocket_path=address.path or None, timeout=timeout,
        tls_context=ssl.create_default_context() if address.tls else None,
        socket_options=[NODELAY] if not address.websockets else (),
    )
