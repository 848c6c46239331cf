"""The position is encoded once per applied move on each member (issue 28): the mover
plays and hashes its move once (not again when it applies its own event), and each
receiver once, to check the signed state hash.  Counted on the engine's ``encode``."""

from __future__ import annotations

import random

import pytest
from test_protocol_round import human, open_round

from p2p.games.cube import Cube
from p2p.protocol.loopback import Loopback
from p2p.protocol.round import Phase


def test_each_member_encodes_the_cube_once_per_move(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = [0]
    real = Cube.encode

    def counting(self: Cube) -> bytes:
        calls[0] += 1
        return real(self)

    monkeypatch.setattr(Cube, "encode", counting)
    rng = random.Random(7)
    net = Loopback(pick=rng.randrange)
    machines = open_round(net, "cube", {"players": 3}, [human(0), human(1), human(2)])
    by_key = {m.me.public_key: m for m in machines}
    per_move = []
    while machines[0].state.phase is Phase.PLAY:
        mover = by_key[machines[0].state.owner()]
        assert mover.state.game is not None
        move = rng.choice(mover.state.game.legal_moves())
        calls[0] = 0
        net.post(f"p{[m.me for m in machines].index(mover.me)}", mover.move(move, net.now))
        net.run()
        per_move.append(calls[0])
    assert len(per_move) > 10
    assert {m.state.head.id for m in machines} == {machines[0].state.head.id}
    # every move but the last: one encoding on each of the three members
    assert per_move[:-1] == [3] * (len(per_move) - 1), per_move
