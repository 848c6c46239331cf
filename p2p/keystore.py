"""The user's key file: load the Ed25519 identity, or create it on first run.

This is an edge module (file I/O and the operating system's randomness); the pure
``p2p.protocol.identity`` only ever sees the 32 seed bytes.  The file lives in
``p2p.config.config_dir()/identity.key`` with mode 0600 and holds one line:
``p2p-ed25519-seed-v1 <64 hex characters>``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from p2p.protocol.identity import SEED_SIZE, Identity

KEY_FILE_NAME = "identity.key"
_HEADER = "p2p-ed25519-seed-v1"


class KeyFileError(Exception):
    """The key file exists but cannot be read as a key; one-line message."""


def default_path() -> Path:
    """Where the key lives unless told otherwise."""
    from p2p.config import config_dir

    return config_dir() / KEY_FILE_NAME


def save(identity: Identity, path: Path) -> None:
    """Write ``identity`` to a new file with mode 0600 (refuses to overwrite)."""
    data = f"{_HEADER} {identity.seed().hex()}\n".encode("ascii")
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def load(path: Path) -> Identity:
    """Read the identity stored at ``path``; ``KeyFileError`` if it is not a key file."""
    try:
        text = path.read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError) as err:
        raise KeyFileError(f"cannot read key file {path}: {err}") from None
    parts = text.split()
    if len(parts) != 2 or parts[0] != _HEADER:
        raise KeyFileError(f"{path} is not a p2p key file")
    try:
        seed = bytes.fromhex(parts[1])
    except ValueError:
        raise KeyFileError(f"{path} holds a malformed key") from None
    if len(seed) != SEED_SIZE:
        raise KeyFileError(f"{path} holds a key of the wrong size")
    if os.name == "posix" and path.stat().st_mode & 0o077:
        os.chmod(path, 0o600)  # a key readable by others is tightened, not refused
    return Identity.from_seed(seed)


def load_or_create(
    path: Path | None = None, random_bytes: Callable[[int], bytes] = os.urandom
) -> Identity:
    """The identity at ``path`` (default: the config dir), creating it on first run."""
    path = default_path() if path is None else path
    if path.exists():
        return load(path)
    identity = Identity.from_seed(random_bytes(SEED_SIZE))
    try:
        save(identity, path)
    except FileExistsError:  # another process created it first: use theirs
        return load(path)
    return identity
