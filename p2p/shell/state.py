"""What the shell shows, kept outside the widgets (prompt_toolkit's calculator pattern).

The controller changes this state; the layout's ``FormattedTextControl`` callables read
it on every render.  Nothing here knows about prompt_toolkit or the network.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from typing import Literal

LineKind = Literal["chat", "info", "warn", "error", "round", "invite"]
MAX_LINES = 500


@dataclass(frozen=True)
class LogLine:
    """One line of the chat pane: time, sender (empty for notices), text and kind (which
    picks its colour)."""

    clock: str
    """Time of day, ``HH:MM`` (the local clock unless the caller gave its own)."""
    sender: str
    text: str
    kind: LineKind = "info"


@dataclass(frozen=True)
class LobbyEntry:
    """Somebody in the lobby."""

    nick: str
    fingerprint: str
    busy: bool = False
    me: bool = False
    friend: bool = False
    impostor: str = ""
    """The friend's nickname this entry imitates with another key ('' if none)."""
    clock_ms: int = 0
    """How far this peer's clock is off ours (its minus ours, estimated; 0 if unknown)."""


@dataclass
class ShellState:
    """Everything the screen draws."""

    lines: deque[LogLine] = field(default_factory=lambda: deque(maxlen=MAX_LINES))
    lobby: list[LobbyEntry] = field(default_factory=list)
    online: bool = False
    connection: str = ""
    """Short connection note for the status line (empty when offline by choice)."""
    busy: str = ""
    """Who is thinking right now (a computer seat), shown in the status line."""
    version: int = 0
    """Bumped on every change; lets tests and the chat view notice updates."""

    def add(self, text: str, kind: LineKind = "info", sender: str = "", clock: str | None = None) -> None:
        """Append a line to the chat pane (one line per call; newlines become spaces)."""
        stamp = clock if clock is not None else time.strftime("%H:%M")
        for part in text.split("\n"):
            self.lines.append(LogLine(stamp, sender, part, kind))
        self.version += 1

    def text_lines(self) -> list[str]:
        """The chat pane as plain strings (for tests and logs)."""
        return [
            f"{line.clock} {line.sender + ': ' if line.sender else ''}{line.text}" for line in self.lines
        ]
