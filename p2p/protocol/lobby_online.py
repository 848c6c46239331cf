"""The lobby's online list: ranks, the silence heap and eviction under a flood.

Plain state, no clock: ``p2p.protocol.lobby`` passes ``now`` and, at each call, the
settings it reads (``STALE_MS``, ``ESTABLISHED_MS`` ...), so a patched setting applies.
The rules are docs/protocol.md §5, "Who is kept (the online list under a flood)".
"""

from __future__ import annotations

import heapq
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable
from typing import Generic, Protocol, TypeVar

from p2p.protocol.events import Event


class Listed(Protocol):
    """What the list reads and writes of a peer (``p2p.protocol.lobby.PeerInfo``)."""

    pk: bytes
    last_heard: int
    first_heard: int
    established: bool
    ttl: int
    silent_at: int


P = TypeVar("P", bound=Listed)


class OnlineList(Generic[P]):
    """Peers online by key, strangers by last heard, partners kept, partners gone."""

    def __init__(
        self,
        me: bytes,
        is_friend: Callable[[bytes], bool],
        max_changes: int,
    ) -> None:
        self.me = me
        self.is_friend = is_friend
        """Which keys the user counts as friends (rank 0, as read at each call)."""
        self.peers: dict[bytes, P] = {}
        self.silence: list[tuple[int, bytes]] = []
        """A heap of (``silent_at``, key) of the peers online; entries of keys heard again
        since (another ``silent_at``) or gone are skipped when they come up."""
        # strangers by last heard, least recent first: new ones and established ones
        self.new: OrderedDict[bytes, None] = OrderedDict()
        self.established: OrderedDict[bytes, None] = OrderedDict()
        self.kept: OrderedDict[bytes, None] = OrderedDict()
        self.gone: OrderedDict[bytes, int] = OrderedDict()
        self.changes: deque[tuple[P, bool]] = deque(maxlen=max_changes)
        self.wills_used: OrderedDict[bytes, str] = OrderedDict()
        """Per key, the id of the last offline presence (Will or goodbye) that took it
        out: one-shot, so the same bytes replayed later change nothing (bounded)."""
        self.evidence: OrderedDict[bytes, tuple[Event, int]] = OrderedDict()
        """Partners taken out by their own signed offline presence, not revoked since:
        that presence and when it arrived (our clock); evidence for an offline forfeit."""

    def keep(self, keys: Iterable[bytes], most: int) -> None:
        """Keys of people we play with, the ``most`` recent kept."""
        for pk in keys:
            if pk == self.me:
                continue
            self.kept[pk] = None
            self.kept.move_to_end(pk)
            if len(self.kept) > most:
                self.kept.popitem(last=False)

    def rank(self, pk: bytes) -> int:
        """0 partner or friend, 1 established stranger, 2 new stranger, 3 not online."""
        if pk in self.kept or self.is_friend(pk):
            return 0
        info = self.peers.get(pk)
        if info is None:
            return 3
        return 1 if info.established else 2

    def is_offline(self, pk: bytes) -> bool:
        """A partner removed by its offline presence or silence, not back since."""
        return pk in self.gone and pk not in self.peers

    def add(self, info: P, silence: int) -> None:
        """A key new in the list (``make_room`` said yes), silent after ``silence`` ms."""
        self.peers[info.pk] = info
        self.expect(info, silence)
        self.new[info.pk] = None
        self.gone.pop(info.pk, None)

    def expect(self, info: P, silence: int) -> None:
        """When ``info``'s signer counts as silent: its last presence (our clock) plus
        ``silence`` (``silence_ms`` of the ``ttl`` it signed)."""
        info.silent_at = info.last_heard + silence
        heapq.heappush(self.silence, (info.silent_at, info.pk))
        if len(self.silence) > len(self.peers) + 64:  # heard again or gone: old entries
            self.reschedule()

    def reschedule(self) -> None:
        """The silence heap from the peers online alone (drops the skipped entries)."""
        self.silence = [(p.silent_at, p.pk) for p in self.peers.values()]
        heapq.heapify(self.silence)

    def deaf(self, ms: int) -> None:
        """Our connection was down ``ms``: every peer's silence moves on by as much."""
        for info in self.peers.values():
            info.last_heard += ms
            info.silent_at += ms
        self.reschedule()

    def heard(self, info: P, now: int, established_ms: int) -> None:
        """Move a stranger to the recent end of its queue (established once heard over
        ``established_ms``)."""
        if info.established:
            self.established.move_to_end(info.pk)
        elif now - info.first_heard >= established_ms:
            info.established = True
            self.new.pop(info.pk, None)
            self.established[info.pk] = None
        else:
            self.new.move_to_end(info.pk)

    def make_room(
        self, pk: bytes, now: int, room: int, stale: int, stale_ms: Callable[[int], int], scan: int
    ) -> bool:
        """Room for a new key in the online list: evict by rank, never first-come.

        ``room``: strangers at most (besides rank 0); ``stale``: the shortest missed
        heartbeat (``STALE_MS``); ``stale_ms(ttl)``: the one a ``ttl`` announced;
        ``scan``: established strangers looked at, at most."""
        strangers = len(self.new) + len(self.established)
        if self.rank(pk) == 0 or strangers < room:
            return True
        for queue, stale_only in ((self.new, False), (self.established, True)):
            looked = 0
            for old in queue:
                if self.rank(old) == 0:
                    continue  # a partner or friend: never evicted (and rarely here)
                if stale_only:
                    info = self.peers[old]
                    if now - info.last_heard < stale:
                        break  # least recent first: the rest were heard even later
                    if now - info.last_heard < stale_ms(info.ttl):
                        looked += 1  # it announced a longer heartbeat: not missed yet
                        if looked >= scan:
                            break
                        continue
                self.remove(old, now, 0, evicted=True)
                return True
        return False

    def remove(self, pk: bytes, now: int, most_gone: int, evicted: bool = False) -> P:
        """Take ``pk`` out (a partner not evicted is remembered as gone, the
        ``most_gone`` latest)."""
        info = self.peers.pop(pk)
        self.new.pop(pk, None)
        self.established.pop(pk, None)
        if not evicted and self.rank(pk) == 0:
            self.gone[pk] = now
            self.gone.move_to_end(pk)
            while len(self.gone) > most_gone:
                self.gone.popitem(last=False)
        self.changes.append((info, False))
        return info

    def went_offline(self, event: Event, now: int, most_wills: int, most_gone: int) -> None:
        """``event``, a signed offline presence and no replay, took its key out: remembered
        one-shot (the ``most_wills`` latest) and, for a partner, kept as evidence."""
        self.wills_used[event.pk] = event.id
        self.wills_used.move_to_end(event.pk)
        while len(self.wills_used) > most_wills:
            self.wills_used.popitem(last=False)
        self.remove(event.pk, now, most_gone)
        if self.rank(event.pk) == 0:
            self.evidence[event.pk] = (event, now)
            self.evidence.move_to_end(event.pk)
            while len(self.evidence) > most_gone:
                self.evidence.popitem(last=False)

    def silent(self, now: int, most_gone: int) -> list[P]:
        """Remove and return the peers whose silence is over by ``now``."""
        found = []
        heap = self.silence
        while heap and heap[0][0] <= now:
            at, pk = heapq.heappop(heap)
            silent = self.peers.get(pk)
            if silent is None or silent.silent_at != at:
                continue  # gone, or heard again since (a later entry stands)
            self.remove(pk, now, most_gone)
            found.append(silent)
        return found
