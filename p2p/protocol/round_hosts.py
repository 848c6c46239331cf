"""What each helper of the round machine may touch of it, named: one ``Protocol`` per
helper module (``round_notices``, ``round_side``, ``round_conflicts``, ``round_receive``,
``round_timers``, ``round_actions``, ``round_duties``).  A helper's functions take its own
host, never ``RoundMachine`` itself, so no helper imports the machine (no import circle,
type-only ones included) and each door is as wide as written here and no wider: mypy
checks that ``RoundMachine`` is each of them where the machine passes itself on, and that
a helper uses nothing else.  A host that passes itself on to another helper includes that
helper's host."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from p2p.games.base import Game
from p2p.protocol.chat import RateLimiter
from p2p.protocol.conflicts import SeenIds
from p2p.protocol.effects import Effect
from p2p.protocol.events import Event
from p2p.protocol.freshness import ReplayGuard
from p2p.protocol.identity import Identity
from p2p.protocol.phases import LocalEnd, Phase
from p2p.protocol.round import RoundState
from p2p.protocol.timeouts import TurnTimeouts
from p2p.protocol.topics import Route, Topics


class NoticeHost(Protocol):
    """``round_notices``: what a member is told."""

    state: RoundState
    me: Identity
    side: dict[tuple[str, bytes], Event]
    offline: frozenset[bytes]
    timeouts: TurnTimeouts
    _observed_at: dict[str, int]
    _resumed_head: str | None

    def agreed(self) -> bool: ...
    def missing_seats(self, kind: str, seats: Iterable[int]) -> list[int]: ...
    def pooled(self, kind: str) -> list[Event]: ...
    def pooled_seats(self, kind: str) -> set[int | None]: ...


class SideHost(NoticeHost, Protocol):
    """``round_side``: side events, acks, round chat, sync answers."""

    seen: SeenIds
    code: str | None
    key: str
    topics: Topics
    declined_at: str | None
    side_accepted: int
    _chat_limit: RateLimiter
    _chat_seen: ReplayGuard
    _last_asked: int
    _proof: tuple[Event, Event] | None
    _secret: bytes | None
    _sync_answered: dict[bytes, int]
    _sync_sent: tuple[int, int]
    _vouched: SeenIds

    @property
    def acting(self) -> bool: ...
    @property
    def is_admin(self) -> bool: ...
    @property
    def my_seat(self) -> int | None: ...
    @property
    def phase(self) -> Phase: ...

    def route(self) -> Route: ...
    def local_time(self, pk: bytes, ts: int) -> int: ...
    def conflict_evidence(self) -> list[Event]: ...
    def takeback_request(self) -> Event | None: ...
    def _ask_sync(self, now: int, from_seq: int) -> list[Effect]: ...
    def _park(self, event: Event, now: int | None = None) -> list[Effect]: ...
    def _side_event(
        self, kind: str, body: dict[str, Any], now: int, prev: str | None = None
    ) -> list[Effect]: ...
    def _signed_body(self, body: dict[str, Any]) -> dict[str, Any]: ...


class ConflictHost(SideHost, Protocol):
    """``round_conflicts``: contested positions, clock waits, equivocation."""

    pending: dict[str, Event]
    phase_since: int
    rules: int
    _applied_at: dict[str, int]
    _clock: int
    _clock_wait: dict[str, Event]
    _orphans: SeenIds
    _pairs: dict[int, tuple[Event, Event]]
    _signs: dict[tuple[bytes, bool], list[Event]]
    _snapshots: dict[int, RoundState]
    _told_disputes: set[int]
    _told_own: set[int]
    _verdict: bool

    def request_sync(self, now: int, catch_up: bool = True) -> list[Effect]: ...
    def _applied(
        self, event: Event, before: Phase, now: int, mover: int | None = None
    ) -> list[Effect]: ...
    def _orphan(self, ids: list[str]) -> None: ...
    def _receive_chain(self, event: Event, now: int) -> list[Effect]: ...
    def _remember(self, event: Event, effects: list[Effect]) -> None: ...


class ReceiveHost(ConflictHost, Protocol):
    """``round_receive``: incoming events in order, applying at the head, parking."""

    local_end: LocalEnd | None
    _advanced: tuple[Game, str] | None
    _catch_up_until: int
    _sync_floor: dict[bytes, tuple[int, str]]

    def replayed(self, event: Event, now: int) -> str | None: ...
    def _react(self, now: int) -> list[Effect]: ...


class TimerHost(ConflictHost, Protocol):
    """``round_timers``: ``tick``, forfeits, the local end."""

    local_end: LocalEnd | None
    duties_left: bool
    evidence: dict[bytes, tuple[Event, int]]
    expired: bool
    _asked_len: int
    _last_head_sent: int
    _was_acting: bool

    @property
    def expires_here(self) -> int: ...

    def _append(self, kind: str, body: dict[str, Any], now: int) -> list[Effect]: ...
    def _chain_ts(self, now: int) -> int: ...
    def _close_commits(self, now: int) -> list[Effect]: ...
    def _draw(self, now: int) -> list[Effect]: ...
    def _react(self, now: int) -> list[Effect]: ...


class ActionHost(ConflictHost, Protocol):
    """``round_actions``: the user's actions."""

    expired: bool
    nonce: bytes
    _asked_len: int
    _catch_up_until: int
    _sync_floor: dict[bytes, tuple[int, str]]

    def _append(self, kind: str, body: dict[str, Any], now: int) -> list[Effect]: ...
    def _append_move(self, text: str, now: int) -> list[Effect]: ...
    def check_acting(self) -> None: ...
    def _react(self, now: int) -> list[Effect]: ...


class DutyHost(NoticeHost, Protocol):
    """``round_duties``: what the machine does by itself."""

    nonce: bytes
    local_end: LocalEnd | None
    _advanced: tuple[Game, str] | None

    @property
    def is_admin(self) -> bool: ...
    @property
    def my_seat(self) -> int | None: ...

    def _append(self, kind: str, body: dict[str, Any], now: int) -> list[Effect]: ...
    def _append_move(self, text: str, now: int) -> list[Effect]: ...
    def _close_commits(self, now: int) -> list[Effect]: ...
    def _draw(self, now: int) -> list[Effect]: ...
    def _side_event(
        self, kind: str, body: dict[str, Any], now: int, prev: str | None = None
    ) -> list[Effect]: ...
