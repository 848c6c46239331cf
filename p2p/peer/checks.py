"""Pure helpers of the peer: cheap edge checks, joinability, inbox rule, movers."""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

from p2p.net.inbound import Bucket, Budget
from p2p.protocol.effects import (
    Dropped,
    Effect,
)
from p2p.protocol.events import Event, Signed
from p2p.protocol.identity import verify
from p2p.protocol.lobby import (
    DECLINED_CANCEL,
    LONGEST_INVITATION_MS,
)
from p2p.protocol.round import (
    RoundState,
    TurnTimeouts,
)

if TYPE_CHECKING:
    pass

def _unjoinable(genesis: Event, timeouts: TurnTimeouts, now: int) -> str:
    """Why a genesis found behind a join code is not one to join ("" if it is), at our
    wall-clock time ``now`` (ms)."""
    from p2p.protocol.round import RoundError

    try:
        state = RoundState.from_genesis(genesis, timeouts)
    except RoundError as err:
        return f"unusable genesis: {err}"
    if not state.private:
        return "not a private round"
    if state.expires <= now:
        return "an expired private round"
    if state.expires > now + LONGEST_INVITATION_MS:
        return "a private round that expires too far ahead"
    if not any(seat.pk is None and not seat.is_computer for seat in state.seats):
        return "a private round without an open seat"
    return ""


def _claimed_key(payload: bytes) -> bytes | None:
    """The public key an event claims to be signed by, without parsing it (unverified).

    In the canonical encoding the envelope's keys are sorted and ``body`` comes before
    ``pk``, while nothing after ``pk`` holds one: the last ``"pk":"`` is the envelope's.
    """
    at = payload.rfind(b'"pk":"')
    if at < 0:
        return None
    try:
        key = bytes.fromhex(payload[at + 6 : at + 70].decode("ascii"))
    except ValueError:
        return None
    return key if len(key) == 32 else None


def _claimed_round(payload: bytes) -> str | None:
    """The round id an event claims, without parsing it (``None`` if none or ``null``).

    In the canonical encoding only ``seq``, ``sig``, ``ts`` and ``v`` follow the
    envelope's ``round`` and none of them holds a name: the last ``"round":"`` is it.
    """
    at = payload.rfind(b'"round":"')
    if at < 0 or at < payload.rfind(b'"pk":"'):
        return None
    try:
        return payload[at + 9 : at + 41].decode("ascii")
    except UnicodeDecodeError:
        return None


def _unverified(payload: bytes, public_key: bytes) -> Signed | None:
    """The id and signature ``payload`` claims for ``public_key`` (not yet checked).

    In the canonical encoding the envelope's ``sig`` is the last ``"sig":"`` (only
    ``ts`` and ``v`` follow it), so the signed bytes are the payload without that field,
    and the id is their SHA-256.  A payload that is not canonical fails here or in the
    full parse that follows for everything accepted.
    """
    at = payload.rfind(b'"sig":"')
    end = at + 7 + 128
    if at < 1 or payload[end : end + 2] != b'",':
        return None
    try:
        signature = bytes.fromhex(payload[at + 7 : end].decode("ascii"))
    except ValueError:
        return None
    digest = hashlib.sha256(payload[:at] + payload[end + 2 :]).digest()
    return Signed(public_key, signature, digest.hex(), payload)


def _checked(claim: Signed) -> bool:
    """Whether the claimed signature is valid (one Ed25519 check)."""
    return verify(claim.pk, claim.sig, bytes.fromhex(claim.id))


def _signed(payload: bytes, public_key: bytes) -> Signed | None:
    """The checked signature if ``payload`` carries a valid one by ``public_key``, else None.

    The cheap half of ``events.parse`` (``_unverified`` and one check); that parse takes
    the result (``events.parse(..., signed=...)``) and does not check the signature
    again when key, signature and id are the ones checked here.
    """
    claim = _unverified(payload, public_key)
    return claim if claim is not None and _checked(claim) else None


def _signed_id(payload: bytes, public_key: bytes) -> str | None:
    """The event id if ``payload`` carries a valid signature by ``public_key``, else None."""
    checked = _signed(payload, public_key)
    return None if checked is None else checked.id


