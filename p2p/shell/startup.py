"""Putting the shell together: settings, first messages, the online connection.

``p2p shell`` builds the shell with ``make_shell`` and runs it with ``run_shell`` inside
``asyncio.run``; tests build their ``ShellApp`` through ``make_shell`` too.
"""

from __future__ import annotations

import secrets
from pathlib import Path

from p2p.shell.app import ShellApp, ShellOptions
from p2p.shell.settings import Settings


def default_nick(lang: str = "en") -> str:
    """A nickname for someone who gave none: ``guest-``/``gast-`` plus four hex digits."""
    from p2p.shell.i18n import Translator

    return Translator(lang).t("nick.default") + "-" + secrets.token_hex(2)


def make_shell(
    *,
    settings: Settings,
    config_dir: Path | None,
    lang: str,
    broker: str | None,
    color: bool = True,
    corrupt_settings: str | None = None,
) -> ShellApp:
    """A ready shell with its first lines written (not running yet)."""
    if not settings.nick:
        settings.nick = default_nick(lang)
    shell = ShellApp(
        ShellOptions(nick=settings.nick, broker=broker, lang=lang, color=color, config_dir=config_dir, settings=settings)
    )
    ctl = shell.controller
    if corrupt_settings:
        ctl.say("msg.settings_corrupt", "warn", path=corrupt_settings)
    ctl.say("msg.welcome")
    if broker is None:
        ctl.say("msg.local_mode")
    ctl.save_settings()
    return shell


async def run_shell(shell: ShellApp, broker: str | None) -> int:
    """Run a shell made by ``make_shell`` to the end, connecting to ``broker`` in the
    background (``None``: local play, ``/connect`` and ``/local`` connect on demand)."""
    startup = None
    if broker is not None:
        from p2p.shell.connect import attach

        startup = attach(broker)
    else:
        from p2p.shell.connect import attach_hooks_only

        attach_hooks_only(shell)
    return await shell.run(startup)
