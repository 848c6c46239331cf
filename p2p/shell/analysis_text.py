"""The solver's review of a finished Connect Four round, as chat lines.

``p2p.ai.connect4_ai.analyze_round`` judges every move with the exact solver (Pons'
scores from the mover's side: positive wins, 0 draws, negative loses, ``None`` unknown)
and, where the solver cannot answer yet (early moves), with an estimate of the strongest
heuristic search.  Here each review becomes one line: the move, what it kept (estimates
say so), and whether it was a mistake or the decisive move; the summary counts exactly
the lines marked as mistakes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from p2p.games import Game
from p2p.shell.i18n import Translator


def value_text(score: int | None, t: Translator, estimate: int | None = None) -> str:
    """A Pons score as words (wins / draw / loses); without one, the search's estimate."""
    if score is not None:
        if score > 0:
            return t.t("analysis.win")
        if score < 0:
            return t.t("analysis.loss")
        return t.t("analysis.draw")
    if estimate is None:
        return t.t("analysis.unknown")
    from p2p.ai.c4_search import WIN

    if estimate >= WIN // 2:
        key = "analysis.est_win"
    elif estimate <= -WIN // 2:
        key = "analysis.est_loss"
    elif estimate > ESTIMATE_CLEAR:
        key = "analysis.est_ahead"
    elif estimate < -ESTIMATE_CLEAR:
        key = "analysis.est_behind"
    else:
        key = "analysis.est_even"
    return t.t(key)


ESTIMATE_CLEAR = 50
"""An estimate (evaluation units) beyond which one side is called ahead."""


def describe(
    reviews: Iterable[Any], game: Game, t: Translator, seat_label: Callable[[Game, int], str]
) -> list[str]:
    """One line per reviewed move, then a summary that counts exactly the marked mistakes."""
    first = int(game.options().get("first", 0))
    lines: list[str] = []
    mistakes = estimated_mistakes = 0
    any_estimate = False
    for review in reviews:
        seat = (first + review.ply - 1) % game.players
        estimated = bool(getattr(review, "estimated", False))
        any_estimate = any_estimate or estimated
        notes = []
        if review.mistake:
            mistakes += 1
            was = value_text(review.before, t, getattr(review, "est_before", None))
            if estimated:
                estimated_mistakes += 1
                notes.append(t.t("analysis.probable_mistake", was=was))
            else:
                notes.append(t.t("analysis.mistake", was=was))
        if review.decisive:
            notes.append(t.t("analysis.decisive"))
        verdict = value_text(review.after, t, getattr(review, "est_after", None))
        verdict += " · ".join([""] + notes) if notes else ""
        lines.append(
            t.t("msg.analysis_line", ply=review.ply, seat=seat_label(game, seat), move=review.move, verdict=verdict)
        )
    one = "_one" if mistakes == 1 else ""  # "1 mistake", not "1 mistakes"
    if estimated_mistakes:
        lines.append(t.t(f"analysis.summary_estimates{one}", mistakes=mistakes, estimated=estimated_mistakes))
    else:
        lines.append(t.t(f"analysis.summary{one}", mistakes=mistakes))
    if any_estimate:
        lines.append(t.t("analysis.estimate_note"))
    return lines
