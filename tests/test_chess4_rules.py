"""Four-player chess rules on hand-made FEN4 positions: every scoring rule, elimination,
castling, en passant, promotion, king capture, end and draw rules, house rules."""

from __future__ import annotations

import pytest
from chess4_fen import fen

from p2p.games.base import IllegalMove
from p2p.games.chess4 import Chess4, next_first, perft
from p2p.games.chess4.movegen import move_text

RED, BLUE, YELLOW, GREEN = range(4)
HOME_KINGS = {"h1": "rK", "a7": "bK", "g14": "yK", "n8": "gK"}


def game(pieces: dict[str, str | None], **kw) -> Chess4:
    """A game from ``pieces`` plus the four kings on their home squares (``None`` removes)."""
    merged = {**HOME_KINGS, **pieces}
    return Chess4.from_fen4(
        fen({k: v for k, v in merged.items() if v is not None}, **kw)
    )


# -- captures and points ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("victim", "points"),
    [("bP", 1), ("bN", 3), ("bB", 5), ("bR", 5), ("bQ", 9), ("bD", 1)],
)
def test_capture_points(victim: str, points: int) -> None:
    g = game({"e4": "rR", "e9": victim})
    g.push("e4-e9")
    assert g.scores() == (points, 0, 0, 0)


def test_promotion_makes_a_one_point_queen() -> None:
    g = game({"e7": "rP", "f8": "bN", "d9": "bR"})
    assert "e7-e8" in g.legal_moves() and "e7-f8" in g.legal_moves()
    g.push("e7-e8")
    assert "rD" in g.render()
    red = {move_text(m) for m in g.position.legal_moves_of(RED)}
    assert {"e8-e12", "e8-j3", "e8-a8"} <= red  # moves like a queen
    g.push("d9-d8")
    g.push("g14-g13")
    g.push("n8-n9")
    g.push("e8-e9")
    g.push("d8-e8")
    assert "d8xDe8" not in g.pgn4()
    g = game({"e7": "rP", "d9": "bR"})
    g.push("e7-e8")
    g.push("d9-d8")
    g.push("g14-g13")
    g.push("n8-n9")
    g.push("h1-h2")
    g.push("d8xe8")  # Blue takes the promoted queen: 1 point, not 9
    assert g.scores() == (0, 1, 0, 0)
    assert g.pgn4().splitlines()[-1].endswith("Rd8xDe8")


def test_promotion_by_capture_and_for_every_seat() -> None:
    g = game({"e7": "rP", "f8": "bN"})
    g.push("e7xf8")
    assert g.scores() == (3, 0, 0, 0)
    assert g.position.board[g.position.kings[RED]] and "rD" in g.render()
    for turn, pawn, move in (
        ("B", "bP", "g5-h5"),
        ("Y", "yP", "e8-e7"),
        ("G", "gP", "h6-g6"),
    ):
        sq = move.split("-")[0]
        h = game({sq: pawn}, turn=turn)
        h.push(move)
        assert f"{pawn[0]}D" in h.render(), move


def test_grey_capture_scores_nothing() -> None:
    g = game({"e4": "rR", "e9": "bQ"}, dead="0,1,0,0", clock=20)
    g.push("e4-e9")
    assert g.scores() == (0, 0, 0, 0)
    assert g.position.halfmove == 0  # a grey capture resets the quiet-move clock too


def test_king_capture() -> None:
    g = game({"d7": "rR", "b9": "bR"})
    assert "d7-a7" in g.legal_moves()
    g.push("d7xa7")
    assert g.scores() == (20, 0, 0, 0)
    assert g.eliminated() == (BLUE,)
    assert g.to_move() == YELLOW
    assert "xR" in g.render()  # Blue's rook is grey now
    g.pop()
    assert g.eliminated() == () and g.to_move() == RED


