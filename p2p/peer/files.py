"""The files a peer keeps beside a round's log: size limit and the round key."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

MAX_LOG_BYTES = 64 * 1024 * 1024
"""A round log larger than this (``p2p replay``'s limit) is not read to resume it."""
ROUND_KEY_HEADER = "p2p-round-key-v1"


def write_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` by ``data`` all at once: a new file beside it, flushed to disk,
    then renamed over it, so a crash leaves the old file or the new one, never a part."""
    tmp = path.with_name(path.name + ".new")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    with contextlib.suppress(OSError):  # the rename itself, on disk (POSIX)
        dirfd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dirfd)
        finally:
            os.close(dirfd)


def write_round_key(path: Path, key: bytes, topic_key: str) -> None:
    """Keep a round key (and its topic key) next to its log, for us only (mode 0600)."""
    if path.exists() and not path.is_file():  # opening a FIFO for writing would block
        raise OSError(f"{path} is no regular file")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(f"{ROUND_KEY_HEADER} {key.hex()} {topic_key}\n")
    os.chmod(path, 0o600)


def read_round_key(path: Path) -> tuple[bytes, str]:
    """``(round key, topic key)`` kept by ``write_round_key``; ``ValueError`` if the
    file is not one."""
    if not stat.S_ISREG(path.stat().st_mode):  # a FIFO would block the event loop
        raise ValueError("not a round key file")
    with path.open("rb") as handle:
        raw = handle.read(256)  # the file has ~120 bytes: never read a hostile giant
    words = raw.split()
    hexdigits = set(b"0123456789abcdef")
    if (
        len(words) != 3
        or words[0] != ROUND_KEY_HEADER.encode()
        or len(words[1]) != 64
        or len(words[2]) != 32
        or not set(words[1] + words[2]) <= hexdigits
    ):
        raise ValueError("not a round key file")
    return bytes.fromhex(words[1].decode()), words[2].decode()
