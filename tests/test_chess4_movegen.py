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
    return {
        sq_name(f) + "-" + sq_name(t)
        for f, t, _ep, _rook in ref_legal(pieces, live, ep, castling, me)
    }


def ref_legal(pieces, live, ep, castling, me):
    """Legal moves of ``me`` as (from, to, en-passant landing or None, rook (from, to) or None)."""
    foes = live - {me}
    legal = []
    cands = []

    def free(t):
        return on_board(*t) and t not in pieces

    def enemy(t):
        return on_board(*t) and t in pieces and pieces[t][0] != me

    for c, (o, k) in pieces.items():
        if o != me:
            continue
        x, y = c
        if k == 1:
            px, py = PUSH[me]
            one = (x + px, y + py)
            if free(one):
                cands.append((c, one, None))
                two = (x + 2 * px, y + 2 * py)
                if on_line(c, START_LINE[me]) and free(two):
                    cands.append((c, two, None))
            for dx, dy in pawn_caps(me):
                t = (x + dx, y + dy)
                if not on_board(*t):
                    continue
                ep_land = None
                for s, (sk, ld) in ep.items():
                    if s != me and s in live and sk == t and pieces.get(ld) == (s, 1):
                        ep_land = ld
                if enemy(t) or (free(t) and ep_land is not None):
                    cands.append((c, t, ep_land))
        elif k == 2 or k == 6:
            steps = KNIGHT if k == 2 else ORTHO + DIAG
            for dx, dy in steps:
                t = (x + dx, y + dy)
                if free(t) or enemy(t):
                    cands.append((c, t, None))
        else:
            dirs = {3: DIAG, 4: ORTHO, 5: DIAG + ORTHO, 7: DIAG + ORTHO}[k]
            for dx, dy in dirs:
                t = (x + dx, y + dy)
                while free(t):
                    cands.append((c, t, None))
                    t = (t[0] + dx, t[1] + dy)
                if enemy(t):
                    cands.append((c, t, None))
    king = next(c for c, v in pieces.items() if v == (me, 6))
    for side, names in enumerate(CASTLING[me]):
        if not castling >> (2 * me + side) & 1:
            continue
        kf, kt, rf, rt = map(coord, names)
        if pieces.get(kf) != (me, 6) or pieces.get(rf) != (me, 4):
            continue
        step = ((rf[0] > kf[0]) - (rf[0] < kf[0]), (rf[1] > kf[1]) - (rf[1] < kf[1]))
        t = (kf[0] + step[0], kf[1] + step[1])
        between = []
        while t != rf:
            between.append(t)
            t = (t[0] + step[0], t[1] + step[1])
        if any(b in pieces for b in between):
            continue
        transit = (kf[0] + step[0], kf[1] + step[1])
        if any(attacked(pieces, sq, foes) for sq in (kf, transit, kt)):
            continue
        legal.append((kf, kt, None, (rf, rt)))
    for frm, to, ep_land in cands:
        after = dict(pieces)
        moving = after.pop(frm)
        victims = [after.pop(to, None)]
        if ep_land is not None:
            victims.append(after.pop(ep_land))
        after[to] = moving
        gone = {v[0] for v in victims if v is not None and v[1] == 6}
        ksq = to if moving[1] == 6 else king
        if not attacked(after, ksq, foes - gone):
            legal.append((frm, to, ep_land, None))
    return legal


VALUES = {1: 1, 2: 3, 3: 5, 4: 5, 5: 9, 6: 20, 7: 1}


