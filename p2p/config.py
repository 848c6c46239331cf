"""Where p2p keeps its files: the user's config directory.

``P2P_CONFIG_DIR`` overrides the location (tests and several local peers use it);
otherwise ``$XDG_CONFIG_HOME/p2p`` or ``~/.config/p2p``.
"""

from __future__ import annotations

import os
from pathlib import Path


def config_dir() -> Path:
    """The directory for keys, settings and statistics (created on demand, mode 0700)."""
    override = os.environ.get("P2P_CONFIG_DIR")
    if override:
        path = Path(override)
    else:
        base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
        path = Path(base) / "p2p"
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path
