"""Four-player chess in the shell: the board, move input, move notes, rules text.

The board:

Each square is three columns: a space, the owner's letter (r/b/y/g, ``x`` for a grey
piece of a player who is out) and the piece letter.  In colour the owner's colour is
used as well; grey pieces are dimmed.  The last move's two squares are highlighted, and
with the ``show_legal`` house rule the legal targets of the selected piece are marked
(``*`` on an empty square, highlighted when a capture).
"""

from __future__ import annotations

import re

from prompt_toolkit.formatted_text import StyleAndTextTuples

from p2p.games import Game
from p2p.games.chess4.board import DQUEEN, KING, NEUTRAL, PAWN, maybe_square, on_board, sq_of
from p2p.shell.boards import DIM, EMPTY_STYLE, SEAT_STYLES, BoardView, click, frag
from p2p.shell.game_view import GameView, Note
from p2p.shell.i18n import Translator
from p2p.shell.move_input import ENGLISH_LETTERS, GERMAN_LETTERS, Outcome, Refused, Resolved, Select

FILES = "abcdefghijklmn"
_SQUARES = re.compile(r"([a-n])(\d{1,2})\D*?([a-n])(\d{1,2})")
BOARD_WIDTH = 3 + 14 * 3
_LETTERS = "KQRBNPDSLTU"
"""English and German piece letters (p2p.shell.i18n "piece.letters")."""
SHAPE = re.compile(
    rf"^(?:[{_LETTERS}]?[a-nA-N]\d{{1,2}}(?:\s*[-x:]?\s*[{_LETTERS}]?[a-nA-N]\d{{1,2}})?(?:=[A-Z])?[+#]*"
    rf"|[{_LETTERS}]?[a-zA-Z]\d{{1,2}}\s*[-x:]\s*[{_LETTERS}]?[a-zA-Z]\d{{1,2}}(?:=[A-Z])?[+#]*"
    r"|[O0]-[O0](?:-[O0])?[+#]*)$"
)
"""A move: from-to with optional piece letters, capture and promotion, a lone square
(``Nj3``, ``j3``), or castling.  From-to with a dash is a move also with files off the
board (``x9-y3``, ``o5-o6``): refused as "no square", never sent as chat."""
_SHORT = re.compile(rf"^(?P<piece>[{_LETTERS}])?(?P<square>[a-nA-N]\d{{1,2}})[+#]*$")

