"""The rule constants of four-player chess (free-for-all) and the readable rules text.

Every number and every product decision of ``docs/chess4.md`` ("The five decisions"
and "Small decisions of our own") has one named home here; the engine (``movegen.Position``)
imports them, and the post-move procedure that applies them in order lives in one
clearly marked place, ``Position._after_move``.
"""

from __future__ import annotations

from p2p.games.chess4.board import BISHOP, DQUEEN, KING, KNIGHT, PAWN, QUEEN, ROOK

# -- points ----------------------------------------------------------------------------

PIECE_POINTS: dict[int, int] = {
    PAWN: 1,
    KNIGHT: 3,
    BISHOP: 5,
    ROOK: 5,
    QUEEN: 9,
    DQUEEN: 1,  # a promoted queen is worth 1 point when captured
    KING: 20,  # capturing a live king (decision 1)
}
"""Points for capturing a live player's piece.  Grey pieces (owner out) score 0."""

GREY_CAPTURE_POINTS = 0
MATE_POINTS = 20
"""Decision 2b: +20 to the mover for each player mated by the move (tested for everyone)."""

STALEMATE_POINTS = 20
"""Decision 2f: a live player with no legal move on their own turn, not in check, gets +20 and is out."""

CHECK_BONUS: dict[int, tuple[int, int]] = {2: (5, 1), 3: (20, 5)}
"""Decision 2c: kings checked by the mover's own pieces -> (bonus, bonus if every checking piece is a queen)."""

DRAW_POINTS = 10
"""Decision 2g: a drawn game gives +10 to every live player."""

# -- elimination, end and draw -----------------------------------------------------------

KING_CAPTURE_ELIMINATES_AT_ONCE = True
"""Decision 1: capturing a live king gives +20 and its owner is out at once, so in the
legality test of that very move the victim's pieces no longer attack."""

POST_MOVE_ORDER = (
    "a: capture points to the mover; a captured king eliminates its owner",
    "b: every other live player in check with no legal move is mated (all tested at once): +20 each to the mover",
    "c: check bonus for kings (mated ones included) attacked by the mover's own pieces",
    "d: mated players are out",
    "e: end test: one live player left, or two left CLAIM_MARGIN or more points apart",
    "f: the turn passes to the next live player; one with no legal move (not in check) is stalemated",
    "g: draw test: REPETITION_COUNT-fold repetition or FIFTY_MOVE_PLIES_PER_PLAYER x live players quiet plies",
)
"""Decision 2, the order of the post-move procedure (implemented in ``Position._after_move``)."""

CLAIM_MARGIN = 21
"""Decision 2e: with two live players left, a lead of this many points ends the game."""

REPETITION_COUNT = 3
"""Decision 2g: the third occurrence of a position is a draw."""

FIFTY_MOVE_PLIES_PER_PLAYER = 50
"""Decision 2g: 50 x (live players) plies without capture or pawn move is a draw."""

EN_PASSANT_PER_SEAT = True
"""Decision 3: one en-passant entry per seat, usable by every other live player until that seat moves again."""

EN_PASSANT_TAKES_THIRD_PIECE = True
"""Decision 3: a third player's piece on the skipped square is captured (and scored) too."""

WINNERS_ARE_ALL_TOP_SCORES = True
"""Decision 4: every player, out or not, whose final score equals the top score wins."""

PERFT_ENDS_BY_POINTS_OR_DRAWS = False
"""Decision 5: perft eliminates players (king capture, mate, stalemate) but never ends by
points, draws or the move limit; it stops only when fewer than two live players remain."""

RESIGN_POINTS = 0
"""House rule: a resigning player is out as if mated, but nobody gets the +20."""

RESIGNED_RANK_BELOW = True
"""House rule: at equal points a player who resigned (online also: left the round or was
forfeited, which the round records as a resignation) ranks below every player who did
not.  Without it, a round in which every human resigned at 0 points ranked all four seats
first, the computer that played on beside those who gave up (issue 26.12)."""


