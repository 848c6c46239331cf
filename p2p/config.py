"""Where p2p keeps its files: the user's config directory.

``P2P_CONFIG_DIR`` overrides the location (tests and several local peers use it);
otherwise ``$XDG_CONFIG_HOME/p2p`` or ``~/.config/p2p``.
"""

from __future__ import annotations

import os
from pathlib import Path


def config_dir() -> Path:
    """The directory for keys, settings and statistics (created on demand, mode 0700)."""
    override = os.environ.get("P2P_CONFIG_DIR")
    if override:
        path = Path(override)
    else:
        base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
        path = Path(base) / "p2p"
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path


BROKER_SCHEMES: dict[str, int] = {"mqtt": 1883, "mqtts": 8883, "ws": 80, "wss": 443}
"""The broker URL schemes p2p speaks, with their default ports (as ``p2p.net.transport``)."""


class BrokerURLError(ValueError):
    """A broker URL p2p cannot use; ``word`` is the URL as typed."""

    def __init__(self, message: str, word: str = "") -> None:
        super().__init__(message)
        self.word = word


def check_broker_urls(text: str | list[str] | tuple[str, ...]) -> list[str]:
    """The broker URLs in ``text`` (one string separated by spaces or commas, or a list),
    each checked and written out in full; ``ValueError`` with one line saying what to type.

    The one front door for broker URLs: the CLI's ``--broker``, the saved setting, the
    shell's ``/broker``, ``p2p demo`` and the examples all call it, so every entry point
    accepts and refuses the same URLs.  A bare ``host:port`` means ``mqtt://host:port``.
    No network stack is imported (start-up time).
    """
    from urllib.parse import urlsplit

    items = [text] if isinstance(text, str) else list(text)
    words = [w for item in items for w in item.replace(",", " ").split() if w]
    if not words:
        raise BrokerURLError("no broker named (e.g. mqtt://127.0.0.1:1883)")
    urls: list[str] = []
    for word in words:
        full = word if "://" in word else "mqtt://" + word
        hint = f"bad broker URL {word!r}: use mqtt://, mqtts://, ws:// or wss:// and a host, e.g. mqtt://127.0.0.1:1883"
        try:
            parts = urlsplit(full)
            port = parts.port
        except ValueError:
            raise BrokerURLError(hint, word) from None
        if parts.scheme.lower() not in BROKER_SCHEMES or not parts.hostname:
            raise BrokerURLError(hint, word)
        if port == 0 or parts.query or parts.fragment:
            raise BrokerURLError(hint, word)
        if parts.scheme.lower() in ("mqtt", "mqtts") and parts.path not in ("", "/"):
            raise BrokerURLError(hint, word)
        if full not in urls:
            urls.append(full)
    return urls


def check_namespace(namespace: str) -> str:
    """``namespace`` if it can name a lobby (1-32 of a-z, 0-9 and '-', as the topics
    require); ``ValueError`` with one line otherwise."""
    from p2p.protocol.topics import TopicError, Topics

    try:
        Topics(namespace)
    except TopicError as err:
        raise ValueError(f"bad namespace {namespace!r}: {err}") from None
    return namespace


async def refused_everywhere(urls: list[str], wait: float = 1.5) -> BaseException | None:
    """The error if every broker in ``urls`` refuses a TCP connection or has an unknown
    host name (checked at once, within ``wait`` s); ``None`` if any might answer.

    A refused connection is final, but the transport keeps retrying it until its connect
    timeout; this quick look lets the shell, ``p2p demo`` and the examples say so within two seconds.
    """
    import asyncio
    import contextlib
    import socket
    from urllib.parse import urlsplit

    async def probe(url: str) -> BaseException | None:
        parts = urlsplit(url)
        port = parts.port or BROKER_SCHEMES.get(parts.scheme, 1883)
        try:
            _reader, writer = await asyncio.wait_for(asyncio.open_connection(parts.hostname, port), wait)
        except (ConnectionRefusedError, socket.gaierror) as err:
            return err
        except (OSError, TimeoutError):
            return None  # unreachable for now, or slow: the transport decides
        writer.close()
        with contextlib.suppress(Exception):
            await writer.wait_closed()
        return None

    results = await asyncio.gather(*(probe(u) for u in urls))
    if results and all(r is not None for r in results):
        return results[0]
    return None


def refusal_text(err: BaseException) -> str:
    """A refusal from ``refused_everywhere`` in plain words (asyncio's own text names the
    socket call): "connection refused" or "unknown host name"."""
    return "connection refused" if isinstance(err, ConnectionRefusedError) else "unknown host name"
