"""The four-player chess board for the shell.

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
from p2p.shell.boards import DIM, EMPTY_STYLE, SEAT_STYLES, BoardView, _click, _frag
from p2p.shell.i18n import Translator

FILES = "abcdefghijklmn"
_SQUARES = re.compile(r"([a-n])(\d{1,2})\D*?([a-n])(\d{1,2})")
BOARD_WIDTH = 3 + 14 * 3


def move_squares(text: str) -> tuple[str, str] | None:
    """The from- and to-square names of a move text (``"h2-h4"`` -> ``("h2", "h4")``)."""
    m = _SQUARES.search(text)
    if m is None:
        return None
    return m.group(1) + m.group(2), m.group(3) + m.group(4)


def render(game: Game, view: BoardView, t: Translator) -> StyleAndTextTuples:
    """The board, Red's side at the bottom, plus points and who is out."""
    from p2p.games.chess4.board import KING, NEUTRAL, on_board, sq_of

    piece_letters = t.t("piece.letters")
    owner_letters = t.t("piece.owners")

    board = game.position.board  # type: ignore[attr-defined]
    out_seats = set(game.eliminated())
    checked = {
        seat for seat in range(game.players)
        if seat not in out_seats and not game.is_over() and game.in_check(seat)  # type: ignore[attr-defined]
    }
    names = game.seat_names()
    history = [h for h in game.history() if not h.startswith("resign:")]
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
        out.append(_frag("", f"{rank + 1:>2} "))
        for file in range(14):
            label = f"{FILES[file]}{rank + 1}"
            if not on_board(file, rank):
                out.append(_frag("", "   "))
                continue
            handler = _click(view, label)
            p = board[sq_of(file, rank)]
            style = ""
            if p:
                owner = p >> 3
                grey = owner == NEUTRAL or owner in out_seats
                text = ("x" if grey else owner_letters[owner]) + piece_letters[p & 7]
                if view.color:
                    style = DIM if grey else SEAT_STYLES.get(names[owner], "bold")
                if p & 7 == KING and owner in checked:  # a king in check: "+" and red
                    out.append(_frag("fg:ansiwhite bg:ansired bold" if view.color else "", "+" + text, handler))
                    continue
            else:
                text = " *" if label in targets else " ·"
                style = EMPTY_STYLE if view.color and label not in targets else ""
            if view.color and (label in highlight or label == view.selected or (p and label in targets)):
                style += " reverse"
            elif not view.color and p and (label in targets or label == view.selected):
                text = text.upper()
            out.append(_frag(style, " " + text, handler))
        out.append(_frag("", "\n"))
    out.append(_frag("", "   " + "".join(f"  {f}" for f in FILES) + "\n"))
    points = " · ".join(f"{t.seat(n)} {p}" for n, p in zip(names, game.scores()))
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
