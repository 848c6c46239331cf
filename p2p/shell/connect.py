"""Connecting the shell: the public broker, its privacy note, and the local fallback.

``attach(broker)`` returns the start-up coroutine the app runs after its first screen:
on the first connection to a broker that is not on this machine it says plainly what is
sent and who can see it, then connects a ``Peer`` in the background.  If the broker
cannot be reached it says so in one line and offers ``/local``: a Mosquitto on loopback
(``p2p.net.broker``) with a computer player (``p2p.bot``) in its lobby.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from typing import Any
from urllib.parse import urlsplit

from p2p.config import refused_everywhere
from p2p.protocol.identity import fingerprint
from p2p.shell.app import ShellApp
from p2p.shell.online import OnlineSession

log = logging.getLogger("p2p.shell")

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
BOT_NICK = "computer"


def is_local(url: str) -> bool:
    """True for a broker on this machine (no privacy note needed)."""
    host = urlsplit(url if "://" in url else "mqtt://" + url).hostname or ""
    return host in LOCAL_HOSTS


def broker_list(broker: str) -> list[str]:
    """The brokers to use: those named (separated by spaces), or the public defaults."""
    from p2p.net.transport import DEFAULT_BROKER_URLS, split_brokers

    return split_brokers(broker) or list(DEFAULT_BROKER_URLS)


def attach_hooks_only(shell: ShellApp) -> None:
    """Local mode: ``/local`` and ``/connect`` still work (they connect on demand)."""
    shell.controller.connect_hook = lambda url: shell.controller.spawn(connect(shell, url or shell.settings.broker))
    shell.controller.local_broker_hook = lambda: shell.controller.spawn(start_local(shell))


def attach(
    broker: str, timeout: float = 6.0, peer_options: dict[str, Any] | None = None
) -> Callable[[ShellApp], Coroutine[Any, Any, None]]:
    """The start-up coroutine that connects to ``broker`` in the background.

    ``peer_options``: extra ``Peer`` arguments (tests pass shorter ``turn_timeouts``).
    """

    async def startup(shell: ShellApp) -> None:
        attach_hooks_only(shell)
        await connect(shell, broker, timeout, peer_options)

    return startup


async def connect(
    shell: ShellApp, broker: str, timeout: float = 6.0, peer_options: dict[str, Any] | None = None
) -> OnlineSession | None:
    """Connect a peer to ``broker`` (empty: the default public one); on failure offer ``/local``."""
    ctl = shell.controller
    t = shell.t
    try:
        from p2p import keystore
        from p2p.peer import Peer
    except ImportError:
        ctl.say("net.unavailable", "warn")
        return None
    from p2p.config import check_broker_urls

    try:
        urls = check_broker_urls(broker) if broker else broker_list("")
    except ValueError as err:  # e.g. a hand-edited settings file: no privacy note, no attempt
        ctl.say("msg.broker_bad", "warn", url=getattr(err, "word", "") or broker)
        shell.state.connection = t.t("status.offline")
        ctl.refresh()
        return None
    broker = " ".join(urls)
    if ctl.online is not None:
        await disconnect(shell)
    try:
        identity = load_identity(shell)
    except keystore.KeyFileError:
        return None  # said by load_identity; connecting again would only say it again
    unseen = [u for u in urls if not is_local(u) and u not in shell.settings.public_broker_ok]
    if unseen:  # one note for all public brokers not confirmed before
        if len(unseen) == 1:
            ctl.say("net.privacy", "warn", broker=unseen[0])
        else:
            ctl.say("net.privacy_many", "warn", brokers=_and_list(unseen, t))
        shell.settings.public_broker_ok.extend(unseen)
        ctl.save_settings()
    shell.state.connection = t.t("status.connecting", broker=broker)
    ctl.refresh()
    peer = None
    try:
        from p2p import friends as friends_mod

        friends = friends_mod.load(shell.options.config_dir / friends_mod.FILE_NAME) \
            if shell.options.config_dir is not None else None
        peer = Peer(
            urls, nick=shell.settings.nick, identity=identity, connect_timeout=timeout,
            log_dir=(shell.options.config_dir / "rounds") if shell.options.config_dir is not None else None,
            friends=friends, namespace=shell.settings.namespace or "public",
            runs_dir=(shell.options.config_dir / "runs") if shell.options.config_dir is not None else None,
            **(peer_options or {}),
        )
        refused = await start_unless_refused(peer, urls)
        if refused is not None:  # nobody listens there: say so now, not after the timeout
            raise refused
    except Exception as err:  # noqa: BLE001 - ConnectionError, bad URL, key file ...
        log.info("cannot connect to %s: %s", broker, err)
        if peer is not None:
            try:
                await peer.close()
            except Exception:
                log.debug("closing the unconnected peer failed", exc_info=True)
        shell.state.connection = t.t("status.offline")
        ctl.say("net.unreachable", "warn", broker=broker, reason=shorten(net_reason(err, t), 120))
        ctl.refresh()
        return None
    session = OnlineSession(shell, peer)
    ctl.online = session
    shell.state.connection = ""
    shell.state.online = True
    ctl.say("net.connected", broker=broker, nick=peer.nick, fp=fingerprint(peer.public_key))
    from p2p.peer.broker_report import one_line  # what this broker allows (p2p doctor)

    transport = peer.transport
    shell.state.add(one_line(transport.protocol_version, transport.retained_to(), t.lang), "info")
    shell.on_exit.append(peer.close)
    ctl.spawn(session.pump())
    ctl.spawn(ctl.guard(session.resume_unfinished()))  # a round left running by a restart
    ctl.refresh()
    return session


def load_identity(shell: ShellApp) -> Any:
    """Our key from the config dir (created on first use); a damaged key file is said
    once, with its path and how to fix it, and raises ``KeyFileError``."""
    from p2p import keystore

    if shell.options.config_dir is None:
        return None
    path = shell.options.config_dir / keystore.KEY_FILE_NAME
    try:
        return keystore.load_or_create(path)
    except keystore.KeyFileError as err:
        log.warning("key file: %s", err)
        shell.state.connection = shell.t.t("status.offline")
        shell.controller.say("net.key_damaged", "warn", path=str(path))
        shell.controller.refresh()
        raise


async def start_unless_refused(peer: Any, urls: list[str]) -> BaseException | None:
    """Start ``peer``; meanwhile look whether every broker refuses outright. Returns that
    refusal (the start is called off) or ``None`` once the peer is up; the start's own
    error is raised. The look costs nothing when a broker answers: both run at once."""
    start = asyncio.ensure_future(peer.start())
    probe = asyncio.ensure_future(refused_everywhere(urls))
    try:
        done, _ = await asyncio.wait({start, probe}, return_when=asyncio.FIRST_COMPLETED)
        if start not in done:
            refused = probe.result()
            if refused is not None:
                return refused
        await start  # up, or its own error
        return None
    finally:
        for task in (start, probe):
            if not task.done():
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task


def shorten(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters at a word boundary, with "…"; a
    bracket opened in the part kept is dropped with what follows it, never left open."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if " " in cut:
        cut = cut[: cut.rindex(" ")]
    for opening, closing in (("(", ")"), ("[", "]")):
        while cut.count(opening) > cut.count(closing):
            cut = cut[: cut.rindex(opening)].rstrip()
    return cut.rstrip(" ,;:") + " …"


def _and_list(items: list[str], t: Any) -> str:
    """"a, b and c" in the user's language."""
    if len(items) < 2:
        return "".join(items)
    return ", ".join(items[:-1]) + " " + t.t("word.and") + " " + items[-1]


