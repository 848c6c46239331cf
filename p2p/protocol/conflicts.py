"""Two signed events for one chain position: which one the round keeps (pure rules).

Every position has one owner (``RoundState.owner``), so honest members never race for a
position, with two exceptions this module decides:

* **a forfeit and the forfeited seat's own event** (a move or a seal): ``judge`` is the
  one table of docs/protocol.md §8 (rules v4, unchanged in v5), a pure function of
  signed events that the live machine (``p2p.protocol.round_conflicts``) and ``p2p replay``
  (``p2p.protocol.replay``) both call.  In order: a rival *answered* by the next seat
  keeps the position; a forfeit *held* by a member that is neither the forfeiter nor the
  forfeited seat (``holding_proof``: two of its signs on the forfeit's branch at least
  ``HOLD_MS`` apart by its own clock) keeps it unless another member holds the rival;
  else R1 on the signed timestamps (``rival_wins``).  Nobody witnesses for itself: the
  forfeiter's own signs never make its forfeit final for anyone else, only for itself
  (``self_held``, R3: it then shows the position as ``disputed``).
* **two events of one author at one position** (same ``seq``, same ``prev``): equivocation.
  The two signed events are the proof; every member that holds both ends the round by a
  fixed rule (``RoundState.end_for_equivocation``): the equivocator is out and never wins.

Bounds every member applies before it replaces anything (``RoundMachine``): at most
``MAX_REWIND`` chain events are replaced.  A chain event dated more than
``MAX_AHEAD_MS`` ahead of the member's clock waits until the clock gets there, so a
forfeit cannot claim lateness that has not happened yet.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from p2p.protocol.events import Event
from p2p.protocol.round import TurnTimeouts

RULES_VERSION = 5
"""The rule set of the current protocol version: ``p2p replay`` names it ("rules v5").
Rules v5 are the conflict table of rules v4 (docs/protocol.md §8, the one table,
unchanged) with the draw started by the invitation (§7: the commitments travel in the
genesis, the accepts and the joins, the ``start`` closes them; ``p2p.protocol.round``,
``EARLY_COMMIT_VERSION``); a version-4 log keeps its commit round and is judged "rules v4".
A version-3 log is judged by this table too (``TABLE_SINCE``): v4 amended v3's rows T2,
T5, T7 and the order of proofs, which changes verdicts but refuses no log v3 accepted
(tests/test_replay_corpus.py names each change), so replay says "rules v4 (a v3 log)";
a version-2 log is judged by the rules of version 2 (``replay._settle``)."""
TABLE_AMENDED = 4
"""The version whose amendments of the table (rows T2, T5, T7) a v3 log is judged by."""
TABLE_SINCE = 3
"""The first protocol version whose logs the conflict table judges."""
MAX_REWIND = 8
"""A conflict replaces at most this many chain events (checked before anything is done)."""
HOLD_MS = 30_000
"""A holding proof: two events of one member on a branch at least this far apart by that
member's own signed timestamps (its own clock: no offset between members matters)."""
SETTLE_MS = HOLD_MS
RACE_MS = SETTLE_MS
"""A forfeit may replace the seat's own event at the head only this long after we applied
it (our clock), unless the table decides otherwise (a move late by its signature)."""
MAX_AHEAD_MS = 10_000
"""A chain event dated further than this ahead of our clock waits for the clock."""
HELD_FINAL_MS = HOLD_MS + MAX_AHEAD_MS
"""Rules v2's "another member holds the forfeit as final" delay (40 s after the forfeit's
date).  Rules v3, v4 and v5 do not use it: ``judge(..., rules=2)`` does, so the simulator
(``python -m p2p.sim --rules 2``) can show the hole of issue 23 on the old table."""
MAX_CLOCK_WAITS = 256
"""Chain events waiting for our clock (dated ahead, or a forfeit too soon); oldest dropped."""
MAX_PENDING = 256
"""Events waiting for an earlier event we have not seen; the oldest are dropped beyond."""
MAX_VOUCHED = 64
"""Ids of our own chain events another member showed it holds (its sync request named
it as its head, or its ack answers it); oldest forgotten first."""
MAX_SEEN = 4096
"""Event ids a round machine remembers as processed (oldest forgotten first)."""
MAX_SIGNS = 8
"""Per member, the newest sync requests kept as signs of the head it holds (the earliest
stays; of the signs naming one head only the first and the last)."""


