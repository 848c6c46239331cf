"""Computer players of Viergewinnt 3D: evaluation bookkeeping, tactics, determinism."""

from __future__ import annotations

import random

import pytest

from p2p.ai import choose_move
from p2p.ai.cube_ai import LEVELS, CubeSearch, hint
from p2p.games import create_game
from p2p.games.base import Game
from p2p.games.cube import pillar_name


def cube_after(moves: list[str], players: int = 2) -> Game:
    game = create_game("cube", {"players": players})
    for move in moves:
        game.push(move)
    return game


# Red (seat 0, to move) has a1 b1 c1 on the bottom level; d1 scores a point.
SCORE_NOW = ["a1", "a4", "b1", "b4", "c1", "d3"]
# Yellow (to move) must stop Red's a1 b1 c1 (d1); Yellow's own stones threaten nothing.
BLOCK_NOW = ["a1", "a4", "b1", "c3", "c1"]


def test_positions_are_what_the_tests_claim() -> None:
    g = cube_after(SCORE_NOW)
    assert g.to_move() == 0
    g.push("d1")
    assert g.scores() == (1, 0)
    g = cube_after(BLOCK_NOW)
    assert g.to_move() == 1
    for move in g.legal_moves():  # Yellow cannot score at once
        probe = g.copy()
        probe.push(move)
        assert probe.scores()[1] == 0


def test_incremental_values_match_a_fresh_count() -> None:
    rng = random.Random(7)
    for players in (2, 3):
        game = create_game("cube", {"players": players})
        search = CubeSearch(game)
        trail = []
        for _ in range(40):
            pillar = rng.choice([p for p in range(16) if search.heights[p] < 4])
            seat = game.to_move()
            search.drop(pillar, seat)
            game.push(pillar_name(pillar))
            trail.append((pillar, seat))
            assert search.value == CubeSearch(game).value
        for pillar, seat in reversed(trail[20:]):
            search.undo(pillar, seat)
            game.pop()
            assert search.value == CubeSearch(game).value
        # Completed lines count as POINT each in the value (points are part of it).
        assert all(v >= 0 for v in search.value)


@pytest.mark.parametrize("level", ["normal", "stark", "meister"])
def test_takes_a_point(level: str) -> None:
    for seed in (b"1", b"2", b"3"):
        assert choose_move(cube_after(SCORE_NOW), level, seed) == "d1"


@pytest.mark.parametrize("level", ["stark", "meister"])
def test_blocks_a_point(level: str) -> None:
    for seed in (b"1", b"2"):
        assert choose_move(cube_after(BLOCK_NOW), level, seed) == "d1"


@pytest.mark.parametrize("players", [2, 3])
@pytest.mark.parametrize("level", LEVELS)
def test_deterministic_legal_and_leaves_the_game_alone(level: str, players: int) -> None:
    g = cube_after(["b2", "c3", "b2", "a1", "d4"], players)
    before = g.encode()
    a = [choose_move(g, level, s) for s in (b"x", b"y")]
    assert a == [choose_move(g, level, s) for s in (b"x", b"y")]
    assert g.encode() == before
    assert all(m in g.legal_moves() for m in a)


def test_neuling_varies_with_the_seed() -> None:
    g = create_game("cube", {"players": 3})
    assert len({choose_move(g, "neuling", str(i).encode()) for i in range(30)}) >= 4


@pytest.mark.parametrize("players", [2, 3])
def test_whole_games_end_and_hint_is_legal(players: int) -> None:
    g = create_game("cube", {"players": players})
    levels = ["neuling", "normal", "stark"]
    while not g.is_over():
        if len(g.history()) == 30:
            assert hint(g) in g.legal_moves()
        g.push(choose_move(g, levels[g.to_move()], b"game"))
    assert len(g.history()) == 64


def test_unknown_level_and_finished_game() -> None:
    g = create_game("cube")
    with pytest.raises(ValueError, match="unknown level"):
        choose_move(g, "grossmeister", b"")
