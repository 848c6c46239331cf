"""Four-player chess in the browser: the state ``boards/chess4.js`` draws (the 14x14
cross, click-click and drag moves, legal targets, grey pieces, scores per seat).

State (``common_state`` plus): ``pieces`` (``{"square": "h1", "seat": 0..3 (4: a grey
piece of unknown colour), "kind": "K" | "Q" | "R" | "B" | "N" | "P" | "D", "grey":
bool}``, ``D`` a promoted one-point queen, ``grey`` when its player is out);
``last_move`` (``{"from", "to"}`` or ``None``); ``check`` (live seats in check);
``end_reason`` (the engine's English reason, empty while the game runs). Moves are
``"<from>-<to>"`` (castling is the king's two-square move; a pawn reaching its 8th line
promotes by itself, so promotion needs no extra text).

>>> from p2p.games.chess4 import Chess4
>>> g = Chess4.create(); g.push("h2-h4")
>>> s = state(g)
>>> s["last_move"], s["to_move"], len(s["pieces"])
({'from': 'h2', 'to': 'h4'}, 1, 64)
>>> [p for p in s["pieces"] if p["square"] == "h4"]
[{'square': 'h4', 'seat': 0, 'kind': 'P', 'grey': False}]
"""

from __future__ import annotations

from typing import cast

from p2p.games import Game
from p2p.games.chess4 import Chess4
from p2p.games.chess4.board import NEUTRAL, PIECE_LETTERS, SEATS, SQUARES, name
from p2p.web.web_view import State, WebView, common_state


def state(game: Game) -> State:
    """The position as ``boards/chess4.js`` draws it (see the module docstring)."""
    chess = cast(Chess4, game)
    pos = chess.position
    pieces = []
    for sq in SQUARES:  # a1..n1, a2..n2, ...: a fixed order
        p = pos.board[sq]
        if not p:
            continue
        owner = p >> 3
        grey = owner == NEUTRAL or not pos.live >> owner & 1
        pieces.append({"square": name(sq), "seat": owner, "kind": PIECE_LETTERS[p & 7], "grey": grey})
    moves = chess.board_moves()
    last_move = None
    if moves:
        origin, target = moves[-1].split("-")
        last_move = {"from": origin, "to": target}
    return {
        **common_state(chess),
        "pieces": pieces,
        "last_move": last_move,
        "check": [seat for seat in SEATS if not chess.is_over() and chess.in_check(seat)],
        "end_reason": chess.end_reason(),
        "ranks": list(chess.ranks()),  # at equal points a seat that resigned ranks below
    }


RULES: tuple[str, str] = (  # one paragraph per line: the page wraps them
    """Schach zu viert (jeder gegen jeden, nach chess.com)
Rot, Blau, Gelb, Grün ziehen reihum auf dem 14x14-Kreuzbrett; freie Plätze spielt der Computer.
Punkte: geschlagene Figuren; König schlagen +20 (der Besitzer ist sofort raus); Matt +20 für jeden mattgesetzten Gegner; Schach gegen zwei Könige +5, drei +20 (mehr mit Damen).
Patt: +20 für den Pattgesetzten, er ist raus.  Remis (dreimal dieselbe Stellung oder 50 Züge je Spieler ohne Schlagen/Bauernzug): +10 für alle.
Ende: ein Spieler übrig oder zwei mit 21+ Punkten Abstand.
Figuren ausgeschiedener Spieler werden grau und bleiben stehen.  Es gewinnt die höchste Punktzahl.
en passant: für jeden Doppelschritt, solange der Spieler nicht wieder zieht.
Zug: Figur anklicken, dann ein markiertes Zielfeld (oder ziehen; oder h2-h4 ins Zugfeld).""",
    """Four-player chess (free-for-all, after chess.com)
Red, Blue, Yellow, Green move in turn on the 14x14 cross board; the computer plays free seats.
Points: captured pieces; capturing a king +20 (its owner is out at once); mate +20 for each mated opponent; check on two kings +5, three +20 (more with queens).
Stalemate: +20 to the stalemated player, who is out.  Draw (third repetition or 50 moves per player without capture/pawn move): +10 to all.
End: one player left, or two 21+ points apart.
Pieces of players who are out turn grey and stay.  The top score wins.
En passant: per double step, until that player moves again.
Move: click a piece, then one of the marked targets (or drag it; or type h2-h4).""",
)
"""The rules as the page shows them (``WebView.rules``)."""

VIEW = WebView(script="boards/chess4.js", state=state, rules=RULES)
