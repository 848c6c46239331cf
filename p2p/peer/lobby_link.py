"""``LobbyLink``: the peer's side of the lobby.

It owns the pure lobby machine (``p2p.protocol.lobby.Lobby``: who is online, chat,
invitations, our presence) and the timer of our presence answer, and turns what the
machine returns into what the user sees (``PresenceChanged``, ``InvitationReceived``,
chat lines, notices) and what goes out (through ``LobbyHost.publish_lobby``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
from typing import Protocol

from p2p.net.transport import WillMessage
from p2p.peer.handles import Invitation, InvitationHost
from p2p.peer.notifications import (
    ChatMessage,
    InvitationReceived,
    Notification,
    PresenceChanged,
    RoundNotice,
)
from p2p.protocol.effects import ChatLine, Dropped, Effect, Notice, Publish
from p2p.protocol.events import Event
from p2p.protocol.identity import peer_id
from p2p.protocol.lobby import Backoff, Lobby, PeerInfo
from p2p.protocol.lobby import Invitation as LobbyInvitation
from p2p.protocol.round_machine import ActionError

log = logging.getLogger("p2p.peer")

_QUIET = ("peer_online", "peer_left", "peer_silent")
"""Lobby notices that the presence notifications already tell."""


class LobbyHost(Protocol):
    """What the lobby link needs from its peer (``Peer`` implements it)."""

    def now_ms(self) -> int: ...

    @property
    def closed(self) -> bool: ...

    @property
    def connected(self) -> bool: ...

    def publish_lobby(self, effect: Publish) -> None:
        """Seal (a decline) or not (the lobby is public) and publish ``effect``."""

    def publish_raw(
        self, topic: str, payload: bytes, qos: int, retain: bool
    ) -> asyncio.Future[None] | None: ...

    def notify(self, note: Notification) -> None: ...

    def warn(
        self, text: str, round_id: str | None, reason: str, kind: str, sender: str = ""
    ) -> None: ...

    async def after_step(self) -> None: ...


class LobbyLink:
    """The lobby machine, the presence answer timer and the lobby's notifications."""

    def __init__(self, host: LobbyHost, lobby: Lobby, peer: InvitationHost) -> None:
        self._host = host
        self.lobby = lobby
        self._peer = peer  # what an ``Invitation`` handle answers through
        self._answer_timer: asyncio.TimerHandle | None = None

    # -- queries ---------------------------------------------------------------------

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
            or (len(text) >= 4 and p.pk.hex() != text and peer_id(p.pk).startswith(text))
        ]
        if not matches:
            matches = [p for p in peers if p.nick.casefold() == text]
        return matches[0] if len(matches) == 1 else None

    def resolve(self, who: str | PeerInfo | bytes) -> bytes:
        """The public key of a peer named by info, key, id, fingerprint or nickname."""
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

    @property
    def invitations(self) -> list[Invitation]:
        """Invitations waiting for our answer, oldest first."""
        return [self._handle(pending) for pending in self.lobby.invitations.values()]

    def invitation(self, round_id: str) -> Invitation | None:
        pending = self.lobby.invitations.get(round_id)
        return self._handle(pending) if pending else None

    def _handle(self, pending: LobbyInvitation) -> Invitation:
        """The user's handle of a pending invitation, its expiry on our clock (the admin
        signed it on its own)."""
        expires = self.lobby.local_time(pending.admin, pending.genesis.body["expires"])
        return Invitation(self._peer, pending, expires)

    # -- what goes out ---------------------------------------------------------------

    def make_will(self) -> WillMessage:
        """A fresh session per connection, and its pre-signed offline presence as the Will."""
        event = self.lobby.will(self._host.now_ms(), session=os.urandom(16))
        route = self.lobby.will_route()
        return WillMessage(route.topic, event.raw, route.qos, route.retain, event.body["ttl"])

    async def run(self, effects: list[Effect]) -> None:
        """Carry out lobby effects that go out or are shown as they are (publish, chat,
        a dropped event), then let the peer update what depends on every round."""
        host = self._host
        for effect in effects:
            if isinstance(effect, Publish):
                host.publish_lobby(effect)
            elif isinstance(effect, Dropped):
                host.warn(effect.describe(), None, effect.reason, effect.kind, effect.sender)
            elif isinstance(effect, ChatLine):
                info = self.lobby.peers.get(effect.sender)
                nick = effect.nick or (info.nick if info else "?")
                host.notify(ChatMessage(effect.sender, nick, effect.text, effect.round, effect.ts))
        await host.after_step()

    async def say(self, text: str) -> None:
        """A lobby chat line to everyone online; ``ActionError`` if it is empty."""
        try:
            effects = self.lobby.chat(text, self._host.now_ms())
        except ActionError:
            raise  # another session acts: this one watches (its code says so)
        except ValueError as err:
            raise ActionError(str(err)) from None
        await self.run(effects)
        me = self.lobby.me.public_key
        for effect in effects:
            if isinstance(effect, Publish):
                event = effect.event
                self._host.notify(
                    ChatMessage(me, self.lobby.nick, event.body["text"], None, event.ts)
                )

    async def decline(self, round_id: str) -> None:
        try:
            effects = self.lobby.decline_invitation(round_id, self._host.now_ms())
        except ValueError:
            raise ActionError(
                "no such invitation (it expired or was cancelled)", "no_invitation"
            ) from None
        await self.run(effects)

    # -- what comes in ---------------------------------------------------------------

    async def receive(
        self,
        event: Event,
        topic: str,
        retained: bool = False,
        expiry: int | None = None,
        sealed_with: tuple[bytes, str] | None = None,
    ) -> None:
        """A lobby event, or an invitation or cancel from our inbox (``sealed_with``: the
        round key and topic key it carried)."""
        known = event.round in self.lobby.invitations
        effects = self.lobby.receive(
            event, self._host.now_ms(), topic, retained, expiry, sealed_with=sealed_with
        )
        await self.run_effects(effects, retained)
        pending = self.lobby.invitations.get(event.round or "")
        if event.kind == "genesis" and not known and pending is not None:
            self._host.notify(InvitationReceived(self._handle(pending)))

    async def receive_own_presence(self, payload: bytes, topic: str, retained: bool) -> None:
        """What the broker holds as our presence (emptied or overwritten: repaired)."""
        effects = self.lobby.receive_bytes(payload, self._host.now_ms(), topic, retained)
        await self.run_effects(effects)

    async def run_effects(self, effects: list[Effect], retained: bool = False) -> None:
        """Run lobby effects and turn the change of the online list into notifications.

        O(changes), not O(peers): the lobby reports who came, changed or left.
        """
        await self.run([e for e in effects if not isinstance(e, (Notice, Backoff))])
        for note in effects:
            if isinstance(note, Notice) and note.code not in _QUIET:
                self._host.notify(RoundNotice(None, note.text, note.code, note.params))
            elif isinstance(note, Backoff):
                self._schedule_answer(note.max_ms)
        for info, online in self.lobby.take_changes():
            self._host.notify(PresenceChanged(info, online, retained))

    def _schedule_answer(self, max_ms: int) -> None:
        """Re-publish our presence after a random back-off, unless it became unnecessary."""
        if self._answer_timer is not None or self._host.closed:
            return

        def due() -> None:
            self._answer_timer = None
            if self._host.closed or not self._host.connected:
                return
            for effect in self.lobby.answer_due(self._host.now_ms()):
                if isinstance(effect, Publish):
                    self._host.publish_lobby(effect)

        delay = random.uniform(0, max_ms) / 1000
        self._answer_timer = asyncio.get_running_loop().call_later(delay, due)

    def stop(self) -> None:
        """Cancel the answer timer (the peer closes)."""
        if self._answer_timer is not None:
            self._answer_timer.cancel()