def ranks(scores: tuple[int, ...] | list[int], resigned: tuple[int, ...] | list[int] = ()) -> tuple[int, ...]:
    """Each seat's place, 1 = first: by points (decision 4), at equal points a seat that
    resigned after those that did not (``RESIGNED_RANK_BELOW``); equal places are shared.

    >>> ranks([0, 0, 0, 0], resigned=[0, 1, 3])
    (2, 2, 1, 2)
    >>> ranks([12, 3, 12, 0], resigned=[0])
    (2, 3, 1, 4)
    >>> ranks([5, 5, 0, 0])
    (1, 1, 3, 3)
    """
    gave_up = set(resigned) if RESIGNED_RANK_BELOW else set()
    key = [(points, seat not in gave_up) for seat, points in enumerate(scores)]
    return tuple(1 + sum(1 for other in key if other > mine) for mine in key)


def winners(scores: tuple[int, ...] | list[int], resigned: tuple[int, ...] | list[int] = ()) -> tuple[int, ...]:
    """Decision 4: the seats whose score equals the top score -- at that score, those
    that did not resign, if any did not (``RESIGNED_RANK_BELOW``).

    >>> winners([0, 0, 0, 0], resigned=[0, 1, 3]), winners([9, 9, 2, 0], resigned=[0, 1])
    ((2,), (0, 1))
    """
    places = ranks(scores, resigned)
    return tuple(seat for seat, place in enumerate(places) if place == 1)


