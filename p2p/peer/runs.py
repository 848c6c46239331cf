"""Our own runs of this key on this machine, remembered next to the key (an edge module:
files and the operating system's locks).

A client restarted after a crash must not take its own earlier run for another session
of its key (``p2p.protocol.sessions``) -- else a stranger replaying the old run's
presences makes it watch.  The old run's Will tells it so when the broker holds it; this
file tells it also when the Will never reached us (the broker has not noticed the old
connection yet, or a stranger emptied the retained topic).

Each run writes one file ``<since>.run`` into the directory (the config dir's ``runs/``)
and holds an exclusive ``flock`` on it while the process lives; the kernel releases it
when the process ends, however it ends.  On starting, a run reads the others: a file
whose lock it can take belongs to a run that has ended (ours, earlier); a locked one
belongs to a run still alive -- another window of ours, which *is* another session.  The
newest ``MAX_KEPT`` ended runs are kept, older files removed.  Where ``fcntl`` does not
exist (Windows) nothing is remembered and the Will alone ends an old run.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import IO

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]  # (no module there: nothing is remembered)

MAX_KEPT = 16
"""Ended runs remembered (the newest; their presences expire within minutes anyway)."""
DIR_NAME = "runs"


class Runs:
    """This run's lock file, and the ``since`` of our ended earlier runs."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._held: IO[bytes] | None = None

    def begin(self, since: int) -> list[int]:
        """Register this run (started at ``since``) and return the ``since`` of our
        earlier runs here that have ended, newest last.  Never raises: a directory we
        cannot use only means nothing is remembered."""
        if fcntl is None:
            return []
        try:
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            ended = self._ended()
            self._hold(since)
        except OSError:
            return []
        return ended

    def _ended(self) -> list[int]:
        found: list[tuple[int, Path]] = []
        for path in self.directory.glob("*.run"):
            try:
                since = int(path.stem)
            except ValueError:
                continue
            if self._free(path):
                found.append((since, path))
        found.sort()
        for _, path in found[:-MAX_KEPT]:
            with contextlib.suppress(OSError):
                path.unlink()
        return [since for since, _ in found[-MAX_KEPT:]]

    @staticmethod
    def _free(path: Path) -> bool:
        """True if no live process holds ``path``'s lock (its run has ended)."""
        try:
            with path.open("rb") as handle:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                fcntl.flock(handle, fcntl.LOCK_UN)
        except BlockingIOError:
            return False
        except OSError:
            return False
        return True

    def _hold(self, since: int) -> None:
        path = self.directory / f"{since}.run"
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        handle = os.fdopen(fd, "r+b")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()  # (another run started in the same millisecond holds it)
            return
        self._held = handle

    def end(self) -> None:
        """This run is over (the file stays: the next run finds it ended)."""
        if self._held is not None:
            self._held.close()
            self._held = None
