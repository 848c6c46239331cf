"""The browser face's session: one ``p2p.peer.Peer`` (and local play), mirrored for the page.

The page never holds state of its own that matters: after every change the session
sends it a whole snapshot (``snapshot()``: who we are, the lobby, invitations, every held
round with its board, local play) and lines (chat, notices, errors) as they happen.
What the page asks for arrives as small JSON actions (``handle``), each turned into a
``Peer`` or ``Round`` call as the shell does; anything refused becomes one line and
changes nothing.  A reload gets the same snapshot: every face shows the same round.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections import deque
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from p2p.games import OptionError, create_game, game_names
from p2p.games.base import MoveError, OptionValue
from p2p.web import boards, snapshot
from p2p.web.i18n import Texts
from p2p.web.local import LocalError, LocalPlay
from p2p.web.settings import WebSettings, save_settings

log = logging.getLogger("p2p.web")
MAX_LINES = 400
"""Lines (chat, notices) kept for a reloaded page."""
MAX_TEXT = 2000
"""Longer text fields in an action are refused (chat is cut by the protocol anyway)."""
WATCH_S = 1.0
"""How often ``watch`` looks for changes no notification tells."""
PUSH_DELAY_S = 0.03
"""Changes within this time are sent as one snapshot."""

Action = Callable[[dict[str, Any]], Coroutine[Any, Any, None]]


class Refused(Exception):
    """An action the page sent that cannot be done now: one line, nothing changed."""

    def __init__(self, key: str, **params: object) -> None:
        super().__init__(key)
        self.key = key
        self.params = params


def _text(msg: dict[str, Any], name: str, default: str | None = None) -> str:
    value = msg.get(name, default)
    if not isinstance(value, str) or len(value) > MAX_TEXT:
        raise Refused("err.field", field=name)
    return value


def _options(raw: object) -> dict[str, OptionValue]:
    """Game options from the page: names to ints, booleans or short strings."""
    if raw is None:
        return {}
    if not isinstance(raw, dict) or len(raw) > 10:
        raise Refused("err.field", field="options")
    out: dict[str, OptionValue] = {}
    for key, value in raw.items():
        if not isinstance(key, str) or not isinstance(value, (int, bool, str)) or len(str(value)) > 40:
            raise Refused("err.field", field="options")
        out[key] = value
    return out


def parse_turn(text: str) -> int | None:
    """A slow round's limit per turn: ``30m``, ``2h``, ``1d``, ``90s`` (a bare number is
    minutes) -> seconds; ``None`` for a live round (empty); ``Refused`` otherwise.

    >>> parse_turn("1d"), parse_turn(""), parse_turn("90s")
    (86400, None, 90)
    """
    from p2p.protocol.round import MAX_TURN_S, MIN_TURN_S

    raw = text.strip().lower()
    if not raw:
        return None
    units = {"s": 1, "m": 60, "h": 3600, "d": 86_400}
    unit = raw[-1] if raw[-1] in units else "m"
    digits = raw[:-1] if raw[-1] in units else raw
    if not digits.isdigit() or len(digits) > 7:
        raise Refused("err.turn")
    seconds = int(digits) * units[unit]
    if not MIN_TURN_S <= seconds <= MAX_TURN_S:
        raise Refused("err.turn")
    return seconds


class WebSession:
    """The peer and local play behind the page; ``handle`` runs what the page asks."""

    def __init__(
        self,
        *,
        settings: WebSettings,
        config_dir: Path | None,
        broker: str | None,
        peer_options: dict[str, Any] | None = None,
    ) -> None:
        self.settings = settings
        self.config_dir = config_dir
        self.broker = broker
        """Brokers to connect to (space separated; empty: the public defaults; ``None``:
        local play only until the page asks to connect)."""
        self.peer_options = dict(peer_options or {})
        self.texts = Texts(settings.lang or "en")
        self.peer: Any = None
        self.connection = "offline"
        self.connection_detail = ""
        self.lines: deque[dict[str, Any]] = deque(maxlen=MAX_LINES)
        self.listeners: list[Callable[[dict[str, Any]], None]] = []
        self.local: LocalPlay | None = None
        self._local_task: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._push_handle: asyncio.TimerHandle | None = None
        self._exit: list[Callable[[], Coroutine[Any, Any, None]]] = []
        self._pump: asyncio.Task[None] | None = None
        self._ledger: Any = None
        self._recorded: tuple[LocalPlay, int] | None = None
        """The local round whose result is in the statistics (the play itself, not its
        ``id``: a new play may get a freed one; and the round number)."""
        self.seq = 0
        """Counts snapshots: the page ignores an older one arriving late."""
        self.actions: dict[str, Action] = {
            "settings": self.a_settings, "connect": self.a_connect, "local_broker": self.a_local_broker,
            "say": self.a_say, "friend": self.a_friend, "unfriend": self.a_unfriend,
            "invite": self.a_invite, "private": self.a_private, "join": self.a_join,
            "accept": self.a_accept, "decline": self.a_decline, "play": self.a_play,
            "takeback": self.a_takeback, "accept_takeback": self.a_accept_takeback,
            "decline_takeback": self.a_decline_takeback,
            "resign": self.a_resign, "leave": self.a_leave, "cancel": self.a_cancel,
            "again": self.a_again, "start_now": self.a_start_now, "replay": self.a_replay, "analysis": self.a_analysis,
            "takeover": self.a_takeover,
            "local_start": self.a_local_start, "local_play": self.a_local_play,
            "local_undo": self.a_local_undo, "local_again": self.a_local_again,
            "local_resign": self.a_local_resign, "local_close": self.a_local_close,
            "local_replay": self.a_local_replay, "local_hint": self.a_local_hint,
            "local_analysis": self.a_local_analysis,
            "rules": self.a_rules, "stats": self.a_stats,
        }

    # -- talking to pages --------------------------------------------------------------------

    def emit(self, message: dict[str, Any]) -> None:
        for listener in list(self.listeners):
            try:
                listener(message)
            except Exception:  # noqa: BLE001 - one closed page must not stop the others
                log.debug("a listener failed", exc_info=True)

    def changed(self) -> None:
        """Something the page shows changed: one snapshot soon (changes coalesce)."""
        if self._push_handle is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return

        def push() -> None:
            self._push_handle = None
            self.emit(self.snapshot())

        self._push_handle = loop.call_later(PUSH_DELAY_S, push)

    async def watch(self, every: float = WATCH_S) -> None:
        """Send a snapshot when something changed that no notification tells: a session of
        our key taking the lead, a clock's offset (runs until cancelled). Time left alone is
        no change: the page counts it down itself."""
        import json

        last = ""
        while True:
            await asyncio.sleep(every)
            if not self.listeners:
                continue
            snap = self.snapshot()
            rounds = [{k: v for k, v in r.items() if k != "time_left"} for r in snap["rounds"]]
            seen = json.dumps({**snap, "seq": 0, "rounds": rounds}, sort_keys=True, default=str)
            if seen != last:
                last = seen
                self.emit(snap)

    def line(self, kind: str, key: str = "", text: str = "", /, **params: object) -> None:
        """A line for the log pane: ``key`` and ``params`` (the page translates), or ``text``."""
        entry: dict[str, Any] = {"t": "line", "kind": kind, "ts": int(time.time() * 1000)}
        if key:
            entry["key"] = key
            entry["params"] = {k: v if isinstance(v, (int, str, bool)) or v is None else str(v)
                               for k, v in params.items()}
        else:
            entry["text"] = text
        self.lines.append(entry)
        self.emit(entry)

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def reason(self, err: BaseException) -> str:
        """An engine's or peer's refusal in the page's language (English as fallback)."""
        return self.texts.reason(err)

    # -- actions -----------------------------------------------------------------------------

    async def handle(self, msg: object) -> None:
        """Run one action from the page; a refusal becomes one line (never an exception)."""
        from p2p.peer import ActionError

        try:
            if not isinstance(msg, dict) or not isinstance(msg.get("a"), str):
                raise Refused("err.action")
            action = self.actions.get(msg["a"])
            if action is None:
                raise Refused("err.action")
            self._record_local()
            await action(msg)
        except Refused as err:
            self.line("warn", err.key, **err.params)
        except (ActionError, MoveError, OptionError, LocalError, KeyError, ValueError) as err:
            log.info("action refused: %s", err)
            self.line("warn", "err.reason", reason=self.reason(err))
        except Exception as err:  # noqa: BLE001 - the page gets one line, the log the rest
            log.exception("action failed: %r", msg)
            self.line("error", "err.internal", reason=type(err).__name__)
        self._record_local()
        self.changed()

    def _need_peer(self) -> Any:
        if self.peer is None or not self.peer.connected:
            raise Refused("err.offline")
        return self.peer

    def _round(self, msg: dict[str, Any]) -> Any:
        peer = self._need_peer()
        rnd = peer.rounds.get(_text(msg, "round"))
        if rnd is None:
            raise Refused("err.no_round")
        return rnd

    async def a_settings(self, msg: dict[str, Any]) -> None:
        from p2p.config import check_broker_urls, check_namespace

        if "lang" in msg:
            lang = _text(msg, "lang")
            if lang not in ("de", "en"):
                raise Refused("err.field", field="lang")
            self.settings.lang = lang
            self.texts = Texts(lang)
            self.emit(self.hello())
        if "notifications" in msg and bool(msg["notifications"]) != self.settings.notifications:
            self.settings.notifications = bool(msg["notifications"])
            self.line("info", "msg.notify_on" if self.settings.notifications else "msg.notify_off")
        if "nick" in msg and _text(msg, "nick").strip() != self.settings.nick:
            nick = _text(msg, "nick").strip()
            if not 1 <= len(nick) <= 20 or " " in nick:
                raise Refused("err.nick")
            self.settings.nick = nick
            if self.peer is not None:  # announced with the next presence heartbeat
                from p2p.protocol.identity import sanitize_nickname

                self.peer.lobby.nick = sanitize_nickname(nick)
            self.line("info", "msg.nick_set", nick=nick)
        if "broker" in msg:
            raw = _text(msg, "broker").strip()
            try:
                urls = check_broker_urls(raw) if raw else []
            except ValueError as err:
                raise Refused("err.broker", url=str(err)) from None
            if " ".join(urls) != self.settings.broker:
                self.settings.broker = " ".join(urls)
                self.line("info", "msg.broker_set", broker=self.settings.broker or "-")
        if "namespace" in msg:
            wanted = _text(msg, "namespace").strip().lower() or "public"
            try:
                check_namespace(wanted)
            except ValueError:
                raise Refused("err.namespace", namespace=wanted) from None
            if wanted == (self.settings.namespace or "public"):  # unchanged: no reconnect
                self.save()
                return
            if self.peer is not None and self.peer.busy:
                raise Refused("err.namespace_busy")
            self.settings.namespace = "" if wanted == "public" else wanted
            self.line("info", "msg.namespace_set", namespace=wanted)
            if self.peer is not None:
                brokers = " ".join(url for url, _ok in self.peer.brokers())
                self.spawn(self.connect(brokers or self.settings.broker))
        self.save()

    def save(self) -> None:
        if self.config_dir is None:
            return
        try:
            save_settings(self.settings, self.config_dir)
        except OSError as err:
            self.line("warn", "err.settings", reason=err.strerror or str(err))

    async def a_connect(self, msg: dict[str, Any]) -> None:
        self.spawn(self.connect(_text(msg, "broker", self.settings.broker)))

    async def a_local_broker(self, msg: dict[str, Any]) -> None:
        self.spawn(self.start_local())

    async def a_say(self, msg: dict[str, Any]) -> None:
        text = _text(msg, "text")
        if not text.strip():
            raise Refused("err.empty_chat")
        if msg.get("round"):
            await self._round(msg).say(text)
        else:
            await self._need_peer().say(text)

    def _who(self, msg: dict[str, Any]) -> Any:
        info = self._need_peer().find_peer(_text(msg, "who"))
        if info is None:
            raise Refused("err.unknown_peer", who=str(msg.get("who"))[:40])
        return info

    async def a_friend(self, msg: dict[str, Any]) -> None:
        info = self._who(msg)
        self.peer.friends.add(info.pk, info.nick)
        self._save_friends()
        self.line("info", "msg.friend_added", nick=info.nick, fp=snapshot.fp(info.pk))

    async def a_unfriend(self, msg: dict[str, Any]) -> None:
        peer = self._need_peer()
        who = _text(msg, "who")
        for pk, nick in peer.friends.items():
            if who in (pk.hex(), nick):
                peer.friends.remove(pk)
                self._save_friends()
                self.line("info", "msg.friend_removed", nick=nick, fp=snapshot.fp(pk))
                return
        raise Refused("err.unknown_peer", who=who[:40])

    def _save_friends(self) -> None:
        from p2p import friends as friends_mod

        if self.config_dir is None:
            return
        try:
            friends_mod.save(self.peer.friends, self.config_dir / friends_mod.FILE_NAME)
        except OSError as err:
            self.line("warn", "err.settings", reason=err.strerror or str(err))

    def _plan(self, msg: dict[str, Any]) -> tuple[str, dict[str, OptionValue], list[bytes], list[str],
                                                    int | None, int | None]:
        """Game, options, invited keys, computer levels, starter and turn limit of an invite."""
        from p2p.ai import levels

        game = _text(msg, "game")
        if game not in game_names():
            raise Refused("err.game", game=game[:40])
        options = _options(msg.get("options"))
        who = msg.get("who") or []
        if not isinstance(who, list) or len(who) > 8:
            raise Refused("err.field", field="who")
        others = [self._who({"who": w}).pk for w in who]
        computers = msg.get("computers") or []
        if not isinstance(computers, list) or len(computers) > 8:
            raise Refused("err.field", field="computers")
        known = levels(game)
        for level in computers:
            if level not in known:
                raise Refused("err.level", level=str(level)[:20])
        turn = parse_turn(_text(msg, "turn", ""))
        start_word = _text(msg, "start", "draw")
        seat_keys = [self.peer.public_key, *others]
        if start_word == "draw":
            start = None
        elif start_word == "me":
            start = 0
        else:
            try:
                start = seat_keys.index(bytes.fromhex(start_word))
            except ValueError:
                raise Refused("err.field", field="start") from None
        if turn is None and self.peer.busy:
            raise Refused("err.busy")
        return game, options, others, [str(c) for c in computers], start, turn

    async def a_invite(self, msg: dict[str, Any]) -> None:
        self._need_peer()
        game, options, others, computers, start, turn = self._plan(msg)
        if not others and not computers:
            raise Refused("err.nobody")
        rnd = await self.peer.invite(others, game, options, computers=computers, start=start,
                                     turn_limit=turn)
        self.line("round", "msg.invited", game=game, nicks=", ".join(self._nick(pk) for pk in others),
                  round=rnd.id)

    async def a_private(self, msg: dict[str, Any]) -> None:
        self._need_peer()
        game, options, others, computers, start, turn = self._plan(msg)
        open_seats = msg.get("open", 1)
        if not isinstance(open_seats, int) or isinstance(open_seats, bool) or not 1 <= open_seats <= 3:
            raise Refused("err.open")
        rnd = await self.peer.open_private(game, options, open_seats=open_seats, peers=others,
                                           computers=computers, start=start, turn_limit=turn)
        code = rnd.code or ""
        self.line("invite", "msg.private_code", code=f"{code[:3]} {code[3:]}", game=game, round=rnd.id)

    async def a_join(self, msg: dict[str, Any]) -> None:
        peer = self._need_peer()
        code = _text(msg, "code").replace(" ", "").replace("-", "")
        rnd = await peer.join(code)
        self.line("round", "msg.joined", game=rnd.game_name, round=rnd.id)

    def _invitation(self, msg: dict[str, Any]) -> Any:
        inv = self._need_peer().invitation(_text(msg, "id"))
        if inv is None:
            raise Refused("err.no_invitation")
        return inv

    async def a_accept(self, msg: dict[str, Any]) -> None:
        inv = self._invitation(msg)
        rnd = await inv.accept()
        self.line("round", "msg.accepted", game=inv.game, round=rnd.id)

    async def a_decline(self, msg: dict[str, Any]) -> None:
        inv = self._invitation(msg)
        await inv.decline()
        self.line("info", "msg.declined", game=inv.game)

    async def a_play(self, msg: dict[str, Any]) -> None:
        rnd = self._round(msg)
        text = _text(msg, "move").strip()
        game = rnd.game
        if game is None or rnd.is_over or game.is_over():
            raise Refused("err.over")
        if not rnd.is_my_turn:
            raise Refused("err.not_your_turn")
        move = game.normalize(text)
        if move not in game.legal_moves():
            game.copy().push(move)  # raises the engine's own reason
        await rnd.play(move)

    async def a_takeback(self, msg: dict[str, Any]) -> None:
        rnd = self._round(msg)
        head = rnd.chain_state.head
        if head.kind != "move" or head.pk != self.peer.public_key or rnd.is_my_turn:
            raise Refused("err.takeback_last")
        await rnd.request_takeback()
        self.line("info", "msg.takeback_asked", round=rnd.id)

    async def a_accept_takeback(self, msg: dict[str, Any]) -> None:
        await self._round(msg).accept_takeback()

    async def a_decline_takeback(self, msg: dict[str, Any]) -> None:
        """As the player to move: say no to the take-back asked for, at once (a signed
        ``takeback_decline``; the asker is told by a ``takeback_declined`` notice)."""
        rnd = self._round(msg)
        asker = rnd.takeback_asked
        await rnd.decline_takeback()
        seats = rnd.chain_state.seats
        pk = seats[asker].pk if asker is not None and 0 <= asker < len(seats) else None
        self.line("info", "msg.takeback_declined", nick=self._nick(pk) if pk is not None else "?")

    async def a_resign(self, msg: dict[str, Any]) -> None:
        await self._round(msg).resign()

    async def a_leave(self, msg: dict[str, Any]) -> None:
        rnd = self._round(msg)
        await rnd.leave()
        self.line("info", "msg.left", game=rnd.game_name)

    async def a_cancel(self, msg: dict[str, Any]) -> None:
        await self._round(msg).cancel()

    async def a_again(self, msg: dict[str, Any]) -> None:
        """``/again``: the admin invites the same seats again (``another_round``); any
        other member does what the shell's ``/again`` does: invites the same seats, each
        keeping its colour, the next seat starting, and becomes that round's admin."""
        rnd = self._round(msg)
        if not rnd.is_over:
            raise Refused("err.still_running")
        if rnd.turn_limit is None and self.peer.busy:
            raise Refused("err.busy")
        if rnd.is_admin:
            new = await self.peer.another_round(rnd)
        else:
            me = self.peer.public_key
            st = rnd.chain_state
            if rnd.my_seat is None:
                raise Refused("err.only_admin")
            layout = [f"computer:{s.level}" if s.is_computer else "me" if s.pk == me else (s.pk or b"").hex()
                      for s in st.seats]
            if any(not spec for spec in layout):
                raise Refused("err.only_admin")  # a seat never taken: only the admin may re-open it
            others = [s.pk for s in st.seats if s.pk is not None and not s.is_computer and s.pk != me]
            starter = rnd.starter
            start = None if starter is None else (starter + 1) % len(st.seats)
            options = {k: v for k, v in st.options.items() if k != "first"}
            new = await self.peer.invite(others, rnd.game_name, options, seats=layout, start=start,
                                         turn_limit=rnd.turn_limit)
        self.line("round", "msg.again", game=new.game_name, round=new.id)

    async def a_start_now(self, msg: dict[str, Any]) -> None:
        """The host of a private round plays now with whoever entered the code so far: the
        waiting round is called off and they get a direct invitation to the same game with
        as many seats as are filled (a game with a fixed number of seats fills up with
        computer players at the lowest level), as the shell's ``/start now``."""
        from p2p.ai import levels

        rnd = self._round(msg)
        st = rnd.chain_state
        if rnd.code is None or not rnd.is_admin or rnd.phase.value != "forming":
            raise Refused("err.start_now")
        joined = [e for (kind, _), e in rnd.machine.side.items() if kind == "join"]
        if not joined:
            raise Refused("err.start_nobody")
        invited = [s.pk for s in st.seats if s.pk is not None and s.pk != self.peer.public_key]
        others = invited + [e.pk for e in joined if e.pk not in invited]
        computers = [s.level for s in st.seats if s.is_computer]
        options = {k: v for k, v in st.options.items() if k not in ("first", "players")}
        if "players" not in create_game(rnd.game_name).options():  # a fixed number of seats
            seats = create_game(rnd.game_name, options).players
            computers += [levels(rnd.game_name)[0]] * max(0, seats - 1 - len(others) - len(computers))
        await rnd.cancel("started with the players who joined")
        new = await self.peer.invite(others, rnd.game_name, options, computers=computers,
                                     start=0 if st.start_seat == 0 else None)
        self.line("round", "msg.invited", game=new.game_name, round=new.id,
                  nicks=", ".join(self._nick(pk) for pk in others))

    async def a_replay(self, msg: dict[str, Any]) -> None:
        rnd = self._round(msg)
        if rnd.game is None:
            raise Refused("err.no_round")
        states = await asyncio.to_thread(boards.replay_states, rnd.game.copy())
        self.emit({"t": "replay", "round": rnd.id, "states": states})

    async def a_analysis(self, msg: dict[str, Any]) -> None:
        rnd = self._round(msg)
        if rnd.game is None or not rnd.game.is_over():
            raise Refused("err.still_running")
        data = await asyncio.to_thread(boards.analysis, rnd.game.copy())
        if not data:  # no review for this game, or none for this round (Pop Out, no moves)
            raise Refused("err.no_analysis")
        self.emit({"t": "analysis", "round": rnd.id, "data": data})

    async def a_rules(self, msg: dict[str, Any]) -> None:
        """``/rules``: the rules of a game in the page's language."""
        from p2p.web.web_view import rules_text

        game = _text(msg, "game")
        if game not in game_names():
            raise Refused("err.game", game=game[:40])
        lines = await asyncio.to_thread(rules_text, game, self.texts.lang)
        self.emit({"t": "rules", "game": game, "lines": lines})

    async def a_stats(self, msg: dict[str, Any]) -> None:
        """``/stats``: rounds here against the computer (saved in ``web.json``) and the
        finished online rounds per group of people, from the signed round logs (the
        numbers every member's face computes alike)."""
        from p2p.web.records import local_rows, online_rows

        online: list[dict[str, Any]] = []
        if self.peer is not None and self._ledger is not None:
            summaries = await asyncio.to_thread(self._ledger.rounds)
            online = online_rows(summaries, self.peer.public_key, self._nick)
        local = local_rows(self.settings.stats)
        self.emit({"t": "stats", "local": local, "online": online})

    async def a_takeover(self, msg: dict[str, Any]) -> None:
        await self._need_peer().take_over()

    # -- local play --------------------------------------------------------------------------

    async def a_local_start(self, msg: dict[str, Any]) -> None:
        from p2p.ai import levels as ai_levels

        game = _text(msg, "game")
        if game not in game_names():
            raise Refused("err.game", game=game[:40])
        options = _options(msg.get("options"))
        raw = msg.get("seats")
        probe = create_game(game, options)
        if raw is None:
            raw = [None] * probe.players
        if not isinstance(raw, list) or len(raw) != probe.players:
            raise Refused("err.seats", need=probe.players)
        known = ai_levels(game)
        levels = tuple(None if s in (None, "") else str(s) for s in raw)
        for level in levels:
            if level is not None and level not in known:
                raise Refused("err.level", level=level[:20])
        first = msg.get("first", 0)
        if not isinstance(first, int) or isinstance(first, bool) or not 0 <= first < probe.players:
            raise Refused("err.field", field="first")
        self._stop_local()
        self.local = LocalPlay(game, options, levels, first=first)
        self._computer_turns()

    async def a_local_play(self, msg: dict[str, Any]) -> None:
        local = self._need_local()
        local.play(_text(msg, "move"), time.monotonic())
        self._computer_turns()

    async def a_local_undo(self, msg: dict[str, Any]) -> None:
        self._need_local().undo()

    async def a_local_again(self, msg: dict[str, Any]) -> None:
        self._need_local().again()
        self._computer_turns()

    async def a_local_resign(self, msg: dict[str, Any]) -> None:
        self._need_local().resign()

    async def a_local_close(self, msg: dict[str, Any]) -> None:
        self._stop_local()

    async def a_local_replay(self, msg: dict[str, Any]) -> None:
        local = self._need_local()
        states = await asyncio.to_thread(boards.replay_states, local.game.copy())
        self.emit({"t": "replay", "round": "local", "states": states})

    async def a_local_analysis(self, msg: dict[str, Any]) -> None:
        local = self._need_local()
        if not local.game.is_over():
            raise Refused("err.still_running")
        data = await asyncio.to_thread(boards.analysis, local.game.copy())
        if not data:  # no review for this game, or none for this round (Pop Out, no moves)
            raise Refused("err.no_analysis")
        self.emit({"t": "analysis", "round": "local", "data": data})

    async def a_local_hint(self, msg: dict[str, Any]) -> None:
        """The strongest level's move for the person to move (local play only, as in the
        shell: a hint in an online round would be a computer playing for a person)."""
        from p2p.ai import hint

        local = self._need_local()
        if local.game.is_over() or not local.human_to_move():
            raise Refused("err.over" if local.game.is_over() else "err.not_your_turn")
        move = await asyncio.to_thread(hint, local.game.copy())
        self.line("info", "msg.hint", move=move)

    def _record_local(self) -> None:
        """A finished local round against the computer counts once in the statistics (as
        the shell's ``/stats``: one person against computer seats; hot-seat does not count)."""
        local = self.local
        if local is None or not local.game.is_over() or (
                self._recorded is not None and self._recorded[0] is local and self._recorded[1] == local.round_no):
            return
        outcome = local.outcome()
        if outcome is None:
            return
        self._recorded = (local, local.round_no)
        level = "+".join(sorted({lv for lv in local.levels if lv is not None}))
        self.settings.record(local.game.name, level, outcome)
        self.save()

    def _need_local(self) -> LocalPlay:
        if self.local is None:
            raise Refused("err.no_local")
        return self.local

    def _stop_local(self) -> None:
        if self._local_task is not None:
            self._local_task.cancel()
            self._local_task = None
        self.local = None

    def _computer_turns(self) -> None:
        local = self.local
        if local is None or not local.computer_to_move() or (
                self._local_task is not None and not self._local_task.done()):
            return

        async def turns() -> None:
            from p2p.ai import choose_move

            while self.local is local and local.computer_to_move():
                game = local.game
                seat = game.to_move()
                assert seat is not None
                level = local.levels[seat] or ""
                move = await asyncio.to_thread(choose_move, game.copy(), level, os.urandom(8))
                if self.local is not local or local.game is not game:
                    return
                local.computer_move(move)
                self._record_local()
                self.changed()

        self._local_task = asyncio.get_running_loop().create_task(turns())

    # -- connecting --------------------------------------------------------------------------

    async def connect(self, broker: str | None) -> None:
        """Connect a peer to ``broker`` (``p2p.web.connect``)."""
        from p2p.web.connect import connect

        await connect(self, broker)

    async def start_local(self) -> None:
        """``/local``: a broker on this machine with a computer player (``p2p.web.connect``)."""
        from p2p.web.connect import start_local

        await start_local(self)

    async def disconnect(self) -> None:
        peer, self.peer = self.peer, None
        if self._pump is not None:
            self._pump.cancel()
            self._pump = None
        if peer is not None:
            with contextlib.suppress(Exception):
                await peer.close()
        self.connection = "offline"

    async def close(self) -> None:
        self._stop_local()
        await self.disconnect()
        for hook in self._exit:
            with contextlib.suppress(Exception):
                await hook()
        for task in list(self._tasks):
            task.cancel()

    # -- what the page shows -------------------------------------------------------------------

    def hello(self) -> dict[str, Any]:
        """The catalogue and the games, sent when a page connects and when the language changes."""
        return {"t": "hello", "lang": self.texts.lang, "texts": self.texts.catalogue(),
                "games": snapshot.games_catalogue()}

    def _nick(self, pk: bytes) -> str:
        return snapshot.nick_of(self.peer, pk)

    def snapshot(self) -> dict[str, Any]:
        """Everything the page shows, as one JSON-safe dict (``p2p.web.snapshot``)."""
        self.seq += 1
        out: dict[str, Any] = {
            "t": "state", "seq": self.seq, "connection": self.connection,
            "detail": self.connection_detail,
            "settings": {"nick": self.settings.nick, "lang": self.texts.lang,
                         "namespace": self.settings.namespace or "public",
                         "broker": self.settings.broker, "notifications": self.settings.notifications},
            "me": None, "lobby": [], "friends": [], "invitations": [], "rounds": [],
            "local": snapshot.local_entry(self.local),
        }
        if self.peer is not None:
            out.update(snapshot.peer_part(self.peer, self._ledger))
        return out