def test_pinned_piece_may_take_the_pinners_king() -> None:
    # Decision 1: Red's rook h5 is pinned by Blue's rook h9; taking Blue's king c5 is legal
    # because Blue's pieces stop attacking at once.  Pinned by Yellow, it stays illegal.
    base = {"h1": "rK", "h5": "rR", "c5": "bK", "g14": "yK", "n8": "gK"}
    g = Chess4.from_fen4(fen({**base, "h9": "bR"}))
    assert "h5-c5" in g.legal_moves()
    assert "h5-h9" in g.legal_moves() and "h5-g5" not in g.legal_moves()
    g.push("h5xc5")
    assert g.eliminated() == (BLUE,) and g.scores()[RED] == 20
    g = Chess4.from_fen4(fen({**base, "h9": "yR"}))
    assert "h5-c5" not in g.legal_moves()
    with pytest.raises(IllegalMove, match="leave your king in check"):
        g.push("h5-c5")


def test_discovered_check_by_a_third_player_lets_the_next_player_take_the_king() -> (
    None
):
    # Red's knight leaves c10 and opens Blue's rook a10 onto Yellow's king e10.
    pieces = {"h1": "rK", "a7": "bK", "e10": "yK", "n8": "gK", "a10": "bR", "c10": "rN"}
    g = Chess4.from_fen4(fen(pieces))
    g.push("c10-d8")
    assert (
        g.in_check(YELLOW) and g.eliminated() == ()
    )  # Yellow can still step away: no mate
    assert g.to_move() == BLUE and "a10-e10" in g.legal_moves()
    g.push("a10xe10")
    assert g.scores() == (0, 20, 0, 0)
    assert g.eliminated() == (YELLOW,)
    assert g.to_move() == GREEN


def test_no_move_may_leave_the_king_to_any_live_opponent() -> None:
    # Red's bishop on i2 shields the king h1 from Green's queen on l5 (diagonal l5-k4-j3-i2-h1).
    pieces = {"h1": "rK", "a7": "bK", "g14": "yK", "n8": "gK", "i2": "rB", "l5": "gQ"}
    g = Chess4.from_fen4(fen(pieces))
    assert all(
        not m.startswith("i2-") or m in ("i2-j3", "i2-k4", "i2-l5")
        for m in g.legal_moves()
    )
    # Once Green is out, its queen is grey and pins nothing.
    g = Chess4.from_fen4(fen(pieces, dead="0,0,0,1"))
    assert "i2-h3" in g.legal_moves()


# -- mates, check bonus, stalemate ---------------------------------------------------------


def test_mate_gives_20_and_greys_the_army() -> None:
    # Blue king a4 (a3, b3 are cut corners): Qe5-b5, guarded by the knight d6, mates.
    pieces = {
        "h1": "rK",
        "a4": "bK",
        "b8": "bN",
        "g14": "yK",
        "n8": "gK",
        "e5": "rQ",
        "d6": "rN",
    }
    g = Chess4.from_fen4(fen(pieces))
    g.push("e5-b5")
    assert g.eliminated() == (BLUE,)
    assert g.scores() == (20, 0, 0, 0)
    assert g.to_move() == YELLOW
    assert "xN" in g.render() and "xK" in g.render()
    assert g.pgn4().splitlines()[-1].endswith("Qe5-b5#")


def test_mate_by_another_players_piece_scores_for_the_mover() -> None:
    # Red's knight f14 leaves rank 14: Blue's rook k14 then mates Yellow's king d14
    # (d13, e13 are Yellow's own pawns); the +20 goes to Red, who moved.
    pieces = {
        "h1": "rK",
        "a7": "bK",
        "n8": "gK",
        "d14": "yK",
        "d13": "yP",
        "e13": "yP",
        "k14": "bR",
        "f14": "rN",
    }
    g = Chess4.from_fen4(fen(pieces))
    g.push("f14-g12")
    assert g.eliminated() == (YELLOW,)
    assert g.scores() == (20, 0, 0, 0)
    assert g.to_move() == BLUE


