"""The phases of a round (``p2p.protocol.round``)."""

from __future__ import annotations

import enum


class Phase(enum.Enum):
    FORMING = "forming"
    COMMIT = "commit"
    REVEAL = "reveal"
    PLAY = "play"
    OVER = "over"
    CANCELLED = "cancelled"


PRE_PLAY = (Phase.FORMING, Phase.COMMIT, Phase.REVEAL)
