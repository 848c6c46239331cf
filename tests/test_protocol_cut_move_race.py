"""Issue 17, the reported 3-seat hang, played purely (no broker): a member's timely
move, signed just as its link is cut, reaches the others only after the admin's forfeit
of that position has stood longer than ``SETTLE_MS`` on their clocks.

The admin and the third member keep the forfeit as final and end the round.  The cut
member used to refuse the forfeit by ``RACE_MS`` on *its own* clock ("the turn at 7 was
answered 61 s ago", though nobody had seen its move) and stay in play on its own branch
for good.  Now it yields: a member other than the forfeited seat signed an event built on
the forfeit (here their head exchanges, asking for the missing ack) dated
``HELD_FINAL_MS`` after it, so that member holds the forfeit as final, and every member
weighs the same signed events (docs/protocol.md §8, the table).

Rules v3 (issue 23): only a member that is neither the forfeiter nor the forfeited seat
can make the forfeit final for everyone (its two signs on the forfeit's branch 30 s
apart).  In two seats there is no such member: the forfeiter's own signs are exactly
what the silent-loser attack forged, so there the cut seat keeps its timely move and
both members show the position as disputed (R3) instead of one yielding.
"""

from __future__ import annotations

import pytest

from p2p.protocol.effects import Publish
from p2p.protocol.identity import Identity
from p2p.protocol.round import Phase, TurnTimeouts
from p2p.protocol.round_machine import RoundMachine

PEOPLE = [Identity.from_seed(bytes([i + 1]) * 32) for i in range(3)]
LIMITS = TurnTimeouts(silent_ms=20_000, offline_ms=20_000)


@pytest.mark.parametrize(
    ("game", "options", "n"), [("cube", {"players": 3}, 3), ("connect4", {}, 2)]
)
def test_a_move_signed_as_the_link_is_cut_does_not_split_the_round(
    game: str, options: dict, n: int
) -> None:
    """Three seats (the admin and a third member hold the forfeit): the cut seat yields,
    every member ends on the forfeit.  Two seats (only the admin does): nobody can
    witness, each keeps its claim and says the position is disputed (R3)."""
    seats = [{"pk": p.pk_hex, "level": None} for p in PEOPLE[:n]]
    admin, effects = RoundMachine.open(
        PEOPLE[0], 0, "5a" * 16, game, options, seats, 0, b"\1" * 32,
        timeouts=LIMITS,
    )
    machines = [admin] + [
        RoundMachine(PEOPLE[i], admin.state.genesis, bytes([i + 1]) * 32, now=0, timeouts=LIMITS)
        for i in range(1, n)
    ]
    last = n - 1
    queue = [(0, e) for e in effects if isinstance(e, Publish)]
    held: list[tuple[int, Publish]] = []
    cut: set[int] = set()

    def post(i: int, out: list) -> None:
        queue.extend((i, e) for e in out if isinstance(e, Publish))

    def run(now: int) -> None:
        while queue:
            src, pub = queue.pop(0)
            for j, m in enumerate(machines):
                if j == src:
                    continue
                if src in cut or j in cut:
                    held.append((j, pub))
                    continue
                post(j, m.receive(pub.event, now))

    def owner() -> int:
        return [m.me.public_key for m in machines].index(admin.state.owner())

    now = 1
    for i in range(1, n):
        post(i, machines[i].accept(now))
    run(now)
    while not (owner() == last and admin.state.ply >= 3):
        now += 1_000
        i = owner()
        post(i, machines[i].move(machines[i].state.game.legal_moves()[0], now))
        run(now)
    now += 5_000  # in time; and just now the link is cut
    cut.add(last)
    post(last, machines[last].move(machines[last].state.game.legal_moves()[0], now))
    run(now)
    for _ in range(60):  # the others wait out the limit, the admin forfeits
        now += 1_000
        for j in range(last):
            post(j, machines[j].tick(now))
        run(now)
    assert admin.state.head.kind == "forfeit"
    now += 1_000
    cut.clear()
    for j, pub in held:  # back: everything held arrives at once
        post(j, machines[j].receive(pub.event, now))
    held.clear()
    run(now)
    for _ in range(120):  # head exchanges and sync for two minutes
        now += 1_000
        for j in range(n):
            post(j, machines[j].tick(now))
        run(now)
    if n == 2:  # no witness: the admin keeps its forfeit, the cut seat its move
        seq = len(admin.state.chain) - 1
        while admin.state.chain[seq].kind != "forfeit":
            seq -= 1
        cut_seat = machines[last]
        assert cut_seat.state.chain[seq].kind == "move"
        assert cut_seat.state.chain[seq].pk == cut_seat.me.public_key
        for m in machines:
            assert [d[0] for d in m.disputes()] == [seq]
        # the cut seat never signed an ack of an end that replaced its own move
        mine = cut_seat.side.get(("ack", cut_seat.me.public_key))
        assert mine is None or mine.prev != admin.state.chain[seq].id
        return
    heads = {m.state.head.id for m in machines}
    assert len(heads) == 1, [(m.state.phase.value, m.state.head.kind) for m in machines]
    assert {m.state.phase for m in machines} == {Phase.OVER}
    assert {m.state.head.kind for m in machines} == {"forfeit"}
    assert all(m.agreed() for m in machines)  # every member signed the one result