def test_two_players_mated_at_once_then_two_left_21_apart() -> None:
    # Blue's king a4 and Green's king n4 sit in the corner notches; Red's rook g5 covers
    # rank 5 and Red's queen g3-g4 checks both along rank 4: both mated at once (+40), the
    # queen alone checks two kings (+1), and Red then leads Yellow by 41: game over.
    pieces = {"h1": "rK", "a4": "bK", "n4": "gK", "k14": "yK", "g5": "rR", "g3": "rQ"}
    g = Chess4.from_fen4(fen(pieces))
    g.push("g3-g4")
    assert g.eliminated() == (BLUE, GREEN)
    assert g.scores() == (41, 0, 0, 0)
    assert g.is_over() and g.end_reason() == "points" and g.winners() == (RED,)
    g.pop()
    assert g.eliminated() == () and not g.is_over()


@pytest.mark.parametrize(
    ("mover", "extra", "bonus"),
    [
        ("rQ", {}, 1),  # queen checks Blue and Green: two kings with a queen: +1
        ("rR", {}, 5),  # rook: +5
        ("rQ", {"g14": "yK"}, 5),  # three kings, queen only: +5
        ("rR", {"g14": "yK"}, 20),  # three kings: +20
    ],
)
def test_check_bonus(mover: str, extra: dict[str, str], bonus: int) -> None:
    pieces = {"h1": "rK", "a6": "bK", "n6": "gK", "k14": "yK", "g3": mover}
    pieces.update(extra)
    if "g14" in extra:
        del pieces["k14"]
    g = Chess4.from_fen4(fen(pieces))
    g.push("g3-g6")
    kings = 3 if extra else 2
    assert sum(g.in_check(s) for s in (BLUE, YELLOW, GREEN)) == kings
    assert g.eliminated() == ()
    assert g.scores() == (bonus, 0, 0, 0)


def test_check_bonus_counts_only_the_movers_pieces_and_live_kings() -> None:
    # Knight g5-e6 uncovers the rook g3 on Yellow's king g14: one king by Red's pieces,
    # no bonus, although Blue's rook b8 checks Green's king too.
    pieces = {
        "h1": "rK",
        "a6": "bK",
        "n8": "gK",
        "g14": "yK",
        "g3": "rR",
        "g5": "rN",
        "b8": "bR",
    }
    g = Chess4.from_fen4(fen(pieces))
    g.push("g5-e6")
    assert g.in_check(YELLOW) and g.in_check(GREEN)
    assert g.scores() == (0, 0, 0, 0)
    # A grey king in the line does not count.
    pieces = {"h1": "rK", "a6": "bK", "n6": "gK", "k14": "yK", "g3": "rR"}
    g = Chess4.from_fen4(fen(pieces, dead="0,0,0,1"))
    g.push("g3-g6")
    assert g.scores() == (0, 0, 0, 0)


def test_check_bonus_queen_and_rook_is_not_queens_only() -> None:
    # Rook i8-i6 checks Blue (a6) and uncovers the queen g8 on Green's king n8: +5.
    pieces = {"h1": "rK", "a6": "bK", "n8": "gK", "k14": "yK", "g8": "rQ", "i8": "rR"}
    g = Chess4.from_fen4(fen(pieces))
    g.push("i8-i6")
    assert g.in_check(BLUE) and g.in_check(GREEN) and g.eliminated() == ()
    assert g.scores() == (5, 0, 0, 0)


def test_stalemate_gives_20_and_eliminates_on_own_turn() -> None:
    # Blue's king a4 is not attacked, but a5, b5 (rook e5) and b4 (knight d3) are.
    pieces = {"h1": "rK", "a4": "bK", "g14": "yK", "n8": "gK", "e9": "rR", "d3": "rN"}
    g = Chess4.from_fen4(fen(pieces))
    g.push("e9-e5")
    assert g.eliminated() == (BLUE,)
    assert g.scores() == (0, 20, 0, 0)
    assert g.to_move() == YELLOW
    assert "S" in g.pgn4().splitlines()[-1]
    g.pop()
    assert g.eliminated() == () and g.scores() == (0, 0, 0, 0) and g.to_move() == RED


