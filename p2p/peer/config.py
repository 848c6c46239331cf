"""Timing knobs of ``p2p.peer`` and the one wall clock the machines see."""

from __future__ import annotations

import time

TICK_S = 0.25
"""How often the round machines' timers run."""
RESYNC_AFTER_S = 2.0
"""A round with events parked (an earlier one is missing) asks for a sync after this long."""
OFFLOAD_COMPUTER_MOVES = True
"""Run machine steps of rounds with computer seats in a worker thread (see ``RoundLink.step``
in ``p2p/peer/round_link.py``).  Set it here or as ``p2p.peer.OFFLOAD_COMPUTER_MOVES``
(the package forwards its settings to this module)."""
MAX_MEMBER_NICKS = 256
"""How many round members' nicknames a peer keeps for labels after they left the lobby."""
SETTLE_S = 5.0
"""After our own connection comes back, the round timers decide nothing for this long: the
resync we ask for at once comes first (docs/protocol.md, "Time and faults")."""


def offline_grace_ms(offline_ms: int) -> int:
    """How long a seat must have been offline in our view (its own Will or goodbye in our
    lobby, unrevoked) before we sign an ``offline`` forfeit of it: the chain's limit plus a
    third (4 min for the default 3 min), so a member's outage of up to the limit, plus
    time to reconnect and resync, never costs it the round.

    >>> offline_grace_ms(180_000)
    240000
    """
    return offline_ms + offline_ms // 3
GENESIS_REPAIR_S = 0.2
"""The admin of a private round re-publishes its retained genesis this long after it saw
it deleted or overwritten (at most once per this interval, however fast a stranger is)."""


def now_ms() -> int:
    """The wall clock in integer milliseconds: the only clock the machines ever see."""
    return time.time_ns() // 1_000_000

