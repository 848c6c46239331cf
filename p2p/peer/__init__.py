"""The public async API of ``p2p``: one ``Peer`` per identity on one broker.

Scripted bots, the tests, the demo and the shell all use this module; it is the driver
of the pure state machines in ``p2p.protocol`` (it feeds them what arrives, runs their
timers with the real clock and carries out the effects they return) on top of the one
network connection of ``p2p.net.transport``.  A bot in a few lines::

    async with Peer(url, nick="bot") as peer:
        async for note in peer.events():
            if isinstance(note, InvitationReceived):
                await note.invitation.accept()
            elif isinstance(note, YourTurn):
                await note.round.play(choose_move(note.round.game, "normal"))

(``examples/bot.py`` is the complete version.)  The admin's peer plays the computer seats
of its rounds; every other member recomputes each computer move and refuses a different
one.  Everything a user can get wrong (an illegal move, not your turn, an unknown peer)
raises ``ActionError`` with a one-line reason and changes nothing.  Everything a stranger
sends is checked by the protocol layer; what fails is dropped with a log line and
reported as a ``Rejected`` notification, never as an exception.

The package, one job a module (docs/architecture.md): ``core`` (``Peer``: identity,
notifications, lifecycle, the timer loop) composes ``edge`` (``Edge``: broker connection,
inbound lanes, sealing, dispatch), ``lobby_link`` (``LobbyLink``: the lobby machine and its
notifications) and ``round_link`` (one ``RoundLink`` per held round: machine, keys, log,
timers, publishing); ``opening`` (invite, join, accept, resume: how a link is created),
``handles`` (``Round``, ``Invitation``), ``notifications``, ``checks`` (pure helpers),
``files`` (round key files) and ``config`` (timing knobs, the clock; tests patch them
there)."""

from __future__ import annotations

import sys
from types import ModuleType
from typing import TYPE_CHECKING

from p2p.peer import config as _config
from p2p.peer.checks import _inbox_problem as _inbox_problem
from p2p.peer.checks import _unjoinable as _unjoinable
from p2p.peer.config import now_ms as now_ms
from p2p.peer.core import Peer
from p2p.peer.core import PeerStats as PeerStats
from p2p.peer.files import MAX_LOG_BYTES as MAX_LOG_BYTES
from p2p.peer.files import read_round_key as read_round_key
from p2p.peer.files import write_round_key as write_round_key
from p2p.peer.handles import Invitation, Round
from p2p.peer.notifications import (
    ChatMessage,
    ConnectionChanged,
    Equivocated,
    InvitationReceived,
    MovedWhileAway,
    Notification,
    PresenceChanged,
    Rejected,
    Resynced,
    RoundNotice,
    RoundOver,
    RoundUpdate,
    YourTurn,
)
from p2p.peer.notifications import Notifications as Notifications
from p2p.protocol.lobby import PeerInfo
from p2p.protocol.round_machine import ActionError

__all__ = [
    "ActionError",
    "ChatMessage",
    "ConnectionChanged",
    "Equivocated",
    "Invitation",
    "InvitationReceived",
    "MovedWhileAway",
    "Notification",
    "Peer",
    "PeerInfo",
    "PresenceChanged",
    "Rejected",
    "Resynced",
    "Round",
    "RoundNotice",
    "RoundOver",
    "RoundUpdate",
    "YourTurn",
]

# -- settings: read and set through this package, kept in ``p2p.peer.config`` ---------------

_SETTINGS = ("GENESIS_REPAIR_S", "MAX_MEMBER_NICKS", "OFFLOAD_COMPUTER_MOVES", "RESYNC_AFTER_S", "TICK_S")
"""Knobs of ``p2p.peer.config`` that this package re-exports.  They are not copies:
``p2p.peer.OFFLOAD_COMPUTER_MOVES = False`` sets ``p2p.peer.config.OFFLOAD_COMPUTER_MOVES``,
which is what the peer reads, and reading the name here reads it there."""

if TYPE_CHECKING:
    from p2p.peer.config import GENESIS_REPAIR_S as GENESIS_REPAIR_S
    from p2p.peer.config import MAX_MEMBER_NICKS as MAX_MEMBER_NICKS
    from p2p.peer.config import OFFLOAD_COMPUTER_MOVES as OFFLOAD_COMPUTER_MOVES
    from p2p.peer.config import RESYNC_AFTER_S as RESYNC_AFTER_S
    from p2p.peer.config import TICK_S as TICK_S


class _Package(ModuleType):
    """This package's module type: its settings forward to ``p2p.peer.config``."""

    def __getattr__(self, name: str) -> object:
        if name in _SETTINGS:
            return getattr(_config, name)
        raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")

    def __setattr__(self, name: str, value: object) -> None:
        if name in _SETTINGS:
            setattr(_config, name, value)
        else:
            super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