def test_grey_pieces_never_move_nor_give_check() -> None:
    pieces = {"h1": "rK", "a7": "bK", "g14": "yK", "n8": "gK", "h9": "bR", "i3": "bN"}
    g = Chess4.from_fen4(fen(pieces, dead="0,1,0,0"))
    assert not g.in_check(RED)
    assert "h1-h2" in g.legal_moves() and "h1-g1" in g.legal_moves()
    g.push("h1-h2")
    assert g.to_move() == YELLOW  # Blue is skipped
    assert all(not m.startswith(("h9", "i3", "a7")) for m in g.legal_moves())
    with pytest.raises(IllegalMove, match="grey"):
        g.push("h9-h8")


# -- castling -------------------------------------------------------------------------------


CASTLE_SETUP = {
    "h1": "rK",
    "d1": "rR",
    "k1": "rR",
    "a7": "bK",
    "a4": "bR",
    "a11": "bR",
    "g14": "yK",
    "d14": "yR",
    "k14": "yR",
    "n8": "gK",
    "n4": "gR",
    "n11": "gR",
}
CASTLE_MOVES = {
    RED: (("h1-j1", "k1", "i1"), ("h1-f1", "d1", "g1")),
    BLUE: (("a7-a5", "a4", "a6"), ("a7-a9", "a11", "a8")),
    YELLOW: (("g14-e14", "d14", "f14"), ("g14-i14", "k14", "h14")),
    GREEN: (("n8-n10", "n11", "n9"), ("n8-n6", "n4", "n7")),
}


@pytest.mark.parametrize("seat", range(4))
@pytest.mark.parametrize("side", [0, 1])
def test_castling_every_seat_both_sides(seat: int, side: int) -> None:
    g = Chess4.from_fen4(
        fen(
            CASTLE_SETUP,
            turn="RBYG"[seat],
            castle_short="1,1,1,1",
            castle_long="1,1,1,1",
        )
    )
    move, rook_from, rook_to = CASTLE_MOVES[seat][side]
    assert move in g.legal_moves()
    g.push("O-O" if side == 0 else "O-O-O")
    assert g.history() == [move]
    f = g.fen4()
    assert f.split("-")[2 + side].split(",")[seat] == "0"
    board = g.position.board
    from p2p.games.chess4.board import square

    assert board[square(rook_to)] == (seat << 3) | 4 and board[square(rook_from)] == 0
    g.pop()
    assert (
        g.fen4()
        == Chess4.from_fen4(
            fen(
                CASTLE_SETUP,
                turn="RBYG"[seat],
                castle_short="1,1,1,1",
                castle_long="1,1,1,1",
            )
        ).fen4()
    )


def test_castling_blocked_by_attacks_of_any_live_opponent() -> None:
    setup = {
        **CASTLE_SETUP,
        "i5": "yR",
    }  # Yellow's rook covers i1, Red's short transit square
    g = Chess4.from_fen4(fen(setup, castle_short="1,1,1,1", castle_long="1,1,1,1"))
    assert "h1-j1" not in g.legal_moves() and "h1-f1" in g.legal_moves()
    with pytest.raises(IllegalMove, match="castle"):
        g.push("h1-j1")
    # Grey attackers do not count.
    g = Chess4.from_fen4(
        fen(setup, castle_short="1,1,1,1", castle_long="1,1,1,1", dead="0,0,1,0")
    )
    assert "h1-j1" in g.legal_moves()
    # In check: no castling.
    g = Chess4.from_fen4(
        fen({**CASTLE_SETUP, "h6": "gR"}, castle_short="1,1,1,1", castle_long="1,1,1,1")
    )
    assert "h1-j1" not in g.legal_moves() and "h1-f1" not in g.legal_moves()
    with pytest.raises(IllegalMove, match="out of check"):
        g.push("h1-j1")


