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
        place = self.topics.parse(topic)
        return (place.key, place.channel) if place is not None and place.is_round else None

    def _seal(
        self,
        topic: str,
        payload: bytes,
        event: Event,
        rnd: Round | None = None,
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
        where = self._round_topic(topic)
        if where is not None:
            held = self._by_key.get(where[0])
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
                rnd._genesis_payload = sealed
            return sealed
        place = self.topics.parse(topic)
        if place is None or place.area != "inbox":
            return payload
        rnd = rnd if rnd is not None else self.rounds.get(event.round or "")
        them = place.name
        to = [
            seat.pk
            for seat in (rnd.chain_state.seats if rnd is not None else ())
            if seat.pk is not None and peer_id(seat.pk) == them
        ]
        if rnd is None or not to or event.round != rnd.id:
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
