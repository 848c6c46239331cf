"""The computer player in the lobby, kept under its old name: it lives in ``p2p.bot``
(shared with the browser face); ``python -m p2p.shell.bot URL [NICK] [LEVEL]`` still works."""

from __future__ import annotations

from p2p.bot import main as main
from p2p.bot import run_bot as run_bot

if __name__ == "__main__":
    raise SystemExit(main())
