"""The phases of a round and the one table of their transitions (docs/protocol.md §6.0).

A round's phase changes only by a *step* of its chain, and only as ``TRANSITIONS`` says:
``advance`` is the one function that sets a phase, and it looks the step up in the table
(``RoundState.apply`` and ``RoundState.end_for_equivocation`` call it; nothing else
writes a phase).  A step is named by the chain event kind that makes it, except where one
kind can lead to two phases: ``start_named`` is a ``start`` of a round whose starter is
named and whose seed is not drawn (straight into play), ``start_closing`` is a ``start``
of a v5 round that draws (its sealed accepts and joins carry the commitments, so it
closes the commit set: straight to the reveals), ``game_over`` is a ``move``,
``seal`` or ``forfeit`` after which the game is over, and ``equivocation`` is the fixed
rule of a proven double signature (two signed events for one position: no chain event,
but a fact of the signed events, so every member holding them takes the same step).

Admission reads the same table: ``admits(phase, kind)`` says whether a chain event of
``kind`` can be appended in ``phase`` at all, ``out_of_phase`` why not; the chain rules
(``RoundState.apply``) and the machine's admission of a chain event at its head
(``p2p.protocol.admission.out_of_phase``) both ask it.

>>> next_phase(Phase.FORMING, "start"), next_phase(Phase.PLAY, "game_over")
(<Phase.COMMIT: 'commit'>, <Phase.OVER: 'over'>)
>>> next_phase(Phase.FORMING, "start_closing")
<Phase.REVEAL: 'reveal'>
>>> admits(Phase.PLAY, "move"), admits(Phase.PLAY, "cancel"), admits(Phase.OVER, "move")
(True, False, False)
>>> next_phase(Phase.OVER, "move")
Traceback (most recent call last):
...
p2p.protocol.phases.TransitionError: no step 'move' from over
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from p2p.protocol.outcome import RoundEnd, RoundOutcome


class Phase(enum.Enum):
    FORMING = "forming"
    COMMIT = "commit"
    REVEAL = "reveal"
    PLAY = "play"
    OVER = "over"
    CANCELLED = "cancelled"


PRE_PLAY = (Phase.FORMING, Phase.COMMIT, Phase.REVEAL)
ENDED = (Phase.OVER, Phase.CANCELLED)
"""The final phases: no step leads out of them."""

TRANSITIONS: Mapping[Phase, Mapping[str, Phase]] = {
    Phase.FORMING: {
        "start": Phase.COMMIT,  # v1-v4: every seat accepted; the commitments follow
        "start_closing": Phase.REVEAL,  # v5: every seat accepted, committed with it
        "start_named": Phase.PLAY,  # the admin named the starter and nothing is drawn
        "cancel": Phase.CANCELLED,
        "equivocation": Phase.CANCELLED,
    },
    Phase.COMMIT: {  # v1-v4 rounds only (v5 commits with the accepts)
        "commit_close": Phase.REVEAL,
        "cancel": Phase.CANCELLED,
        "equivocation": Phase.CANCELLED,
    },
    Phase.REVEAL: {
        "draw": Phase.PLAY,
        "cancel": Phase.CANCELLED,
        "equivocation": Phase.CANCELLED,
    },
    Phase.PLAY: {
        "move": Phase.PLAY,
        "seal": Phase.PLAY,  # resignations and take-backs the game goes on after
        "forfeit": Phase.PLAY,
        "game_over": Phase.OVER,  # a move, seal or forfeit after which the game is over
        "equivocation": Phase.OVER,
    },
    Phase.OVER: {},
    Phase.CANCELLED: {},
}
"""Phase x step -> next phase: every way a round's phase can change."""

STEPS_OF_KIND: Mapping[str, tuple[str, ...]] = {
    "start": ("start", "start_closing", "start_named"),
    "commit_close": ("commit_close",),
    "draw": ("draw",),
    "move": ("move", "game_over"),
    "seal": ("seal", "game_over"),
    "forfeit": ("forfeit", "game_over"),
    "cancel": ("cancel",),
}
"""The steps a chain event of each kind (after the genesis) can make."""


OUT_OF_PHASE: Mapping[str, str] = {
    "start": "start only while forming",
    "commit_close": "commit_close only while collecting commitments",
    "draw": "draw only while collecting reveals",
    "move": "no move outside play",
    "seal": "seal only in play",
    "forfeit": "forfeit only in play",
    "cancel": "a round in play cannot be cancelled",
}
"""Why a chain event of each kind does not fit a phase the table has no step of it from."""


class TransitionError(ValueError):
    """A step the table does not have from that phase (a bug of the caller's checks)."""


class HasPhase(Protocol):
    phase: Phase


def next_phase(phase: Phase, step: str) -> Phase:
    """The phase ``step`` leads to from ``phase``; ``TransitionError`` if there is none."""
    try:
        return TRANSITIONS[phase][step]
    except KeyError:
        raise TransitionError(f"no step {step!r} from {phase.value}") from None


def _admitted() -> frozenset[tuple[Phase, str]]:
    """Every (phase, kind) pair where some step of the kind leads on from the phase."""
    return frozenset(
        (phase, kind)
        for phase in Phase
        for kind, steps in STEPS_OF_KIND.items()
        if any(step in TRANSITIONS[phase] for step in steps)
    )


_ADMITTED = _admitted()
"""``admits`` read from the two tables once (every chain event asks it twice, on the
mover and on each receiver: issue 28)."""


def admits(phase: Phase, kind: str) -> bool:
    """True if a chain event of ``kind`` can be appended in ``phase`` (some step of it
    leads on from there)."""
    return (phase, kind) in _ADMITTED


def out_of_phase(phase: Phase, kind: str) -> str:
    """Why a chain event of ``kind`` cannot be appended in ``phase`` (by the table), or
    ``''`` if it can.

    >>> out_of_phase(Phase.PLAY, "start"), out_of_phase(Phase.OVER, "move")
    ('start only while forming', 'the round is over')
    """
    if admits(phase, kind):
        return ""
    if phase in ENDED:
        return f"the round is {phase.value}"
    return OUT_OF_PHASE.get(kind, f"{kind} is not a chain event")


def advance(state: HasPhase, step: str) -> None:
    """Take ``step``: the one place a round's phase is set."""
    state.phase = next_phase(state.phase, step)


@dataclass(frozen=True)
class LocalEnd:
    """A round that ended here by a local rule, with no chain event to say so: a verdict
    of this member's, beside the chain (``RoundMachine.local_end``).  Nobody wins."""

    kind: RoundEnd
    """``EXPIRED`` (it never got into play in time) or ``ABANDONED`` (the player to move
    and whoever may forfeit it are both gone)."""
    detail: str
    """Why, in one English line."""

    @property
    def reason(self) -> str:
        return self.outcome.reason

    @property
    def outcome(self) -> RoundOutcome:
        """The verdict as a round's outcome: nobody wins."""
        return RoundOutcome(self.kind, detail=self.detail)
