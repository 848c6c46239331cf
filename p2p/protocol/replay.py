"""Verify and replay a saved round log, offline.

A log is a text file of events, one per line, each line the event's canonical wire bytes
exactly as published (what ``Applied`` effects carry).  Blank lines are skipped.  Chain
events may appear in any order and more than once; side events, chat and sync requests may
be mixed in (their signatures are checked, then they are ignored: whatever counts was sealed
into the chain).  Replaying checks every signature, the hash chain from the genesis, every
sealed event, the draw, every move against the engine and its stated state hash, and every
computer move against ``p2p.ai.choose_move``.

``replay_log(lines)`` returns a ``Replay``; anything wrong raises ``LogError`` naming the
first bad line or chain position.  A log that verifies gets a *verdict*
(``Replay.verdict``): ``agreed`` (the round ended and every human seat's closing ``ack``
of the final head and state hash is in the log), ``unacknowledged`` (ended, but some
member's ack is missing), ``disputed`` (ended, but a member signed an ack of another end,
or a contested position is disputed) or ``prefix`` (the log stops before the round ended).
An ack naming an earlier event of the chain is no end: only a sign (evidence, §8.1).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from p2p.protocol import events
from p2p.protocol.conflicts import TABLE_AMENDED, TABLE_SINCE
from p2p.protocol.events import Event, EventError
from p2p.protocol.round import (
    DEFAULT_TIMEOUTS,
    ChainError,
    Phase,
    RoundError,
    RoundState,
    TurnTimeouts,
    seats_text,
    verify_chain,
)

MAX_LOG_LINES = 100_000


class LogError(ValueError):
    """A log that does not verify; one line naming the first bad event."""


@dataclass
class Replay:
    """A verified round: its final state and the chain that led there."""

    state: RoundState
    chain: list[Event]
    ignored: int
    """Valid events in the log that are not part of the chain (side events, chat ...)."""
    acks: dict[int, Event] = field(default_factory=dict)
    """Closing acknowledgements of this log's final head and state hash, by seat."""
    disputes: dict[int, Event] = field(default_factory=dict)
    """Acks by members of another end of the round (a head in this chain but not the
    last, or another state hash), by seat."""
    ahead: int = 0
    """Acks of an event this log does not hold (the log stops before the end)."""
    proof: tuple[Event, Event] | None = None
    """Two signed events of one author for one position: the round ended by the
    equivocation rule there (``RoundState.end_for_equivocation``)."""
    conflicts: list[Conflict] = field(default_factory=list)
    """Positions where the log holds a forfeit and the forfeited seat's own event,
    judged by the table of docs/protocol.md §8 (``p2p.protocol.conflicts.judge``)."""
    signs: list[Event] = field(default_factory=list)
    """The log's sync requests (signs of the head their signers held, §8.1)."""

    def evidence(self) -> list[Event]:
        """The evidence lines beside the chain (the claim the chain does not keep at each
        conflict, and the sync requests): what ``RoundMachine.from_log`` takes up again."""
        kept = {e.id for e in self.chain}
        out = [e for c in self.conflicts for e in (c.forfeit, c.rival) if e.id not in kept]
        return out + list(self.signs)

    @property
    def rules(self) -> str:
        """The rule set the log was judged by (``rules v5``): a v4, v2 or v1 log by its
        own version's (a v4 log's draw has its commit round), a v3 log by the table as
        amended in v4 (``conflicts.TABLE_SINCE``), which says so."""
        v = self.state.genesis.v
        if v == TABLE_SINCE:
            return f"rules v{TABLE_AMENDED} (a v{v} log)"
        return f"rules v{v}"

    def contested(self) -> list[Conflict]:
        """The conflicts that leave the round disputed (two members claim two ends)."""
        return [c for c in self.conflicts if c.disputed]

    @property
    def ended(self) -> bool:
        return self.state.phase in (Phase.OVER, Phase.CANCELLED)

    def missing_acks(self) -> list[int]:
        """Human seats whose ack of the final head the log does not hold."""
        return [s for s in self.state.human_seats() if s not in self.acks]

    @property
    def verdict(self) -> str:
        """``agreed``, ``unacknowledged``, ``disputed`` or ``prefix`` (module docstring)."""
        if not self.ended:
            return "prefix"
        if self.disputes or self.contested():
            return "disputed"
        return "unacknowledged" if self.missing_acks() else "agreed"

    def verdict_text(self) -> str:
        """One line for people: what the log proves."""
        st = self.state
        verdict = self.verdict
        if self.proof is not None:
            ended = f"ended by equivocation ({st.end_reason}); "
        else:
            ended = ""
        if verdict == "prefix":
            more = (
                f"; {self.ahead} acknowledgement(s) name an end it does not hold"
                if self.ahead
                else ""
            )
            return (
                f"a valid prefix: the round has not ended in this log "
                f"({st.phase.value}, {st.ply} moves){more}"
            )
        if verdict == "disputed":
            claims = "; ".join(c.text() for c in self.contested())
            if self.disputes:
                claims = "; ".join(
                    x
                    for x in (
                        f"{seats_text(sorted(self.disputes))} signed another end of the round",
                        claims,
                    )
                    if x
                )
            return ended + f"complete, but disputed: {claims}"
        if verdict == "agreed":
            return ended + (
                f"complete and agreed: every member ({seats_text(sorted(self.acks))}) "
                "signed the final head and state hash"
            )
        signed = seats_text(sorted(self.acks)) if self.acks else "nobody"
        why = " (protocol v1 had no closing acknowledgement)" if st.genesis.v < 2 else ""
        return ended + (
            f"complete but not acknowledged by every member: signed by {signed}; "
            f"missing {seats_text(self.missing_acks())}{why}"
        )