def rival_wins(
    rival: Event,
    forfeit: Event,
    prev: Event,
    rival_ends_game: bool,
    timeouts: TurnTimeouts,
    turn_start: int | None = None,
) -> bool:
    """R1, on signed timestamps only: True if the forfeited seat's own event ``rival``
    keeps the position against ``forfeit``.

    ``prev`` is the chain event before the position; ``turn_start`` the time the turn
    counts from (``prev.ts`` unless a rival beat a forfeit at ``prev``'s position, R5).
    A move signed before the forfeit that ends the game, or that was signed within the
    limit the forfeit claims, keeps the position; one signed at or after the forfeit
    never undoes it.

    >>> from p2p.protocol.events import make
    >>> from p2p.protocol.identity import Identity
    >>> me, rnd = Identity.from_seed(bytes(32)), "ab" * 16
    >>> prev = make(me, "move", 0, {"ply": 0, "move": "1", "state": "00" * 32}, round=rnd,
    ...             seq=5, prev="cd" * 32)
    >>> def move_at(ts: int) -> Event:
    ...     body = {"ply": 1, "move": "2", "state": "00" * 32}
    ...     return make(me, "move", ts, body, round=rnd, seq=6, prev=prev.id)
    >>> limits = TurnTimeouts(silent_ms=100, offline_ms=50)
    >>> f = make(me, "forfeit", 100, {"seat": 1, "reason": "silent"}, round=rnd, seq=6,
    ...          prev=prev.id)
    >>> rival_wins(move_at(99), f, prev, False, limits)
    True
    >>> rival_wins(move_at(100), f, prev, True, limits)  # signed at the forfeit: too late
    False
    >>> rival_wins(move_at(99), f, prev, False, limits, turn_start=50)  # R5
    True
    """
    start = prev.ts if turn_start is None else max(prev.ts, turn_start)
    limit = timeouts.limit(forfeit.body["reason"])
    if forfeit.ts - start < limit:
        return True  # R5/T6: the forfeit claims a lateness the turn's start rules out
    if rival.ts >= forfeit.ts:
        return False
    if rival_ends_game:
        return True
    return rival.ts - start < limit


def on_branch(sign: Event, ids: Collection[str]) -> bool:
    """``sign`` names a head on the branch ``ids`` (a chain event built on it, an ack of
    it, a sync request naming it as head)."""
    return sign.prev is not None and sign.prev in ids


def holding_proof(
    signs: Iterable[Event], ids: Collection[str], excluded: Collection[bytes]
) -> tuple[Event, Event] | None:
    """R2: two events of one member not in ``excluded`` that name heads on the branch
    ``ids``, signed at least ``HOLD_MS`` apart by that member's clock, or ``None``.

    That member held the branch ``HOLD_MS`` by its own clock; clock offsets between
    members do not matter (both times are in its frame).  The earliest and the latest
    of each member are compared, so the answer does not depend on the order of ``signs``.
    """
    first: dict[bytes, Event] = {}
    last: dict[bytes, Event] = {}
    for sign in signs:
        if sign.pk in excluded or not on_branch(sign, ids):
            continue
        old = first.get(sign.pk)
        if old is None or (sign.ts, sign.id) < (old.ts, old.id):
            first[sign.pk] = sign
        new = last.get(sign.pk)
        if new is None or (sign.ts, sign.id) > (new.ts, new.id):
            last[sign.pk] = sign
    for pk in sorted(first):
        if last[pk].ts - first[pk].ts >= HOLD_MS:
            return first[pk], last[pk]
    return None


