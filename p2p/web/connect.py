"""Connecting the browser face's peer: the brokers, ``/local`` and the rounds to resume.

``connect`` opens a ``p2p.peer.Peer`` for the session (the key, friends and round logs of
the config directory), says in one line where it is connected or why not, resumes every
unfinished round from its log and starts ``pump``, which turns the peer's notifications
into the page's lines and snapshots.  ``start_local`` is the shell's ``/local``: a
Mosquitto on this machine with the computer player (``p2p.bot``) in its lobby.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from p2p.web.snapshot import fp, nick_of

if TYPE_CHECKING:
    from p2p.web.session import WebSession

log = logging.getLogger("p2p.web")
MAX_RESUME = 50
"""At most this many of the newest round logs are looked at for unfinished rounds."""


async def connect(session: WebSession, broker: str | None) -> None:
    """Connect a peer to ``broker`` (empty: the public defaults); one line either way."""
    from p2p import friends as friends_mod
    from p2p import keystore
    from p2p.config import check_broker_urls
    from p2p.net.transport import DEFAULT_BROKER_URLS, split_brokers
    from p2p.peer import Peer

    try:
        urls = check_broker_urls(broker) if broker else list(DEFAULT_BROKER_URLS)
    except ValueError as err:
        session.line("warn", "err.broker", url=str(err))
        return
    urls = split_brokers(" ".join(urls)) or urls
    await session.disconnect()
    identity = None
    if session.config_dir is not None:
        try:
            identity = keystore.load_or_create(session.config_dir / keystore.KEY_FILE_NAME)
        except keystore.KeyFileError as err:
            session.line("warn", "err.key", reason=str(err))
            return
    public = [u for u in urls if not is_local(u)]
    if public:
        session.line("warn", "msg.privacy", brokers=", ".join(public))
    session.connection = "connecting"
    session.connection_detail = " ".join(urls)
    session.changed()
    friends = friends_mod.load(session.config_dir / friends_mod.FILE_NAME) if session.config_dir else None
    log_dir = session.config_dir / "rounds" if session.config_dir is not None else None
    try:
        peer = Peer(urls, nick=session.settings.nick or "player", identity=identity, log_dir=log_dir,
                    friends=friends, namespace=session.settings.namespace or "public",
                    **session.peer_options)
        await peer.start()
    except Exception as err:  # noqa: BLE001 - ConnectionError, bad URL: one line
        log.info("cannot connect to %s: %s", urls, err)
        session.connection = "offline"
        session.line("warn", "net.unreachable", broker=" ".join(urls), reason=str(err)[:160])
        session.changed()
        return
    from p2p.ledger import Ledger

    session.peer = peer
    session._ledger = Ledger(log_dir) if log_dir is not None else None
    session.connection = "connected"
    session.line("info", "net.connected", broker=" ".join(urls), nick=peer.nick, fp=fp(peer.public_key))
    session._pump = asyncio.get_running_loop().create_task(pump(session, peer))
    await resume_unfinished(peer)
    session.changed()

async def start_local(session: WebSession) -> None:
    """A Mosquitto on loopback with a computer player in its lobby, and us on it."""
    from p2p.bot import run_bot
    from p2p.net.broker import LocalBroker

    session.line("info", "net.local_starting")
    broker = LocalBroker()
    try:
        await asyncio.to_thread(broker.start)
    except Exception as err:  # noqa: BLE001 - mosquitto missing and friends
        session.line("warn", "net.local_failed", reason=str(err)[:160])
        return

    async def stop_broker() -> None:
        await asyncio.to_thread(broker.close)

    session._exit.append(stop_broker)
    ready = asyncio.Event()
    bot = asyncio.get_running_loop().create_task(
        run_bot(broker.url, "computer", ready=ready, namespace=session.settings.namespace or "public"))

    async def stop_bot() -> None:
        bot.cancel()
        with contextlib.suppress(BaseException):
            await bot

    session._exit.insert(0, stop_bot)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(ready.wait(), 10)
    await connect(session, broker.url)

async def resume_unfinished(peer: Any) -> None:
    """Take up every unfinished round we hold a seat in (from the round logs)."""
    from p2p.peer import ActionError
    from p2p.protocol.replay import LogError, replay_log

    if peer is None or peer.log_dir is None or not Path(peer.log_dir).is_dir():
        return
    paths = sorted(Path(peer.log_dir).glob("round-*.log"), key=lambda p: p.stat().st_mtime)[-MAX_RESUME:]
    for path in paths:
        try:
            state = replay_log(path.read_bytes().split(b"\n"), peer.turn_timeouts).state
        except (LogError, OSError, ValueError):
            continue
        if state.phase.value in ("over", "cancelled") or state.seat_of(peer.public_key) is None:
            continue
        try:
            await peer.resume(path)
        except ActionError as err:
            log.info("not resumed %s: %s", path.name, err)

async def pump(session: WebSession, peer: Any) -> None:
    """Turn the peer's notifications into lines and snapshots."""
    from p2p.peer import (
        ChatMessage,
        ConnectionChanged,
        InvitationReceived,
        MovedWhileAway,
        PresenceChanged,
        Rejected,
        RoundNotice,
        RoundOver,
        RoundUpdate,
        YourTurn,
    )

    with peer.events() as notes:
        async for note in notes:
            try:
                if isinstance(note, ChatMessage):
                    session.lines.append(entry := {
                        "t": "line", "kind": "chat", "nick": note.nick, "fp": fp(note.sender),
                        "text": note.text, "round": note.round_id, "ts": note.ts,
                        "me": note.sender == peer.public_key})
                    session.emit(entry)
                elif isinstance(note, InvitationReceived):
                    inv = note.invitation
                    session.line("invite", "msg.invitation", nick=inv.admin_label, game=inv.game,
                              id=inv.round_id)
                elif isinstance(note, YourTurn):
                    session.emit({"t": "your_turn", "round": note.round.id, "game": note.round.game_name})
                elif isinstance(note, MovedWhileAway):
                    names = ", ".join(nick_of(peer, pk) for pk in note.movers)
                    session.line("round", "msg.moved_away", nicks=names, game=note.round.game_name,
                              round=note.round.id, your_turn=note.your_turn)
                elif isinstance(note, RoundOver):
                    session.line("round", "msg.over", game=note.round.game_name, round=note.round.id)
                elif isinstance(note, RoundUpdate) and note.kind == "start":
                    session.line("round", "msg.started", game=note.round.game_name, round=note.round.id)
                elif isinstance(note, RoundNotice):
                    notice_line(session, peer, note)
                elif isinstance(note, Rejected) and not note.routine:
                    session.line("warn", "msg.rejected", reason=note.text[:200])
                elif isinstance(note, ConnectionChanged):
                    session.connection = {"lost": "lost", "closed": "offline"}.get(note.state, "connected")
                    key = {"connected": "net.connected_again"}.get(note.state, f"net.{note.state}")
                    session.line("warn" if note.state == "lost" else "info", key)
                elif isinstance(note, PresenceChanged):
                    pass  # the snapshot shows the lobby
            except Exception:  # noqa: BLE001 - one odd notification must not stop the pump
                log.exception("notification %r", note)
            session.changed()


def notice_line(session: WebSession, peer: Any, note: Any) -> None:
    """A protocol notice in the page's language: ``notice.<code>`` with the seats named
    (the English text, marked as such, for a code the catalogue does not know)."""
    from p2p.web.i18n import CATALOGUE

    key = f"notice.{note.code}"
    if not note.code or key not in CATALOGUE:
        session.line("info", "notice.other", text=note.text)
        return
    params: dict[str, object] = {}
    seats = note.round.chain_state.seats if note.round is not None else []
    for name, value in note.params.items():
        if name in ("seat", "forfeiter", "by") and isinstance(value, int) and 0 <= value < len(seats):
            seat = seats[value]
            params[name] = (f"computer ({seat.level})" if seat.is_computer
                            else nick_of(peer, seat.pk) if seat.pk is not None else "?")
        elif isinstance(value, (int, str)):
            params[name] = value
    session.line("info", key, **params)


def is_local(url: str) -> bool:
    """A broker on this machine (no privacy note needed)."""
    from urllib.parse import urlsplit

    host = urlsplit(url if "://" in url else "mqtt://" + url).hostname or ""
    return host in ("127.0.0.1", "localhost", "::1")