def test_castling_rights_lost_by_king_or_rook_moves_and_rook_capture() -> None:
    g = Chess4.from_fen4(
        fen({**CASTLE_SETUP, "k9": "bR"}, castle_short="1,1,1,1", castle_long="1,1,1,1")
    )
    g.push("h1-h2")
    g.push("k9xk1")  # Blue takes Red's short rook... Red lost both rights anyway
    fields = g.fen4().split("-")
    assert fields[2].split(",")[RED] == "0" and fields[3].split(",")[RED] == "0"
    g = Chess4.from_fen4(
        fen(CASTLE_SETUP, castle_short="1,1,1,1", castle_long="1,1,1,1")
    )
    g.push("d1-d2")
    fields = g.fen4().split("-")
    assert fields[2].split(",")[RED] == "1" and fields[3].split(",")[RED] == "0"


# -- en passant -------------------------------------------------------------------------------


def test_en_passant_both_flanks_within_the_seat_window() -> None:
    # Blue b5-d5 skips c5; Red's pawns on b4 and d4 both attack c5 three plies later.
    pieces = {**HOME_KINGS, "b5": "bP", "b4": "rP", "d4": "rP"}
    g = Chess4.from_fen4(fen(pieces, turn="B"))
    g.push("b5-d5")
    g.push("g14-g13")
    g.push("n8-n7")
    assert {"b4-c5", "d4-c5"} <= set(g.legal_moves())
    for mover in ("b4", "d4"):
        g.push(f"{mover}-c5")
        assert g.scores() == (1, 0, 0, 0)
        assert "bP" not in g.render()
        g.pop()
    # After Blue moves again the entry is gone.
    g.push("h1-h2")
    g.push("a7-a8")
    g.push("g13-g14")
    g.push("n7-n8")
    assert "d4-c5" not in g.legal_moves() and "b4-c5" not in g.legal_moves()


def test_en_passant_by_the_next_player_and_clearing() -> None:
    pieces = {**HOME_KINGS, "b5": "bP", "d6": "yP", "d4": "rP"}
    g = Chess4.from_fen4(fen(pieces, turn="B"))
    g.push("b5-d5")
    assert "d6-c5" in g.legal_moves()  # Yellow right away
    g.push("d6xc5")
    assert g.scores() == (0, 0, 1, 0)
    g.push("n8-n7")
    # The pawn on the landing square is gone: Red has no en passant (c5 holds Yellow's pawn,
    # which Red's d4 pawn may take normally).
    assert "d4-c5" in g.legal_moves()
    g.push("d4xc5")
    assert g.scores() == (1, 0, 1, 0)


def test_en_passant_takes_a_third_piece_on_the_skipped_square() -> None:
    g = game({"b5": "bP", "d4": "rP", "e6": "yN"}, turn="B")
    g.push("b5-d5")
    g.push("e6-c5")  # Yellow's knight lands on the skipped square
    g.push("n8-n7")
    g.push("d4xc5")  # takes the knight and, en passant, Blue's pawn on d5
    assert g.scores() == (3 + 1, 0, 0, 0)
    assert "yN" not in g.render() and "bP" not in g.render()
    assert g.pgn4().splitlines()[-1].endswith("d4xNc5")
    g.pop()
    assert "yN" in g.render() and "bP" in g.render()


def test_en_passant_entry_is_in_fen4_and_cleared_when_the_seat_is_out() -> None:
    pieces = {**HOME_KINGS, "b5": "bP", "d4": "rP"}
    g = Chess4.from_fen4(fen(pieces, turn="B"))
    g.push("b5-d5")
    assert "'enPassant':('','c5:d5','','')" in g.fen4()
    h = Chess4.from_fen4(g.fen4())
    assert h.fen4() == g.fen4() and h.legal_moves() == g.legal_moves()
    g.push("g14-g13")
    g.push("n8-n7")
    assert "d4-c5" in g.legal_moves()
    g.resign(BLUE)
    assert "d4-c5" not in g.legal_moves()