async def disconnect(shell: ShellApp) -> None:
    """Close the current peer (before connecting elsewhere)."""
    session = shell.controller.online
    shell.controller.online = None
    shell.state.lobby = []
    shell.state.online = False
    if session is not None:
        try:
            await session.peer.close()
        except Exception:
            log.exception("closing the peer failed")


async def start_local(shell: ShellApp) -> None:
    """A Mosquitto on loopback, a computer player in its lobby, and us connected to it."""
    from p2p.bot import run_bot
    from p2p.net.broker import LocalBroker

    ctl = shell.controller
    t = shell.t
    from p2p import keystore

    try:
        load_identity(shell)
    except keystore.KeyFileError:
        return  # no broker started for a peer that cannot sign
    ctl.say("net.local_starting")
    ctl.refresh()
    broker = LocalBroker()
    try:
        await asyncio.to_thread(broker.start)
    except Exception as err:  # noqa: BLE001 - BrokerError (mosquitto missing) and friends
        ctl.say("net.local_failed", "warn", reason=net_reason(err, t))
        ctl.refresh()
        return

    async def stop_broker() -> None:
        await asyncio.to_thread(broker.close)

    shell.on_exit.append(stop_broker)
    ready = asyncio.Event()
    bot = asyncio.get_running_loop().create_task(
        run_bot(broker.url, BOT_NICK, ready=ready, namespace=shell.settings.namespace or "public"))

    async def stop_bot() -> None:
        bot.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await bot

    shell.on_exit.append(stop_bot)  # runs before the broker stops (clean-ups run newest first)
    try:
        await asyncio.wait_for(ready.wait(), 10)
    except TimeoutError:
        ctl.say("net.local_failed", "warn", reason=t.t("reason.bot_missing"))
        ctl.refresh()
        return
    session = await connect(shell, broker.url)
    if session is not None:
        ctl.say("net.local_started", broker=broker.url, bot=BOT_NICK)
        ctl.refresh()


def net_reason(err: BaseException, t: Any) -> str:
    """Why a connection failed, in the user's language (the OS text only in English)."""
    import socket

    for kind, key in (
        (ConnectionRefusedError, "reason.refused"),
        (socket.gaierror, "reason.no_host"),
        (TimeoutError, "reason.timeout"),
    ):
        if isinstance(err, kind) or isinstance(err.__cause__, kind):
            return str(t.t(key))
    if t.lang == "en":
        return str(err).splitlines()[0] if str(err) else type(err).__name__
    return str(t.t("reason.see_log"))
