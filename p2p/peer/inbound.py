"""Every message that arrives at ``Peer``: the edge's cheap classification, then dispatch
to a round or the lobby."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from p2p.net.inbound import Lane, Verdict
from p2p.net.transport import Inbound
from p2p.peer.checks import (
    _claimed_key,
    _claimed_round,
    _inbox_problem,
    _is_duplicate,
    _signed_id,
    _unjoinable,
)
from p2p.protocol import events as ev
from p2p.protocol import sealing
from p2p.protocol.effects import dropped
from p2p.protocol.events import EventError
from p2p.protocol.lobby import LONGEST_INVITATION_MS
from p2p.protocol.sealing import SealError
from p2p.protocol.topics import Place

if TYPE_CHECKING:
    from p2p.peer.handles import Round

log = logging.getLogger("p2p.peer")


class Receiving:
    """Every message that arrives at ``Peer``: the edge's cheap classification, then
    dispatch to a round or the lobby."""

    async def _receive_loop(self) -> None:
        async for message in self.transport.messages():
            self.stats.received += 1
            try:
                await self._dispatch(message)
            except Exception:
                log.exception(
                    "internal error while handling a message on %s", message.topic
                )
            # Let the network reader run between two messages: the edge's cheap checks
            # must keep up with the socket, or a move waits in the socket behind a flood.
            await asyncio.sleep(0)

    def _classify(self, topic: str, payload: bytes) -> Verdict:
        """The cheap checks of the network edge (``p2p.net.inbound``): which lane, or drop.

        Runs for every message in the network read path, so it only looks at the topic
        and the key the payload claims (no JSON parse), except for one case: a message on
        our round's topic that claims a member's key has its signature checked here
        (``_signed_id``), so a forger can neither jump the queue nor use up that member's
        budget, and a replay of an event we hold costs one hash and one verification.
        """
        place = self.topics.parse(topic)
        if place is None:
            return Verdict(None, reason="foreign topic")
        if place.area == "round":
            return self._classify_round(place, payload)
        if place.area == "inbox" and place.name == self.peer_id:
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
            if topic == self.lobby.will_route().topic and sender != self.public_key:
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
            return Verdict(None, reason="forged")
        if event.pk != sender:
            return Verdict(None, reason="forged")
        why = self.lobby.replayed(event, self.now_ms(), topic)
        return Verdict(None, reason=why) if why else Verdict(lane, sender, parsed=event)

    def _known_key(self, key: bytes | None) -> bool:
        """A key listed in the lobby, a friend, ourselves or a member of one of our rounds."""
        return key is not None and (
            key in self.lobby.peers
            or key == self.public_key
            or self.friends.is_friend(key)
            or any(r._has_member(key) for r in self.rounds.values())
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
            sealed = sealing.open_invitation(self._seed, self.public_key, payload)
        except SealError:
            return Verdict(None, reason="not sealed to us")
        sender = _claimed_key(sealed[3])
        if sender is None:
            return Verdict(None, reason="no signer")

        def confirm() -> Verdict:
            why = self._inbox_auth(sender, *sealed)
            return Verdict(None, reason=why) if why else Verdict(Lane.INBOX, sender)

        if not self._known_key(sender):
            return Verdict(Lane.INBOX, None, confirm=confirm)
        checked = confirm()
        if checked.lane is None:
            return checked
        return Verdict(Lane.INBOX, sender, checked=True)

    def _inbox_auth(
        self, sender: bytes, invite_key: bytes, auth: bytes, topic_key: bytes, inner: bytes
    ) -> str:
        """Why an opened inbox message is not an event ``sender`` itself signed and sealed to
        us (key-auth), or is a replay or stale ('' if it is fresh and really theirs)."""
        try:
            event = ev.parse(inner)
        except EventError:
            return "forged"
        if event.pk != sender:
            return "forged"
        if event.round is None:  # a lobby event: no round key it could have sealed
            return "not an invitation or cancel"
        if event.id in self._inbox_seen:
            return "duplicate"
        now = self.now_ms()
        if event.ts < now - LONGEST_INVITATION_MS or (
            event.kind == "genesis" and event.body["expires"] <= now
        ):
            return "stale invitation or cancel"  # by its own signed time: no memory needed
        # (a round event its signer really sealed to us is charged to the signer and goes
        # on: the inbox rule, §15.3, drops it there with a warning naming it)
        if not sealing.check_key_auth(
            self._seed, self.public_key, sender, event.round, invite_key, topic_key, auth
        ):
            return "round key not sealed by the event's signer"
        return ""

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
        rnd = self._by_key.get(place.key)
        if rnd is None:
            if place.key in self._joining:
                return Verdict(Lane.ROUND_OTHER, _claimed_key(payload))
            return Verdict(None, reason="not our round")
        if place.channel == "genesis":
            # We hold the round, so we need no genesis from the topic; but as its admin
            # we watch it here, where a flood cannot hide the overwrite that counts
            # (the repair is rate-limited by ``_watch_genesis`` itself).
            self._watch_genesis(rnd, payload)
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
        if not rnd._has_member(sender):
            # a code joiner, or a non-member's bytes replayed by someone holding the key:
            # checked (signature, replay) once the lane-wide budget let it pass, before
            # its signer's own budget is charged
            def confirm() -> Verdict:
                return self._round_auth(rnd, opened, sender, Lane.ROUND_OTHER)

            return Verdict(Lane.ROUND_OTHER, None, confirm=confirm)
        if _claimed_round(opened) != rnd.id:
            # a member's event of another round, sealed here by a member of both that
            # replays it: it can never apply, and would use up that member's budget
            self._warn(
                f"dropped payload on {rest} from {sender.hex()[:8]}: event of another round",
                rnd.id,
                "event of another round",
                "payload",
            )
            return Verdict(None, reason="event of another round")
        verdict = self._round_auth(rnd, opened, sender, Lane.ROUND)
        if verdict.reason == "forged":
            self._warn(
                f"dropped payload on {rest} from {sender.hex()[:8]}: bad signature",
                rnd.id,
                "bad signature",
                "payload",
            )
        return verdict

    def _round_auth(self, rnd: Round, opened: bytes, sender: bytes | None, lane: Lane) -> Verdict:
        """``sender``'s own, new event on a round topic goes to ``lane``; a forgery or a
        replay is dropped before its budget is charged.  A replay is judged by the round
        machine's rule (``RoundMachine.replayed``: position and id, chat and sync windows),
        not only by its bounded memory of ids, so a flushed memory lets none through."""
        if sender is None:
            return Verdict(None, reason="forged")
        event_id = _signed_id(opened, sender)
        if event_id is None:
            return Verdict(None, reason="forged")
        if event_id in rnd.machine.seen:  # a replay of an event we have: one hash
            return Verdict(None, reason="duplicate")
        try:
            event = ev.parse(opened)
        except EventError:  # signed by the sender, but not a valid event: its own doing,
            return Verdict(lane, sender, parsed=opened)  # charged; dispatch reports why
        why = rnd.machine.replayed(event, self.now_ms())
        if why:
            return Verdict(None, reason=why)
        return Verdict(lane, sender, parsed=event)

    def _edge_drop(self, reason: str) -> None:
        self.stats.count_drop(reason)

    async def _dispatch(self, message: Inbound) -> None:
        topic = message.topic
        place = self.topics.parse(topic)
        if place is None:
            return
        rest = topic[len(self.topics.root) + 1 :]  # for the log lines
        if topic == self.lobby.will_route().topic:  # what the broker holds as ours
            effects = self.lobby.receive_bytes(
                message.payload, self.now_ms(), topic, message.retain
            )
            await self._run_lobby_effects(effects)
            return
        payload: bytes | None = message.payload
        where = (place.key, place.channel) if place.is_round else None
        checked = message.parsed if isinstance(message.parsed, ev.Event) else None
        if checked is not None:
            payload = checked.raw  # opened and parsed at the edge (``_classify``)
        elif isinstance(message.parsed, bytes):
            payload = message.parsed  # opened at the edge (``_classify``)
        elif where is not None:
            payload = self._unseal(where[0], where[1], message.payload)
        if not payload:
            return  # an emptied retained message: harmless by design
        inbox = place.area == "inbox" and place.name == self.peer_id
        if inbox:  # sealed to us: (round key, its proof, event)
            try:
                invite_key, auth, topic_key, payload = sealing.open_invitation(
                    self._seed, self.public_key, payload
                )
            except SealError as err:
                self._warn(f"dropped payload on {rest}: {err}", None, str(err), "payload")
                return
        try:
            event = checked if checked is not None and not inbox else ev.parse(payload)
        except EventError as err:
            self._warn(
                f"dropped payload on {rest} from ?: {err}", None, str(err), "payload"
            )
            return
        if inbox:
            if event.round is None or not sealing.check_key_auth(
                self._seed,
                self.public_key,
                event.pk,
                event.round,
                invite_key,
                topic_key,
                auth,
            ):
                reason = "round key not sealed by the event's signer"
                self._warn(f"dropped {event.describe()}: {reason}", event.round, reason, event.kind)
                return
            if event.kind == "genesis" and not event.body["private"] and topic_key.hex() != event.round:
                # a public round's topics are its id: an inviter naming other topics would
                # send us onto another round's topics (and take their place in ``_by_key``)
                reason = "a public round's topics are not its id"
                self._warn(f"dropped {event.describe()}: {reason}", event.round, reason, event.kind)
                return
            self._inbox_seen.add(event.id)  # a replay is dropped at the edge
        if place.area == "round":
            rnd = self._by_key.get(place.key) if place.is_round else None
            joining = self._joining.get(place.key) if place.is_round else None
            if (
                rnd is None
                and joining is not None
                and place.channel == "genesis"
                and event.kind == "genesis"
            ):
                now = self.lobby.their_now(event.pk, self.now_ms())  # the admin's clock
                why = _unjoinable(event, self.turn_timeouts, now)
                if why:  # e.g. a holder of the code planted a round of its own
                    self._warn(f"ignored genesis behind a code: {why}", None, why, "genesis")
                elif not joining[0].done():
                    joining[0].set_result(event)
                return
            if rnd is not None:
                if (
                    event.seq is None  # a side event or chat: signed with its own clock
                    and place.channel in ("events", "chat")  # live, not a sync answer
                    and not message.retain
                    and event.pk != self.public_key
                    and rnd._has_member(event.pk)
                ):
                    self.lobby.clocks.observe(event.pk, event.ts, self.now_ms())
                effects = await self._call(
                    rnd, lambda: rnd.machine.receive(event, self.now_ms())
                )
                await self._run_effects(rnd, effects, source=place.channel)
            return
        if place.area == "inbox":
            # an inbox carries invitations (genesis) and their cancels, nothing else: a
            # round event sent to one member's inbox must not fork it off the round
            problem = _inbox_problem(event, self.rounds)
            if problem:
                text = dropped(event, problem).describe()
                self._warn(text, event.round, problem, event.kind)
                return
            if event.kind == "cancel" and event.round in self.rounds:
                rnd = self.rounds[event.round]  # a cancel copied to our inbox
                effects = await self._call(
                    rnd, lambda: rnd.machine.receive(event, self.now_ms())
                )
                await self._run_effects(
                    rnd, [e for e in effects if not _is_duplicate(e)]
                )
                return
        sealed_with = (invite_key, topic_key.hex()) if inbox else None
        await self._lobby_receive(event, topic, message.retain, message.expiry, sealed_with)