def test_en_passant_with_promotion() -> None:
    # Red pawn on d7 takes en passant onto c8, its promotion rank.
    pieces = {**HOME_KINGS, "b8": "bP", "d7": "rP", "a7": None, "a6": "bK"}
    g = Chess4.from_fen4(fen(pieces, turn="B"))
    g.push("b8-d8")
    g.push("g14-g13")
    g.push("n8-n7")
    g.push("d7-c8")
    assert g.scores() == (1, 0, 0, 0)
    assert "rD" in g.render()


# -- end of game, draws, winners ------------------------------------------------------------


def test_game_ends_when_one_player_is_left() -> None:
    pieces = {"h1": "rK", "a4": "bK", "g14": "yK", "n8": "gK", "e5": "rQ", "d6": "rN"}
    g = Chess4.from_fen4(fen(pieces, dead="0,0,1,1", points="3,0,0,30"))
    g.push("e5-b5")
    assert g.is_over() and g.to_move() is None
    assert g.end_reason() == "last player"
    assert g.scores() == (23, 0, 0, 30)
    assert g.winners() == (GREEN,)  # decision 4: out or not, top score wins
    assert g.legal_moves() == []
    with pytest.raises(IllegalMove, match="over"):
        g.push("h1-h2")


def test_two_players_21_apart_end_the_game() -> None:
    pieces = {
        "h1": "rK",
        "a7": "bK",
        "g14": "yK",
        "n8": "gK",
        "e4": "rR",
        "e9": "gQ",
        "e10": "gR",
    }
    g = Chess4.from_fen4(fen(pieces, dead="0,1,1,0", points="0,0,0,0"))
    g = Chess4.from_fen4(fen(pieces, dead="0,1,1,0", points="12,0,0,0"))
    g.push("e4-e9")  # +9 -> 21 points ahead
    assert g.is_over() and g.end_reason() == "points"
    assert g.winners() == (RED,)
    g = Chess4.from_fen4(fen(pieces, dead="0,1,1,0", points="11,0,0,0"))
    g.push("e4-e9")  # 20 ahead: the game goes on
    assert not g.is_over()


def test_fifty_moves_per_live_player_draw() -> None:
    pieces = {**HOME_KINGS, "e4": "rR"}
    g = Chess4.from_fen4(fen(pieces, clock=198, points="1,2,3,4"))
    g.push("e4-e5")
    assert not g.is_over()
    g.push("a7-a8")
    assert g.is_over() and g.end_reason() == "50 moves"
    assert g.scores() == (11, 12, 13, 14)
    assert g.winners() == (GREEN,)
    # With two live players the limit is 100 plies.
    g = Chess4.from_fen4(fen(pieces, clock=99, dead="0,1,1,0"))
    g.push("e4-e5")
    assert g.is_over() and g.scores() == (10, 0, 0, 10) and g.winners() == (RED, GREEN)
    # A pawn move resets the clock.
    g = Chess4.from_fen4(fen({**pieces, "f2": "rP"}, clock=199))
    g.push("f2-f3")
    assert not g.is_over() and g.position.halfmove == 0


def test_threefold_repetition_draw() -> None:
    g = Chess4.create()
    cycle = ["e1-f3", "a5-c6", "j14-i12", "n5-l6", "f3-e1", "c6-a5", "i12-j14", "l6-n5"]
    for m in cycle:
        g.push(m)
    assert not g.is_over()  # second occurrence
    for m in cycle[:-1]:
        g.push(m)
    assert not g.is_over()
    g.push(cycle[-1])  # third occurrence of the start position
    assert g.is_over() and g.end_reason() == "repetition"
    assert g.scores() == (10, 10, 10, 10)
    assert g.winners() == (0, 1, 2, 3)
    g.pop()
    assert not g.is_over() and g.scores() == (0, 0, 0, 0)


