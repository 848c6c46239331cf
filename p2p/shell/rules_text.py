"""The rules of each game as the shell shows them (``/rules``), German and English.

Part of the catalogue, kept in its own module because the texts are long.  The
four-player chess text states the project's rule decisions (``docs/chess4.md``).
"""

from __future__ import annotations

RULES: dict[str, tuple[str, str]] = {
    "connect4": (
        """Vier in einer Reihe
Zwei Spieler (Rot, Gelb) werfen abwechselnd einen Stein in eine Spalte; er fällt nach unten.
Wer zuerst vier eigene Steine in einer Reihe hat (waagrecht, senkrecht, diagonal), gewinnt.
Volles Brett ohne Vierer: unentschieden.  Zug: die Spaltennummer (1-7).
Pop Out (popout=true): statt einzuwerfen darfst du einen eigenen Stein unten herausziehen (p3);
wer dabei Vierer für beide erzeugt, gewinnt; dreimal dieselbe Stellung ist unentschieden.""",
        """Connect Four
Two players (Red, Yellow) take turns dropping a stone into a column; it falls to the bottom.
The first with four own stones in a row (horizontal, vertical, diagonal) wins.
A full board without four is a draw.  Move: the column number (1-7).
Pop Out (popout=true): instead of dropping you may pull one of your stones out at the bottom (p3);
a pop that makes fours for both wins for the popper; the same position three times is a draw.""",
    ),
    "cube": (
        """Viergewinnt 3D
Ein Würfel aus 4x4x4 Feldern, 16 Säulen a1-d4; ein Stein fällt auf die unterste freie Ebene.
Jede Viererreihe zählt einen Punkt: entlang Linien, Reihen, Säulen, Flächen- und Raumdiagonalen (76).
Eine Viererreihe beendet das Spiel nicht; es endet, wenn alle 64 Felder voll sind.
Die meisten Punkte gewinnen.  Zug: die Säule (b3).  Das Brett zeigt die vier Ebenen nebeneinander.""",
        """3D Connect Four
A 4x4x4 cube, 16 pillars a1-d4; a stone drops to the lowest free level.
Every line of four scores one point: along files, rows, pillars, plane and space diagonals (76).
A four does not end the game; it ends when all 64 cells are full.
Most points win.  Move: the pillar (b3).  The board shows the four levels side by side.""",
    ),
    "chess4": (
        """Schach zu viert (jeder gegen jeden, nach chess.com)
Rot, Blau, Gelb, Grün ziehen reihum auf dem 14x14-Kreuzbrett.  Zug: von-nach (h2-h4).
Punkte: geschlagene Figuren; König schlagen +20 (der Besitzer ist sofort raus);
Matt +20 für jeden mattgesetzten Gegner; Schach gegen zwei Könige +5, drei +20 (mehr mit Damen).
Patt: +20 für den Pattgesetzten, er ist raus.  Remis (dreimal dieselbe Stellung oder 50 Züge je
Spieler ohne Schlagen/Bauernzug): +10 für alle.  Ende: ein Spieler übrig oder zwei mit 21+ Punkten Abstand.
Figuren ausgeschiedener Spieler werden grau und bleiben stehen.  Es gewinnt die höchste Punktzahl.
en passant: für jeden Doppelschritt, solange der Spieler nicht wieder zieht.""",
        """Four-player chess (free-for-all, after chess.com)
Red, Blue, Yellow, Green move in turn on the 14x14 cross board.  Move: from-to (h2-h4).
Points: captured pieces; capturing a king +20 (its owner is out at once);
mate +20 for each mated opponent; check on two kings +5, three +20 (more with queens).
Stalemate: +20 to the stalemated player, who is out.  Draw (third repetition or 50 moves per
player without capture/pawn move): +10 to all.  End: one player left, or two 21+ points apart.
Pieces of players who are out turn grey and stay.  The top score wins.
En passant: per double step, until that player moves again.""",
    ),
}


def rules(game_name: str, lang: str) -> list[str]:
    """The rules of ``game_name`` as lines, in ``lang`` (``de`` or ``en``)."""
    de, en = RULES[game_name]
    return (de if lang == "de" else en).splitlines()
