"""The network edge of a ``Peer``: the broker connection, the inbound lanes and their
cheap classification, sealing what goes out and opening what comes in, the inbox replay
filter, and the dispatch of each message to its round link or the lobby link.

The edge owns the transport (``p2p.net.face.Broker``: one broker or several) and the
inbound queues (``p2p.net.inbound``); it routes by the peer's table of round links
(``p2p.peer.round_link.RoundLinks``) and never changes it.  What it needs from the rest of
the peer is the narrow ``EdgeHost`` face (the ``Peer``).
"""

from __future__ import annotations

import asyncio
import logging
import os
import ssl
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import TYPE_CHECKING, NamedTuple, Protocol

from p2p.friends import Friends
from p2p.net.face import Broker
from p2p.net.inbound import InboundQueues, Lane, Verdict
from p2p.net.multi import MultiTransport
from p2p.net.transport import Inbound, Transport, WillMessage, hold_reads, split_brokers
from p2p.peer.checks import (
    OtherVersions,
    _checked,
    _claimed_key,
    _claimed_round,
    _inbox_problem,
    _is_duplicate,
    _signed_id,
    _unjoinable,
    _unverified,
    claimed_version,
)
from p2p.peer.notifications import Notification, RoundNotice
from p2p.peer.round_link import RoundLink, RoundLinks
from p2p.protocol import events as ev
from p2p.protocol import sealing
from p2p.protocol.conflicts import SeenIds
from p2p.protocol.effects import dropped
from p2p.protocol.events import Event, EventError
from p2p.protocol.identity import Identity, peer_id, sanitize_nickname, short_id
from p2p.protocol.lobby import LONGEST_INVITATION_MS, Lobby
from p2p.protocol.round import TurnTimeouts
from p2p.protocol.round_machine import ActionError
from p2p.protocol.sealing import SealError
from p2p.protocol.topics import Place, Topics

if TYPE_CHECKING:
    from p2p.peer.lobby_link import LobbyLink

log = logging.getLogger("p2p.peer")


class _Opened(NamedTuple):
    """An inbox message the edge has opened, parsed and key-authenticated (``classify``):
    ``dispatch`` takes it as it is instead of doing that work again."""

    invite_key: bytes
    topic_key: bytes
    event: Event


class EdgeHost(Protocol):
    """What the edge needs from its peer (``Peer`` implements it)."""

    lobby: Lobby
    friends: Friends
    turn_timeouts: TurnTimeouts

    @property
    def lobby_link(self) -> LobbyLink: ...

    def now_ms(self) -> int: ...

    def warn(
        self, text: str, round_id: str | None, reason: str, kind: str, sender: str = ""
    ) -> None: ...

    def count_drop(self, reason: str) -> None: ...

    def count_received(self) -> None: ...

    def notify(self, note: Notification) -> None: ...


def _log_failure(done: asyncio.Future[list[None]]) -> None:
    """A subscription nobody awaits: its failure is logged, never lost."""
    if not done.cancelled() and done.exception() is not None:
        log.warning("subscribing to a round failed: %s", done.exception())


