"""The work on a move's path that issue 28 cut for all peers in one process, held by
counts and by behaviour, never by timings:

* an applied move names its signer (``RoundUpdate``), and the label (the nickname
  sanitized, the key's fingerprint) is worked out once per nickname and key, not per
  move;
* a round's outcome (its winners, its end reason) is worked out once it is over, not
  after every move while it runs;
* the copy of the round's state kept before each chain event (``RoundState.snapshot``,
  for a rewind) is independent of the state in every mutable field and equal to it in
  all others, as ``dataclasses.replace`` made it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from conftest import Peers, play_out, run, start_round

from p2p.protocol import identity
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
