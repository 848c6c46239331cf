"""The solver's review of a finished Connect Four round, as chat lines.

``p2p.ai.connect4_ai.analyze_round`` judges every move with the exact solver (Pons'
scores from the mover's side: positive wins, 0 draws, negative loses, ``None`` unknown).
Here each review becomes one line: the move, what it kept, and whether it was a mistake
or the decisive move.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from p2p.games import Game
from p2p.shell.i18n import Translator


def value_text(score: int | None, t: Translator) -> str:
    """A Pons score as words: wins / draw / loses / unknown."""
    if score is None:
        return t.t("analysis.unknown")
    if score > 0:
        return t.t("analysis.win")
    if score < 0:
        return t.t("analysis.loss")
    return t.t("analysis.draw")


def describe(
    reviews: Iterable[Any], game: Game, t: Translator, seat_label: Callable[[Game, int], str]
) -> list[str]:
    """One line per reviewed move, then a summary of the mistakes."""
    first = int(game.options().get("first", 0))
    lines: list[str] = []
    mistakes = 0
    for review in reviews:
        seat = (first + review.ply - 1) % game.players
        notes = []
        if review.mistake:
            mistakes += 1
            notes.append(t.t("analysis.mistake", was=value_text(review.before, t)))
        if review.decisive:
            notes.append(t.t("analysis.decisive"))
        verdict = value_text(review.after, t) + (" · " + " · ".join(notes) if notes else "")
        lines.append(
            t.t("msg.analysis_line", ply=review.ply, seat=seat_label(game, seat), move=review.move, verdict=verdict)
        )
    lines.append(t.t("analysis.summary", mistakes=mistakes))
    return lines