RULES: tuple[str, str] = (
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
En passant: per double step, until that player moves again."""
)


def move_squares(text: str) -> tuple[str, str] | None:
    """The from- and to-square names of a move text (``"h2-h4"`` -> ``("h2", "h4")``)."""
    m = _SQUARES.search(text)
    if m is None:
        return None
    return m.group(1) + m.group(2), m.group(3) + m.group(4)


def render(game: Game, view: BoardView, t: Translator) -> StyleAndTextTuples:
    """The board, Red's side at the bottom, plus points and who is out."""
    piece_letters = t.t("piece.letters")
    owner_letters = t.t("piece.owners")

    board = game.position.board  # type: ignore[attr-defined]
    out_seats = set(game.eliminated())
    checked = {
        seat for seat in range(game.players)
        if seat not in out_seats and not game.is_over() and game.in_check(seat)  # type: ignore[attr-defined]
    }
    names = game.seat_names()
    history = game.board_moves()
    last = move_squares(history[-1]) if history else None
    highlight = set(last) if last else set()
    targets: set[str] = set()
    if view.selected and view.show_legal and not game.is_over():
        for move in game.legal_moves():
            squares = move_squares(move)
            if squares and squares[0] == view.selected:
                targets.add(squares[1])
    out: StyleAndTextTuples = []
    for rank in range(13, -1, -1):
        out.append(frag("", f"{rank + 1:>2} "))
        for file in range(14):
            label = f"{FILES[file]}{rank + 1}"
            if not on_board(file, rank):
                out.append(frag("", "   "))
                continue
            handler = click(view, label)
            p = board[sq_of(file, rank)]
            style = ""
            if p:
                owner = p >> 3
                grey = owner == NEUTRAL or owner in out_seats
                text = ("x" if grey else owner_letters[owner]) + piece_letters[p & 7]
                if view.color:
                    style = DIM if grey else SEAT_STYLES.get(names[owner], "bold")
                if p & 7 == KING and owner in checked:  # a king in check: "+" and red
                    out.append(frag("fg:ansiwhite bg:ansired bold" if view.color else "", "+" + text, handler))
                    continue
            else:
                text = " *" if label in targets else " ·"
                style = EMPTY_STYLE if view.color and label not in targets else ""
            if view.color and (label in highlight or label == view.selected or (p and label in targets)):
                style += " reverse"
            elif not view.color and p and (label in targets or label == view.selected):
                text = text.upper()
            out.append(frag(style, " " + text, handler))
        out.append(frag("", "\n"))
    out.append(frag("", "   " + "".join(f"  {f}" for f in FILES) + "\n"))
    # each seat's points behind the letter its pieces carry: the legend of "üB" (German Grün)
    points = " · ".join(f"{owner_letters[i]}={t.seat(n)} {p}" for i, (n, p) in enumerate(zip(names, game.scores())))
    _wrapped(out, t.t("board.points", points=points), "")
    if checked:
        _wrapped(out, t.t("board.check", seats=", ".join(t.seat(names[s]) for s in sorted(checked))),
                 "fg:ansired bold" if view.color else "")
    if last is not None:
        _wrapped(out, t.t("board.last", move=history[-1]), "")
    if out_seats:
        _wrapped(out, t.t("board.out", seats=", ".join(t.seat(names[s]) for s in sorted(out_seats))), "")
    for line in t.t("board.legend").split("\n"):
        _wrapped(out, line, DIM if view.color else "")
    return out


def _wrapped(out: StyleAndTextTuples, text: str, style: str) -> None:
    """A line under the board, word-wrapped to the pane (never cut at its edge)."""
    from p2p.shell.wrap import wrap_fragments

    for row in wrap_fragments([(style, text)], BOARD_WIDTH):
        out.extend(row)
        out.append(("", "\n"))


def width(game: Game) -> int:
    """The cross board's fixed width."""
    return BOARD_WIDTH


def _kind(letter: str, letters: str) -> int:
    """The piece kind a typed letter names (the user's letters first, then English)."""
    for table in (letters, ENGLISH_LETTERS, GERMAN_LETTERS):
        found = table.find(letter, 1)
        if found > 0:
            return 5 if found == 7 else found  # a promoted queen moves as a queen
    return 0



def resolve(game: Game, raw: str, selected: str | None, letters: str) -> Outcome:
    """A lone square selects one's own piece or names the selected piece's target;
    ``Nj3`` finds the one knight that can go to j3; from-to goes to the engine."""
    short = _SHORT.match(raw)
    if short is None:
        return Resolved(raw)  # from-to or castling: the engine's own parser decides
    target = short["square"].lower()
    sq = maybe_square(target)
    if sq is None:
        return Refused("move.no_square", {"square": target})
    board = game.position.board  # type: ignore[attr-defined]
    seat = game.to_move()
    piece = board[sq]
    own = bool(piece) and seat is not None and piece >> 3 == seat
    letter = short["piece"]
    wanted = _kind(letter, letters) if letter is not None else None
    if letter is None and own:
        return Select(target, piece & 7)
    if letter is None and selected is not None:
        return Resolved(f"{selected}-{target}")
    movers = []
    for move in game.legal_moves():
        parts = move.split("-")
        if len(parts) != 2 or parts[1] != target:
            continue
        origin = maybe_square(parts[0])
        kind = board[origin] & 7 if origin is not None else 0
        if wanted is None or kind == wanted or (wanted == 5 and kind == 7):
            movers.append(move)
    if len(movers) == 1:
        return Resolved(movers[0])
    if movers:
        return Refused("move.ambiguous", {"square": target, "moves": ", ".join(sorted(movers))})
    if wanted is not None:
        return Refused("move.no_piece_to", {"piece": wanted, "square": target})
    return Refused("move.select_first", {"square": target})


def off_board(game: Game, text: str) -> Refused | None:
    """A square that is not on the cross board ("no square a1"), whoever is to move."""
    squares = re.findall(r"[a-zA-Z]\d{1,2}", text.strip())  # a piece letter is followed by a file, not a digit
    return next((Refused("move.no_square", {"square": s.lower()})
                 for s in squares if maybe_square(s.lower()) is None), None)


def notes(game: Game) -> list[Note]:
    """Check, mate, stalemate, a captured king, a promotion, and the points each seat
    earned with why."""
    before = game.copy()
    move = before.pop()
    mover = before.to_move()
    if mover is None:
        return []
    pos = game.position  # type: ignore[attr-defined]
    kingcap, mated, stalemated = pos.last_eliminations()
    notes: list[Note] = []
    squares = move_squares(move)
    captured = False
    if squares is not None:
        (f1, r1), (f2, r2) = ((FILES.index(s[0]), int(s[1:]) - 1) for s in squares)
        old = before.position.board  # type: ignore[attr-defined]
        captured = bool(old[sq_of(f2, r2)])
        if old[sq_of(f1, r1)] & 7 == PAWN and pos.board[sq_of(f2, r2)] & 7 == DQUEEN:
            notes.append(("chess.promoted", {"seat": mover, "square": squares[1]}))
    for seat in _seats(kingcap):
        notes.append(("chess.kingcap", {"seat": seat, "by": mover}))
    for seat in _seats(mated):
        notes.append(("chess.mated", {"seat": seat, "by": mover}))
    for seat in _seats(stalemated):
        notes.append(("chess.stalemated", {"seat": seat}))
    if not game.is_over():
        for seat in range(game.players):
            if seat != mover and seat not in game.eliminated() and game.in_check(seat):  # type: ignore[attr-defined]
                notes.append(("chess.check", {"seat": seat, "by": mover}))
    old_scores, new_scores = before.scores(), game.scores()
    for seat in range(game.players):
        delta = new_scores[seat] - old_scores[seat]
        if not delta:
            continue
        why: list[str] = []
        if seat == mover:
            if captured or kingcap:
                why.append("capture")
            if mated:
                why.append("mate")
            if delta > 0 and not (captured or kingcap or mated):
                why.append("check")
        if stalemated >> seat & 1:
            why.append("stalemate")
        notes.append(("chess.points", {"seat": seat, "delta": delta, "total": new_scores[seat], "why": why}))
    return notes


def _seats(mask: int) -> list[int]:
    return [seat for seat in range(4) if mask >> seat & 1]



VIEW = GameView(
    rules=RULES, render=render, width=width, shape=SHAPE, resolve=resolve, off_board=off_board,
    notes=notes, click_selects=True, ranking=True, fill_with_computers=True,
    move_help=("h2-h4", "h2-h4"),
)
