"""The lobby side of ``Peer``: who is online, lobby chat, invitations in the lobby, our
presence."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random

from p2p.net.transport import WillMessage
from p2p.peer import config
from p2p.peer.handles import Invitation
from p2p.peer.notifications import (
    ChatMessage,
    InvitationReceived,
    PresenceChanged,
    RoundNotice,
)
from p2p.protocol.effects import (
    Effect,
    Notice,
    Publish,
)
from p2p.protocol.events import Event
from p2p.protocol.lobby import (
    Backoff,
    PeerInfo,
)
from p2p.protocol.round_machine import ActionError

log = logging.getLogger("p2p.peer")


class LobbyGlue:
    """The lobby side of ``Peer``: who is online, lobby chat, invitations in the
    lobby, our presence."""

    def online(self) -> list[PeerInfo]:
        """Everyone else online in our namespace, by nickname."""
        return self.lobby.online()

    def find_peer(self, who: str) -> PeerInfo | None:
        """An online peer by peer id, fingerprint prefix (4+), public key hex or nickname."""
        text = who.strip().lower()
        if not text:
            return None
        peers = list(self.lobby.peers.values())
        matches = [
            p
            for p in peers
            if p.pk.hex() == text
            or (len(text) >= 4 and p.pk.hex() != text and self._pid(p).startswith(text))
        ]
        if not matches:
            matches = [p for p in peers if p.nick.casefold() == text]
        return matches[0] if len(matches) == 1 else None

    @staticmethod
    def _pid(info: PeerInfo) -> str:
        from p2p.protocol.identity import peer_id

        return peer_id(info.pk)

    @property
    def busy(self) -> bool:
        """True while we hold a seat in a round that is not over and we have not left.

        A ``leave`` we sent counts at once, though it enters the chain only when the owner
        of the next position seals it: an opponent who vanished must not keep us "in a
        round" (the round still ends by its forfeit rule for everyone).
        """
        for rnd in self.rounds.values():
            seat = rnd.my_seat
            if (
                seat is not None
                and not rnd.is_over
                and seat not in rnd.chain_state.resigned
                and ("leave", self.public_key) not in rnd.machine.side
            ):
                return True
        return False


    async def take_over(self) -> None:
        """Act for our key in this session: another session of it (another window or
        machine) steps back and watches (``p2p.protocol.sessions``)."""
        await self._run_lobby_effects(self.lobby.take_over(self.now_ms()))

    @property
    def acting(self) -> bool:
        """False while another session of our key plays for it (this one watches)."""
        return self.lobby.sessions.acting

    async def say(self, text: str) -> None:
        """A lobby chat line to everyone online; ``ActionError`` if it is empty."""
        try:
            effects = self.lobby.chat(text, self.now_ms())
        except ValueError as err:
            raise ActionError(str(err)) from None
        await self._run_effects(None, effects)
        for effect in effects:
            if isinstance(effect, Publish):
                event = effect.event
                self._notify(
                    ChatMessage(
                        self.public_key, self.nick, event.body["text"], None, event.ts
                    )
                )

    @property
    def invitations(self) -> list[Invitation]:
        """Invitations waiting for our answer, oldest first."""
        return [
            Invitation(self, pending) for pending in self.lobby.invitations.values()
        ]

    def invitation(self, round_id: str) -> Invitation | None:
        pending = self.lobby.invitations.get(round_id)
        return Invitation(self, pending) if pending else None

    def _resolve(self, who: str | PeerInfo | bytes) -> bytes:
        if isinstance(who, PeerInfo):
            return who.pk
        if isinstance(who, bytes) and len(who) == 32:
            return who
        text = str(who)
        info = self.find_peer(text)
        if info is not None:
            return info.pk
        if len(text) == 64:
            with contextlib.suppress(ValueError):
                return bytes.fromhex(text)
        raise ActionError(f"no peer {text!r} online (use a fingerprint from the lobby)")


    def _make_will(self) -> WillMessage:
        """A fresh session per connection, and its pre-signed offline presence as the Will."""
        event = self.lobby.will(self.now_ms(), session=os.urandom(16))
        route = self.lobby.will_route()
        return WillMessage(
            route.topic, event.raw, route.qos, route.retain, config.PRESENCE_TTL_S
        )

    async def _lobby_receive(
        self,
        event: Event,
        topic: str,
        retained: bool = False,
        expiry: int | None = None,
        sealed_with: tuple[bytes, str] | None = None,
    ) -> None:
        known = event.round in self.lobby.invitations
        effects = self.lobby.receive(
            event, self.now_ms(), topic, retained, expiry, sealed_with=sealed_with
        )
        await self._run_lobby_effects(effects, retained)
        pending = self.lobby.invitations.get(event.round or "")
        if event.kind == "genesis" and not known and pending is not None:
            self._notify(InvitationReceived(Invitation(self, pending)))

    async def _run_lobby_effects(self, effects: list[Effect], retained: bool = False) -> None:
        """Run lobby effects and turn the change of the online list into notifications.

        O(changes), not O(peers): the lobby reports who came, changed or left.
        """
        await self._run_effects(
            None, [e for e in effects if not isinstance(e, (Notice, Backoff))]
        )
        for note in effects:
            if isinstance(note, Notice) and note.code not in (
                "peer_online",
                "peer_left",
                "peer_silent",
            ):
                self._notify(RoundNotice(None, note.text, note.code, note.params))
            elif isinstance(note, Backoff):
                self._schedule_answer(note.max_ms)
        for info, online in self.lobby.take_changes():
            self._notify(PresenceChanged(info, online, retained))

    def _schedule_answer(self, max_ms: int) -> None:
        """Re-publish our presence after a random back-off, unless it became unnecessary."""
        if self._answer_timer is not None or self._closed:
            return

        def due() -> None:
            self._answer_timer = None
            if self._closed or not self.transport.connected:
                return
            for effect in self.lobby.answer_due(self.now_ms()):
                if isinstance(effect, Publish):
                    route = effect.route
                    self.transport.publish_nowait(
                        route.topic,
                        effect.payload,
                        qos=route.qos,
                        retain=route.retain,
                        expiry=config.PRESENCE_TTL_S,
                    )

        delay = random.uniform(0, max_ms) / 1000
        self._answer_timer = asyncio.get_running_loop().call_later(delay, due)
