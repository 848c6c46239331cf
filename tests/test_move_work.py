"""The work on a move's path that issue 28 cut for all peers in one process, held by
counts and by behaviour, never by timings:

* an applied move names its signer (``RoundUpdate``), and the label (the nickname
  sanitized, the key's fingerprint) is worked out once per nickname and key, not per
  move;
* a round's outcome (its winners, its end reason) is worked out once it is over, not
  after every move while it runs;
* ``Round.wait_until`` waits on a future of its own that a change resolves, not on an
  ``asyncio.Condition`` whose lock both sides take and give back;
* the canonical check of every event's value (signed by its author, read by every
  receiver) checks plain strings and integers in place: the same verdicts as before;
* the copy of the round's state kept before each chain event (``RoundState.snapshot``,
  for a rewind) is independent of the state in every mutable field and equal to it in
  all others, as ``dataclasses.replace`` made it;
* whether a kind of chain event may come in a phase is looked up in a set built once
  from the transition table (asked twice per chain event on every peer);
* a topic is taken apart once (``Topics.parse``, three times on a move's path), and
  a stranger's long topic is never kept.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest
from conftest import Peers, eventually, play_out, run, start_round
from hypothesis import given, settings
from hypothesis import strategies as st

from p2p.protocol import canonical, events, identity
from p2p.protocol.effects import Publish
from p2p.protocol.identity import Identity
from p2p.protocol.round import RoundState
from p2p.protocol.round_machine import RoundMachine

PEOPLE = [Identity.from_seed(bytes([i + 1]) * 32) for i in range(2)]


def _pure_round(plies: int) -> list[RoundMachine]:
    """Two machines of a Connect Four round, ``plies`` moves into play (no broker)."""
    seats = [{"pk": p.pk_hex, "level": None} for p in PEOPLE]
    admin, effects = RoundMachine.open(
        PEOPLE[0], 0, "5a" * 16, "connect4", {}, seats, 0, b"\1" * 32
    )
    guest = RoundMachine(PEOPLE[1], admin.state.genesis, bytes([2]) * 32, now=0)
    machines = [admin, guest]
    queue = [(0, e) for e in effects if isinstance(e, Publish)]
    now = 1

    def deliver() -> None:
        while queue:
            src, pub = queue.pop(0)
            other = 1 - src
            queue.extend((other, e) for e in machines[other].receive(pub.event, now) if isinstance(e, Publish))

    queue.extend((1, e) for e in guest.accept(now) if isinstance(e, Publish))
    deliver()
    while admin.state.ply < plies:
        now += 1_000
        owner = admin.state.owner()
        i = 0 if owner == PEOPLE[0].public_key else 1
        game = machines[i].state.game
        assert game is not None
        queue.extend((i, e) for e in machines[i].move(game.legal_moves()[0], now) if isinstance(e, Publish))
        deliver()
    return machines


def test_a_snapshot_copies_every_mutable_field_and_shares_the_rest() -> None:
    machines = _pure_round(plies=5)
    state = machines[0].state
    assert state.game is not None and state.ply == 5
    copy = state.snapshot()
    assert type(copy) is RoundState
    fields = [f.name for f in dataclasses.fields(RoundState)]
    assert set(vars(copy)) == set(vars(state)) == set(fields)
    for name in fields:
        mine, theirs = getattr(state, name), getattr(copy, name)
        if name == "game":
            assert theirs is not mine and theirs.encode() == mine.encode()
            assert theirs.history() == mine.history()
        elif isinstance(mine, (list, dict, set, bytearray)):
            assert theirs is not mine and theirs == mine, name  # copied
        else:
            assert theirs == mine, name  # immutable: shared as it is
    replaced = dataclasses.replace(state)  # what the snapshot was made with before
    assert {n: getattr(replaced, n) for n in fields if n != "game"} == {
        n: getattr(copy, n) for n in fields if n != "game"
    }
    # the copy moves on alone: the state it was taken from stays where it was
    chain, head, encoded = list(state.chain), state.head.id, state.game.encode()
    assert copy.game is not None
    copy.game.push(copy.game.legal_moves()[0])
    copy.chain.append(copy.chain[-1])
    copy.resigned.append(0)
    copy.commits[9] = "x"
    assert (state.chain, state.head.id, state.game.encode()) == (chain, head, encoded)
    assert state.resigned == [] and 9 not in state.commits


def test_a_move_works_out_no_label_and_no_outcome_again(peers: Peers, monkeypatch: Any) -> None:
    """Over a whole round the labels are worked out a few times (once per nickname and
    key and peer at most), not once per applied move and peer; the outcome only once the
    round is over (the steps after the end still look at it), not after every move."""
    fingerprints: list[bytes] = []
    winners: list[int] = []
    real_fingerprint = identity.fingerprint
    real_winners = RoundState.winners

    def counted_fingerprint(public_key: bytes) -> str:
        fingerprints.append(public_key)
        return real_fingerprint(public_key)

    def counted_winners(self: RoundState) -> tuple[int, ...]:
        winners.append(self.ply)
        return real_winners(self)

    monkeypatch.setattr(identity, "fingerprint", counted_fingerprint)
    monkeypatch.setattr(RoundState, "winners", counted_winners)
    getattr(identity.label, "cache_clear", lambda: None)()

    async def body() -> None:
        async with peers("alice", "bob") as (alice, bob):
            rounds = await start_round(alice, [bob], "connect4", start=0)
            fingerprints.clear()
            winners.clear()
            await play_out(rounds)
            moves = sum(1 for e in rounds[0].log() if e.kind == "move")
            assert moves >= 7
            # each peer labels the two signers: a handful, whatever the number of moves
            assert len(set(fingerprints)) <= 2
            assert len(fingerprints) <= 4, f"{len(fingerprints)} labels for {moves} moves"
            assert winners, "nobody told the outcome"
            plies = rounds[0].machine.state.ply
            assert winners == [plies] * len(winners), winners  # only once it is over

    run(body())


# -- the canonical check, on its fast path and its general one ------------------------------

_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**64), 2**64)
    | st.text(alphabet=st.characters(), max_size=6)
    | st.sampled_from(["\ud800", "a\udfff", "é", "ply", ""]),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.sampled_from(["a", "ply", "A", "x-y", "", "9a", "é", "b_2"]), inner, max_size=3),
    max_leaves=12,
)


def _reference_check(value: object, depth: int) -> None:
    """``canonical._check`` as it was before issue 28's fast path (the rules it keeps)."""
    if depth > canonical.MAX_DEPTH:
        raise canonical.CanonicalError(f"nested deeper than {canonical.MAX_DEPTH}")
    if value is None or isinstance(value, bool):
        return
    if isinstance(value, int):
        if not canonical.INT_MIN <= value <= canonical.INT_MAX:
            raise canonical.CanonicalError("integer out of 64-bit range")
        return
    if isinstance(value, str):
        if not value.isascii():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise canonical.CanonicalError("string holds a lone surrogate") from None
        return
    if isinstance(value, list):
        for item in value:
            _reference_check(item, depth + 1)
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str) or not canonical.KEY_PATTERN.match(key):
                raise canonical.CanonicalError(f"bad object key {str(key)[:40]!r}")
            _reference_check(item, depth + 1)
        return
    raise canonical.CanonicalError(f"type {type(value).__name__} is not allowed")