def claimed_version(payload: bytes) -> int | None:
    """The protocol version an event claims, without parsing it (unverified).

    In the canonical encoding ``v`` is the envelope's last key, so the payload ends
    with ``,"v":N}``.

    >>> claimed_version(b'{"kind":"hello","ts":5,"v":2}'), claimed_version(b'junk')
    (2, None)
    """
    at = payload.rfind(b'"v":')
    if at < 0 or not payload.endswith(b"}"):
        return None
    digits = payload[at + 4 : -1]
    return int(digits) if digits.isdigit() and len(digits) < 6 else None


class OtherVersions:
    """Keys met signing events of another protocol version: each is told once, and at
    most ``limit`` keys per run (a stranger with many keys cannot fill the screen)."""

    def __init__(self, limit: int = 16) -> None:
        self._told: set[bytes] = set()
        self.limit = limit

    def first(self, key: bytes) -> bool:
        """True the first time ``key`` is met (within the bound)."""
        if key in self._told or len(self._told) >= self.limit:
            return False
        self._told.add(key)
        return True


class _WarnBudget:
    """At most ``burst`` warnings at once, ``rate`` per second after: a flood is counted,
    not written to the log line by line."""

    def __init__(self, rate: float = 10.0, burst: float = 50.0) -> None:
        self._budget = Budget(rate, burst)
        self._bucket = Bucket(self._budget, time.monotonic())

    def take(self) -> bool:
        """Spend one warning; ``False``: over budget, count it instead of writing it."""
        return self._bucket.take(self._budget, time.monotonic())


_BENIGN = frozenset(
    {
        "duplicate",
        "older than the presence we hold",
        "not sealed with the round key",
        "not sealed to us",
        # several brokers: each connection has a session of its own, so the Will of a
        # connection to one broker arrives while we hold the session of another
        "offline presence of another session",
        DECLINED_CANCEL,
        "our own sync request",  # another session of our key asks the others, not us
    }
)
"""Drop reasons that honest traffic (or a stranger's noise we drop unread) produces:
logged at debug level and counted, not reported."""

ROUTINE_DROPS = re.compile(
    r"sync request too soon|sync request by a non-member|our own sync request"
    r"|position \d+ is already taken|position \d+ was forfeited|position \d+ is settled"
    r"|the forfeit at \d+ is final|the forfeited seat's own event|answers an event a forfeit replaced"
    r"|built on another branch|the round has ended here"
    r"|genesis of a round we already know|the invitation has expired|expired presence"
    r"|older than this inviter's open invitation|invitation while busy|invitation list full"
    r"|lobby full|hello budget|lobby chat budget|chat rate limit"
    r"|takeback_decline of a move that is no longer the last|takeback_decline of no request we hold"
    r"|unknown kind"
)
"""Drop reasons that honest peers cause in everyday play: a resumed or reconnected peer
asking to sync too soon, a move and a forfeit crossing, a copy arriving after the end,
full budgets, a take-back's "no" that crossed the next move (or reached us before the
request), an event of a kind a newer client added (it changes nothing here).  They go to the log file only; a warning on screen is kept for what may be
an attack or a real fault (a bad signature, an illegal move, a forfeit by a key that may
not forfeit it ...)."""


def is_routine(reason: str) -> bool:
    """Whether a drop ``reason`` (``Rejected.reason``) is everyday traffic, not a warning."""
    return bool(ROUTINE_DROPS.match(reason or ""))


def _inbox_problem(event: Event, rounds: Mapping[str, object]) -> str:
    """Why ``event`` does not belong in an inbox ('' if it does)."""
    if event.kind not in ("genesis", "cancel"):
        return f"a {event.kind} does not belong in an inbox (invitations and cancels only)"
    if event.kind == "genesis" and event.round in rounds:
        return "genesis of a round we already hold (not an invitation)"
    return ""


def _is_duplicate(effect: Effect) -> bool:
    return isinstance(effect, Dropped) and effect.reason == "duplicate"