def holder(
    signs: Iterable[Event],
    ids: Collection[str],
    excluded: Collection[bytes],
    against: Collection[str] = (),
) -> Event | None:
    """One event by a member not in ``excluded`` naming a head on the branch ``ids``
    (that member holds the branch), the earliest by (``ts``, id), or ``None``.

    ``against``: the other claim's branch; a member whose latest sign on it is later,
    by its own clock, than its latest on ``ids`` left ``ids`` for it (it yielded) and
    holds ``ids`` no more.
    """
    signs = list(signs)
    latest_against: dict[bytes, int] = {}
    for s in signs:
        if against and on_branch(s, against):
            latest_against[s.pk] = max(latest_against.get(s.pk, s.ts), s.ts)
    latest: dict[bytes, int] = {}
    for s in signs:
        if s.pk not in excluded and on_branch(s, ids):
            latest[s.pk] = max(latest.get(s.pk, s.ts), s.ts)
    found = [
        s for s in signs
        if s.pk in latest and on_branch(s, ids)
        and latest[s.pk] >= latest_against.get(s.pk, latest[s.pk])
    ]
    return min(found, key=lambda s: (s.ts, s.id)) if found else None


@dataclass(frozen=True)
class Judgement:
    """Which of a forfeit and the forfeited seat's own event keeps a position (§8)."""

    keep: Event
    """The event that keeps the position: the forfeit or the rival."""
    rule: str
    """Which row of the table decided: ``answered``, ``held``, ``timely``, ``late``."""
    proof: tuple[Event, ...] = ()
    """The signed events that decided beyond the two claims (a holding proof, or the
    event of a member that holds the rival)."""

    @property
    def forfeit_wins(self) -> bool:
        return self.keep.kind == "forfeit"


def judge(
    rival: Event,
    forfeit: Event,
    prev: Event,
    rival_ends_game: bool,
    timeouts: TurnTimeouts,
    signs: Iterable[Event],
    forfeit_branch: Collection[str],
    rival_branch: Collection[str],
    next_owner: bytes | None = None,
    turn_start: int | None = None,
    rules: int = RULES_VERSION,
) -> Judgement:
    """The conflict table (docs/protocol.md §8), a pure function of signed events.

    ``signs``: every signed event the judge holds that names a head (chain events,
    acks, sync requests); ``forfeit_branch`` / ``rival_branch``: ids of each claim and
    of what is known to be built on it.  In order:

    1. *answered*: a chain event by ``next_owner`` (the owner of the position after
       the rival, if not the rival's own seat) is built on the rival: the rival keeps
       the position (a forfeit replaces only the pending turn);
    2. *held*: a member other than the forfeiter and the forfeited seat holds the
       forfeit (``holding_proof``) and no member but the forfeited seat holds the rival:
       the forfeit keeps it (nobody witnesses for itself);
    3. *timely* / *late*: else R1 (``rival_wins``) on the signed timestamps.

    ``rules=2`` (the simulator's look at the old table only, never a peer's): row 2 as
    rules v2 had it, any member but the forfeited seat -- the forfeiter too -- holding
    the forfeit by a sign dated ``HELD_FINAL_MS`` after it makes it final.
    """
    signs = list(signs)
    seat = rival.pk
    answer = next(
        (
            s
            for s in signs
            if s.seq is not None
            and s.pk == next_owner != seat
            and on_branch(s, rival_branch)
        ),
        None,
    )
    if answer is not None:
        return Judgement(rival, "answered", (answer,))
    if rules == 2:
        held = held_v2(signs, forfeit, forfeit_branch, seat)
    else:
        held = holding_proof(signs, forfeit_branch, {forfeit.pk, seat})
    holds_rival = holder(signs, rival_branch, {seat}, forfeit_branch)
    if held is not None and holds_rival is None:
        return Judgement(forfeit, "held", held)
    if rival_wins(rival, forfeit, prev, rival_ends_game, timeouts, turn_start):
        proof = (holds_rival,) if holds_rival is not None and held is not None else ()
        return Judgement(rival, "timely", proof)
    return Judgement(forfeit, "late")


def held_v2(
    signs: Iterable[Event], forfeit: Event, ids: Collection[str], seat: bytes
) -> tuple[Event, Event] | None:
    """Rules v2's "held as final" (the hole of issue 23, for ``judge(rules=2)``): a sign
    on the forfeit's branch by any member but the forfeited seat, the forfeiter's own
    included, dated ``HELD_FINAL_MS`` or more after the forfeit."""
    found = [
        s for s in signs
        if s.pk != seat and on_branch(s, ids) and s.ts - forfeit.ts >= HELD_FINAL_MS
    ]
    if not found:
        return None
    return forfeit, min(found, key=lambda s: (s.ts, s.id))


