"""``p2p web``: the browser face. Runs the peer and serves a local page, then opens it.

The page drives your signing key, so it is bound to 127.0.0.1 and every request must
carry a secret made for this run (in the link this command opens); ``--lan`` binds the
LAN address instead and prints a one-time link and a QR code for a phone on the same
network (docs/web.md says what that exposes).  Errors go to ``web.log`` in the config
directory, never to the page or the terminal as a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from p2p.web.settings import WebSettings


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--broker", metavar="URL", action="append",
                        help="MQTT broker (repeatable; default: saved, or the public brokers)")
    parser.add_argument("--nick", metavar="NAME", help="your nickname (saved)")
    parser.add_argument("--lang", choices=("de", "en"), help="language (saved)")
    parser.add_argument("--namespace", metavar="NAME", help="the lobby to meet in (saved)")
    parser.add_argument("--local", action="store_true", help="no broker: play on this device only")
    parser.add_argument("--port", type=int, default=0, help="port to serve on (default: a free one)")
    parser.add_argument("--lan", action="store_true",
                        help="serve on the LAN address for a phone on the same network (one-time link)")
    parser.add_argument("--no-open", action="store_true", help="do not open a browser; print the link")


def lan_address() -> str:
    """This machine's address on the network its default route leads to (nothing is sent)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("10.254.254.254", 1))
            return str(probe.getsockname()[0])
        except OSError:
            return "127.0.0.1"


def has_display() -> bool:
    """A graphical browser can open here: on Linux only with a display (without one,
    ``webbrowser`` may start a text browser that takes over this terminal)."""
    if not sys.platform.startswith("linux"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def _setup_logging(path: os.PathLike[str] | str) -> None:
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)


LAN_NOTE = """\
--lan: this page is now reachable from your network at {url_base}.
It drives your p2p key (moves, chat, invitations in your name). Anyone who gets the link
below can use it ONCE to get in; after that only the browser that used it can.
Traffic between that phone and this computer is not encrypted (plain HTTP on your LAN):
use it only on a network you trust. Stop with Ctrl+C."""


def run(args: argparse.Namespace) -> int:
    from p2p.cli import UsageError
    from p2p.config import check_broker_urls, check_namespace, config_dir

    try:
        import aiohttp  # noqa: F401
    except ImportError:
        raise UsageError("the browser face needs aiohttp (pip install aiohttp)") from None
    from p2p.web.settings import load_settings, save_settings

    if args.broker is not None:
        try:
            args.broker = check_broker_urls(args.broker)
        except ValueError as err:
            raise UsageError(str(err)) from None
    if args.namespace is not None:
        try:
            check_namespace(args.namespace)
        except ValueError as err:
            raise UsageError(str(err)) from None
    if args.nick is not None and (not 1 <= len(args.nick) <= 20 or " " in args.nick):
        raise UsageError("a nickname has 1-20 characters without spaces")
    if not 0 <= args.port <= 65535:
        raise UsageError("a port is 0-65535")
    directory = config_dir()
    _setup_logging(directory / "web.log")
    settings = load_settings(directory)
    if args.lang:
        settings.lang = args.lang
    if not settings.lang:
        settings.lang = "de" if os.environ.get("LANG", "").lower().startswith("de") else "en"
    if args.nick:
        settings.nick = args.nick
    if not settings.nick:
        settings.nick = (os.environ.get("USER") or "player").replace(" ", "")[:20] or "player"
    if args.namespace is not None:
        settings.namespace = "" if args.namespace == "public" else args.namespace
    with contextlib.suppress(OSError):
        save_settings(settings, directory)
    broker = None if args.local else (" ".join(args.broker or []) or settings.broker)
    try:
        return asyncio.run(_serve(args, settings, directory, broker))
    except OSError as err:
        raise UsageError(f"cannot serve: {err.strerror or err}") from None


async def _serve(args: argparse.Namespace, settings: WebSettings, directory: Path, broker: str | None) -> int:
    import webbrowser

    from p2p.web.guard import Guard, new_secret
    from p2p.web.server import WebServer
    from p2p.web.session import WebSession

    host = lan_address() if args.lan else "127.0.0.1"
    guard = Guard(new_secret(), 0, lan_host=host if args.lan else None)
    session = WebSession(settings=settings, config_dir=directory, broker=broker)
    server = WebServer(session, guard, host)
    port = await server.start(args.port)
    if args.lan:
        one_time = new_secret()
        guard.one_time.add(one_time)
        url = server.url(host, one_time)
        print(LAN_NOTE.format(url_base=f"http://{host}:{port}"))
        print(f"One-time link: {url}")
        try:
            import segno

            segno.make(url, error="m").terminal(compact=True)
        except ImportError:
            print("(no QR code: pip install segno)")
    else:
        url = server.url("127.0.0.1")
        print(f"p2p web: {url}", flush=True)
        print("This link lets a browser drive your key: do not share it. Stop with Ctrl+C.", flush=True)
    sys.stdout.flush()
    if broker is not None:
        session.spawn(session.connect(broker))
    if not args.no_open and has_display():
        with contextlib.suppress(Exception):
            await asyncio.to_thread(webbrowser.open, url)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        await server.close()
        await session.close()
    return 0
