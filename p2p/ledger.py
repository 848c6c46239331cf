"""Round numbers and scores of a group of friends, from what every member signed.

A shell that counted rounds and wins as it saw them showed "Round 1 · anna 0 · bob 0"
after a restart while the others showed "Round 3 · bob 1"; a forfeit that did not stand
stayed counted.  Here both come from the round logs (``round-<id>.log``, written by the
peer for every round we are in) and the running round's chain:

* a *group* is the set of human members' keys of a round (computers do not count);
* the rounds of a group are those that reached play, ordered by their genesis (its
  signed timestamp, then its id): the shown round's number is its place in that order;
* a member's score is the number of finished rounds of the group up to the shown one
  that it won alone (shared wins and draws give nobody a point).

Every member holds the same signed chains, so every screen computes the same numbers;
when a result is corrected (a forfeit replaced by the late move), the chain changes and
so does the score.  Logs are replayed (and verified) once per size and mtime.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger("p2p.ledger")
MAX_LOGS = 2_000
"""At most this many round logs are read (the newest); older ones no longer count."""


@dataclass(frozen=True)
class RoundSummary:
    """What a round contributes to its group's standing."""

    round_id: str
    ts: int
    members: frozenset[bytes]
    started: bool
    over: bool
    winner: bytes | None
    """The one human key that won the round alone, else ``None``."""


def summarize(state: Any) -> RoundSummary:
    """The summary of a round from its chain state (``p2p.protocol.round.RoundState``)."""
    members = frozenset(s.pk for s in state.seats if s.pk is not None)
    over = state.phase.value == "over"
    winners: tuple[int, ...] = tuple(state.winners()) if over else ()
    winner = None
    if len(winners) == 1:
        winner = state.seats[winners[0]].pk
    return RoundSummary(state.round_id, int(state.genesis.ts), members, state.game is not None, over, winner)


class Ledger:
    """The summaries of the rounds in one log directory, cached per file."""

    def __init__(self, log_dir: Path | None) -> None:
        self.log_dir = log_dir
        self._cache: dict[Path, tuple[tuple[int, int], RoundSummary | None]] = {}

    def _read(self, path: Path) -> RoundSummary | None:
        from p2p.peer import MAX_LOG_BYTES
        from p2p.protocol.replay import LogError, replay_log

        try:
            stat = path.stat()
        except OSError:
            return None
        key = (stat.st_size, stat.st_mtime_ns)
        cached = self._cache.get(path)
        if cached is not None and cached[0] == key:
            return cached[1]
        summary = None
        try:
            if path.is_file() and stat.st_size <= MAX_LOG_BYTES:
                summary = summarize(replay_log(path.read_bytes().split(b"\n")).state)
        except (LogError, OSError, ValueError) as err:
            log.info("ledger: skipping %s: %s", path.name, err)
        self._cache[path] = (key, summary)
        return summary

    def rounds(self) -> list[RoundSummary]:
        """Every readable round in the directory."""
        if self.log_dir is None or not Path(self.log_dir).is_dir():
            return []
        paths = sorted(Path(self.log_dir).glob("round-*.log"))[-MAX_LOGS:]
        return [s for s in (self._read(p) for p in paths) if s is not None]

    def standing(self, current: RoundSummary) -> tuple[int, dict[bytes, int]]:
        """The round number of ``current`` in its group and each member's wins so far
        (``current``, the live chain, replaces what its log on disk says)."""
        group = [s for s in self.rounds() if s.members == current.members and s.round_id != current.round_id]
        group.append(current)
        played = sorted((s for s in group if s.started or s is current), key=lambda s: (s.ts, s.round_id))
        number = next(i for i, s in enumerate(played, start=1) if s is current)
        wins: dict[bytes, int] = {pk: 0 for pk in current.members}
        for summary in played[:number]:
            if summary.over and summary.winner is not None and summary.winner in wins:
                wins[summary.winner] += 1
        return number, wins