def test_move_limit_and_first_options() -> None:
    g = Chess4.create({"move_limit": 3, "first": 2})
    assert g.to_move() == YELLOW
    assert all(
        m[0] in "defghijk" and m.split("-")[0][1:] in ("13", "14")
        for m in g.legal_moves()
    )
    for m in ["h13-h12", "m8-l8", "h2-h3"]:
        g.push(m)
    assert g.is_over() and g.end_reason() == "move limit"
    assert g.winners() == (0, 1, 2, 3)
    assert g.options() == {
        "first": 2,
        "move_limit": 3,
        "show_legal": True,
        "rotate_start": True,
    }
    assert next_first(g.options()) == 3
    assert next_first({"first": 3}) == 0
    assert next_first({"first": 2, "rotate_start": False}) == 2


# -- resignation ------------------------------------------------------------------------


def test_resign_any_seat_any_time_and_replay() -> None:
    g = Chess4.create()
    g.push("h2-h3")
    g.resign(YELLOW)  # not Yellow's turn
    assert (
        g.eliminated() == (YELLOW,)
        and g.to_move() == BLUE
        and g.scores() == (0, 0, 0, 0)
    )
    g.push("b7-c7")
    assert g.to_move() == GREEN  # Yellow skipped
    g.resign(GREEN)  # the side to move resigns: the turn passes
    assert g.to_move() == RED
    assert g.history() == ["h2-h3", "resign:2", "b7-c7", "resign:3"]
    replay = Chess4.create()
    for entry in g.history():
        replay.push(entry)
    assert replay.state_hash() == g.state_hash()
    replay = Chess4.create()
    for entry in g.history():
        replay.apply(entry)
    assert replay.state_hash() == g.state_hash()
    with pytest.raises(IllegalMove, match="already out"):
        g.resign(YELLOW)
    g.resign(RED)
    # all at 0 points: the one who played on is first alone, the three who resigned share
    # second (house rule RESIGNED_RANK_BELOW; all four "won" before, issue 26.12)
    assert (
        g.is_over() and g.winners() == (BLUE,) and g.end_reason() == "last player"
    )
    assert g.ranks() == (2, 1, 2, 2) and g.resigned_seats() == (YELLOW, GREEN, RED)
    with pytest.raises(IllegalMove):
        g.resign(BLUE)
    assert g.pop() == "resign:0"
    assert g.pop() == "resign:3"
    assert g.eliminated() == (YELLOW,) and g.to_move() == GREEN


def test_resign_pieces_turn_grey_and_two_left_21_apart_ends() -> None:
    pieces = {"e4": "rR", "e9": "bQ"}
    g = game(pieces, points="30,0,9,0")
    g.resign(BLUE)
    assert "xQ" in g.render() and not g.is_over()
    g.push("e4xe9")  # a grey queen: 0 points
    assert g.scores() == (30, 0, 9, 0)
    g.resign(GREEN)  # Red 30, Yellow 9: two left, 21 apart
    assert g.is_over() and g.end_reason() == "points" and g.winners() == (RED,)


def test_perft_counts_eliminations_but_not_points() -> None:
    # Red can take Blue's king at once; perft goes on with three players.
    g = Chess4.from_fen4(
        fen({"h1": "rK", "a7": "bK", "g14": "yK", "n8": "gK", "d7": "rR"})
    )
    total = 0
    for move in g.legal_moves():
        g.push(move)
        total += len(g.legal_moves())
        g.pop()
    assert perft(g, 2) == total
    # A finished game (two players 21 apart) still counts for perft (decision 5).
    h = Chess4.from_fen4(
        fen(
            {"h1": "rK", "a7": "bK", "g14": "yK", "n8": "gK", "e4": "rR", "e9": "gQ"},
            dead="0,1,1,0",
            points="12,0,0,0",
        )
    )
    h.push("e4-e9")
    assert h.is_over() and perft(h, 1) > 0
