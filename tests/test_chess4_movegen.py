"""The fast move generator against a slow, independent reference on random games.

The reference below knows nothing of the mailbox, pins or attack tables: it keeps
pieces in a dict keyed by (file, rank), generates pseudo-legal moves square by square,
plays each one on a copy and asks every live opponent's pieces whether they attack the
king (decision 1: a captured live king's pieces no longer attack).
"""

from __future__ import annotations

import random

import pytest

from p2p.games.chess4 import Chess4
from p2p.games.chess4.board import FILES, on_board, sq_of

PUSH = {0: (0, 1), 1: (1, 0), 2: (0, -1), 3: (-1, 0)}
ORTHO = ((1, 0), (-1, 0), (0, 1), (0, -1))
DIAG = ((1, 1), (1, -1), (-1, 1), (-1, -1))
KNIGHT = ((1, 2), (2, 1), (-1, 2), (-2, 1), (1, -2), (2, -1), (-1, -2), (-2, -1))
START_LINE = {0: ("r", 1), 1: ("f", 1), 2: ("r", 12), 3: ("f", 12)}
PROMO_LINE = {0: ("r", 7), 1: ("f", 7), 2: ("r", 6), 3: ("f", 6)}
# Castling of the modern array: (king from, king to, rook from, rook to) per seat, short then long.
CASTLING = {
    0: (("h1", "j1", "k1", "i1"), ("h1", "f1", "d1", "g1")),
    1: (("a7", "a5", "a4", "a6"), ("a7", "a9", "a11", "a8")),
    2: (("g14", "e14", "d14", "f14"), ("g14", "i14", "k14", "h14")),
    3: (("n8", "n10", "n11", "n9"), ("n8", "n6", "n4", "n7")),
}


def sq_name(c: tuple[int, int]) -> str:
    return FILES[c[0]] + str(c[1] + 1)


def coord(name: str) -> tuple[int, int]:
    return FILES.index(name[0]), int(name[1:]) - 1


def on_line(c: tuple[int, int], line: tuple[str, int]) -> bool:
    return (c[1] if line[0] == "r" else c[0]) == line[1]


def snapshot(game: Chess4):
    pos = game.position
    pieces = {}
    for f in range(14):
        for r in range(14):
            if on_board(f, r):
                p = pos.board[sq_of(f, r)]
                if p:
                    pieces[(f, r)] = (p >> 3, p & 7)
    live = {s for s in range(4) if pos.live >> s & 1}
    ep = {}
    for s in range(4):
        e = pos.ep[s]
        if e is not None:
            from p2p.games.chess4.board import name

            ep[s] = (coord(name(e[0])), coord(name(e[1])))
    return pieces, live, ep, pos.castling, pos.turn


def attacks(pieces, frm, owner, kind, target) -> bool:
    fx, fy = frm
    tx, ty = target
    dx, dy = tx - fx, ty - fy
    if kind == 1:
        px, py = PUSH[owner]
        return (dx, dy) in {(px + py, py + px), (px - py, py - px)} and (
            (dx, dy) != (0, 0)
        )
    if kind == 2:
        return (dx, dy) in KNIGHT
    if kind == 6:
        return max(abs(dx), abs(dy)) == 1
    dirs = {3: DIAG, 4: ORTHO, 5: DIAG + ORTHO, 7: DIAG + ORTHO}[kind]
    for d in dirs:
        x, y = fx + d[0], fy + d[1]
        while on_board(x, y):
            if (x, y) == target:
                return True
            if (x, y) in pieces:
                break
            x, y = x + d[0], y + d[1]
    return False


def pawn_caps(owner):
    px, py = PUSH[owner]
    # forward plus one step to each side
    return ((px + py, py + px), (px - py, py - px))


def attacked(pieces, target, by: set[int]) -> bool:
    return any(
        o in by and attacks(pieces, c, o, k, target) for c, (o, k) in pieces.items()
    )


