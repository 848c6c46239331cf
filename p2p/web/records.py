"""The statistics the page shows (the shell's ``/stats``), as plain rows.

Two kinds: rounds at this device against the computer, counted by the session as they
end and saved in ``web.json`` (``WebSettings.stats``); and the finished online rounds per
group of people, counted from the signed round logs (``p2p.ledger`` summaries), so every
member's face counts the same rounds alike.

>>> local_rows({"connect4": {"stark": {"won": 1, "lost": 2, "drawn": 0}}})
[{'game': 'connect4', 'level': 'stark', 'won': 1, 'lost': 2, 'drawn': 0}]
>>> from p2p.ledger import RoundSummary
>>> me, bob, eve = b"m", b"b", b"e"
>>> logs = [RoundSummary("1", 1, frozenset({me, bob}), True, True, bob),
...         RoundSummary("2", 2, frozenset({me, bob}), True, True, None),
...         RoundSummary("3", 3, frozenset({me, bob}), True, False, None),
...         RoundSummary("4", 4, frozenset({me}), True, True, me),
...         RoundSummary("5", 5, frozenset({bob, eve}), True, True, eve)]
>>> for row in online_rows(logs, me, {bob: "bob"}.get):
...     print(row)
{'with': ['bob'], 'won': 0, 'lost': 1, 'drawn': 1, 'played': 2}
{'with': [], 'won': 1, 'lost': 0, 'drawn': 0, 'played': 1}
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

Row = dict[str, Any]


def local_rows(stats: dict[str, dict[str, dict[str, int]]]) -> list[Row]:
    """One row per game and computer level, sorted."""
    return [{"game": game, "level": level, **counts}
            for game, levels in sorted(stats.items())
            for level, counts in sorted(levels.items())]


def online_rows(summaries: Iterable[Any], me: bytes, nick_of: Callable[[bytes], str | None]) -> list[Row]:
    """Finished rounds we played, per group of the other people (``with``: their names,
    empty for computers only): won alone, lost (someone else won alone), drawn (a draw or
    a shared win); most played first."""
    groups: dict[frozenset[bytes], dict[str, int]] = {}
    for summary in summaries:
        if not summary.over or me not in summary.members:
            continue
        entry = groups.setdefault(summary.members - {me}, {"won": 0, "lost": 0, "drawn": 0})
        key = "drawn" if summary.winner is None else "won" if summary.winner == me else "lost"
        entry[key] += 1
    rows: list[Row] = [{"with": sorted(nick_of(pk) or "?" for pk in others), **counts, "played": sum(counts.values())}
            for others, counts in groups.items()]
    rows.sort(key=lambda row: (-row["played"], row["with"]))
    return rows
