"""FEN4 import/export and PGN4 export of four-player chess."""

from __future__ import annotations

import pytest

from p2p.games.chess4 import Chess4, perft
from p2p.games.chess4.fen4 import START_FEN4

X_DIALECT = (
    "R-0,0,0,0-1,1,1,1-1,1,1,1-0,0,0,0-0-x,x,x,yR,yN,yB,yK,yQ,yB,yN,yR,x,x,x/"
    "x,x,x,yP,yP,yP,yP,yP,yP,yP,yP,x,x,x/x,x,x,8,x,x,x/bR,bP,10,gP,gR/bN,bP,10,gP,gN/"
    "bB,bP,10,gP,gB/bQ,bP,10,gP,gK/bK,bP,10,gP,gQ/bB,bP,10,gP,gB/bN,bP,10,gP,gN/"
    "bR,bP,10,gP,gR/x,x,x,8,x,x,x/x,x,x,rP,rP,rP,rP,rP,rP,rP,rP,x,x,x/"
    "x,x,x,rR,rN,rB,rQ,rK,rB,rN,rR,x,x,x"
)
CLASSIC = START_FEN4.replace(
    "bQ,bP,10,gP,gK/bK,bP,10,gP,gQ", "bK,bP,10,gP,gQ/bQ,bP,10,gP,gK"
)


def test_start_position_in_both_corner_dialects() -> None:
    start = Chess4.create()
    assert start.fen4() == START_FEN4
    for text in (START_FEN4, X_DIALECT):
        g = Chess4.from_fen4(text)
        assert g.state_hash() == start.state_hash()
        assert g.fen4() == START_FEN4


def test_classic_array_gives_the_classic_perft() -> None:
    # Castling rights are dropped (the kings are not on the modern squares), which does
    # not matter before ply 9; the classic counts are 20 / 399 / 7,960.
    g = Chess4.from_fen4(CLASSIC)
    assert [perft(g, d) for d in (1, 2, 3)] == [20, 399, 7960]


def test_round_trip_through_a_game() -> None:
    g = Chess4.create()
    for m in ["h2-h4", "b5-d5", "Nj14-i12", "m8-l8", "i2-i4", "resign:3", "d5-e5"]:
        g.apply(m) if m.startswith("resign") else g.push(m)
    text = g.fen4()
    assert text.startswith("Y-0,0,0,1-")
    # Blue moved again, so only Red's entry from i2-i4 is left.
    assert "dgP" in text and "{'enPassant':('i3:i4','','','')}" in text
    h = Chess4.from_fen4(text)
    assert h.fen4() == text
    assert h.legal_moves() == g.legal_moves()
    assert h.scores() == g.scores() and h.eliminated() == g.eliminated()


