"""What the browser face remembers between runs: one JSON file in the config directory.

Its own file (``web.json``) beside the shell's: the two faces share the key, the friends
and the round logs of the config directory, not each other's modules.  A missing or
corrupt file gives defaults (a corrupt one is left as it is until the next save).

>>> s = from_json({"nick": "anna", "lang": "xx", "notifications": False})
>>> s.nick, s.lang, s.notifications
('anna', '', False)
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import asdict, dataclass
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
    return s


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
