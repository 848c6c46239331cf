"""What the browser face remembers between runs: one JSON file in the config directory.

Its own file (``web.json``) beside the shell's: the two faces share the key, the friends
and the round logs of the config directory, not each other's modules.  A missing or
corrupt file gives defaults (a corrupt one is left as it is until the next save).

>>> s = from_json({"nick": "anna", "lang": "xx", "notifications": False})
>>> s.nick, s.lang, s.notifications
('anna', '', False)
>>> s.record("connect4", "neuling", "won"); s.record("connect4", "neuling", "won")
>>> from_json({"stats": s.stats, "nick": 3}).stats
{'connect4': {'neuling': {'won': 2, 'lost': 0, 'drawn': 0}}}
>>> from_json({"stats": {"cube": {"x": {"won": "many"}}}}).stats
{}
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger("p2p.web")
FILE_NAME = "web.json"


@dataclass
class WebSettings:
    nick: str = ""
    lang: str = ""
    broker: str = ""
    """Empty: the default public brokers; several URLs separated by spaces."""
    namespace: str = ""
    """Empty: ``public``."""
    notifications: bool = True
    stats: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)
    """Rounds at this device against the computer: game -> level -> won/lost/drawn."""

    def record(self, game: str, level: str, outcome: str) -> None:
        """Count one finished round against the computer (``outcome``: won, lost, drawn)."""
        entry = self.stats.setdefault(game, {}).setdefault(level, {"won": 0, "lost": 0, "drawn": 0})
        entry[outcome] = entry.get(outcome, 0) + 1


def from_json(data: Any) -> WebSettings:
    """Settings from parsed JSON, keeping only well-typed known fields."""
    s = WebSettings()
    if not isinstance(data, dict):
        return s
    for name in ("nick", "broker", "namespace"):
        if isinstance(data.get(name), str):
            setattr(s, name, data[name][:500])
    if data.get("lang") in ("de", "en"):
        s.lang = data["lang"]
    if isinstance(data.get("notifications"), bool):
        s.notifications = data["notifications"]
    s.stats = _stats(data.get("stats"))
    return s


def _stats(raw: Any) -> dict[str, dict[str, dict[str, int]]]:
    """The well-formed part of saved statistics (anything odd is dropped, not guessed)."""
    out: dict[str, dict[str, dict[str, int]]] = {}
    if not isinstance(raw, dict):
        return out
    for game, levels in list(raw.items())[:50]:
        if not isinstance(game, str) or not isinstance(levels, dict):
            continue
        for level, entry in list(levels.items())[:20]:
            if not isinstance(level, str) or not isinstance(entry, dict):
                continue
            counts = {k: entry.get(k, 0) for k in ("won", "lost", "drawn")}
            if all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 10**9 for v in counts.values()):
                out.setdefault(game[:40], {})[level[:40]] = counts
    return out


def load_settings(directory: Path) -> WebSettings:
    try:
        return from_json(json.loads((directory / FILE_NAME).read_text(encoding="utf-8")))
    except FileNotFoundError:
        return WebSettings()
    except (OSError, ValueError) as err:
        log.warning("cannot read %s: %s", directory / FILE_NAME, err)
        return WebSettings()


def save_settings(settings: WebSettings, directory: Path) -> None:
    """Write atomically (a temporary file, then a rename)."""
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = directory / (FILE_NAME + ".tmp")
    tmp.write_text(json.dumps(asdict(settings), indent=1), encoding="utf-8")
    os.replace(tmp, directory / FILE_NAME)