RULES_TEXT: dict[str, str] = {
    "en": """\
Four-player chess (free-for-all)

Board and seats: a 14x14 board without its 3x3 corners. Red (bottom), Blue (left),
Yellow (top) and Green (right) play clockwise; Red starts unless the round says
otherwise. Kings stand on their owner's right-hand centre square (chess.com "modern"
array): Red Kh1 Qg1, Blue Ka7 Qa8, Yellow Kg14 Qh14, Green Kn8 Qn7.

Moves: as in chess. Pawns move toward the opposite side, may step twice from their
starting line and capture diagonally forward. Castling on both sides: the king moves
two squares toward the rook, which lands on the square the king crossed; the king may
not be attacked on its start, transit or target square by any live opponent. A pawn
reaching its owner's 8th rank becomes a queen at once (worth only 1 point when
captured). No move may leave your own king attacked by any live opponent.

En passant: every double step leaves an entry (skipped square, landing square) for its
player. Every other live player whose pawn attacks the skipped square may capture en
passant until that player moves again (or the pawn is gone, or the player is out). If a
third player's piece stands on the skipped square, the capture takes both pieces and
scores both.

Points: pawn 1, knight 3, bishop 5, rook 5, queen 9, promoted queen 1. Pieces of players
who are out are grey: they never move and never give check, and capturing them scores 0.
Capturing a live king: +20, and its owner is out at once.
After every move, everyone else is tested: a player in check with no legal move is
checkmated, +20 to the player who moved (even if another player's piece gives the
check), and is out. Checking kings with your own pieces in one move: two kings +5
(+1 if all checking pieces are queens), three kings +20 (+5 if all are queens).
A player with no legal move on their own turn who is not in check is stalemated:
that player gets +20 and is out.

End: when one live player is left, or two are left 21 or more points apart. Draw:
third repetition of a position, or 50 plies per live player without a capture or pawn
move: every live player gets +10 and the game ends. Winners: everyone (out or not)
whose score equals the top score (but see the house rules).

House rules: a player may resign at any time: out as if mated, no points for anyone;
at equal points a player who resigned ranks below every player who did not.
Options: starting seat ("first"), a move limit after which the game ends on points
("move_limit", 0 = none), and whether the next game starts with the next seat.

Notation: moves are written from-to, e.g. h2-h4; castling as the king's two-square move
(h1-j1); promotion is automatic. Piece letters, x, + and # are accepted and ignored.
""",
    "de": """\
Vierschach (jeder gegen jeden)

Brett und Plätze: ein 14x14-Brett ohne die 3x3-Ecken. Rot (unten), Blau (links),
Gelb (oben) und Grün (rechts) ziehen im Uhrzeigersinn; Rot beginnt, wenn die Runde
nichts anderes sagt. Die Könige stehen auf dem rechten Mittelfeld ihres Spielers
(chess.com-Aufstellung "modern"): Rot Kh1 Dg1, Blau Ka7 Da8, Gelb Kg14 Dh14,
Grün Kn8 Dn7.

Züge: wie im Schach. Bauern ziehen zur Gegenseite, dürfen von ihrer Startlinie zwei
Felder ziehen und schlagen schräg vorwärts. Rochade nach beiden Seiten: der König zieht
zwei Felder zum Turm, der Turm landet auf dem überquerten Feld; Start-, Durchgangs- und
Zielfeld des Königs dürfen von keinem lebenden Gegner angegriffen sein. Ein Bauer auf
der 8. Reihe seines Spielers wird sofort zur Dame (beim Schlagen nur 1 Punkt wert).
Kein Zug darf den eigenen König einem Angriff eines lebenden Gegners aussetzen.

En passant: jeder Doppelschritt hinterlässt für seinen Spieler einen Eintrag
(übersprungenes Feld, Zielfeld). Jeder andere lebende Spieler, dessen Bauer das
übersprungene Feld angreift, darf en passant schlagen, bis dieser Spieler wieder zieht
(oder der Bauer weg oder der Spieler ausgeschieden ist). Steht eine Figur eines dritten
Spielers auf dem übersprungenen Feld, werden beide Figuren geschlagen und gezählt.

Punkte: Bauer 1, Springer 3, Läufer 5, Turm 5, Dame 9, umgewandelte Dame 1. Figuren
ausgeschiedener Spieler sind grau: sie ziehen nie, geben nie Schach, und ihr Schlagen
bringt 0 Punkte. Einen lebenden König schlagen: +20, sein Spieler scheidet sofort aus.
Nach jedem Zug werden alle anderen geprüft: wer im Schach steht und keinen legalen Zug
hat, ist matt, der ziehende Spieler bekommt +20 (auch wenn eine fremde Figur Schach
gibt), und der Mattgesetzte scheidet aus. Schach an mehrere Könige mit eigenen Figuren
in einem Zug: zwei Könige +5 (+1, wenn alle schachgebenden Figuren Damen sind), drei
Könige +20 (+5 mit Damen). Wer am Zug keinen legalen Zug hat und nicht im Schach steht,
ist patt: er bekommt +20 und scheidet aus.

Ende: wenn nur noch ein lebender Spieler übrig ist, oder zwei mit 21 oder mehr Punkten
Abstand. Remis: dritte Wiederholung einer Stellung, oder 50 Halbzüge je lebendem
Spieler ohne Schlagen oder Bauernzug: jeder lebende Spieler bekommt +10, das Spiel
endet. Gewinner: alle (ausgeschieden oder nicht) mit der höchsten Punktzahl (siehe
Hausregeln).

Hausregeln: jeder darf jederzeit aufgeben: er scheidet aus wie mattgesetzt, niemand
bekommt Punkte; bei gleicher Punktzahl steht, wer aufgegeben hat, hinter allen, die
nicht aufgegeben haben. Optionen: Startplatz ("first"), ein Zuglimit, nach dem nach Punkten
gewertet wird ("move_limit", 0 = keins), und ob das nächste Spiel mit dem nächsten
Platz beginnt.

Notation: Züge als von-nach, z. B. h2-h4; Rochade als Doppelschritt des Königs (h1-j1);
die Umwandlung geschieht von selbst. Figurenbuchstaben, x, + und # werden akzeptiert
und ignoriert.
""",
}