def ref_play(state: dict, move: str) -> None:
    """Apply ``move`` to the reference state with the design's post-move procedure
    (decision 2), written independently of the engine.  No repetition tracking."""
    pieces, live, ep, castling = (
        state["pieces"],
        state["live"],
        state["ep"],
        state["castling"],
    )
    me = state["turn"]
    frm, to = map(coord, move.split("-"))
    ((f, t, ep_land, rook),) = [
        m
        for m in ref_legal(pieces, live, ep, castling, me)
        if (m[0], m[1]) == (frm, to)
    ]
    scores = state["scores"]
    moving = pieces.pop(f)
    quiet = moving[1] != 1
    for sq in (t, ep_land):
        victim = pieces.pop(sq, None) if sq is not None else None
        if victim is not None:
            quiet = False
            if victim[0] in live:
                scores[me] += VALUES[victim[1]]
                if victim[1] == 6:
                    live.discard(victim[0])  # (a) a captured king eliminates its owner
    if moving[1] == 1 and on_line(t, PROMO_LINE[me]):
        moving = (me, 7)
    pieces[t] = moving
    if rook is not None:
        pieces[rook[1]] = pieces.pop(rook[0])
    ep.pop(me, None)
    if moving[1] == 1 and sorted((abs(t[0] - f[0]), abs(t[1] - f[1]))) == [0, 2]:
        ep[me] = (((f[0] + t[0]) // 2, (f[1] + t[1]) // 2), t)
    for seat, names in CASTLING.items():
        for side, (kf, _kt, rf, _rt) in enumerate(names):
            if coord(kf) in (f, t) or coord(rf) in (f, t):
                castling &= (
                    ~(1 << (2 * seat + side))
                    if coord(rf) in (f, t)
                    else ~(3 << (2 * seat))
                )
    state["castling"] = castling
    state["halfmove"] = state["halfmove"] + 1 if quiet else 0

    def king_of(x):
        return next(c for c, v in pieces.items() if v == (x, 6))

    # (b) mates, all on the same position; (c) check bonus by the mover's own pieces.
    mated = set()
    by_me = []
    for x in sorted(live - {me}):
        k = king_of(x)
        if attacked(pieces, k, live - {x}) and not ref_legal(pieces, live, ep, castling, x):
            mated.add(x)
        if attacked(pieces, k, {me}):
            by_me.append(k)
    scores[me] += 20 * len(mated)
    if len(by_me) >= 2:
        checkers = [
            pieces[c][1]
            for k in by_me
            for c, (o, kind) in pieces.items()
            if o == me and attacks(pieces, c, o, kind, k)
        ]
        queens = all(kind in (5, 7) for kind in checkers)
        scores[me] += {2: (5, 1), 3: (20, 5)}[len(by_me)][queens]
    live -= mated  # (d)
    ref_pass_turn(state, me)
    if not state["over"] and state["halfmove"] >= 50 * len(
        live
    ):  # (g), without repetition
        for s in live:
            scores[s] += 10
        state["over"] = True


def ref_pass_turn(state: dict, seat: int) -> None:
    """(e) end test, then (f) the turn to the next live player, stalemates on the way."""
    pieces, live, scores = state["pieces"], state["live"], state["scores"]

    def end_test() -> bool:
        alive = sorted(live)
        if len(alive) <= 1:
            return True
        return len(alive) == 2 and abs(scores[alive[0]] - scores[alive[1]]) >= 21

    state["over"] = end_test()
    while not state["over"]:
        seat = next(s for s in ((seat + i) % 4 for i in range(1, 5)) if s in live)
        if ref_legal(pieces, live, state["ep"], state["castling"], seat):
            state["turn"] = seat
            break
        king = next(c for c, v in pieces.items() if v == (seat, 6))
        assert not attacked(pieces, king, live - {seat})
        scores[seat] += 20
        live.discard(seat)
        state["over"] = end_test()


def ref_resign(state: dict, seat: int) -> None:
    state["live"].discard(seat)
    if seat == state["turn"]:
        ref_pass_turn(state, seat)
    else:
        alive = sorted(state["live"])
        sc = state["scores"]
        state["over"] = len(alive) <= 1 or (
            len(alive) == 2 and abs(sc[alive[0]] - sc[alive[1]]) >= 21
        )


def ref_state(game: Chess4) -> dict:
    pieces, live, ep, castling, turn = snapshot(game)
    return {
        "pieces": pieces,
        "live": set(live),
        "ep": dict(ep),
        "castling": castling,
        "turn": turn,
        "scores": list(game.scores()),
        "halfmove": game.position.halfmove,
        "over": game.is_over(),
    }


SPARSE = (
    "R-0,0,0,0-1,1,1,1-0,0,0,0-0,0,0,0-0-3,yR,2,yK,yQ,yN,5/4,yP,yP,2,yP,5/14/13,gR/12,gP,gN/"
    "1,bP,10,gP,1/bQ,12,gK/bK,12,gQ/bB,bP,12/1,bP,10,gP,1/bR,13/14/4,rP,rP,2,rP,5/"
    "5,rB,rQ,rK,2,rR,3"
)
"""A thinned-out position (queens, rooks, few pawns) where kings fall and players get mated."""


@pytest.mark.parametrize("seed", range(4))
def test_post_move_procedure_matches_reference_on_random_games(seed: int) -> None:
    """Scores, eliminations, side to move and game end after every move and resignation of
    random games (captures preferred, kings always taken) agree with ``ref_play``."""
    rng = random.Random(100 + seed)
    events = 0
    for game_no in range(6):
        g = (
            Chess4.from_fen4(SPARSE)
            if game_no % 2
            else Chess4.create({"first": rng.randrange(4)})
        )
        state = ref_state(g)
        while not g.is_over():
            if rng.random() < 0.004:
                seat = rng.choice(sorted(state["live"]))
                g.resign(seat)
                ref_resign(state, seat)
                move = f"resign:{seat}"
            else:
                board = g.position.board
                moves = g.legal_moves()
                targets = [(m, board[_sq(m.split("-")[1])]) for m in moves]
                kings = [
                    m
                    for m, p in targets
                    if p & 7 == 6 and g.position.live >> (p >> 3) & 1
                ]
                captures = [m for m, p in targets if p]
                move = (
                    kings[0]
                    if kings
                    else rng.choice(
                        captures if captures and rng.random() < 0.6 else moves
                    )
                )
                g.push(move)
                ref_play(state, move)
            if g.end_reason() == "repetition":
                break
            assert list(g.scores()) == state["scores"], (move, g.fen4())
            assert set(g.eliminated()) == {0, 1, 2, 3} - state["live"], (move, g.fen4())
            assert g.is_over() == state["over"], (move, g.fen4())
            if not g.is_over():
                assert g.to_move() == state["turn"]
            events += g.position.last_eliminations() != (0, 0, 0)
    assert events >= 6


def _sq(name: str) -> int:
    from p2p.games.chess4.board import square

    return square(name)


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