def test_grey_and_promoted_pieces() -> None:
    text = START_FEN4.replace("R-0,0,0,0", "R-0,0,0,1").replace("/14/", "/3,dP,10/", 1)
    text = text.replace("3,yR,yN,yB,yK,yQ", "3,yR,yN,yB,yK,yD")
    g = Chess4.from_fen4(text)
    assert g.eliminated() == (3,)
    out = g.fen4()
    assert "dgK" in out and "yD" in out and out.split("/")[2] == "3,dP,10"
    assert "xP" in g.render() and "yD" in g.render()


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty"),
        ("R-0,0,0,0", "7 '-'-separated fields"),
        (START_FEN4.replace("R-", "W-", 1), "side to move"),
        (START_FEN4.replace("R-0,0,0,0", "R-0,0,0"), "dead needs 4"),
        (START_FEN4.replace("-0,0,0,0-0-", "-0,0,a,0-0-"), "whole numbers"),
        (START_FEN4.replace("-0,0,0,0-0-", "-0,0,0,0--3-"), "7 '-'-separated"),
        (START_FEN4.replace("/14/", "/13/", 1), "13 cells, not 14"),
        (START_FEN4.replace("/14/", "/15/", 1), "15 cells"),
        (START_FEN4.replace("/14/", "/", 1), "14 ranks"),
        (START_FEN4.replace("3,yR", "yP,2,yR"), "corner"),
        (START_FEN4.replace("/14/", "/3,x,10/", 1), "'x' on the playing square"),
        (START_FEN4.replace("yK", "yQ"), "Yellow is live but has 0 kings"),
        (START_FEN4.replace("gQ", "gK"), "Green is live but has 2 kings"),
        (START_FEN4.replace("bQ", "bZ"), "unknown piece letter"),
        (START_FEN4.replace("bQ", "wQ"), "unknown cell"),
        (START_FEN4.replace("bQ", "dbQ"), "grey piece on a8 belongs to Blue"),
        (START_FEN4.replace("R-0,0,0,0", "R-1,0,0,0"), "side to move, Red, is out"),
        (
            START_FEN4.replace("bQ,bP,10,gP,gK", "bQ,bP,3,rP,6,gP,gK"),
            "Red pawn on its promotion line at f8",
        ),
        (
            START_FEN4.replace("-0-3,", "-0-{'enPassant':('','x9:d5','','')}-3,"),
            "skipped:landing",
        ),
        (
            START_FEN4.replace("-0-3,", "-0-{'enPassant':('','c5:e5','','')}-3,"),
            "double step",
        ),
        (START_FEN4.replace("-0-3,", "-0-{broken-3,"), "unbalanced|fields|extras"),
    ],
)
def test_bad_fen4_is_a_one_line_value_error(text: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason) as err:
        Chess4.from_fen4(text)
    assert "\n" not in str(err.value)


def test_fen4_side_to_move_settles_a_stalemate() -> None:
    # Blue to move with a lone king on a4 that cannot move and is not in check: stalemated
    # on its own turn, +20, out; Yellow moves next.
    rows = ["14"] * 14
    rows[14 - 4] = "bK,13"  # a4
    rows[14 - 5] = "4,rR,9"  # e5: covers a5, b5
    rows[14 - 3] = "3,rN,10"  # d3: covers b4
    rows[14 - 1] = "7,rK,6"
    rows[0] = "6,yK,7"
    rows[14 - 8] = "13,gK"
    text = "B-0,0,0,0-0,0,0,0-0,0,0,0-0,0,0,0-0-" + "/".join(rows)
    g = Chess4.from_fen4(text)
    assert g.eliminated() == (1,) and g.scores() == (0, 20, 0, 0) and g.to_move() == 2


def test_pgn4_export() -> None:
    g = Chess4.create()
    for m in ["h2-h4", "b9-d9", "Nj14-i12", "m8-l8", "Qg1-i3", "resign:2", "d9-e9"]:
        g.apply(m) if m.startswith("resign") else g.push(m)
    text = g.pgn4({"Red": "alice"})
    lines = text.splitlines()
    assert (
        '[Variant "FFA"]' in lines
        and '[StartFen4 "4PC"]' in lines
        and '[Red "alice"]' in lines
    )
    assert '[Result "*"]' in lines
    # Yellow resigned during Blue's turn: its R follows Red's move, and Blue's move
    # opens the next round.
    assert lines[-3:] == [
        "1. h2-h4 .. b9-d9 .. Nj14-i12 .. m8-l8",
        "2. Qg1-i3 .. R",
        "3. d9-e9",
    ]
    other = Chess4.create({"first": 1})
    assert f'[StartFen4 "{other.fen4()}"]' in other.pgn4()


def test_pgn4_finished_game_has_result_and_termination() -> None:
    g = Chess4.create()
    g.resign(0)
    g.resign(1)
    g.resign(2)
    text = g.pgn4()
    assert '[Termination "last player"]' in text
    assert '[Result "Red: 0 - Blue: 0 - Yellow: 0 - Green: 0"]' in text
    assert text.rstrip().splitlines()[-1] == "1. R .. R .. R"
