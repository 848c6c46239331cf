"""The shell's memory of nicknames by key, bounded: a stream of fresh keys (a stranger
makes thousands a minute, each with a presence or a chat line) cannot grow it.

The shell keeps the last nickname it saw for a key so that a round member who left the
lobby keeps a name instead of a raw key.  At most ``MAX_NAMES`` keys are kept; beyond
that the key whose name was set longest ago is forgotten first, except keys the caller
pins (the members of the round on the board), which are never pushed out by strangers.

>>> book = NickBook(limit=2)
>>> book[b"a"] = "alice"; book[b"b"] = "bob"; book[b"c"] = "carol"
>>> sorted(book.items())
[(b'b', 'bob'), (b'c', 'carol')]
>>> book = NickBook(limit=2, pinned=lambda pk: pk == b"a")
>>> book[b"a"] = "alice"; book[b"b"] = "bob"; book[b"c"] = "carol"
>>> sorted(book)
[b'a', b'c']
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

MAX_NAMES = 1024
"""Most keys the shell keeps a nickname for (members of the shown round always kept)."""


class NickBook(OrderedDict[bytes, str]):
    """Key -> the last nickname seen, at most ``limit`` entries (oldest set forgotten
    first, never a key ``pinned`` holds on to)."""

    def __init__(
        self, limit: int = MAX_NAMES, pinned: Callable[[bytes], bool] | None = None
    ) -> None:
        super().__init__()
        self.limit = limit
        self._pinned = pinned

    def __setitem__(self, key: bytes, value: str) -> None:
        super().__setitem__(key, value)
        self.move_to_end(key)
        self._trim()

    def setdefault(self, key: bytes, default: str = "") -> str:
        if key in self:
            return self[key]
        self[key] = default
        return default

    def _trim(self) -> None:
        """Forget the oldest unpinned keys until at most ``limit`` are kept."""
        if len(self) <= self.limit:
            return
        for key in list(self.keys()):
            if len(self) <= self.limit:
                return
            if self._pinned is None or not self._pinned(key):
                del self[key]
