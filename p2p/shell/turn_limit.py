"""The turn limit of a slow round as people type and read it: ``turn=1d``, ``turn=30m``.

``/invite bob connect4 turn=1d`` opens a round where every turn may take a day
(``Peer.invite(..., turn_limit=86400)``, docs/protocol.md §6.7); the invitation shows
the limit.  Pure helpers: parse what was typed, say a limit in the user's language.
"""

from __future__ import annotations

import re

from p2p.protocol.round import MAX_TURN_S, MIN_TURN_S
from p2p.shell.i18n import Translator

_UNITS = {"s": 1, "m": 60, "min": 60, "h": 3600, "std": 3600, "d": 86_400, "t": 86_400}
_FORM = re.compile(r"(\d{1,7})\s*(s|min|m|h|std|d|t)?\Z")


def parse_turn_limit(text: object) -> int | None:
    """Seconds for ``30m``, ``2h``, ``1d`` (``90s``; a bare number means minutes; German
    ``std``/``t`` too), or ``None`` if the text is no limit in 1 min .. 30 days."""
    raw = str(text).strip().lower()
    match = _FORM.match(raw)
    if match is None:
        return None
    seconds = int(match.group(1)) * _UNITS[match.group(2) or "m"]
    return seconds if MIN_TURN_S <= seconds <= MAX_TURN_S else None


def say_turn_limit(t: Translator, seconds: int) -> str:
    """``1 day``, ``2 hours``, ``30 min`` (the largest unit that divides it), localized."""
    for size, key in ((86_400, "turn.days"), (3600, "turn.hours"), (60, "turn.minutes")):
        if seconds % size == 0:
            return t.t(key, n=seconds // size)
    return t.t("turn.seconds", n=seconds)


def say_time_left(t: Translator, seconds: int, slow: bool = True) -> str:
    """How long a turn has left: in a slow round ``2 days``, ``23 hours``, ``5 min``
    (to the nearest unit -- rounded down, a 2-hour turn said "1 hour" a second after it
    began -- and at least 1 min while any is left); in a live one ``14:59``."""
    seconds = max(0, seconds)
    if not slow:
        return f"{seconds // 60}:{seconds % 60:02d}"
    if seconds >= 2 * 86_400 - 43_200:
        return t.t("turn.days", n=(seconds + 43_200) // 86_400)
    if seconds >= 3600 - 1800:
        return t.t("turn.hours", n=(seconds + 1800) // 3600)
    return t.t("turn.minutes", n=max(1, (seconds + 30) // 60) if seconds else 0)
