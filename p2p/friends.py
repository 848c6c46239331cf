"""Friends: public keys the user marked as known, so an impostor stands out.

A nickname is a label anyone can take; a key is not.  ``Friends`` remembers, per friend's
public key, the nickname it had when the user marked it.  It answers the questions the
shell and the lobby ask:

* ``is_friend(pk)`` -- a key the user knows (the lobby keeps friends first when it has to
  evict, and marks them);
* ``impostor_of(nick, pk)`` -- the friend whose nickname ``nick`` imitates with another key
  (shown as a warning wherever that nickname appears).

The class is pure (no I/O); ``load``/``save`` read and write ``<config dir>/friends.txt``,
one friend a line: ``<64 hex public key> <nickname>`` (``#`` starts a comment).

>>> book = Friends()
>>> book.add(bytes(32), "alice")
>>> book.is_friend(bytes(32)), book.impostor_of("Alice", bytes([1]) * 32) == bytes(32)
(True, True)
>>> book.impostor_of("alice", bytes(32)) is None  # the friend herself
True
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from p2p.protocol.identity import PUBLIC_KEY_SIZE, sanitize_nickname

FILE_NAME = "friends.txt"
MAX_FRIENDS = 1000
"""More lines than this in the file are ignored (a bound on memory and lookups)."""

log = logging.getLogger("p2p.friends")


def _fold(nick: str) -> str:
    """The form two nicknames are compared in: sanitized, case- and space-insensitive."""
    return "".join(sanitize_nickname(nick).casefold().split())


class Friends:
    """The user's friends: public key -> the nickname it had when marked."""

    def __init__(self, entries: dict[bytes, str] | None = None) -> None:
        self._by_key: dict[bytes, str] = {}
        self._by_nick: dict[str, bytes] = {}
        for pk, nick in (entries or {}).items():
            self.add(pk, nick)

    def __len__(self) -> int:
        return len(self._by_key)

    def __contains__(self, pk: object) -> bool:
        return pk in self._by_key

    def items(self) -> list[tuple[bytes, str]]:
        """``(public key, nickname)`` pairs, by nickname."""
        return sorted(self._by_key.items(), key=lambda kv: (_fold(kv[1]), kv[0]))

    def is_friend(self, pk: bytes) -> bool:
        """True if the user marked this key as a friend."""
        return pk in self._by_key

    def nick_of(self, pk: bytes) -> str | None:
        """The nickname a friend had when marked, or ``None``."""
        return self._by_key.get(pk)

    def impostor_of(self, nick: str, pk: bytes) -> bytes | None:
        """The friend's key whose nickname ``nick`` matches while ``pk`` is another key."""
        friend = self._by_nick.get(_fold(nick))
        if friend is None or friend == pk:
            return None
        return friend

    def add(self, pk: bytes, nick: str) -> None:
        """Mark ``pk`` as a friend known as ``nick`` (again: update the nickname)."""
        if len(pk) != PUBLIC_KEY_SIZE:
            raise ValueError(f"a public key has {PUBLIC_KEY_SIZE} bytes")
        if pk not in self._by_key and len(self._by_key) >= MAX_FRIENDS:
            raise ValueError(f"at most {MAX_FRIENDS} friends")
        self.remove(pk)
        name = sanitize_nickname(nick) or "?"
        self._by_key[pk] = name
        self._by_nick.setdefault(_fold(name), pk)

    def remove(self, pk: bytes) -> bool:
        """Forget a friend; ``False`` if it was none."""
        name = self._by_key.pop(pk, None)
        if name is None:
            return False
        if self._by_nick.get(_fold(name)) == pk:
            del self._by_nick[_fold(name)]
            for other, other_name in self._by_key.items():  # another friend of that name
                if _fold(other_name) == _fold(name):
                    self._by_nick[_fold(name)] = other
                    break
        return True

    # -- text form -------------------------------------------------------------------------

    def to_text(self) -> str:
        lines = ["# p2p friends: <public key hex> <nickname when marked>"]
        lines += [f"{pk.hex()} {nick}" for pk, nick in self.items()]
        return "\n".join(lines) + "\n"

    @classmethod
    def from_text(cls, text: str) -> Friends:
        """Parse the file's text; malformed lines are skipped (and logged)."""
        book = cls()
        for number, line in enumerate(text.splitlines(), start=1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            key_hex, _, nick = line.partition(" ")
            try:
                pk = bytes.fromhex(key_hex)
                book.add(pk, nick)
            except ValueError as err:
                log.warning("friends file line %d skipped: %s", number, err)
        return book


def load(path: Path) -> Friends:
    """The friends stored at ``path`` (none if the file does not exist or is unreadable)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Friends()
    except (OSError, UnicodeDecodeError) as err:
        log.warning("cannot read %s: %s", path, err)
        return Friends()
    return Friends.from_text(text)


def save(book: Friends, path: Path) -> None:
    """Write ``book`` to ``path`` (atomically: a temporary file, then a rename)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(book.to_text(), encoding="utf-8")
    os.replace(tmp, path)
