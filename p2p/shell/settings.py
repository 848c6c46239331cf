"""The shell's persistent settings: one JSON file in the config directory.

Nickname, broker, language, notifications, computer level per game and Connect Four
results against the computer per level.  A missing file gives defaults; a corrupt one
gives defaults plus a one-line warning for the user (the file is left as it is until the
next save, so nothing is lost silently).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

FILE_NAME = "shell.json"
NAMESPACE = re.compile(r"[a-z0-9][a-z0-9-]{0,31}")
"""What ``p2p.protocol.topics`` accepts as a namespace (checked there too, with
``p2p.config.check_namespace``); here without importing the protocol at start-up."""


@dataclass
class Settings:
    """What the shell remembers between runs."""

    nick: str = ""
    broker: str = ""
    """Empty: the project's default public brokers, used together
    (``p2p.net.transport.DEFAULT_BROKER_URLS``); several URLs are separated by spaces."""
    lang: str = ""
    notifications: bool = True
    levels: dict[str, str] = field(default_factory=dict)
    connect4_stats: dict[str, dict[str, int]] = field(default_factory=dict)
    public_broker_ok: list[str] = field(default_factory=list)
    """Brokers for which the privacy notice was shown already."""
    namespace: str = ""
    """The lobby to meet in (docs/protocol.md §5); empty: ``public``, everyone's lobby."""

    def record_connect4(self, level: str, outcome: str) -> None:
        """Count a finished Connect Four round against the computer (won/lost/drawn)."""
        entry = self.connect4_stats.setdefault(level, {"won": 0, "lost": 0, "drawn": 0})
        entry[outcome] = entry.get(outcome, 0) + 1


def _from_json(data: Any) -> Settings:
    """Build settings from parsed JSON, keeping only well-typed known fields."""
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")  # noqa: TRY004 - a corrupt file, not a bug
    s = Settings()
    if isinstance(data.get("nick"), str):
        s.nick = data["nick"][:20]
    if isinstance(data.get("broker"), str):
        s.broker = data["broker"]
    if data.get("lang") in ("de", "en"):
        s.lang = data["lang"]
    if isinstance(data.get("notifications"), bool):
        s.notifications = data["notifications"]
    if isinstance(data.get("levels"), dict):
        s.levels = {str(k): str(v) for k, v in data["levels"].items() if isinstance(v, str)}
    stats = data.get("connect4_stats")
    if isinstance(stats, dict):
        for level, entry in stats.items():
            if isinstance(entry, dict):
                s.connect4_stats[str(level)] = {
                    k: int(v) for k, v in entry.items()
                    if k in ("won", "lost", "drawn") and isinstance(v, int) and not isinstance(v, bool)
                }
    if isinstance(data.get("namespace"), str) and NAMESPACE.fullmatch(data["namespace"]):
        s.namespace = data["namespace"]  # a hand-edited bad one falls back to public
    if isinstance(data.get("public_broker_ok"), list):
        s.public_broker_ok = [b for b in data["public_broker_ok"] if isinstance(b, str)]
    return s


def settings_path(directory: Path) -> Path:
    """Where the settings file lives inside ``directory``."""
    return directory / FILE_NAME


def load(directory: Path) -> tuple[Settings, str | None]:
    """Settings from ``directory``; the second item names the file if it was corrupt."""
    path = settings_path(directory)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Settings(), None
    except OSError:
        return Settings(), str(path)
    try:
        return _from_json(json.loads(text)), None
    except (ValueError, TypeError):
        return Settings(), str(path)


def save(settings: Settings, directory: Path) -> None:
    """Write the settings atomically (temp file + rename); raises ``OSError``."""
    path = settings_path(directory)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(asdict(settings), indent=2, sort_keys=True), encoding="utf-8")
    os.replace(tmp, path)
