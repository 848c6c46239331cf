"""The exact Connect Four solver against Pascal Pons' published test sets, and the CLI."""

from __future__ import annotations

import functools
import itertools
import random
import subprocess
import sys
from pathlib import Path

import pytest

from p2p.ai.c4_board import Position, four_ends
from p2p.ai.connect4_solver import (
    FULL_WINDOW_EMPTIES,
    SearchLimit,
    Solver,
    analyze,
    parse_position,
    solve,
)

REPO = Path(__file__).resolve().parents[1]
_LOCAL = REPO / "tests" / "data" / "connect4_testsets"
_SHARED = Path(__file__).resolve().parents[2] / "shared" / "connect4_testsets"
TESTSETS = _LOCAL if _LOCAL.is_dir() else _SHARED


def load(name: str) -> list[tuple[str, int]]:
    lines = (TESTSETS / name).read_text().splitlines()
    return [(pos, int(score)) for pos, score in (line.split() for line in lines)]


def check(cases: list[tuple[str, int]], full_window_empties: int = 0) -> None:
    solver = Solver(full_window_empties=full_window_empties)
    wrong = [(p, s, solver.solve(parse_position(p))) for p, s in cases]
    wrong = [w for w in wrong if w[1] != w[2]]
    assert not wrong, f"{len(wrong)} wrong, first: {wrong[:3]}"


def test_test_sets_are_complete() -> None:
    for name in ("Test_L3_R1", "Test_L2_R1", "Test_L2_R2", "Test_L1_R1", "Test_L1_R2", "Test_L1_R3"):
        assert len(load(name)) == 1000


@pytest.mark.parametrize("full_window_empties", [0, FULL_WINDOW_EMPTIES])
def test_end_easy_all_1000(full_window_empties: int) -> None:
    check(load("Test_L3_R1"), full_window_empties)


def test_full_window_near_the_end_same_scores_fewer_nodes() -> None:
    """``p2p solve``'s full-window search of positions with at most ``FULL_WINDOW_EMPTIES``
    empty cells: the published scores, fewer nodes than Pons' dichotomy on the same
    positions, and Pons' search (same nodes) for a position with more empty cells."""
    near = [case for case in load("Test_L2_R1") if 42 - len(case[0]) <= FULL_WINDOW_EMPTIES][:60]
    near += load("Test_L3_R1")[::5]
    totals = []
    for empties in (0, FULL_WINDOW_EMPTIES):
        solver, total = Solver(full_window_empties=empties), 0
        for text, score in near:
            assert solver.solve(parse_position(text)) == score, (empties, text)
            total += solver.nodes
        totals.append(total)
    assert totals[1] < 0.8 * totals[0], totals
    far = [text for text, _ in load("Test_L2_R1") if 42 - len(text) > FULL_WINDOW_EMPTIES][:20]
    pons, full = Solver(), Solver(full_window_empties=FULL_WINDOW_EMPTIES)
    for text in far:
        assert (pons.solve(parse_position(text)), pons.nodes) == (full.solve(parse_position(text)), full.nodes)
    assert pons.table == full.table


def test_middle_easy_every_fifth() -> None:
    check(load("Test_L2_R1")[::5])


def test_begin_easy_every_twentieth() -> None:
    check(load("Test_L1_R1")[::20])


def test_middle_medium_sample() -> None:
    check(load("Test_L2_R2")[100:600:100])


def test_begin_medium_one() -> None:
    check(load("Test_L1_R2")[250:251])


def test_score_convention_examples() -> None:
    # Reference 1.2: 4455 -> 18 (win with the 4th stone), 44455554221 -> -15.
    assert solve("4455") == 18
    assert solve("44455554221") == -15
    # (analyze("4455") needs 5-move children: minutes in Python, so a later position.)
    late = "44455554221"
    assert analyze(late)[3] == -15 and max(s for s in analyze(late) if s is not None) == -15
    assert solve("4455", weak=True) == 1
    assert solve("44455554221", weak=True) == -1


