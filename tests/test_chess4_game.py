"""Four-player chess through the common ``Game`` interface: options, move text, errors,
encodings, copies and the ``p2p perft`` command."""

from __future__ import annotations

import random

import pytest

from p2p.cli import main
from p2p.games import create_game, game_class
from p2p.games.base import Game, IllegalMove, MalformedMove, OptionError
from p2p.games.chess4 import RULES_TEXT, Chess4, rules
from p2p.games.chess4.board import SEAT_NAMES

START_MOVES = [
    "e1-f3",
    "e1-d3",
    "j1-k3",
    "j1-i3",
    "d2-d3",
    "d2-d4",
    "e2-e3",
    "e2-e4",
    "f2-f3",
    "f2-f4",
    "g2-g3",
    "g2-g4",
    "h2-h3",
    "h2-h4",
    "i2-i3",
    "i2-i4",
    "j2-j3",
    "j2-j4",
    "k2-k3",
    "k2-k4",
]


def test_registry_and_metadata() -> None:
    g = create_game("chess4")
    assert isinstance(g, Game) and game_class("chess4") is Chess4
    assert g.name == "chess4" and g.title == "Vierschach (Einzel)"
    assert (
        g.players == 4
        and g.seat_names() == ("Red", "Blue", "Yellow", "Green") == SEAT_NAMES
    )
    assert g.to_move() == 0 and not g.is_over()
    assert g.scores() == (0, 0, 0, 0) and g.winners() == () and g.eliminated() == ()
    assert g.options() == {
        "first": 0,
        "move_limit": 0,
        "show_legal": True,
        "rotate_start": True,
    }
    assert g.legal_moves() == START_MOVES


def test_options_are_checked() -> None:
    for bad in (
        {"first": 4},
        {"first": "1"},
        {"move_limit": -1},
        {"show_legal": 1},
        {"colour": 2},
        {"rotate_start": "yes"},
        {"fen4": 3},
        {"fen4": "nonsense"},
    ):
        with pytest.raises(OptionError):
            Chess4.create(bad)
    g = Chess4.create({"first": 3, "show_legal": False, "rotate_start": False})
    assert g.to_move() == 3
    assert type(g).create(g.options()).state_hash() == g.state_hash()


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("h2-h4", "h2-h4"),
        (" h2h4 ", "h2-h4"),
        ("Nj1-i3", "j1-i3"),
        ("Nj1i3", "j1-i3"),
        ("Qg1xd4", "g1-d4"),
        ("Qg1xQn8+", "g1-n8"),
        ("Qb7xg12+#", "b7-g12"),
        ("b6xBc7", "b6-c7"),
        ("e7-e8=D", "e7-e8"),
        ("e7e8=Q", "e7-e8"),
        ("H2-H4", "h2-h4"),
        ("d14:d13", "d14-d13"),
        ("O-O", "h1-j1"),
        ("O-O-O", "h1-f1"),
        ("resign:2", "resign:2"),
    ],
)
def test_normalize_accepts_pgn4_styles(text: str, canonical: str) -> None:
    assert Chess4.create().normalize(text) == canonical


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "not a move"),
        ("h2", "not a move"),
        ("h2-h15", "h15 is not a square"),
        ("a1-a2", "a1 is not a square"),
        ("n14-n13", "n14 is not a square"),
        ("h2-h2", "two different squares"),
        ("e7-e8=N", "promote to a queen"),
        ("resign:7", "not a move"),
        ("Xh2-h4", "not a move"),
    ],
)
def test_malformed_moves(text: str, reason: str) -> None:
    g = Chess4.create()
    with pytest.raises(MalformedMove, match=reason):
        g.normalize(text)
    before = g.encode()
    with pytest.raises(MalformedMove):
        g.push(text)
    assert g.encode() == before and g.history() == []
    assert not g.is_legal(text)


def test_malformed_reason_is_one_line() -> None:
    with pytest.raises(MalformedMove) as err:
        Chess4.create().push("what is this\nmove")
    assert "\n" not in str(err.value).strip()


@pytest.mark.parametrize(
    ("moves", "bad", "reason"),
    [
        ([], "h3-h4", "no piece on h3"),
        ([], "b7-c7", "Blue's; it is Red's turn"),
        ([], "Nh2-h4", "no knight on h2"),
        ([], "Pe1-f3", "no pawn on e1"),
        ([], "h2-h5", "pawn on h2 cannot move to h5"),
        ([], "g1-g2", "cannot move onto your own piece"),
        ([], "h1-j1", "cannot move onto your own piece"),
        (["h2-h3", "b9-c9"], "f13-f12", "leave your king in check"),
    ],
)
def test_illegal_moves_leave_the_state_unchanged(
    moves: list[str], bad: str, reason: str
) -> None:
    g = Chess4.create()
    for m in moves:
        g.push(m)
    before = (g.encode(), g.history(), g.legal_moves(), g.fen4())
    with pytest.raises(IllegalMove, match=reason):
        g.push(bad)
    assert (g.encode(), g.history(), g.legal_moves(), g.fen4()) == before