def branch_ids(root: Event, signs: Iterable[Event]) -> set[str]:
    """Ids of ``root`` and of the chain events among ``signs`` built on it."""
    chained = [s for s in signs if s.seq is not None]
    ids = {root.id}
    grew = True
    while grew:
        grew = False
        for sign in chained:
            if sign.prev in ids and sign.id not in ids:
                ids.add(sign.id)
                grew = True
    return ids


def disputed(
    keep: Event,
    forfeit: Event,
    judgement: Judgement,
    signs: Iterable[Event],
    rival_branch: Collection[str],
    rival: Event | None = None,
    forfeit_branch: Collection[str] = (),
) -> bool:
    """A position is *disputed* for a member that keeps ``keep`` there when that is not
    what the table says (R3's per-member finality, T4, or our own observation, T5), or
    when the table keeps one claim while the signer of the other has shown no sign that
    it holds the claim kept: a timely rival while its forfeiter has no sign on the
    rival's branch, or a forfeit of a late rival while the forfeited seat has no sign on
    the forfeit's branch (it still claims its move, as a member that kept the move by
    T5 does).  Two members then claim two ends, and the verdict names both
    (``p2p replay`` says the same).

    >>> from p2p.protocol.events import make
    >>> from p2p.protocol.identity import Identity
    >>> a, loser, rnd = Identity.from_seed(bytes(32)), Identity.from_seed(b"l" * 32), "ab" * 16
    >>> f = make(a, "forfeit", 100, {"seat": 1, "reason": "silent"}, round=rnd, seq=6,
    ...          prev="cd" * 32)
    >>> m = make(loser, "move", 120, {"ply": 1, "move": "2", "state": "00" * 32},
    ...          round=rnd, seq=6, prev="cd" * 32)
    >>> late = Judgement(f, "late")
    >>> disputed(f, f, late, [], {m.id}, m, {f.id})  # the seat never yielded
    True
    >>> yielded = make(loser, "sync_request", 130, {"from_seq": 7}, round=rnd, prev=f.id)
    >>> disputed(f, f, late, [yielded], {m.id}, m, {f.id})
    False
    """
    if keep.id != judgement.keep.id:
        return True
    if judgement.rule == "late":
        return rival is not None and all(
            s.pk != rival.pk for s in signs if on_branch(s, forfeit_branch))
    if judgement.rule != "timely":
        return False
    return holder(signs, rival_branch, ()) is None or all(
        s.pk != forfeit.pk for s in signs if on_branch(s, rival_branch)
    )


def self_held(
    signs: Iterable[Event], forfeit: Event, forfeit_branch: Collection[str]
) -> tuple[Event, Event] | None:
    """The forfeiter's own holding proof of its forfeit (R3, per member): it makes the
    forfeit final for the forfeiter itself only, which then shows the position as
    disputed instead of reviving it (never evidence for anyone else)."""
    mine = [s for s in signs if s.pk == forfeit.pk]
    return holding_proof(mine, forfeit_branch, ())


class SeenIds:
    """Ids processed once already: bounded (``MAX_SEEN``), the oldest forgotten first."""

    def __init__(self, ids: Iterable[str] = (), limit: int = MAX_SEEN) -> None:
        self._ids: OrderedDict[str, None] = OrderedDict()
        self.limit = limit
        self.update(ids)

    def add(self, eid: str) -> None:
        if eid in self._ids:
            return
        self._ids[eid] = None
        if len(self._ids) > self.limit:
            self._ids.popitem(last=False)

    def update(self, ids: Iterable[str]) -> None:
        for eid in ids:
            self.add(eid)

    def discard(self, eid: str) -> None:
        """Forget ``eid`` (e.g. an event that was orphaned and is adopted again)."""
        self._ids.pop(eid, None)

    def __contains__(self, eid: object) -> bool:
        return eid in self._ids

    def __len__(self) -> int:
        return len(self._ids)
