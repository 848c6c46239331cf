"""What ``Peer`` seals before it publishes and opens when it receives; the retained genesis
of a private round."""

from __future__ import annotations

import asyncio
import logging
import os

from p2p.peer import config
from p2p.peer.handles import Round
from p2p.protocol import sealing
from p2p.protocol.events import Event
from p2p.protocol.identity import peer_id
from p2p.protocol.lobby import MAX_INVITATIONS
from p2p.protocol.round import Phase
from p2p.protocol.sealing import SealError

log = logging.getLogger("p2p.peer")


class Publishing:
    """What ``Peer`` seals before it publishes and opens when it receives; the
    retained genesis of a private round."""

    def _clear_private_genesis(self, rnd: Round) -> None:
        """Once a private round has started, its retained genesis has done its job."""
        st = rnd.chain_state
        if (
            rnd._genesis_cleared
            or not st.private
            or not rnd.is_admin
            or st.phase is Phase.FORMING
        ):
            return
        rnd._genesis_cleared = True
        route = self.topics.round_genesis(rnd.machine.key)
        self.transport.publish_nowait(route.topic, b"", qos=route.qos, retain=True)

    def _round_topic(self, topic: str) -> tuple[str, str] | None:
        """``(topic key, channel)`` of a round topic of our namespace, else ``None``."""
        root = self.topics.root + "/round/"
        if not topic.startswith(root):
            return None
        parts = topic[len(root) :].split("/")
        return (parts[0], parts[1]) if len(parts) == 2 else None

    def _seal(self, topic: str, payload: bytes, event: Event) -> bytes | None:
        """``payload`` as it goes out on ``topic``; ``None``: do not send it.

        Round topics: sealed with the round key; our inbox copies of a round's events
        (invitations, cancels): sealed to the invitee with the round key inside; the
        lobby stays public.  Round traffic without a key is never sent in the clear.
        """
        if not payload:
            return payload  # clearing a retained message
        where = self._round_topic(topic)
        if where is not None:
            rnd = self._by_key.get(where[0])
            key = rnd.sealing_key if rnd is not None else self._invite_key(where[0])
            if not key:
                log.warning("no round key for %s: not sent", topic)
                return None
            sealed = sealing.seal_round(
                key, os.urandom(sealing.NONCE_SIZE), where[1], payload
            )
            if rnd is not None and where[1] == "genesis":
                rnd._genesis_payload = sealed
            return sealed
        inbox = self.topics.root + "/inbox/"
        if not topic.startswith(inbox):
            return payload
        rnd = self.rounds.get(event.round or "")
        them = topic[len(inbox) :]
        to = [
            seat.pk
            for seat in (rnd.chain_state.seats if rnd is not None else ())
            if seat.pk is not None and peer_id(seat.pk) == them
        ]
        if rnd is None or not to:
            log.warning("no member behind %s: not sent", topic)
            return None
        try:
            return sealing.seal_invitation(
                os.urandom(sealing.KEY_SIZE),
                self._seed,
                self.public_key,
                to[0],
                rnd.id,
                rnd.sealing_key,
                bytes.fromhex(rnd.machine.key),
                payload,
            )
        except SealError as err:  # a key nobody can seal to (a hostile genesis seat)
            log.warning("cannot seal to %s: %s; not sent", them[:8], err)
            return None

    def _invite_key(self, topic_key: str) -> bytes | None:
        """The round key of an invitation whose round uses ``topic_key``."""
        for key, topic in self._invite_keys.values():
            if topic == topic_key:
                return key
        return None

    def _reroute(self, topic: str) -> str:
        """The lobby answers an invitation on ``round/<round id>/…``; a private round's
        invitation named other topics (its code's key): use those."""
        where = self._round_topic(topic)
        if where is None or where[0] not in self._invite_keys:
            return topic
        topic_key = self._invite_keys[where[0]][1]
        prefix = self.topics.root + "/round/"
        return f"{prefix}{topic_key}/{where[1]}"

    def _unseal(self, key: str, channel: str, payload: bytes) -> bytes | None:
        """The event bytes of a payload on a round topic, ``None`` to drop it.

        A payload that does not open with the round's key comes from someone without
        the key (a stranger): dropped before it is even parsed.
        """
        rnd = self._by_key.get(key)
        if rnd is not None and channel == "genesis":
            self._watch_genesis(rnd, payload)
        if rnd is not None:
            round_key = rnd.sealing_key
        else:
            round_key = self._joining[key][1] if key in self._joining else b""
        if not payload:
            return payload
        try:
            return sealing.open_round(round_key, channel, payload)
        except SealError:
            rid = rnd.id if rnd is not None else None
            reason = "not sealed with the round key"
            self._warn(f"dropped payload on round/{key[:8]}…/{channel}: {reason}", rid, reason, "payload")
            return None

    def _remember_invite_key(self, round_id: str, key: bytes, topic_key: str) -> None:
        """Keep the keys of an invitation until we accept or decline it (bounded)."""
        if round_id in self._invite_keys:
            return
        if len(self._invite_keys) >= 4 * MAX_INVITATIONS:
            # the oldest key whose invitation is no longer pending: at most 16 are, so
            # this looks at 17 at most. Oldest first alone let 64 invitations from fresh
            # keys push out the key of a friend's pending one (accepting it then failed).
            pending = self.lobby.invitations
            old = next(
                (rid for rid in self._invite_keys if rid not in pending),
                next(iter(self._invite_keys)),
            )
            del self._invite_keys[old]
        self._invite_keys[round_id] = (key, topic_key)

    def _watch_genesis(self, rnd: Round, payload: bytes) -> None:
        """Someone deleted or overwrote our private round's retained genesis: repair it."""
        if (
            not rnd.is_admin
            or rnd._genesis_payload is None
            or rnd._genesis_cleared  # our own clearing, echoed (a broker without noLocal)
            or rnd.phase is not Phase.FORMING
            or payload == rnd._genesis_payload  # our own copy, echoed
        ):
            return
        what = "deleted" if not payload else "overwritten"
        self.stats.count_drop(f"retained genesis {what}")
        if rnd._genesis_repair is None:  # one log line and one repair per interval
            log.warning("round %s: the retained genesis was %s", rnd.id[:8], what)
            rnd._genesis_repair = asyncio.get_running_loop().call_later(
                config.GENESIS_REPAIR_S, self._repair_genesis, rnd
            )

    def _repair_genesis(self, rnd: Round) -> None:
        """Publish our private round's genesis again, retained, while joiners may come."""
        rnd._genesis_repair = None
        if (
            rnd._genesis_payload is None
            or rnd._genesis_cleared
            or not rnd.is_admin
            or rnd.phase is not Phase.FORMING
            or self._closed
        ):
            return
        route = self.topics.round_genesis(rnd.machine.key)
        self.transport.publish_nowait(
            route.topic, rnd._genesis_payload, qos=route.qos, retain=True
        )
