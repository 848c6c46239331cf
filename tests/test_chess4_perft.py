"""Perft of four-player chess against the published FFA counts (modern array)."""

from __future__ import annotations

import pytest

from p2p.games.chess4 import Chess4, perft

START_COUNTS = {1: 20, 2: 395, 3: 7_800, 4: 152_050, 5: 3_452_310}


@pytest.mark.parametrize("depth", [1, 2, 3, 4])
def test_perft_start(depth: int) -> None:
    assert perft(Chess4.create(), depth) == START_COUNTS[depth]


def test_perft_start_depth5() -> None:
    # About 4 s on the project machine (bulk counting at the leaves); checks the
    # per-seat en-passant window: a one-ply window gives 3,451,520.
    assert perft(Chess4.create(), 5) == START_COUNTS[5]
