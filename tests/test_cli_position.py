"""``p2p position`` as a process: JSON output and one-line errors with exit status 2."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def p2p(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "p2p", *args], capture_output=True, text=True, timeout=60, check=False
    )


def test_connect4_json_after_the_published_diagonal_win() -> None:
    out = p2p("position", "--json", "connect4", *["4", "5", "5", "6", "6", "7", "6", "7", "7", "1", "7"])
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["over"] is True and data["to_move"] is None
    assert data["winners"] == [0] and data["scores"] == [1, 0] and data["legal"] == []


def test_connect4_digits_run_together_and_yellow_first() -> None:
    out = p2p("position", "--json", "--first", "1", "connect4", "112244573")
    data = json.loads(out.stdout)
    assert data["winners"] == [1]
    assert len(data["history"]) == 9


def test_a_drawn_connect4_round_has_no_winners() -> None:
    order = "1234567123456721436572143657123456712345 6 7".replace(" ", "")
    data = json.loads(p2p("position", "--json", "connect4", order).stdout)
    assert data["over"] is True and data["winners"] == []


def test_cube_three_players() -> None:
    data = json.loads(p2p("position", "--json", "--players", "3", "cube", "a1", "b2").stdout)
    assert data["to_move"] == 2 and data["scores"] == [0, 0, 0]
    assert len(data["legal"]) == 16 and "a1" in data["legal"]


def test_board_option_and_text_output() -> None:
    out = p2p("position", "--board", "9x7", "connect4", "9")
    assert out.returncode == 0
    assert "1 2 3 4 5 6 7 8 9" in out.stdout and "to move: Yellow" in out.stdout


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["connect4", "4", "4", "4", "4", "4", "4", "4"], "move 7 '4': column 4 is full"),
        (["connect4", "4", "x"], "move 2 'x'"),
        (["cube", "a1", "e9"], "move 2 'e9'"),
        (["chess", "e4"], "unknown game 'chess'"),
        (["--board", "7by6", "connect4"], "expected WxH"),
        (["--players", "5", "cube"], "players"),
        (["connect4", "1", "2", "1", "2", "1", "2", "1", "3"], "move 8 '3': the round is over"),
    ],
)
def test_bad_input_is_one_line_on_stderr_with_status_2(args: list[str], fragment: str) -> None:
    out = p2p("position", *args)
    assert out.returncode == 2
    assert out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0], out.stderr
    assert "Traceback" not in out.stderr