@dataclass(frozen=True)
class Conflict:
    """A forfeit and the forfeited seat's own event at one position of a log."""

    seq: int
    forfeit: Event
    rival: Event
    kept: Event
    """The one this log's chain goes on from (or, at its head, the one listed first)."""
    judged: Event
    """The one the table keeps, weighing the signed events in the log."""
    rule: str
    disputed: bool
    forfeiter: int | None
    seat: int

    def text(self) -> str:
        """The two claims, in one clause."""
        kept = "the forfeit" if self.kept is self.forfeit else f"seat {self.seat}'s {self.rival.kind}"
        return (
            f"at position {self.seq} seat {self.forfeiter} forfeited seat {self.seat}, "
            f"who claims its own {self.rival.kind} there; this log "
            f"keeps {kept}"
        )


MAX_CONFLICTS = 8
"""Positions at which a log may hold a forfeit and the forfeited seat's own event."""


def parse_log(
    lines: Iterable[bytes],
    acks: list[Event] | None = None,
    rivals: dict[int, Event] | None = None,
    proofs: dict[int, tuple[Event, Event]] | None = None,
    signs: list[Event] | None = None,
) -> tuple[list[Event], int]:
    """The chain events of a log in chain order, and the number of other valid events.

    ``acks``: if given, the log's ``ack`` events are appended to it (not counted).
    ``rivals``: if given, a second event at a position where one of the two is a
    ``forfeit`` is put there (by position) instead of refusing the log; ``replay_log``
    decides which of the two the rules keep.  ``proofs``: if given, two events of one
    author with the same ``prev`` at one position (an equivocation proof, which a member
    that ended the round by it writes to its log) are put there by position.

    A chain event built on an event the log does not hold, on which nothing in the log
    builds (an event of a branch the chain left, e.g. a member's own move that a rewind
    took out, kept beside it), is no part of the chain: it is counted among the other
    events.  A chain with a line cut out of it is still refused ("position N of the
    chain is missing"): what follows the cut builds on the event after it.
    """
    by_seq: dict[int, Event] = {}
    round_id: str | None = None
    ignored = 0
    chained: list[tuple[int, Event]] = []
    for number, line in enumerate(lines, start=1):
        if number > MAX_LOG_LINES:
            raise LogError(f"more than {MAX_LOG_LINES} lines")
        line = line.rstrip(b"\r\n")
        if not line.strip():
            continue
        try:
            event = events.parse(line, legacy=True)  # old logs replay too
        except EventError as err:
            raise LogError(f"line {number}: {err}") from None
        if event.round is None:
            raise LogError(
                f"line {number}: a {event.kind} event does not belong in a round log"
            )
        if round_id is None:
            round_id = event.round
        elif event.round != round_id:
            raise LogError(
                f"line {number}: event of another round ({event.round[:12]})"
            )
        if event.seq is None:
            if event.kind == "ack" and acks is not None:
                acks.append(event)
            else:
                if event.kind == "sync_request" and signs is not None:
                    signs.append(event)  # a sign of the head its signer held (§8)
                ignored += 1
            continue
        chained.append((number, event))
    held = {event.id for _, event in chained}
    built_on = {event.prev for _, event in chained}
    for number, event in chained:
        assert event.seq is not None
        if event.seq and event.prev not in held and event.id not in built_on:
            ignored += 1  # a leaf of another branch (see above)
            continue
        there = by_seq.get(event.seq)
        if there is None:
            by_seq[event.seq] = event
        elif (  # one author, one prev: equivocation, also of two forfeits (mixed/3285)
            there.id != event.id
            and proofs is not None
            and there.pk == event.pk
            and there.prev == event.prev
            and (event.seq in proofs or len(proofs) < MAX_CONFLICTS)
        ):
            proofs.setdefault(event.seq, (there, event))
        elif (
            there.id != event.id
            and rivals is not None
            and "forfeit" in (there.kind, event.kind)
            and rivals.get(event.seq, event).id == event.id
            and (event.seq in rivals or len(rivals) < MAX_CONFLICTS)
        ):
            rivals[event.seq] = event
        elif there.id != event.id:
            raise LogError(
                f"line {number}: two different events at position {event.seq}"
                f" ({there.id[:12]} and {event.id[:12]}, by {there.pk.hex()[:8]} and {event.pk.hex()[:8]})"
            )
    if not by_seq:
        raise LogError("the log holds no round events")
    missing = [seq for seq in range(max(by_seq) + 1) if seq not in by_seq]
    if missing:
        raise LogError(f"position {missing[0]} of the chain is missing")
    return [by_seq[seq] for seq in range(len(by_seq))], ignored


