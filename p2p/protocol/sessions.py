"""One identity, one seat at a time: our key online from another session, and who acts.

The same key may be open twice (a second window, another machine).  Both sessions
receive every round event and every invitation of the key; if both signed, the key
would sign two different events for one place (an equivocation, docs/protocol.md
§15.4) and lose the round.  So exactly one session *acts* (signs round events,
accepts, invites); the others *watch*.  There is no server: both decide with the
same rule from what each publishes in its presence on the key's own presence topic
(docs/protocol.md §5.4 "Several sessions of one key"):

* every presence names ``since`` (when this session started, its signer's clock,
  kept across reconnects) and ``lead`` (a takeover counter, 0 unless taken over);
* the session with the highest ``(lead, -since, session)`` acts: by default the
  older session, the later one watches;
* ``take_over(now)`` raises our ``lead`` above every ``lead`` we have seen and
  announces it: the older session steps back as soon as it sees that presence, and we
  act ``SETTLE_MS`` later (an event it signed just before is then on its way to us);
* a session whose other sessions all went offline (their Last Will or goodbye) or
  silent (``SILENCE_MS`` by our clock while we listen), or whose newest presence is no
  longer *fresh* (its signed ``ts`` more than ``FRESH_MS`` from our clock), takes the lead
  itself, so the old one, back from an outage, watches;
* any offline presence of our key ends the session it names, whether we held that
  session or not (a restarted client reads its crashed run's Will on subscribing: the
  old run's presences replayed later are no other session); our own earlier runs
  (``earlier_runs``, their ``since``: the driver may remember them across restarts) and
  our own earlier connections are never another session;
* once we have seen another session of our key, we sign nothing while our own link
  is down, nor for ``SETTLE_MS`` after it is back (the others' presences arrive first).

The state is pure and driven by ``p2p.protocol.lobby.Lobby`` (``observe``, ``tick``,
``take_over``); the round machines ask ``acting`` before they sign.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass

from p2p.protocol.effects import Effect, Notice
from p2p.protocol.events import Event
from p2p.protocol.round_machine import ActionError

SILENCE_MS = 65_000
"""Another session of ours not heard (live) for this long is gone (the lobby's rule)."""
SETTLE_MS = 2_000
"""After a takeover, or after our link is back, we wait this long before we sign."""
FRESH_MS = 65_000
"""A presence of our key counts as another session only while its signed ``ts`` is
within this of our clock (either way), and we watch only while the acting session's
newest presence is that fresh: a stranger replaying an old session's presences makes us
watch at most until ``FRESH_MS`` after the newest one that session signed (docs/protocol.md
§5).  The price: two sessions of one key on machines whose clocks differ by more than
about ``FRESH_MS - 20 s`` (one heartbeat) do not see each other."""
MAX_RUNS = 64
"""Our own earlier runs (their ``since``) we remember at most."""
MAX_SESSIONS = 8
"""Other sessions of our key we track at most (the oldest heard is forgotten)."""
MAX_ENDED = 64
"""Sessions of our key that went offline, remembered so a replay cannot revive them."""
WATCHING = (
    "your key acts in another session (another window or machine): this one watches;"
    " take over to play here"
)
"""``ActionError`` text (code ``other_session``) of anything a watching session refuses."""


@dataclass
class OtherSession:
    """Another session of our own key, as its presences show it."""

    session: str
    since: int
    lead: int
    ts: int
    last_heard: int
    slack: int = 0
    """How much longer than the base heartbeat its latest presence announced (ms): its
    freshness and silence limits grow by as much (``observe``)."""

    @property
    def rank(self) -> tuple[int, int, str]:
        return (self.lead, -self.since, self.session)


class Sessions:
    """Our key's other sessions and whether this session acts (see the module doc)."""

    def __init__(self, me: bytes, session: str, since: int) -> None:
        self.me = me
        self.session = session
        """This connection's session nonce (hex); the lobby updates it on reconnect."""
        self.since = since
        self.lead = 0
        self.others: OrderedDict[str, OtherSession] = OrderedDict()
        """Other live sessions of our key, by their ``since`` (kept across reconnects)."""
        self._ended: OrderedDict[str, None] = OrderedDict()
        self._mine: OrderedDict[str, None] = OrderedDict()
        """Our own earlier connections' session nonces (their retained presence is ours)."""
        self._runs: OrderedDict[int, None] = OrderedDict()
        """Our own earlier runs of this key (their ``since``): never another session."""
        self._ever = False
        self._top_lead = 0
        """The highest ``lead`` another session of ours has shown."""
        self._hold_until = 0
        self._deaf = False
        self.acting = True
        """False while another session of our key acts (or we wait for it to settle)."""

    # -- queries -------------------------------------------------------------------------

    @property
    def rank(self) -> tuple[int, int, str]:
        return (self.lead, -self.since, self.session)

    def check(self) -> None:
        """Raise ``ActionError`` (code ``other_session``) unless this session acts."""
        if not self.acting:
            raise ActionError(WATCHING, "other_session")

    def leader(self) -> OtherSession | None:
        """The other session that acts instead of us, if any."""
        best = max(self.others.values(), key=lambda o: o.rank, default=None)
        return best if best is not None and best.rank > self.rank else None

    # -- inputs --------------------------------------------------------------------------

    def reconnected(self, session: str) -> None:
        """Our connection has a new session nonce; the old one is still ours."""
        if session != self.session:
            self._mine[self.session] = None
            while len(self._mine) > MAX_ENDED:
                self._mine.popitem(last=False)
            self.session = session

    def earlier_runs(self, sinces: Iterable[int]) -> None:
        """Our own earlier runs of this key (the ``since`` of each, as the driver
        remembers them, e.g. next to the key): their presences are ours, never another
        session, even when their Will never reached us."""
        for since in sinces:
            if since != self.since:
                self._runs[since] = None
                self._runs.move_to_end(since)
        while len(self._runs) > MAX_RUNS:
            self._runs.popitem(last=False)

    def observe(
        self, event: Event, now: int, retained: bool, slack: int = 0
    ) -> list[Effect]:
        """A presence of our own key on our presence topic, not published by this
        connection: another session of ours (or one of our earlier connections).

        ``slack``: how much longer than the base heartbeat (ms) it announced (a lone
        session in a big lobby beats less often, ``p2p.protocol.lobby``; the lobby
        bounds it): it counts as fresh, and as silent, that much later.  Once a session
        sees another one of its key it beats at the base rate again."""
        body = event.body
        if event.pk != self.me or event.kind != "presence":
            return []
        session = body["session"]
        if session == self.session or session in self._mine:
            return []  # an earlier connection of this very session
        since = body.get("since", event.ts)
        if since in self._runs:
            return []  # an earlier run of ours (before a restart)
        key = str(since)
        if body["status"] == "offline":
            self._end(session)  # over, whether we held it or not (a crashed run's Will)
            other = self.others.get(key)
            if other is None or other.session != session:
                return []
            outranked = other.rank > self.rank
            del self.others[key]
            return self._update(now, gone=True, outranked=outranked)
        if session in self._ended or abs(event.ts - now) > FRESH_MS + slack:
            return []  # a replay of a session that left, or not fresh
        other = self.others.get(key)
        lead = body.get("lead", 0)
        if other is not None and (
            event.ts < other.ts or event.ts == other.ts and lead <= other.lead
        ):
            return []  # older (a takeover signed in the same millisecond still counts)
        if other is None:
            if len(self.others) >= MAX_SESSIONS:
                self.others.popitem(last=False)
            other = OtherSession(session, since, lead, event.ts, now, slack)
            self.others[key] = other
            first = True
        else:
            first = False
            if other.session != session:
                self._end(other.session)  # it reconnected: its old nonce is over
            other.session, other.lead, other.ts = session, lead, event.ts
            other.last_heard, other.slack = now, slack
        self.others.move_to_end(key)
        self._top_lead = max(self._top_lead, lead)
        self._ever = True
        return self._update(now, first=first)

    def tick(self, now: int, listening: bool = True) -> list[Effect]:
        """Forget sessions silent for ``SILENCE_MS`` (only while we listen); settle."""
        effects: list[Effect] = []
        if not listening:
            self._deaf = True
        elif self._deaf:
            self._deaf = False
            for other in self.others.values():
                other.last_heard = max(other.last_heard, now)  # deaf time counts not
            if self._ever:
                self._hold_until = max(self._hold_until, now + SETTLE_MS)
        gone = outranked = False
        if listening:
            settled = now >= self._hold_until  # (back from deafness: presences first)
            for key, other in list(self.others.items()):
                silent = now - other.last_heard >= SILENCE_MS + other.slack
                if silent or settled and now - other.ts > FRESH_MS + other.slack:
                    outranked = outranked or other.rank > self.rank
                    del self.others[key]
                    if silent:  # (merely stale: a fresh presence of it counts again)
                        self._end(other.session)
                    gone = True
        return effects + self._update(now, gone=gone, outranked=outranked)

    def take_over(self, now: int) -> list[Effect]:
        """Act in this session from now on (after ``SETTLE_MS``); the caller announces
        our presence with the new ``lead`` at once."""
        self.lead = max(self.lead, self._top_lead) + 1
        if self.others:
            self._hold_until = max(self._hold_until, now + SETTLE_MS)
        return self._update(now, took=True)

    # -- the rule ------------------------------------------------------------------------

    def _end(self, session: str) -> None:
        self._ended[session] = None
        while len(self._ended) > MAX_ENDED:
            self._ended.popitem(last=False)

    def _update(
        self,
        now: int,
        first: bool = False,
        gone: bool = False,
        took: bool = False,
        outranked: bool = False,
    ) -> list[Effect]:
        """Recompute ``acting``; say what changed (once per change).

        ``outranked``: a session that acted instead of us has gone; if we lead now we
        raise our ``lead`` past its own, so that it watches if it comes back."""
        was = self.acting
        if outranked and self.leader() is None:
            self.lead = self._top_lead + 1
        leader = self.leader()
        settled = not (self._deaf and self._ever) and now >= self._hold_until
        self.acting = leader is None and settled
        effects: list[Effect] = []
        if first:
            if leader is not None:
                effects.append(Notice(
                    "your key is also online in another session, which plays: this one"
                    " watches (take over to play here)",
                    "other_session", {"acting": False},
                ))
            else:
                effects.append(Notice(
                    "your key is also online in another session: this one plays, the"
                    " other watches", "other_session", {"acting": True},
                ))
        elif was and leader is not None and not took:
            effects.append(Notice(
                "another session of your key took over: this one watches now",
                "other_session_took_over",
            ))
        elif gone and not self.others:
            effects.append(Notice(
                "your key's other session has gone: this one plays", "other_session_gone"
            ))
        if took and leader is None:
            effects.append(Notice("this session plays for your key now", "took_over"))
        return effects