def reference_moves(game: Chess4) -> set[str]:
    pieces, live, ep, castling, me = snapshot(game)
    foes = live - {me}
    out = set()
    cands = []  # (from, to, extra captured square or None, castle rook (from, to) or None)
    for c, (o, k) in pieces.items():
        if o != me:
            continue
        x, y = c

        def free(t):
            return on_board(*t) and t not in pieces

        def enemy(t):
            return on_board(*t) and t in pieces and pieces[t][0] != me

        if k == 1:
            px, py = PUSH[me]
            one = (x + px, y + py)
            if free(one):
                cands.append((c, one, None, None))
                two = (x + 2 * px, y + 2 * py)
                if on_line(c, START_LINE[me]) and free(two):
                    cands.append((c, two, None, None))
            for dx, dy in pawn_caps(me):
                t = (x + dx, y + dy)
                if not on_board(*t):
                    continue
                ep_land = None
                for s, (sk, ld) in ep.items():
                    if s != me and s in live and sk == t and pieces.get(ld) == (s, 1):
                        ep_land = ld
                if enemy(t) or (free(t) and ep_land is not None):
                    cands.append((c, t, ep_land, None))
        elif k == 2 or k == 6:
            steps = KNIGHT if k == 2 else ORTHO + DIAG
            for dx, dy in steps:
                t = (x + dx, y + dy)
                if free(t) or enemy(t):
                    cands.append((c, t, None, None))
        else:
            dirs = {3: DIAG, 4: ORTHO, 5: DIAG + ORTHO, 7: DIAG + ORTHO}[k]
            for dx, dy in dirs:
                t = (x + dx, y + dy)
                while free(t):
                    cands.append((c, t, None, None))
                    t = (t[0] + dx, t[1] + dy)
                if enemy(t):
                    cands.append((c, t, None, None))
    king = next(c for c, v in pieces.items() if v == (me, 6))
    for side, (kf, kt, rf, rt) in enumerate(CASTLING[me]):
        if not castling >> (2 * me + side) & 1:
            continue
        kf, kt, rf, rt = map(coord, (kf, kt, rf, rt))
        if pieces.get(kf) != (me, 6) or pieces.get(rf) != (me, 4):
            continue
        between = []
        step = ((rf[0] > kf[0]) - (rf[0] < kf[0]), (rf[1] > kf[1]) - (rf[1] < kf[1]))
        t = (kf[0] + step[0], kf[1] + step[1])
        while t != rf:
            between.append(t)
            t = (t[0] + step[0], t[1] + step[1])
        if any(b in pieces for b in between):
            continue
        transit = (kf[0] + step[0], kf[1] + step[1])
        if any(attacked(pieces, s, foes) for s in (kf, transit, kt)):
            continue
        out.add(sq_name(kf) + "-" + sq_name(kt))
    for frm, to, ep_land, _ in cands:
        after = dict(pieces)
        moving = after.pop(frm)
        victims = [after.pop(to, None)]
        if ep_land is not None:
            victims.append(after.pop(ep_land))
        after[to] = moving
        gone = {v[0] for v in victims if v is not None and v[1] == 6}
        ksq = to if moving[1] == 6 else king
        if not attacked(after, ksq, foes - gone):
            out.add(sq_name(frm) + "-" + sq_name(to))
    return out


def _random_games(seed: int, games: int, max_plies: int):
    rng = random.Random(seed)
    for _ in range(games):
        g = Chess4.create({"first": rng.randrange(4)})
        for _ply in range(max_plies):
            if g.is_over():
                break
            yield g
            moves = g.legal_moves()
            # Prefer captures and pawn moves now and then: more promotions, en passant, kings.
            if rng.random() < 0.01:
                live = [s for s in range(4) if s not in g.eliminated()]
                g.resign(rng.choice(live))
                continue
            g.push(rng.choice(moves))


@pytest.mark.parametrize("seed", range(4))
def test_generator_matches_reference_on_random_games(seed: int) -> None:
    checked = 0
    for g in _random_games(seed, games=3, max_plies=400):
        fast = g.legal_moves()
        assert len(fast) == len(set(fast)), "duplicate moves"
        assert set(fast) == reference_moves(g), g.fen4()
        checked += 1
    assert checked > 100


def test_order_is_independent_of_history() -> None:
    # The same position reached by different paths (and via FEN4) lists moves in the same order.
    a = Chess4.create()
    for m in [
        "h2-h3",
        "b7-c7",
        "h13-h12",
        "m10-l10",
        "e1-f3",
        "b6-c6",
        "h12-h11",
        "l10-k10",
    ]:
        a.push(m)
    b = Chess4.create()
    for m in [
        "e1-f3",
        "b6-c6",
        "h13-h12",
        "m10-l10",
        "h2-h3",
        "b7-c7",
        "h12-h11",
        "l10-k10",
    ]:
        b.push(m)
        b.push(b.legal_moves()[-1])
        b.pop()
    assert a.fen4() == b.fen4()
    assert a.legal_moves() == b.legal_moves()
    assert Chess4.from_fen4(a.fen4()).legal_moves() == a.legal_moves()