def replay_log(
    lines: Iterable[bytes], timeouts: TurnTimeouts = DEFAULT_TIMEOUTS
) -> Replay:
    """Verify a whole log and return the final state; ``LogError`` on the first problem.

    ``timeouts``: the round's turn timeouts, a chain rule every member shares (the
    protocol's defaults unless the peers that made the log were given others, as tests
    are)."""
    acks: list[Event] = []
    rivals: dict[int, Event] = {}
    proofs: dict[int, tuple[Event, Event]] = {}
    signs: list[Event] = []
    chain, ignored = parse_log(lines, acks, rivals, proofs, signs)
    proof = None
    if proofs:  # the round ended at the first proven position (issue 16)
        seq = min(proofs)
        proof = proofs[seq]
        if len(chain) - 1 > seq:  # a member that ended by it holds nothing after it
            first, second = proof
            raise LogError(
                f"two different events at position {seq} ({first.id[:12]} and "
                f"{second.id[:12]}), and the log goes on after them"
            )
        chain = chain[:seq]
        rivals = {k: v for k, v in rivals.items() if k < seq}
    conflicts: list[Conflict] = []
    version = chain[0].v
    for seq in sorted(rivals):
        if version >= TABLE_SINCE:
            side = acks + signs + list(rivals.values())  # a rival, too, names its prev
            conflicts.append(_judge(chain, seq, rivals[seq], timeouts, side, conflicts))
        else:
            _settle(chain, seq, rivals[seq], timeouts)
    try:
        state = verify_chain(chain, timeouts)
    except ChainError as err:
        raise LogError(f"chain {err}") from None
    if proof is not None:
        _end_by_proof(state, proof)
    result = Replay(state, chain, ignored, proof=proof, conflicts=conflicts, signs=signs)
    _sort_acks(result, acks)
    return result