def _verdict(check: Any, value: object, depth: int) -> str:
    try:
        check(value, depth)
    except canonical.CanonicalError as err:
        return str(err)
    return ""


@settings(max_examples=300, deadline=None)
@given(_VALUES, st.integers(0, canonical.MAX_DEPTH + 1))
def test_the_canonical_check_refuses_exactly_what_it_refused(value: object, depth: int) -> None:
    """Same verdict and reason as the check before its fast path, at every depth (a
    scalar one level below ``MAX_DEPTH`` is too deep on both)."""
    assert _verdict(canonical._check, value, depth) == _verdict(_reference_check, value, depth)


def test_the_canonical_check_refuses_odd_types_and_keys_as_before() -> None:
    class Text(str):
        pass

    odd: list[object] = [
        1.5, b"x", (1,), {1: 2}, {Text("ply"): 1}, [1.5], {"a": [b"x"]}, [[[]]] * 2,
        {"ply": 2**63}, [2**63], ["\ud800"], True, [True, None], Text("x"), [Text("é")],
    ]
    deep: object = 1
    for _ in range(canonical.MAX_DEPTH + 1):
        deep = [deep]
    odd += [deep, {"a": deep}]
    for value in odd:
        for depth in (0, canonical.MAX_DEPTH):
            assert _verdict(canonical._check, value, depth) == _verdict(_reference_check, value, depth)