def test_analyze_marks_full_columns() -> None:
    position = load("Test_L2_R1")[0][0]  # column 5 is full there
    scores = analyze(position)
    assert scores[4] is None
    assert all(s is not None for i, s in enumerate(scores) if i != 4)
    assert max(s for s in scores if s is not None) == solve(position)


@pytest.mark.parametrize(
    ("position", "reason"),
    [
        ("48", "move 2: column 8 is out of range"),
        ("0", "move 1: '0' is not a column"),
        ("4a", "move 2: 'a' is not a column"),
        ("4444444", "move 7: column 4 is full"),
        ("1212121", "move 7: column 1 wins, so the game is over"),
        ("12121214", "move 7: column 1 wins"),
    ],
)
def test_parser_rejects_invalid_sequences(position: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        parse_position(position)


def test_node_limit_raises_and_table_stays_sound() -> None:
    solver = Solver(node_limit=50)
    pos = parse_position("4")
    with pytest.raises(SearchLimit):
        solver.solve(pos)
    solver.node_limit = None
    # The bounds stored before the limit hit are still true bounds: a later exact
    # solve with the same table agrees with a fresh solver.
    assert solver.solve(parse_position("44455554221")) == Solver().solve(parse_position("44455554221"))


# -- the fast search against the plain one -------------------------------------------------


class _PlainSolver:
    """Pons' negamax written plainly (the solver before issue 28: ``four_ends`` called, no
    memo): the fast ``Solver`` must visit exactly its nodes, in its order."""

    def __init__(self, width: int = 7, height: int = 6, node_limit: int | None = None) -> None:
        self.geo = Position.parse("", width, height).geo
        self.table: dict[int, int] = {}
        self.node_limit = node_limit
        self.nodes = 0

    def solve(self, pos: Position, weak: bool = False) -> int:
        self.nodes = 0
        geo = self.geo
        size = geo.size
        cur, mask, moves = pos.current, pos.mask, pos.moves
        if geo.winning_cells(cur, mask) & (mask + geo.bottom) & geo.board:
            return 1 if weak else (size + 1 - moves) // 2
        lo, hi = -((size - moves) // 2), (size + 1 - moves) // 2
        if weak:
            lo, hi = max(lo, -1), min(hi, 1)
        while lo < hi:
            med = lo + (hi - lo) // 2
            if med <= 0 and -((-lo) // 2) < med:
                med = -((-lo) // 2)
            elif med >= 0 and hi // 2 > med:
                med = hi // 2
            r = self._negamax(cur, mask, moves, med, med + 1)
            lo, hi = (lo, r) if r <= med else (r, hi)
        return max(-1, min(1, lo)) if weak else lo

    def _negamax(self, cur: int, mask: int, moves: int, alpha: int, beta: int) -> int:
        self.nodes += 1
        if self.nodes == self.node_limit:
            raise SearchLimit
        geo = self.geo
        size = geo.size
        free = geo.board ^ mask
        possible = (mask + geo.bottom) & geo.board
        threat = four_ends(cur ^ mask, geo.lines) & free
        forced = possible & threat
        if forced:
            if forced & (forced - 1):
                return -((size - moves) // 2)
            possible = forced
        possible &= ~(threat >> 1)
        if not possible:
            return -((size - moves) // 2)
        if moves >= size - 2:
            return 0
        low = -((size - 2 - moves) // 2)
        if alpha < low:
            alpha = low
            if alpha >= beta:
                return alpha
        high = (size - 1 - moves) // 2
        key = cur + mask
        val = self.table.get(key)
        if val is not None:
            if val > geo.max_score - geo.min_score + 1:
                low = val + 2 * geo.min_score - geo.max_score - 2
                if alpha < low:
                    alpha = low
                    if alpha >= beta:
                        return alpha
            else:
                high = val + geo.min_score - 1
        if beta > high:
            beta = high
            if alpha >= beta:
                return beta
        order = sorted(((four_ends(cur | move, geo.lines) & free).bit_count(), rank, move)
                       for rank, move in geo.centre_first(possible))
        for _, _, move in reversed(order):
            score = -self._negamax(cur ^ mask, mask | move, moves + 1, -beta, -alpha)
            if score >= beta:
                self.table[key] = score + geo.max_score - 2 * geo.min_score + 2
                return score
            alpha = max(alpha, score)
        self.table[key] = alpha - geo.min_score + 1
        return alpha


@pytest.mark.parametrize("shared_table", [False, True])
def test_fast_search_visits_the_nodes_of_the_plain_one(shared_table: bool) -> None:
    """Same score, same node count, same table (so the computer players' node-limited
    searches play the same moves as before)."""
    cases = load("Test_L3_R1")[::10] + load("Test_L2_R1")[::40] + load("Test_L1_R1")[::250]
    fast, plain = Solver(), _PlainSolver()
    for text, _ in cases:
        if not shared_table:
            fast.reset()
            plain.table.clear()
        for weak in (False, True):
            pos = parse_position(text)
            assert (fast.solve(pos, weak), fast.nodes) == (plain.solve(pos, weak), plain.nodes), text
    assert fast.table == plain.table


def test_full_window_search_visits_the_nodes_of_the_plain_one() -> None:
    """``p2p solve``'s full-window search (no memo of move orders) against the plain
    negamax run once on the whole range: same scores, node counts and table."""
    fast, plain = Solver(full_window_empties=FULL_WINDOW_EMPTIES), _PlainSolver()
    for text, score in load("Test_L3_R1")[::10] + load("Test_L2_R1")[::50]:
        pos = parse_position(text)
        if 42 - pos.moves > FULL_WINDOW_EMPTIES:
            continue
        plain.nodes = 0
        lo, hi = -((42 - pos.moves) // 2), (43 - pos.moves) // 2
        expected = plain._negamax(pos.current, pos.mask, pos.moves, lo, hi)
        assert (fast.solve(pos), fast.nodes) == (expected, plain.nodes) == (score, plain.nodes), text
    assert fast.table == plain.table


def test_fast_search_stops_at_the_same_node_limit() -> None:
    for limit in (1, 2, 7, 60, 400):
        fast, plain = Solver(node_limit=limit), _PlainSolver(node_limit=limit)
        for text, _ in load("Test_L2_R1")[:12]:
            results = []
            for solver in (fast, plain):
                try:
                    results.append((solver.solve(parse_position(text)), solver.nodes))
                except SearchLimit:
                    results.append(("limit", solver.nodes))
            assert results[0] == results[1], (limit, text)
        assert fast.table == plain.table


# -- small boards against a plain minimax written from the definition ----------------------


def _brute(width: int, height: int, cols: tuple[int, ...]) -> int:
    """Score by the definition: plain negamax over every move to the end of the game."""

    @functools.cache
    def value(seq: tuple[int, ...]) -> int:
        pos = Position.parse("".join(str(c + 1) for c in seq), width, height)
        best = None
        for c in range(width):
            if not pos.can_play(c):
                continue
            if pos.is_winning_move(c):
                v = (width * height + 1 - pos.moves) // 2
            elif pos.moves + 1 == width * height:
                v = 0
            else:
                v = -value((*seq, c))
            best = v if best is None else max(best, v)
        return best if best is not None else 0

    return value(cols)


@pytest.mark.parametrize(("width", "height"), [(4, 4), (5, 4), (4, 5)])
def test_small_boards_match_plain_minimax(width: int, height: int) -> None:
    """Pons' search and ``p2p solve``'s full window (every position here has at most 16
    empty cells) against the definition."""
    rng = random.Random(f"{width}x{height}")
    solver = Solver(width, height)
    full_window = Solver(width, height, full_window_empties=FULL_WINDOW_EMPTIES)
    checked = 0
    for _ in itertools.count():
        if checked == 12:
            break
        seq: list[int] = []
        pos = Position.parse("", width, height)
        plies = rng.randint(width * height - 10, width * height - 6)
        ok = True
        for _ in range(plies):
            cols = [c for c in range(width) if pos.can_play(c) and not pos.is_winning_move(c)]
            if not cols:
                ok = False
                break
            c = rng.choice(cols)
            pos.play_column(c)
            seq.append(c)
            if pos.moves == width * height:
                ok = False
                break
        if not ok:
            continue
        text = "".join(str(c + 1) for c in seq)
        expected = _brute(width, height, tuple(seq))
        assert solver.solve(parse_position(text, width, height)) == expected, text
        assert full_window.solve(parse_position(text, width, height)) == expected, text
        checked += 1


# -- the command line ---------------------------------------------------------------------


def _run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "p2p", "solve", *args],
        input=stdin, capture_output=True, text=True, cwd=REPO, timeout=120, check=False,
    )


def test_cli_single_position() -> None:
    out = _run("connect4", "4455")
    assert (out.returncode, out.stdout, out.stderr) == (0, "18\n", "")


def test_cli_analyze() -> None:
    position = load("Test_L2_R1")[0][0]
    out = _run("connect4", position, "--analyze")
    assert out.returncode == 0
    assert out.stdout.split() == [str(s) if s is not None else "-" for s in analyze(position)]


def test_cli_stdin_lines() -> None:
    cases = load("Test_L2_R1")[:5]
    out = _run("connect4", stdin="".join(p + "\n" for p, _ in cases))
    assert out.returncode == 0
    assert out.stdout.splitlines() == [f"{p} {s}" for p, s in cases]


def test_cli_bad_position_is_one_line_exit_2() -> None:
    out = _run("connect4", "4444444")
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and "column 4 is full" in out.stderr


def test_cli_stdin_reports_the_line_number() -> None:
    out = _run("connect4", stdin="4455\n\n44x\n")
    assert out.returncode == 2
    assert out.stdout == "4455 18\n"
    assert out.stderr.count("\n") == 1 and "line 3" in out.stderr


def test_cli_only_connect4() -> None:
    out = _run("chess4", "1")
    assert out.returncode == 2 and out.stderr.count("\n") == 1


def test_emptied_tables_and_memos_change_no_score(monkeypatch: pytest.MonkeyPatch) -> None:
    """The table and the memos are emptied when they pass their bounds: with tiny bounds
    every score is still the published one, and nothing grows past a probe's worth."""
    import p2p.ai.connect4_solver as module

    monkeypatch.setattr(module, "TT_MAX_ENTRIES", 40)
    monkeypatch.setattr(module, "ORDER_MAX_ENTRIES", 30)
    solver = Solver()
    biggest = 0
    for text, score in load("Test_L2_R1")[::50]:
        assert solver.solve(parse_position(text)) == score, text
        biggest = max(biggest, len(solver.table), len(solver._orders), len(solver._ends))
    assert biggest < 2_500  # 1,461 here; 4,812 without the bounds


def test_one_long_search_keeps_its_tables_within_their_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bounds hold within one search too, checked every ``TRIM_EVERY`` nodes: before,
    they were checked only between positions, and ``p2p solve`` of an early position grew
    its table until the machine's memory ran out (7 GB after ten minutes of ``4``)."""
    import p2p.ai.connect4_solver as module

    monkeypatch.setattr(module, "TT_MAX_ENTRIES", 1_000)
    monkeypatch.setattr(module, "ORDER_MAX_ENTRIES", 1_000)
    monkeypatch.setattr(module, "TRIM_EVERY", 256)
    for text, score in load("Test_L2_R2")[100:500:100]:
        solver = Solver()
        assert solver.solve(parse_position(text)) == score, text
        assert solver.nodes > 5_000  # one search far past the bounds (2,455-65,456 entries without them)
        for memo in (solver.table, solver._orders, solver._ends, solver._playable):
            assert len(memo) <= 1_000 + 256