def _end_by_proof(state: RoundState, proof: tuple[Event, Event]) -> None:
    """End ``state`` by the equivocation rule, as every member holding ``proof`` did;
    ``LogError`` if the two events are no proof against the owner of that position."""
    first, second = proof
    seq = first.seq
    where = f"position {seq}"
    if first.prev != state.head.id or state.owner() is None:
        raise LogError(f"{where}: two different events, but no proof of equivocation")
    valid = 0
    for event in (first, second):
        trial = state.snapshot()
        try:
            trial.apply(event)
            valid += 1
        except RoundError:
            pass
    seat = state.seat_of(first.pk)
    if seat is None or valid == 0:
        raise LogError(f"{where}: two different events, but no proof of equivocation")
    state.end_for_equivocation(seat, seq)  # type: ignore[arg-type]


def _judge(
    chain: list[Event],
    seq: int,
    other: Event,
    timeouts: TurnTimeouts,
    side: list[Event],
    earlier: list[Conflict],
) -> Conflict:
    """A forfeit and the forfeited seat's own event at ``seq`` (rules v3 and v4): the table of
    docs/protocol.md §8 (``conflicts.judge``) on the signed events of the log.  The log's
    chain goes on from one of the two (``chain[seq]`` becomes that one); where the table
    keeps the other, or keeps a timely move its forfeiter never showed it holds, the
    position is *disputed* (what the member that wrote the log saw live, R3)."""
    from p2p.protocol.conflicts import disputed, judge

    pair = [chain[seq], other]
    forfeit = next(e for e in pair if e.kind == "forfeit")
    rival = pair[1] if forfeit is pair[0] else pair[0]
    where = f"position {seq}"
    try:
        base = verify_chain(chain[:seq], timeouts)
    except ChainError as err:
        raise LogError(f"chain {err}") from None
    head = base.head
    target = base.forfeit_target()
    if (
        rival.kind == "forfeit"
        or forfeit.prev != head.id
        or rival.prev != head.id
        or target is None
        or base.seats[target[0]].pk != rival.pk
        or forfeit.pk != target[1]
    ):
        raise LogError(
            f"{where}: two different events ({forfeit.id[:12]} and {rival.id[:12]}), "
            "not a forfeit and the forfeited seat's own event"
        )
    for event in (forfeit, rival):
        trial = base.snapshot()
        try:
            trial.apply(event)
        except RoundError as err:
            if event is forfeit:
                raise LogError(f"{where}: {err}") from None
            rival_ok = False
            break
    else:
        rival_ok = True
    follows = chain[seq + 1].prev if seq + 1 < len(chain) else None
    if follows is not None and follows not in (forfeit.id, rival.id):
        raise LogError(f"{where}: the log goes on from neither of the two events there")
    kept = chain[seq] if follows is None else (forfeit if follows == forfeit.id else rival)
    if not rival_ok:
        if kept is rival:
            raise LogError(f"{where}: the log goes on from an invalid event")
        chain[seq] = forfeit
        return Conflict(seq, forfeit, rival, forfeit, forfeit, "late", False,
                        base.seat_of(forfeit.pk), target[0])
    trial = base.snapshot()
    trial.apply(rival)
    signs = list(chain[1:]) + side
    in_chain_after = {e.id for e in chain[seq + 1 :]}
    fb = {forfeit.id} | (in_chain_after if kept is forfeit else set())
    rb = {rival.id} | (in_chain_after if kept is rival else set())
    start = None
    before = next((c for c in earlier if c.seq == seq - 1 and c.kept is c.rival), None)
    if before is not None:
        start = max(before.forfeit.ts, before.rival.ts)
    j = judge(
        rival, forfeit, head, trial.phase is Phase.OVER, base.timeouts, signs, fb, rb,
        next_owner=trial.owner(), turn_start=start,
    )
    chain[seq] = kept
    return Conflict(
        seq, forfeit, rival, kept, j.keep, j.rule,
        disputed(kept, forfeit, j, signs, rb, rival, fb), base.seat_of(forfeit.pk), target[0],
    )