def test_waiters_wake_in_order_each_when_its_predicate_holds_and_leave_nothing(
    peers: Peers,
) -> None:
    """``Round.wait_until`` waits on a future of its own (no lock taken on either side):
    every change wakes the waiters in the order they began, each returns once its own
    predicate holds, and one that times out or returns leaves no future behind."""

    async def body() -> None:
        async with peers("alice", "bob") as (alice, bob):
            ra, rb = await start_round(alice, [bob], "connect4", start=0)
            level = 0
            done: list[str] = []

            async def waiter(name: str, at: int) -> None:
                await rb.wait_until(lambda r: level >= at, 10)
                done.append(name)

            tasks = [asyncio.create_task(waiter(n, at)) for n, at in (("a", 2), ("b", 1), ("c", 1))]
            await eventually(lambda: len(rb._waiters) == 3, 10, "three waiters")
            with pytest.raises(TimeoutError):
                await rb.wait_until(lambda r: False, 0.05)
            assert len(rb._waiters) == 3  # the timed-out one took its future along
            level = 1
            await rb.wake_waiters()
            await asyncio.sleep(0)
            await asyncio.sleep(0)
            assert done == ["b", "c"] and len(rb._waiters) == 1  # "a" waits again
            level = 2
            await rb.wake_waiters()
            await asyncio.gather(*tasks)
            assert done == ["b", "c", "a"] and not rb._waiters
            await ra.play(ra.game.legal_moves()[0])  # a real change wakes a real waiter
            await rb.wait_until(lambda r: len(r.log()) == len(ra.log()), 10)
            assert not rb._waiters

    run(body())


def test_every_kinds_body_is_worked_out_once_as_it_was_checked_per_event() -> None:
    """``_check_envelope`` takes each kind's body fields worked out once (``Kind.in_round``,
    ``Kind.in_lobby``) instead of building the sets for every event: the same fields,
    the same optional ones, the same order of checks, the same refusal."""
    for name, spec in events.KINDS.items():
        for shape, fields in (
            (spec.in_round, spec.body),
            (spec.in_lobby, {**spec.body, **spec.lobby_body}),
        ):
            assert shape.names == set(fields), name
            assert shape.allowed == set(fields) | set(spec.optional), name
            assert shape.checks == tuple({**fields, **spec.optional}.items()), name
            assert shape.listed == (", ".join(sorted(fields)) or "nothing"), name
        assert spec.in_round is spec.in_round  # worked out once
    me = PEOPLE[0]
    body = {"ply": 1, "move": "a1", "state": "ab" * 32}
    chain: dict[str, Any] = {"round": "cd" * 16, "seq": 3, "prev": "ef" * 32}
    assert events.make(me, "move", 1, body, **chain).body == body
    bad: Any
    for bad in ({**body, "extra": 1}, {"ply": 1, "move": "a1"}, []):
        with pytest.raises(events.EventError, match="move body must have exactly: move, ply, state"):
            events.make(me, "move", 1, bad, **chain)


def test_the_phase_table_is_read_once_with_the_same_verdicts() -> None:
    """``phases.admits`` looks a (phase, kind) pair up in a set built from the two
    tables once: the same answer as asking the tables, for every phase and every kind
    (and a kind the tables do not know)."""
    from p2p.protocol import phases

    for phase in phases.Phase:
        for kind in [*phases.STEPS_OF_KIND, "chat", "no-such-kind"]:
            asked = any(
                step in phases.TRANSITIONS[phase] for step in phases.STEPS_OF_KIND.get(kind, ())
            )
            assert phases.admits(phase, kind) is asked, (phase, kind)


def test_a_topic_is_taken_apart_once_and_a_strangers_long_topic_is_not_kept() -> None:
    """A move's topic is parsed by its mover and twice by each receiver: the same frozen
    ``Place`` is handed out again; a topic longer than any of ours is parsed every time
    and never kept (a stranger's 64 KB topics would fill the memory)."""
    from p2p.protocol import topics as topics_module
    from p2p.protocol.topics import Place, Topics

    names = Topics("work")
    route = names.round_events("ab" * 16).topic
    first = names.parse(route)
    assert first == Place("round", f"{'ab' * 16}/events", "ab" * 16, "events")
    assert names.parse(route) is first
    assert Topics("other").parse(route) is None  # the root is part of the key
    kept = topics_module._place.cache_info().currsize
    long = names.root + "/lobby/presence/" + "x" * 1000
    assert names.parse(long) == Place("lobby", "presence/" + "x" * 1000)
    assert names.parse(long) is not names.parse(long)
    assert topics_module._place.cache_info().currsize == kept
    store = names.round_store("ab" * 16, "cd" * 16).topic
    assert names.parse(store) == Place("round", f"{'ab' * 16}/store/{'cd' * 16}", "ab" * 16, "store", "cd" * 16)
