"""The shell's online side: connects a ``p2p.peer.Peer`` and mirrors its events into state.

Placeholder until ``p2p.peer`` exists: ``attach`` reports that online play is not
available in this build, and the shell stays in local mode.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from p2p.shell.app import ShellApp


def attach_hooks_only(shell: ShellApp) -> None:
    """Local mode: no hooks for /connect and /local beyond a clear message."""


def attach(broker: str) -> Callable[[ShellApp], Coroutine[Any, Any, None]]:
    """The startup coroutine that connects to ``broker`` in the background."""

    async def startup(shell: ShellApp) -> None:
        try:
            import p2p.peer  # noqa: F401
        except ImportError:
            shell.controller.say("net.unavailable", "warn")
            shell.controller.refresh()
            return

    return startup