def _settle(
    chain: list[Event], seq: int, other: Event, timeouts: TurnTimeouts = DEFAULT_TIMEOUTS
) -> None:
    """A forfeit and the forfeited seat's own event at ``seq``: keep the forfeit if the
    rules let it replace that event (``p2p.protocol.conflicts.rival_wins``: a game-ending
    or timely event is never replaced); else the log holds a forfeit the rules forbid and
    is refused (``LogError``), wherever the log goes on from.  A late event the forfeit
    replaced may stay in the log as long as nothing builds on it."""
    from p2p.protocol.conflicts import rival_wins

    pair = [chain[seq], other]
    forfeit = next(e for e in pair if e.kind == "forfeit")
    rival = pair[1] if forfeit is pair[0] else pair[0]
    where = f"position {seq}"
    try:
        base = verify_chain(chain[:seq], timeouts)
    except ChainError as err:
        raise LogError(f"chain {err}") from None
    head = base.head
    target = base.forfeit_target()
    if (
        rival.kind == "forfeit"
        or forfeit.prev != head.id
        or rival.prev != head.id
        or target is None
        or base.seats[target[0]].pk != rival.pk
    ):
        raise LogError(
            f"{where}: two different events ({forfeit.id[:12]} and {rival.id[:12]}), "
            "not a forfeit and the forfeited seat's own event"
        )
    trial = base.snapshot()
    try:
        trial.apply(rival)
        rival_valid, ends = True, trial.phase is Phase.OVER
    except RoundError:
        rival_valid, ends = False, False
    keep = (
        rival
        if rival_valid and rival_wins(rival, forfeit, head, ends, base.timeouts)
        else forfeit
    )
    if keep is rival:
        why = "ends the game" if ends else "was signed within its turn limit"
        raise LogError(
            f"{where}: a forfeit the rules forbid: seat {target[0]}'s own "
            f"{rival.kind} there {why}"
        )
    follows = chain[seq + 1].prev if seq + 1 < len(chain) else None
    if follows == rival.id and chain[seq + 1].pk != rival.pk:
        raise LogError(  # issue 16: a forfeit replaces only the pending turn
            f"{where}: a forfeit the rules forbid: seat {target[0]}'s {rival.kind} there "
            "was answered by the next seat (a forfeit replaces only the pending turn)"
        )
    if follows is not None and follows != keep.id:
        raise LogError(
            f"{where}: the forfeit there wins (seat {target[0]}'s {rival.kind} came "
            "too late), yet the log goes on from that event"
        )
    chain[seq] = keep


def _sort_acks(result: Replay, acks: list[Event]) -> None:
    """File each ack (already signature-checked) as agreeing, disputing or ahead."""
    st = result.state
    position = {e.id: i for i, e in enumerate(result.chain)}
    for ack in acks:
        seat = st.seat_of(ack.pk)
        if seat is None or st.seats[seat].is_computer:
            result.ignored += 1
        elif ack.prev not in position:
            result.ahead += 1
        elif ack.prev != st.head.id:
            # the chain goes on from the event it names: no end at all, only a sign of
            # the head its signer held (kept as evidence, §8.1); never a closing ack
            result.ignored += 1
        elif (
            result.ended
            and ack.prev == st.head.id
            and ack.body["state"] == st.state_hash()
        ):
            result.acks.setdefault(seat, ack)
        else:
            result.disputes.setdefault(seat, ack)
