"""What each part of an ``OnlineSession`` holds: the session and the four things every
part uses from it (``p2p.shell.online``: the parts are commands, notes, files and rounds)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from p2p.shell.online import OnlineSession


class SessionPart:
    """One job of the online session; reads and updates the shared state through ``s``."""

    def __init__(self, session: OnlineSession) -> None:
        self.s = session
        """The session: the shown round, its score, the names seen (shared by the parts)."""
        self.peer: Any = session.peer
        self.ctl: Any = session.ctl
        self.t: Any = session.t
        self.state: Any = session.state
