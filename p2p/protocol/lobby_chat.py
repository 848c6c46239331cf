"""Lobby ``hello`` and ``chat`` as the lobby receives them: freshness and budgets.

The settings (window, memory, budgets) are ``p2p.protocol.lobby``'s, handed in when the
lobby is built; the rules are docs/protocol.md §5 ("Lobby chat").
"""

from __future__ import annotations

from collections.abc import Callable

from p2p.protocol.chat import RateLimiter, TokenBucket
from p2p.protocol.clocks import ClockOffsets
from p2p.protocol.effects import ChatLine, Effect, dropped
from p2p.protocol.events import Event
from p2p.protocol.freshness import ReplayGuard


class LobbyChat:
    """Who may say ``hello`` or chat in the lobby of namespace ``root``, and what we saw."""

    def __init__(
        self,
        root: str,
        clocks: ClockOffsets,
        *,
        window_ms: int,
        max_seen: int,
        chat_budgets: dict[int, tuple[int, int]],
        hello_budget: tuple[int, int],
    ) -> None:
        self.root = root
        self.clocks = clocks
        self.chat_limit = RateLimiter()
        self.chat_budget = {r: TokenBucket(*b) for r, b in chat_budgets.items()}
        self.hello_budget = TokenBucket(*hello_budget)
        self.chat_seen = ReplayGuard(window_ms, max_seen)
        self.hello_seen = ReplayGuard(window_ms, max_seen)

    def fresh_reason(self, event: Event, now: int, guard: ReplayGuard) -> str | None:
        """Why a ``hello`` or lobby ``chat`` is stale, foreign or a duplicate, or ``None``."""
        if event.body.get("ns") != self.root:
            return "signed for another lobby"
        return guard.check(event.id, self.clocks.local(event.pk, event.ts), now)

    def _fresh(self, event: Event, now: int, guard: ReplayGuard) -> list[Effect]:
        """Namespace, window and duplicate checks of a ``hello`` or lobby ``chat``."""
        why = self.fresh_reason(event, now, guard)
        return [dropped(event, why)] if why else []

    def admit_hello(self, event: Event, now: int) -> list[Effect]:
        """Why a ``hello`` is refused (one ``Dropped``), or ``[]``: taken and remembered."""
        refused = self._fresh(event, now, self.hello_seen)
        if refused:
            return refused
        if not self.hello_budget.take(now):
            return [dropped(event, "hello budget")]
        self.hello_seen.add(event.id, self.clocks.local(event.pk, event.ts), now)
        return []

    def on_chat(
        self, event: Event, now: int, rank: Callable[[bytes], int], nick: Callable[[bytes], str]
    ) -> list[Effect]:
        """A lobby chat line, charged to the budget of its sender's ``rank``."""
        if event.round is not None:
            return [dropped(event, "round chat in the lobby")]
        refused = self._fresh(event, now, self.chat_seen)
        if refused:
            return refused
        if not self.chat_limit.allow(event.pk, now):
            return [dropped(event, "chat rate limit")]
        level = rank(event.pk)
        budget = self.chat_budget.get(min(level, 2)) if level else None
        if budget is not None and not budget.take(now):
            return [dropped(event, "lobby chat budget")]
        self.chat_seen.add(event.id, self.clocks.local(event.pk, event.ts), now)
        return [ChatLine(event.pk, nick(event.pk), event.body["text"], None, event.ts)]
