"""Three friends in tmux (issue 19, "Done when"): three real ``p2p`` shells on one
Mosquitto -- anna in German, bob and carl in English -- play a 3-seat cube round; carl
quits in the middle and starts again; the round number, the score and the result line
read the same on all three screens (each in its own language).  Then carl restarts
between rounds and anna asks for another: "Round 2" everywhere (a count kept in memory
said "Round 1" on carl's screen)."""

from __future__ import annotations

import re
import shutil
import sys
import time
from pathlib import Path

import pytest
from test_shell_e2e import Tmux, _env

pytestmark = [
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
    pytest.mark.slow,
]

GERMAN = {"Runde": "Round", "vorbei": "over", "Stand": "Score", "gewinnt": "wins", "gewinnen": "win",
          "Rot": "Red", "Gelb": "Yellow", "Blau": "Blue", "Am Zug": "To move", "Aufgabe": "resignation",
          "für eine neue Runde": "for another round", "unentschieden": "a draw"}


def status(tmux: Tmux) -> str:
    """The status line (one or two rows above the input line), as one line."""
    lines = [line.strip() for line in tmux.screen().rstrip("\n").splitlines()]
    rows = lines[-3:-1] if len(lines) >= 3 else lines[:-1]
    if rows and not re.match(r"(Round|Runde|No game|Kein Spiel)", rows[0]):
        rows = rows[1:]  # one row only: the line above it belongs to the panes
    return " · ".join(r for r in rows if r)


def wait_status(tmux: Tmux, pattern: str, timeout: float = 20.0) -> str:
    deadline = time.monotonic() + timeout
    while not re.search(pattern, text := status(tmux)):
        if time.monotonic() > deadline:
            raise AssertionError(f"{pattern!r} not on the status line:\n{tmux.screen()}")
        time.sleep(0.05)
    return text


def english(text: str, owner: str) -> str:
    """A screen's text in English words, with "(you)"/"(du)" named: comparable across screens."""
    for de, en in GERMAN.items():
        text = re.sub(rf"\b{re.escape(de)}\b", en, text)
    return text.replace("(you)", f"({owner})").replace("(du)", f"({owner})")


def shell(broker_url: str, config: Path, nick: str, lang: str) -> Tmux:
    command = [sys.executable, "-m", "p2p", "--broker", broker_url, "--nick", nick, "--lang", lang]
    return Tmux(command, _env(config), size=(200, 30))  # wide: a result line fits one chat row


def test_three_friends_see_one_round_number_score_and_result(tmp_path: Path, broker_url: str) -> None:
    anna = shell(broker_url, tmp_path / "anna", "anna", "de")
    bob = shell(broker_url, tmp_path / "bob", "bob", "en")
    carl = shell(broker_url, tmp_path / "carl", "carl", "en")
    friends = {"anna": anna, "bob": bob, "carl": carl}
    try:
        anna.wait("Verbunden mit", 15)
        bob.wait("Connected to", 15)
        carl.wait("Connected to", 15)
        anna.wait("bob [", 15)
        anna.wait("carl [", 15)
        anna.type("/invite bob carl cube players=3 start=me")
        bob.wait("/accept or /decline", 15)
        carl.wait("/accept or /decline", 15)
        bob.type("/accept")
        carl.type("/accept")
        moves = iter(["a1", "b2", "c3", "d4", "a2", "b3", "c4", "d1", "a3"])
        turns = [anna, bob, carl]
        for who in turns:  # one move each
            wait_status(who, r"\((you|du)\)")
            who.type(next(moves))
            time.sleep(0.4)
        wait_status(anna, r"Runde 1 · Am Zug: Rot \(du\)")
        carl.keys("C-q")  # carl quits in the middle of the round (C-q: no question) ...
        carl.wait("EXITED 0", 15)
        carl.close()
        anna.wait("carl ist offline gegangen", 20)
        carl = friends["carl"] = shell(broker_url, tmp_path / "carl", "carl", "en")  # ... and comes back
        carl.wait("Resumed round", 20)
        wait_status(carl, r"Round 1 · To move: Red \(anna\)", 20)
        for who in (anna, bob, carl):
            wait_status(who, r"\((you|du)\)")
            who.type(next(moves))
            time.sleep(0.4)
        wait_status(anna, r"\(du\)")
        anna.type("/resign")  # the cube has no resignation: the round ends, ranked by points
        for name, tmux in friends.items():
            wait_status(tmux, r"(over|vorbei)", 20)
        time.sleep(1.0)  # every late line (score, agreement) in
        lines = {name: english(status(tmux), name) for name, tmux in friends.items()}
        assert len(set(lines.values())) == 1, lines
        assert lines["bob"].startswith("Round 1 · over: "), lines
        assert "Score anna 0 · bob " in lines["bob"] and " carl " in lines["bob"], lines
        over = {}
        for name, tmux in friends.items():
            found = re.findall(r"(?:Round|Runde) 1 (?:over|vorbei): [^\n│]*", tmux.screen())
            assert found, tmux.screen()
            over[name] = english(found[-1].split(". /")[0], name)
        assert len(set(over.values())) == 1, over
        # carl restarts between rounds; anna asks for another round: round 2 on every screen
        carl.keys("C-q")
        carl.wait("EXITED 0", 15)
        carl.close()
        carl = friends["carl"] = shell(broker_url, tmp_path / "carl", "carl", "en")
        carl.wait("Connected to", 15)
        anna.wait("carl [", 15)
        time.sleep(0.5)
        anna.type("/again")
        bob.wait("/accept or /decline", 15)
        carl.wait("/accept or /decline", 15)
        bob.type("/accept")
        carl.type("/accept")
        for tmux in friends.values():
            wait_status(tmux, r"(Round|Runde) 2 · ", 20)
        time.sleep(0.5)
        wait_status(bob, r"\(you\)|Yellow \(bob\)|Red \(anna\)|Blue \(carl\)")
        bob.type("/resign")
        for tmux in friends.values():
            wait_status(tmux, r"(Round|Runde) 2 · (over|vorbei)", 20)
        time.sleep(1.0)
        lines = {name: english(status(tmux), name) for name, tmux in friends.items()}
        assert len(set(lines.values())) == 1, lines
        assert lines["carl"].startswith("Round 2 · over: "), lines
        for tmux in friends.values():
            tmux.keys("C-q")
            tmux.wait("EXITED 0", 15)
    finally:
        for tmux in friends.values():
            tmux.close()