def test_pin_by_third_player_blocks_moves() -> None:
    # Blue's b9-c9 opens a8 (Blue's queen) to g14 along the diagonal: Yellow's f13 is pinned.
    g = Chess4.create()
    for m in ["h2-h3", "b9-c9"]:
        g.push(m)
    assert not any(m.startswith("f13-") for m in g.legal_moves())


def test_push_pop_round_trip_and_history_replay() -> None:
    rng = random.Random(7)
    g = Chess4.create()
    states = [g.encode()]
    for _ in range(120):
        if g.is_over():
            break
        g.push(rng.choice(g.legal_moves()))
        states.append(g.encode())
    replay = Chess4.create()
    for entry in g.history():
        replay.apply(entry)
    assert replay.state_hash() == g.state_hash()
    assert replay.fen4() == g.fen4()
    while g.history():
        g.pop()
        states.pop()
        assert g.encode() == states[-1]
    with pytest.raises(IndexError):
        g.pop()


def test_copy_is_independent() -> None:
    g = Chess4.create()
    g.push("h2-h4")
    c = g.copy()
    c.push("b7-c7")
    assert g.history() == ["h2-h4"] and c.history() == ["h2-h4", "b7-c7"]
    assert g.to_move() == 1 and c.to_move() == 2
    c.pop()
    c.pop()
    assert g.history() == ["h2-h4"]
    assert c.state_hash() == Chess4.create().state_hash()


def test_encode_covers_the_position() -> None:
    a, b = Chess4.create(), Chess4.create()
    assert a.encode() == b.encode() and len(a.state_hash()) == 64
    assert Chess4.create({"first": 1}).encode() != a.encode()  # side to move
    a.resign(2)
    assert a.encode() != b.encode()  # live set
    start = Chess4.create().fen4()
    scored = Chess4.from_fen4(start.replace("-0,0,0,0-0-", "-1,0,0,0-0-"))
    assert scored.encode() != b.encode()  # scores
    clocked = Chess4.from_fen4(start.replace("-0,0,0,0-0-", "-0,0,0,0-7-"))
    assert clocked.encode() != b.encode()  # quiet-move clock
    for m in [
        "e1-f3",
        "a5-c6",
        "j14-i12",
        "n5-l6",
        "f3-e1",
        "c6-a5",
        "i12-j14",
        "l6-n5",
    ]:
        b.push(m)
    assert (
        b.fen4().split("-")[-1] == start.split("-")[-1]
        and b.encode() != Chess4.create().encode()
    )  # ply counter


def test_render_marks_grey_pieces_and_blank_corners() -> None:
    g = Chess4.create()
    text = g.render()
    lines = text.splitlines()
    assert len(lines) == 16
    assert lines[0].split() == list("abcdefghijklmn")
    assert lines[1].startswith("14") and lines[1].split()[1:9] == [
        "yR",
        "yN",
        "yB",
        "yK",
        "yQ",
        "yB",
        "yN",
        "yR",
    ]
    assert lines[14].split()[1:9] == ["rR", "rN", "rB", "rQ", "rK", "rB", "rN", "rR"]
    assert lines[14][3:11].strip() == ""  # cut-off corner a1-c1
    g.resign(1)
    assert "bK" not in g.render() and "xK" in g.render() and "xR" in g.render()


def test_rules_text_names_the_decisions() -> None:
    for lang in ("en", "de"):
        text = RULES_TEXT[lang]
        for needle in ("+20", "21", "+10", "en passant", "+5"):
            assert needle in text.lower(), (lang, needle)
    assert rules.MATE_POINTS == 20 and rules.CHECK_BONUS == {2: (5, 1), 3: (20, 5)}
    assert rules.winners((3, 7, 7, 1)) == (1, 2)


def test_perft_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["perft", "chess4", "2"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "395"
    assert main(["perft", "chess4", "2", "--divide"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == "395" and len(out) == 21 and out[0] == "e1-f3: 20"
    fen = Chess4.create({"first": 2}).fen4()
    assert main(["perft", "chess4", "1", "--fen4", fen]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "20"
    assert main(["perft", "connect4", "3"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "343"
    assert main(["perft", "cube", "1"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "16"
    for bad in (
        ["perft", "chess4", "x"],
        ["perft", "chess4", "-1"],
        ["perft", "chess", "1"],
        ["perft", "connect4", "1", "--fen4", "x"],
        ["perft", "chess4", "1", "--fen4", "R-0"],
    ):
        assert main(bad) == 2
        err = capsys.readouterr().err
        assert err.startswith("p2p perft: ") and err.count("\n") == 1