class Edge:
    """The peer's network edge (see the module docstring)."""

    def __init__(
        self,
        host: EdgeHost,
        identity: Identity,
        topics: Topics,
        links: RoundLinks,
        broker_url: str | Sequence[str],
        *,
        on_connected: Callable[[], Awaitable[None]],
        will: Callable[[], WillMessage],
        tls_context: ssl.SSLContext | None = None,
    ) -> None:
        self._host = host
        self.topics = topics
        self._links = links
        self._pk = identity.public_key
        self._peer_id = identity.peer_id
        self._seed = identity.seed()  # opens what is sealed to us (sealing)
        self.other_versions = OtherVersions()
        """Keys met signing another protocol version (told once each, bounded)."""
        self.inbox_seen = SeenIds(limit=1024)
        self._stores: dict[str, set[str]] = {}
        """Per round key: the members' store topics we subscribed to exactly."""
        self._pending: set[asyncio.Task[None]] = set()
        """Ids of inbox events we took: their replays are dropped at the edge."""
        self.inbound = InboundQueues(self.classify, on_drop=self.edge_drop)
        """Inbound lanes and budgets (``p2p.net.inbound``): our rounds first."""
        urls = split_brokers(broker_url)
        self.transport: Broker
        try:
            if len(urls) == 1:
                self.transport = Transport(
                    urls[0],
                    on_connected=on_connected,
                    will=will,
                    tls_context=tls_context,
                    inbound=self.inbound,
                )
            else:  # several brokers at once: one view (p2p.net.multi)
                self.transport = MultiTransport(
                    urls,
                    on_connected=on_connected,
                    will=will,
                    tls_context=tls_context,
                    inbound=self.inbound,
                )
        except ValueError as err:
            raise ActionError(str(err) or "no broker URL given") from None

    def publish(
        self, topic: str, payload: bytes, qos: int, retain: bool, expiry: int | None = None
    ) -> asyncio.Future[None]:
        """Publish bytes as they are (sealed already, or public); the future resolves once
        a broker took them (or a newer retained message on the topic replaced them)."""
        return self.transport.publish_nowait(
            topic, payload, qos=qos, retain=retain, expiry=expiry
        )

    async def subscribe_round(self, key: str, *, acknowledged: bool = True) -> None:
        """Subscribe to a round's topics, all at once: one round trip to the broker for
        all their acknowledgements, not one each (issue 28: four in turn took four round
        trips before an invitation or an accept could go out).

        ``acknowledged=False`` (the admin opening a round): return once the SUBSCRIBE
        packets are handed to the connection, without waiting for the broker's answer;
        what we publish next goes out after them.  Nothing can arrive on a round's topics
        we just opened before a guest has our invitation, has subscribed itself (a round
        trip) and has answered: at least two round trips after the broker had our
        SUBSCRIBE, as much as a guest leaves itself by waiting for its own
        acknowledgement before its accept (issue 28: the wait cost every start a round
        trip)."""
        subscribing = asyncio.gather(
            *(
                # only a private round's genesis is retained (for code joiners)
                self.transport.subscribe(
                    topic, qos, retained=topic.endswith("/genesis"), no_local=True
                )
                for topic, qos in self.topics.round_subscriptions(key)
            )
        )
        if acknowledged:
            await subscribing
            return
        subscribing.add_done_callback(_log_failure)
        for _ in range(3):  # each transport hands its SUBSCRIBE over in its first step
            await asyncio.sleep(0)

    async def unsubscribe_round(self, key: str) -> None:
        for topic, _ in self.topics.round_subscriptions(key):
            await self.transport.unsubscribe(topic)
        for topic in self._stores.pop(key, set()):
            await self.transport.unsubscribe(topic)

    def follow_stores(self, key: str, owners: Iterable[str]) -> None:
        """Subscribe exactly to each member's retained store of a slow round (§9.1).

        Exact topics, not ``store/+``: some brokers (RabbitMQ) hand retained messages
        only to a subscription naming the topic exactly, never to a wildcard filter.
        Called after every change of the round; only new members cost a subscription.
        """
        known = self._stores.setdefault(key, set())
        for owner in owners:
            route = self.topics.round_store(key, owner)
            if route.topic in known:
                continue
            known.add(route.topic)
            task = asyncio.get_running_loop().create_task(
                self.transport.subscribe(route.topic, route.qos, retained=True, no_local=False)
            )
            self._pending.add(task)
            task.add_done_callback(self._pending.discard)

    async def receive_loop(self) -> None:
        async for message in self.transport.messages():
            self._host.count_received()
            try:
                await self.dispatch(message)
            except Exception:
                log.exception(
                    "internal error while handling a message on %s", message.topic
                )
            # What a message of our rounds woke (a move's waiters) runs before more is
            # read from any socket of this loop; then the network reader runs between two
            # messages: the edge's cheap checks must keep up with the socket, or a move
            # waits in the socket behind a flood (so a backlog of lobby messages holds
            # no reader).
            place = self.topics.parse(message.topic)
            if place is not None and place.area == "round":
                hold_reads()
            await asyncio.sleep(0)

    def classify(self, topic: str, payload: bytes) -> Verdict:
        """The cheap checks of the network edge (``p2p.net.inbound``): which lane, or drop.

        Runs for every message in the network read path, so it only looks at the topic
        and the key the payload claims (no JSON parse), except for one case: a message on
        our round's topic that claims a member's key has its signature checked here
        (``_unverified``, ``_checked``), so a forger can neither jump the queue nor use up that member's
        budget, and a replay of an event we hold costs one hash and one verification.
        """
        place = self.topics.parse(topic)
        if place is None:
            return Verdict(None, reason="foreign topic")
        if place.area == "round":
            return self._classify_round(place, payload)
        if place.area == "inbox" and place.name == self._peer_id:
            return self._classify_inbox(payload)
        sender = _claimed_key(payload)
        if place.area == "lobby":
            # No key's budget may be used up by someone who only writes that key into
            # junk, nor by someone replaying its old bytes (on its topic or on others):
            # its presences would be lost, and a round member would look silent. So the
            # event is parsed (signature checked) and asked whether the lobby would take
            # it, before its sender's budget is charged: for a key we know right here,
            # for any other key after the lane-wide budget (``confirm``).
            def confirm() -> Verdict:
                lane = Lane.KNOWN if known else Lane.STRANGER
                return self._lobby_auth(topic, payload, sender, lane)

            known = self._known_key(sender)
            if topic == self._host.lobby.will_route().topic and sender != self._pk:
                # our own retained presence emptied or overwritten: the lobby repairs
                # it (rate-limited there); only the lane pays, as for any stranger
                return Verdict(Lane.STRANGER, None)
            if sender is None:  # names nobody: only the lane pays (the parse reports it)
                return Verdict(Lane.STRANGER, None)
            if not known:
                return Verdict(Lane.STRANGER, None, confirm=confirm)
            return confirm()
        return Verdict(None, reason="unknown topic")

    def _lobby_auth(self, topic: str, payload: bytes, sender: bytes | None, lane: Lane) -> Verdict:
        """``sender``'s own fresh lobby event goes to ``lane`` (parsed); a forgery or a
        replay the lobby would refuse is dropped."""
        try:
            event = ev.parse(payload)
        except EventError:
            if self.tell_other_version(payload, sender):
                return Verdict(None, reason="another protocol version")
            return Verdict(None, reason="forged")
        if event.pk != sender:
            return Verdict(None, reason="forged")
        why = self._host.lobby.replayed(event, self._host.now_ms(), topic)
        return Verdict(None, reason=why) if why else Verdict(lane, sender, parsed=event)

    def _known_key(self, key: bytes | None) -> bool:
        """A key listed in the lobby, a friend, ourselves or a member of one of our rounds."""
        return key is not None and (
            key in self._host.lobby.peers
            or key == self._pk
            or self._host.friends.is_friend(key)
            or any(r.has_member(key) for r in self._links)
        )

    def _classify_inbox(self, payload: bytes) -> Verdict:
        """Our inbox: opened here (one X25519), then *authenticated before anyone's budget
        is charged*: the enclosed event must be validly signed by the key it names, be an
        invitation or a cancel, carry a round key that this very key sealed to us (the
        key-auth, §12) and be neither a replay of one we took nor stale by its own signed
        time.  A stranger can seal anyone's public bytes to us (a friend's presence, an
        old invitation): before, that was charged to the friend's own inbox budget, and
        the friend's real invitation was then dropped "over budget".

        A key we know is authenticated right here and charged only its own budget (a
        flood of strangers cannot crowd it out); anyone else passes the lane-wide budget
        first (which pays for the checking) and is authenticated in ``confirm``."""
        if not payload:
            return Verdict(None, reason="empty inbox message")
        try:
            sealed = sealing.open_invitation(self._seed, self._pk, payload)
        except SealError:
            return Verdict(None, reason="not sealed to us")
        sender = _claimed_key(sealed[3])
        if sender is None:
            return Verdict(None, reason="no signer")

        def confirm() -> Verdict:
            why, opened = self._inbox_auth(sender, *sealed)
            return Verdict(None, reason=why) if why else Verdict(Lane.INBOX, sender, parsed=opened)

        if not self._known_key(sender):
            return Verdict(Lane.INBOX, None, confirm=confirm)
        checked = confirm()
        if checked.lane is None:
            return checked
        return Verdict(Lane.INBOX, sender, checked=True, parsed=checked.parsed)

    def _inbox_auth(
        self, sender: bytes, invite_key: bytes, auth: bytes, topic_key: bytes, inner: bytes
    ) -> tuple[str, _Opened | None]:
        """Why an opened inbox message is not an event ``sender`` itself signed and sealed to
        us (key-auth), or is a replay or stale ('' if it is fresh and really theirs); and
        if it is, what ``dispatch`` takes instead of opening and parsing it again."""
        try:
            event = ev.parse(inner)
        except EventError:
            return "forged", None
        if event.pk != sender:
            return "forged", None
        if event.round is None:  # a lobby event: no round key it could have sealed
            return "not an invitation or cancel", None
        if event.id in self.inbox_seen:
            return "duplicate", None
        now = self._host.lobby.their_now(event.pk, self._host.now_ms())  # signer's clock
        if event.ts < now - LONGEST_INVITATION_MS or (
            event.kind == "genesis" and event.body["expires"] <= now
        ):
            return "stale invitation or cancel", None  # by its own signed time
        # (a round event its signer really sealed to us is charged to the signer and goes
        # on: the inbox rule, §15.3, drops it there with a warning naming it)
        if not sealing.check_key_auth(
            self._seed, self._pk, sender, event.round, invite_key, topic_key, auth
        ):
            return "round key not sealed by the event's signer", None
        return "", _Opened(invite_key, topic_key, event)

    def _classify_round(self, place: Place, payload: bytes) -> Verdict:
        """A message on a round topic: members' signed events of our rounds go first.

        The retained genesis channel is watched here and goes no further once we hold
        the round (a joiner still waiting gets it through the small ``ROUND_OTHER`` lane,
        like anything from a non-member).  On a sealed (private) round
        the payload is opened here (an AEAD check costs microseconds) and handed on
        opened; one that does not open is dropped unread.
        """
        if not place.is_round:
            return Verdict(None, reason="unknown topic")
        rest = f"round/{place.name}"
        rnd = self._links.by_key.get(place.key)
        if rnd is None:
            if place.key in self._links.joining:
                return Verdict(Lane.ROUND_OTHER, _claimed_key(payload))
            return Verdict(None, reason="not our round")
        if place.channel == "store":  # a slow round's retained store (p2p/peer/store_link.py)
            return rnd.store.classify(place.owner, payload)
        if place.channel == "genesis":
            # We hold the round, so we need no genesis from the topic; but as its admin
            # we watch it here, where a flood cannot hide the overwrite that counts
            # (the repair is rate-limited by ``_watch_genesis`` itself).
            rnd.watch_genesis(payload)
            return Verdict(None, reason="genesis of a round we hold")
        if not payload:
            return Verdict(Lane.ROUND_OTHER, None)
        try:
            opened = sealing.open_round(rnd.sealing_key, place.channel, payload)
        except SealError:
            return Verdict(None, reason="not sealed with the round key")
        sender = _claimed_key(opened)
        if sender is None:  # names nobody: only the lane pays (the parse reports it)
            return Verdict(Lane.ROUND_OTHER, None, parsed=opened)
        if not rnd.has_member(sender):
            # a code joiner, or a non-member's bytes replayed by someone holding the key:
            # checked (signature, replay) once the lane-wide budget let it pass, before
            # its signer's own budget is charged
            def confirm() -> Verdict:
                return self._round_auth(rnd, opened, sender, Lane.ROUND_OTHER)

            return Verdict(Lane.ROUND_OTHER, None, confirm=confirm)
        if _claimed_round(opened) != rnd.id:
            # a member's event of another round, sealed here by a member of both that
            # replays it: it can never apply, and would use up that member's budget
            self._host.warn(
                f"dropped payload on {rest} from {sender.hex()[:8]}: event of another round",
                rnd.id,
                "event of another round",
                "payload",
            )
            return Verdict(None, reason="event of another round")
        verdict = self._round_auth(rnd, opened, sender, Lane.ROUND)
        if verdict.reason == "forged":
            self._host.warn(
                f"dropped payload on {rest} from {sender.hex()[:8]}: bad signature",
                rnd.id,
                "bad signature",
                "payload",
            )
        return verdict

    def _round_auth(self, rnd: RoundLink, opened: bytes, sender: bytes | None, lane: Lane) -> Verdict:
        """``sender``'s own, new event on a round topic goes to ``lane``; a forgery or a
        replay is dropped before its budget is charged.  A replay is judged by the round
        machine's rule (``RoundMachine.replayed``: position and id, chat and sync windows),
        not only by its bounded memory of ids, so a flushed memory lets none through."""
        if sender is None:
            return Verdict(None, reason="forged")
        signed = _unverified(opened, sender)
        if signed is None:
            return Verdict(None, reason="forged")
        if signed.id in rnd.machine.seen:
            # a copy of an event we hold (a sync answer, another broker's copy, a
            # replay): one hash, no signature check -- whatever its signature, it is
            # dropped unread and charged to nobody
            return Verdict(None, reason="duplicate")
        if not _checked(signed):
            return Verdict(None, reason="forged")
        try:
            # the signature is not checked twice; sealed events we hold are not either
            event = ev.parse(opened, signed=signed, held=rnd.machine.held)
        except EventError:  # signed by the sender, but not a valid event: its own doing,
            return Verdict(lane, sender, parsed=opened)  # charged; dispatch reports why
        why = rnd.machine.replayed(event, self._host.now_ms())
        if why:
            return Verdict(None, reason=why)
        return Verdict(lane, sender, parsed=event)

    def tell_other_version(self, payload: bytes, sender: bytes | None) -> bool:
        """True if ``payload`` is an event ``sender`` signed under another protocol
        version; the first time per key (bounded), the user is told in one line
        (``other_version``) instead of the two peers silently disagreeing."""
        version = claimed_version(payload)
        if (
            sender is None
            or sender == self._pk
            or version is None
            or version == ev.PROTOCOL_VERSION
            or _signed_id(payload, sender) is None  # only its own signed bytes count
        ):
            return False
        if self.other_versions.first(sender):
            try:
                nick = str(ev.parse(payload, legacy=True).body.get("nick") or "")
            except EventError:
                nick = ""
            nick = sanitize_nickname(nick) or short_id(sender)
            text = (
                f"{nick} runs protocol v{version}, this client v{ev.PROTOCOL_VERSION}: "
                "you can play together once one of you updates"
            )
            log.warning("%s", text)
            params = {"nick": nick, "theirs": version, "ours": ev.PROTOCOL_VERSION}
            self._host.notify(RoundNotice(None, text, "other_version", params))
        return True

    def edge_drop(self, reason: str) -> None:
        self._host.count_drop(reason)

    async def dispatch(self, message: Inbound) -> None:
        topic = message.topic
        place = self.topics.parse(topic)
        if place is None:
            return
        rest = topic[len(self.topics.root) + 1 :]  # for the log lines
        if topic == self._host.lobby.will_route().topic:  # what the broker holds as ours
            effects = self._host.lobby.receive_bytes(
                message.payload, self._host.now_ms(), topic, message.retain
            )
            await self._host.lobby_link.run_effects(effects)
            return
        if place.channel == "store" and place.key in self._links.by_key:  # opened at the edge
            await self._links.by_key[place.key].store.receive(place.owner, message.parsed)
            return
        payload: bytes | None = message.payload
        where = (place.key, place.channel) if place.is_round else None
        checked = message.parsed if isinstance(message.parsed, ev.Event) else None
        if checked is not None:
            payload = checked.raw  # opened and parsed at the edge (``classify``)
        elif isinstance(message.parsed, bytes):
            payload = message.parsed  # opened at the edge (``classify``)
        elif where is not None:
            payload = self.unseal(where[0], where[1], message.payload)
        if not payload:
            return  # an emptied retained message: harmless by design
        inbox = place.area == "inbox" and place.name == self._peer_id
        opened = message.parsed if inbox and isinstance(message.parsed, _Opened) else None
        if opened is not None:  # opened, parsed and key-authenticated at the edge
            invite_key, topic_key, checked = opened
        elif inbox:  # sealed to us: (round key, its proof, event)
            checked = None
            try:
                invite_key, auth, topic_key, payload = sealing.open_invitation(
                    self._seed, self._pk, payload
                )
            except SealError as err:
                self._host.warn(f"dropped payload on {rest}: {err}", None, str(err), "payload")
                return
        try:
            event = checked if checked is not None else ev.parse(payload)
        except EventError as err:
            if self.tell_other_version(payload, _claimed_key(payload)):
                return
            self._host.warn(
                f"dropped payload on {rest} from ?: {err}", None, str(err), "payload"
            )
            return
        if inbox:
            if opened is None and (
                event.round is None
                or not sealing.check_key_auth(
                    self._seed, self._pk, event.pk, event.round, invite_key, topic_key, auth
                )
            ):
                reason = "round key not sealed by the event's signer"
                self._host.warn(f"dropped {event.describe()}: {reason}", event.round, reason, event.kind)
                return
            if event.kind == "genesis" and not event.body["private"] and topic_key.hex() != event.round:
                # a public round's topics are its id: an inviter naming other topics would
                # send us onto another round's topics (and take their place in ``_by_key``)
                reason = "a public round's topics are not its id"
                self._host.warn(f"dropped {event.describe()}: {reason}", event.round, reason, event.kind)
                return
            self.inbox_seen.add(event.id)  # a replay is dropped at the edge
        if place.area == "round":
            rnd = self._links.by_key.get(place.key) if place.is_round else None
            joining = self._links.joining.get(place.key) if place.is_round else None
            if (
                rnd is None
                and joining is not None
                and place.channel == "genesis"
                and event.kind == "genesis"
            ):
                now = self._host.lobby.their_now(event.pk, self._host.now_ms())  # the admin's clock
                why = _unjoinable(event, self._host.turn_timeouts, now)
                if why:  # e.g. a holder of the code planted a round of its own
                    self._host.warn(f"ignored genesis behind a code: {why}", None, why, "genesis")
                elif not joining[0].done():
                    joining[0].set_result(event)
                return
            if rnd is not None:
                await rnd.receive(event, place.channel, message.retain)
            return
        if place.area == "inbox":
            # an inbox carries invitations (genesis) and their cancels, nothing else: a
            # round event sent to one member's inbox must not fork it off the round
            problem = _inbox_problem(event, self._links.by_id)
            if problem:
                text = dropped(event, problem).describe()
                self._host.warn(text, event.round, problem, event.kind)
                return
            if event.kind == "cancel" and event.round in self._links.by_id:
                rnd = self._links.by_id[event.round]  # a cancel copied to our inbox
                now = self._host.now_ms()
                effects = await rnd.step(lambda: rnd.machine.receive(event, now))
                await rnd.run_effects([e for e in effects if not _is_duplicate(e)])
                return
        sealed_with = (invite_key, topic_key.hex()) if inbox else None
        await self._host.lobby_link.receive(event, topic, message.retain, message.expiry, sealed_with)

    def seal(
        self,
        topic: str,
        payload: bytes,
        event: Event,
        rnd: RoundLink | None = None,
        sealed_with: bytes | None = None,
    ) -> bytes | None:
        """``payload`` as it goes out on ``topic``; ``None``: do not send it.

        A held round's routing is fixed when we create, accept, join or resume it
        (``Round.sealing_key`` and its topic key): its payloads go only to its own
        topics, sealed only with its own key.  Nothing that arrives later (an
        invitation, a cancel, anything in an inbox) can change that.  The one thing we
        publish on a round we do not hold is a decline, sealed with the key of the
        invitation it answers (``sealed_with``), and never on a held round's topics.
        Our inbox copies of a round's events (invitations, cancels) are sealed to the
        invitee with the round key inside; the lobby stays public.
        """
        if not payload:
            return payload  # clearing a retained message
        place = self.topics.parse(topic)
        where = (place.key, place.channel) if place is not None and place.is_round else None
        if where is not None:
            held = self._links.by_key.get(where[0])
            if rnd is not None:
                if held is not rnd:  # a round's events go to its own topics only
                    log.warning("round %s: not its topic %s: not sent", rnd.id[:8], topic)
                    return None
                key = rnd.sealing_key
            elif held is None and sealed_with:
                key = sealed_with  # a decline of an invitation we do not hold
            else:
                log.warning("no round key for %s: not sent", topic)
                return None
            if not key:
                log.warning("no round key for %s: not sent", topic)
                return None
            sealed = sealing.seal_round(
                key, os.urandom(sealing.NONCE_SIZE), where[1], payload
            )
            if rnd is not None and where[1] == "genesis":
                rnd.genesis_payload = sealed
            return sealed
        if place is None or place.area != "inbox":
            return payload
        rnd = rnd if rnd is not None else self._links.by_id.get(event.round or "")
        them = place.name
        to = [
            seat.pk
            for seat in (rnd.machine.state.seats if rnd is not None else ())
            if seat.pk is not None and peer_id(seat.pk) == them
        ]
        if rnd is None or not to or event.round != rnd.id:
            log.warning("no member behind %s: not sent", topic)
            return None
        try:
            return sealing.seal_invitation(
                os.urandom(sealing.KEY_SIZE),
                self._seed,
                self._pk,
                to[0],
                rnd.id,
                rnd.sealing_key,
                bytes.fromhex(rnd.key),
                payload,
            )
        except SealError as err:  # a key nobody can seal to (a hostile genesis seat)
            log.warning("cannot seal to %s: %s; not sent", them[:8], err)
            return None

    def unseal(self, key: str, channel: str, payload: bytes) -> bytes | None:
        """The event bytes of a payload on a round topic, ``None`` to drop it.

        A payload that does not open with the round's key comes from someone without
        the key (a stranger): dropped before it is even parsed.
        """
        rnd = self._links.by_key.get(key)
        if rnd is not None and channel == "genesis":
            rnd.watch_genesis(payload)
        if rnd is not None:
            round_key = rnd.sealing_key
        else:
            round_key = self._links.joining[key][1] if key in self._links.joining else b""
        if not payload:
            return payload
        try:
            return sealing.open_round(round_key, channel, payload)
        except SealError:
            rid = rnd.id if rnd is not None else None
            reason = "not sealed with the round key"
            self._host.warn(f"dropped payload on round/{key[:8]}…/{channel}: {reason}", rid, reason, "payload")
            return None

