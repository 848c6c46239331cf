"""``p2p shell`` (also a bare ``p2p``): the full-screen chat-and-play shell.

Options override the saved settings for this run; ``--nick`` and ``--lang`` are also
saved.  Errors and tracebacks go to ``shell.log`` in the config directory, never to the
screen.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--broker", metavar="URL", action="append",
        help="MQTT broker, e.g. mqtt://host:1883; give it more than once to use several brokers at once "
        "(default: saved, or a few public brokers together)",
    )
    parser.add_argument("--nick", metavar="NAME", help="your nickname (saved)")
    parser.add_argument("--lang", choices=("de", "en"), help="language (default: from the locale; saved)")
    parser.add_argument(
        "--namespace", metavar="NAME",
        help="the lobby to meet in: 1-32 of a-z, 0-9 and '-' (default: saved, else public; saved)",
    )
    parser.add_argument("--local", action="store_true", help="no broker: local play only")
    parser.add_argument("--no-color", action="store_true", help="no colours (letters only)")


def _setup_logging(path: os.PathLike[str] | str) -> None:
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)


def run(args: argparse.Namespace) -> int:
    from p2p.cli import UsageError
    from p2p.config import check_broker_urls, config_dir
    from p2p.shell import settings as settings_mod
    from p2p.shell.i18n import detect_language
    from p2p.shell.startup import make_shell, run_shell

    if args.broker is not None:
        try:
            args.broker = check_broker_urls(args.broker)
        except ValueError as err:
            raise UsageError(str(err)) from None
    if args.namespace is not None:
        from p2p.config import check_namespace

        try:
            check_namespace(args.namespace)
        except ValueError as err:
            raise UsageError(str(err)) from None
    if args.nick is not None and (not 1 <= len(args.nick) <= 20 or " " in args.nick):
        raise UsageError("a nickname has 1-20 characters without spaces")
    if not sys.stdin.isatty() or not sys.stdout.isatty():
        raise UsageError("the shell needs a terminal (try 'p2p demo' for a non-interactive run)")
    directory = config_dir()
    _setup_logging(directory / "shell.log")
    from p2p.net import known

    known.attach(directory / "brokers.json")  # a broker needing 3.1.1 is tried so at once
    settings, corrupt = settings_mod.load(directory)
    lang = args.lang or settings.lang or detect_language()
    if args.lang:
        settings.lang = args.lang
    if args.nick:
        settings.nick = args.nick
    if args.namespace is not None:
        settings.namespace = "" if args.namespace == "public" else args.namespace
    # None: local play only; "" : the default public broker, resolved after the first screen
    # (importing the network stack costs start-up time).
    broker = None if args.local else (" ".join(args.broker or []) or settings.broker)
    color = not args.no_color and not os.environ.get("NO_COLOR")

    async def build_and_run() -> int:
        shell = make_shell(
            settings=settings, config_dir=directory, lang=lang, broker=broker,
            color=color, corrupt_settings=corrupt,
        )
        return await run_shell(shell, broker)

    return asyncio.run(build_and_run())
