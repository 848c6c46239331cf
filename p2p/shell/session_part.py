"""What each part of an ``OnlineSession`` holds: the session, seen through the narrow host
its part declares, and the four things every part uses from it (``p2p.shell.online``: the
parts are commands, notes, files and rounds).

Each part's module states what it reads and changes of the session as a ``Protocol``
(``CommandsHost``, ``NotesHost``, ``FilesHost``, ``RoundsHost``), so no part imports the
session and the session imports its parts one way only."""

from __future__ import annotations

from typing import Any, Generic, Protocol, TypeVar


class PartHost(Protocol):
    """What every part uses of the session: the peer, the controller, the translator and
    the screen state."""

    @property
    def peer(self) -> Any: ...

    @property
    def ctl(self) -> Any: ...

    @property
    def t(self) -> Any: ...

    @property
    def state(self) -> Any: ...


H = TypeVar("H", bound=PartHost)


class SessionPart(Generic[H]):
    """One job of the online session; reads and updates the shared state through ``s``."""

    def __init__(self, session: H) -> None:
        self.s: H = session
        """The session: the shown round, its score, the names seen (shared by the parts)."""
        self.peer: Any = session.peer
        self.ctl: Any = session.ctl
        self.t: Any = session.t
        self.state: Any = session.state
