"""What a move did, as catalogue keys with parameters.

Four-player chess: who is in check, who was mated, stalemated or lost the king, which
pawn became a (one-point) queen, and the points each seat earned with why.  The cube:
the lines of four a move completed and the new score.  Connect Four: a double four.
Pure: computed from the position after the move and the one before it (``pop``), so it
works the same for local and online rounds.
"""

from __future__ import annotations

from collections.abc import Callable

from p2p.games import Game
from p2p.games.base import RESIGN_PREFIX

Note = tuple[str, dict[str, object]]
"""A catalogue key and its fields (seat fields are seat indexes, labelled by the caller)."""


def move_notes(game: Game) -> list[Note]:
    """The notes for ``game``'s last move (``[]`` after a resignation)."""
    if not game.history() or game.history()[-1].startswith(RESIGN_PREFIX):
        return []
    if game.name == "cube":
        return _cube_notes(game)
    if game.name == "connect4":
        return _connect4_notes(game)
    if game.name != "chess4":
        return []
    from p2p.games.chess4.board import DQUEEN, PAWN, sq_of
    from p2p.shell.chess4_view import FILES, move_squares

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


def _cube_notes(game: Game) -> list[Note]:
    lines = game.last_completed()  # type: ignore[attr-defined]
    if not lines:
        return []
    before = game.copy()
    before.pop()
    seat = before.to_move()
    if seat is None:
        return []
    return [("cube.scored", {"seat": seat, "count": len(lines), "total": game.scores()[seat]})]


def _connect4_notes(game: Game) -> list[Note]:
    lines = getattr(game, "winning_lines", ())
    if len(lines) < 2:
        return []
    owners = {line.seat for line in lines}
    if len(owners) > 1:
        return [("c4.both", {})]
    return [("c4.double", {"seat": next(iter(owners)), "count": len(lines)})]


def _seats(mask: int) -> list[int]:
    return [seat for seat in range(4) if mask >> seat & 1]


def say_notes(game: Game, t: Callable[..., str], label: Callable[[int], str]) -> list[str]:
    """The notes as lines: ``t`` is the translator's ``t``, ``label`` names a seat."""
    lines = []
    for key, fields in move_notes(game):
        values = dict(fields)
        for name in ("seat", "by"):
            if isinstance(values.get(name), int):
                values[name] = label(int(values[name]))  # type: ignore[arg-type]
        if key == "chess.points":
            why = values.pop("why")
            values["why"] = ", ".join(t(f"chess.why.{w}") for w in why) if why else "-"  # type: ignore[union-attr]
            values["delta"] = f"{int(values['delta']):+d}"  # type: ignore[call-overload]
        lines.append(t(key, **values))
    return lines
