"""The online session's slash commands: invite, private, accept, decline, cancel, start,
join, take-backs and friends, each turned into ``Peer`` and ``Round`` calls. A part owned
by ``OnlineSession`` (``p2p.shell.online``), which it reads and updates as ``s``."""

from __future__ import annotations

import logging
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any, Protocol

from p2p.games import OptionError, create_game, game_names
from p2p.shell import commands as cmds
from p2p.shell.game_view import view_for
from p2p.shell.names import NickBook
from p2p.shell.session_part import PartHost, SessionPart

log = logging.getLogger("p2p.shell")


def _seat_count(game_name: str, options: dict[str, Any]) -> int:
    """How many seats the game has with these options (0 when the options are bad: the
    round itself then refuses them with its own reason)."""
    try:
        return create_game(game_name, options).players
    except (OptionError, ValueError, TypeError):
        return 0


@dataclass(frozen=True)
class SeatPlan:
    """Who sits where in a round to open: from ``/invite`` or ``/private`` words."""

    game: str
    options: dict[str, Any]
    nicks: list[str]
    others: list[bytes]
    computers: list[str]
    start: int | None
    open_seats: int = 0
    turn_limit: int | None = None  # a slow round (``turn=1d``): seconds per turn


class CommandsHost(PartHost, Protocol):
    """What the slash commands read and change of the online session (``p2p.shell.online.OnlineSession``
    implements it)."""

    def adopt_round(
        self, rnd: Any, game_name: str, options: dict[str, Any], others: list[bytes]
    ) -> None: ...

    join_timeout: float

    def member_nick(self, seat: int, with_fingerprint: bool = True) -> str: ...

    names: NickBook
    next_start: str

    def nick_of(self, pk: bytes, fallback: str = "") -> str: ...

    own_cancels: set[str]

    def refresh_lobby(self) -> None: ...

    round: Any

    def run(self, coro: Coroutine[Any, Any, Any]) -> None: ...

    takeback_for: tuple[str, str] | None


class OnlineCommands(SessionPart[CommandsHost]):
    """The online session's slash commands: invite, private, accept, decline,
    cancel, start, join, take-backs and friends, each turned into ``Peer`` and
    ``Round`` calls."""


    def command(self, name: str, args: list[str]) -> None:
        """``/invite``, ``/private``, ``/accept``, ``/decline``, ``/cancel``, ``/start``, ``/starter``, ``/join``."""
        getattr(self, f"_cmd_{name}")(args)

    def _find_peer(self, who: str) -> Any:
        """The online peer ``who`` names, or ``None`` after one line: nobody, or several
        people using that name (then their fingerprints, to name one by)."""
        from p2p.protocol.identity import fingerprint

        info = self.peer.find_peer(who)
        if info is not None:
            return info
        same = [p for p in self.peer.online() if p.nick.casefold() == who.strip().casefold()]
        if len(same) > 1:
            ids = [fingerprint(p.pk)[:9] for p in same]
            self.ctl.say("net.nick_ambiguous", "warn", nick=who, ids=", ".join(ids), example=ids[0].replace(" ", ""))
        else:
            self.ctl.say("net.unknown_nick", "warn", nick=who)
        return None

    def _is_me(self, who: str) -> bool:
        """Whether ``who`` names us: our nickname, peer id or fingerprint prefix (4+), key."""
        from p2p.protocol.identity import peer_id

        text = who.strip().lower()
        pk = self.peer.public_key
        return bool(text) and (text == str(self.peer.nick).casefold() or text == pk.hex()
                               or (len(text) >= 4 and peer_id(pk).startswith(text)))

    def _seat_plan(self, name: str, args: list[str]) -> SeatPlan | None:
        """Parse ``/invite`` or ``/private`` words into a seat plan; ``None`` after one line."""
        options, words = cmds.parse_options(tuple(args))
        games = [w for w in words if w.lower() in game_names()]
        if len(games) != 1:
            self.ctl.usage(name)
            return None
        game_name = games[0].lower()
        nicks = [w for w in words if w.lower() not in game_names()]
        start_spec = str(options.pop("start", self.s.next_start))
        turn_limit = None
        if "turn" in options:  # a slow round (p2p/shell/turn_limit.py)
            from p2p.shell.turn_limit import parse_turn_limit

            turn_limit = parse_turn_limit(options.pop("turn"))
            if turn_limit is None:
                self.ctl.say("net.turn_bad", "warn")
                return None
        ai_count = options.pop("ai", 0)
        level = options.pop("level", None)
        open_seats = options.pop("open", 1) if name == "private" else 0
        if name == "private" and (not isinstance(open_seats, int) or isinstance(open_seats, bool)
                                  or not 1 <= open_seats <= 3):
            self.ctl.say("net.open_bad", "warn")
            return None
        open_seats = open_seats if isinstance(open_seats, int) else 0  # checked above
        others: list[bytes] = []
        for nick in nicks:
            if self._is_me(nick):
                self.ctl.say("net.invite_self", "warn", nick=nick)
                return None
            info = self._find_peer(nick)
            if info is None:
                return None
            others.append(info.pk)
        from p2p.shell.local_commands import available_levels, default_level, level_id

        known = available_levels(game_name)
        if level is not None:
            level = level_id(str(level), known) or str(level)
        if level is not None and level not in known:
            self.ctl.say("msg.unknown_level", "warn", level=level, levels=self.t.levels(known))
            return None
        level = level or self.ctl.settings.levels.get(game_name) or default_level(game_name)
        computers = [level] * int(ai_count) if isinstance(ai_count, int) else []
        if view_for(game_name).fill_with_computers:
            seats = _seat_count(game_name, dict(options))
            computers += [level] * max(0, seats - 1 - len(others) - open_seats - len(computers))
        if not self._seats_fit(game_name, dict(options), 1 + len(others) + len(computers) + open_seats):
            return None
        seat_pks = [self.peer.public_key] + others
        if start_spec.lower() in ("draw", "los", "auslosen"):
            start = None
        elif start_spec.lower() in ("me", "ich") or self._is_me(start_spec):
            start = 0
        else:
            info = self._find_peer(start_spec)
            if info is None:
                return None
            if info.pk not in seat_pks:
                self.ctl.say("net.unknown_nick", "warn", nick=start_spec)
                return None
            start = seat_pks.index(info.pk)
        return SeatPlan(game_name, dict(options), nicks, others, computers, start, open_seats, turn_limit)

    def _seats_fit(self, game_name: str, options: dict[str, Any], have: int) -> bool:
        """Whether ``have`` seats (us, those named, computers, open seats) is what the game
        with these options needs; if not, one line saying how to fill or shrink it."""
        try:
            probe = create_game(game_name, options)
        except OptionError as err:  # said here, in the user's language (issue 26.4)
            self.ctl.say("net.invite_options_bad", "warn", game=self.t.game(game_name), reason=self.t.reason(err))
            return False
        except (ValueError, TypeError):
            return True  # the round itself refuses the options, with its own reason
        if "players" in probe.options() and "players" not in options:
            return True  # the number of players follows the seats
        need = probe.players
        if have == need:
            return True
        if have < need:
            self.ctl.say("net.seats_short", "warn", game=self.t.game(game_name), need=need, have=have,
                         missing=need - have)
        else:
            self.ctl.say("net.seats_many", "warn", game=self.t.game(game_name), need=need, have=have)
        return False

    def _plan_if_free(self, name: str, args: list[str]) -> SeatPlan | None:
        """The seat plan of ``/invite`` or ``/private`` -- a live round not while we play
        another live one (a slow round, ``turn=1d``, goes alongside: ``Peer.busy``)."""
        plan = self._seat_plan(name, args)
        if plan is not None and plan.turn_limit is None and self.peer.busy:
            self.ctl.say("net.busy", "warn")
            return None
        return plan

    def _cmd_invite(self, args: list[str]) -> None:
        plan = self._plan_if_free("invite", args)
        if plan is None:
            return

        async def go() -> None:
            rnd = await self.peer.invite(plan.others, plan.game, plan.options, computers=plan.computers,
                                         start=plan.start, turn_limit=plan.turn_limit)
            self.s.adopt_round(rnd, plan.game, dict(plan.options), plan.others)
            names = ", ".join(self.s.nick_of(pk) for pk in plan.others)  # the nick, also when named by fingerprint
            self.state.add(self.t.t("net.invite_sent", nicks=names, game=self.t.game(plan.game), code=rnd.id[:8]),
                           "round")

        self.s.run(go())

    def _cmd_private(self, args: list[str]) -> None:
        """Open a private round behind a join code and show the code to read aloud."""
        plan = self._plan_if_free("private", args)
        if plan is None:
            return

        async def go() -> None:
            rnd = await self.peer.open_private(plan.game, plan.options, open_seats=plan.open_seats,
                                               peers=plan.others, computers=plan.computers, start=plan.start,
                                               turn_limit=plan.turn_limit)
            self.s.adopt_round(rnd, plan.game, dict(plan.options), plan.others)
            self._show_code(rnd)

        self.s.run(go())

    def _show_code(self, rnd: Any) -> None:
        """The join code as two groups of three (easy to read aloud) and how to use it."""
        from p2p.protocol.round_machine import PRIVATE_TTL_MS

        code = rnd.code or ""
        self.state.add(self.t.t("net.private_open", game=self.t.game(rnd.game_name),
                                seats=rnd.seats.count("open")), "round")
        self.state.add(self.t.t("net.private_code", spoken=f"{code[:3]} {code[3:]}", code=code,
                                minutes=PRIVATE_TTL_MS // 60_000), "invite")

    def pending(self) -> Any:
        invitations = self.peer.invitations
        return invitations[-1] if invitations else None

    def _takeback_pending(self) -> Any:
        """The shown round when someone asks us to take back the last move."""
        rnd = self.s.round
        if rnd is None or rnd.is_over or rnd.takeback_asked is None or not rnd.is_my_turn:
            return None
        return rnd

    def _takeback_elsewhere(self) -> str | None:
        """Who answers a take-back asked in the shown round when that is not us (three or
        more players: only the player to move may), else ``None``."""
        rnd = self.s.round
        if rnd is None or rnd.is_over or rnd.game is None or rnd.takeback_asked is None or rnd.is_my_turn:
            return None
        if rnd.takeback_asked == rnd.my_seat:
            return None  # our own request: the "asked" line said who decides
        seat = rnd.game.to_move()
        return self.s.member_nick(seat, with_fingerprint=False) if seat is not None else "?"

    def request_takeback(self) -> None:
        """``/undo`` online: ask the others to take back our last move."""
        rnd = self.s.round
        if rnd is None or rnd.is_over or rnd.game is None:
            self.ctl.say("msg.no_game", "warn")
            return
        from p2p.peer import ActionError

        head = rnd.chain_state.head
        if head.kind != "move" or head.pk != self.peer.public_key or rnd.is_my_turn:
            self.ctl.say("takeback.not_last", "warn")
            return
        if ("takeback", self.peer.public_key) in rnd.machine.side:
            self.ctl.say("takeback.once", "warn")
            return

        to_move = rnd.game.to_move()
        mover = self.s.member_nick(to_move, with_fingerprint=False) if to_move is not None else "?"

        async def go() -> None:
            self.s.takeback_for = (rnd.id, head.id)  # before the send: an answer may be quick
            try:
                await rnd.request_takeback()
            except ActionError:
                self.s.takeback_for = None
                self.ctl.say("takeback.not_last", "warn")
                return
            self.ctl.say("takeback.asked", move=head.body["move"], mover=mover)

        self.s.run(go())

    def show_takeback_request(self, seat: int) -> None:
        """Someone asks to take back their last move: the player to move is asked to
        answer; the others (three or more players) are told who decides."""
        rnd = self.s.round
        nick = self.s.member_nick(seat, with_fingerprint=False)
        move = rnd.chain_state.head.body.get("move", "?")
        if seat == rnd.my_seat:
            return  # our own request: "asked" said so
        if not rnd.is_my_turn:
            to_move = rnd.game.to_move() if rnd.game is not None else None
            mover = self.s.member_nick(to_move, with_fingerprint=False) if to_move is not None else "?"
            self.state.add(self.t.t("takeback.request_other", nick=nick, move=move, mover=mover), "round")
            return
        self.state.add(self.t.t("takeback.request", nick=nick, move=move), "invite")
        self.ctl.notify(self.t.t("notify.takeback", nick=nick), self.t.game(rnd.game_name))

    def _no_invitation(self) -> None:
        """``/accept`` or ``/decline`` with nothing to answer: one line saying why (a
        take-back the player to move answers, or no invitation)."""
        mover = self._takeback_elsewhere()
        if mover is not None:
            self.ctl.say("takeback.not_yours", "warn", mover=mover)
        else:
            self.ctl.say("net.no_invite", "warn")

    def _cmd_accept(self, args: list[str]) -> None:
        rnd = self._takeback_pending()
        if rnd is not None:
            self.s.run(rnd.accept_takeback())
            return
        invitation = self.pending()
        if invitation is None:
            self._no_invitation()
            return

        async def go() -> None:
            rnd = await invitation.accept()
            others = [s.pk for s in rnd.chain_state.seats if s.pk is not None and s.pk != self.peer.public_key]
            self.s.adopt_round(rnd, rnd.game_name, dict(rnd.chain_state.options), others)

        self.s.run(go())

    def _cmd_decline(self, args: list[str]) -> None:
        rnd = self._takeback_pending()
        if rnd is not None:
            asker = rnd.takeback_asked
            nick = self.s.member_nick(asker, with_fingerprint=False) if asker is not None else "?"

            async def decline() -> None:
                await rnd.decline_takeback()  # signed: the asker is told at once
                self.ctl.say("takeback.declined", nick=nick)

            self.s.run(decline())
            return
        invitation = self.pending()
        if invitation is None:
            self._no_invitation()
            return

        async def go() -> None:
            await invitation.decline()
            self.ctl.say("net.you_declined", nick=self.s.nick_of(invitation.admin, invitation.admin_label),
                         game=self.t.game(invitation.game))

        self.s.run(go())

    def _cmd_takeover(self, args: list[str]) -> None:
        """Play for our key in this window: another session of it steps back."""
        if self.peer.acting and not self.peer.lobby.sessions.others:
            self.ctl.say("session.alone")
            return
        self.s.run(self.peer.take_over())

    def _cmd_cancel(self, args: list[str]) -> None:
        rnd = self.s.round
        if rnd is None or rnd.is_over:
            self.ctl.say("net.no_invite", "warn")
            return
        if not rnd.is_admin:
            self.ctl.say("net.only_admin", "warn")
            return
        self.s.run(rnd.cancel())

    def _cmd_start(self, args: list[str]) -> None:
        rnd = self.s.round
        if rnd is None or rnd.is_over:
            self.ctl.say("net.no_invite", "warn")
            return
        waiting = [label for label in rnd.seats if label == "open"]
        hosting = rnd.code is not None and rnd.is_admin and rnd.phase.value == "forming"
        if hosting and args and args[0].lower() in ("now", "jetzt"):
            self._start_now(rnd)
            return
        if hosting:
            self._show_code(rnd)
        self.ctl.say("net.autostart", phase=rnd.phase.value, seats=", ".join(rnd.seats), waiting=len(waiting))
        if hosting:
            self.ctl.say("net.start_now_hint")

    def _start_now(self, rnd: Any) -> None:
        """The host's start button: play now with whoever entered the code so far.

        The genesis fixes the number of seats, so the waiting round is called off and the
        people who joined (and those invited directly) get a direct invitation to the same
        game with as many seats as are filled; four-player chess fills up with computers.
        """
        st = rnd.chain_state
        joined = [e for (kind, _), e in rnd.machine.side.items() if kind == "join"]
        if not joined:
            self.ctl.say("net.start_nobody", "warn")
            return
        for event in joined:
            self.s.names[event.pk] = str(event.body.get("nick", "")) or self.s.names.get(event.pk, "?")
        invited = [s.pk for s in st.seats if s.pk is not None and s.pk != self.peer.public_key]
        others = invited + [e.pk for e in joined if e.pk not in invited]
        computers = [s.level for s in st.seats if s.is_computer]
        if view_for(rnd.game_name).fill_with_computers:
            from p2p.shell.local_commands import default_level

            level = self.ctl.settings.levels.get(rnd.game_name) or default_level(rnd.game_name)
            seats = _seat_count(rnd.game_name, dict(st.options))
            computers += [level] * max(0, seats - 1 - len(others) - len(computers))
        options = {k: v for k, v in st.options.items() if k not in ("first", "players")}
        start = 0 if st.start_seat == 0 else None

        async def go() -> None:
            from p2p.shell.online_notes import START_NOW_REASON

            self.s.own_cancels.add(rnd.id)  # "start now" says so itself: its cancel is expected
            await rnd.cancel(START_NOW_REASON)
            new = await self.peer.invite(others, rnd.game_name, options, computers=computers, start=start)
            self.s.adopt_round(new, rnd.game_name, dict(options), others)
            self.state.add(self.t.t("net.start_now", nicks=", ".join(self.s.nick_of(pk) for pk in others),
                                    game=self.t.game(rnd.game_name)), "round")

        self.s.run(go())

    def _cmd_starter(self, args: list[str]) -> None:
        self.s.next_start = args[0]
        self.ctl.say("net.starter_set", who=args[0])

    def _cmd_join(self, args: list[str]) -> None:
        """``/join CODE``: the code in any case, spaces and dashes allowed."""
        from p2p.protocol.topics import TopicError, normalize_code

        try:
            code = normalize_code("".join(args))
        except TopicError:
            self.ctl.say("net.code_bad", "warn", code=" ".join(args))
            return
        rnd = self.s.round
        if rnd is not None and rnd.code == code and rnd.phase.value == "forming":
            self.ctl.say("net.join_again", "warn")  # the peer would say "already in this round"
            return
        spoken = f"{code[:3]} {code[3:]}"
        self.ctl.say("net.joining", code=spoken)

        async def go() -> None:
            from p2p.peer import ActionError

            try:
                rnd = await self.peer.join(code, timeout=self.s.join_timeout)
            except ActionError as err:
                log.info("join %s failed: %s", code, err)
                if err.code == "code_unknown":
                    self.ctl.say("net.code_unknown", "warn", code=spoken)
                elif err.code == "busy":
                    self.ctl.say("net.busy", "warn")
                elif err.code == "code_closed":
                    self.ctl.say("net.code_closed", "warn", code=spoken)
                else:
                    self.ctl.say("net.error", "warn", reason=self.t.reason(err))
                return
            self.s.adopt_round(rnd, rnd.game_name, dict(rnd.chain_state.options), [])
            self.ctl.say("net.joined_round", game=self.t.game(rnd.game_name), code=spoken)

        self.s.run(go())

    def _save_friends(self) -> None:
        from p2p import friends as friends_mod

        if self.ctl.settings_dir is None:
            return
        try:
            friends_mod.save(self.peer.friends, self.ctl.settings_dir / friends_mod.FILE_NAME)
        except OSError as err:
            self.ctl.say("friend.save_failed", "warn", reason=str(err))

    def _cmd_friend(self, args: list[str]) -> None:
        """``/friend NICK``: mark that online peer's key as a friend (stored in the config dir)."""
        from p2p.protocol.identity import fingerprint

        if len(args) != 1:
            self.ctl.usage("friend")
            return
        info = self._find_peer(args[0])
        if info is None:
            return
        try:
            self.peer.friends.add(info.pk, info.nick)
        except ValueError as err:
            self.ctl.say("net.error", "warn", reason=str(err))
            return
        self._save_friends()
        self.ctl.say("friend.added", nick=info.nick, fp=fingerprint(info.pk))
        self.s.refresh_lobby()

    def _cmd_unfriend(self, args: list[str]) -> None:
        """``/unfriend NICK``: forget a friend (by nickname as marked, or fingerprint)."""
        if len(args) != 1:
            self.ctl.usage("unfriend")
            return
        want = args[0].strip().lower()
        for pk, nick in self.peer.friends.items():
            from p2p.protocol.identity import fingerprint, peer_id

            if want in (nick.lower(),) or (len(want) >= 4 and peer_id(pk).startswith(want.replace(" ", ""))):
                self.peer.friends.remove(pk)
                self._save_friends()
                self.ctl.say("friend.removed", nick=nick, fp=fingerprint(pk))
                self.s.refresh_lobby()
                return
        self.ctl.say("friend.unknown", "warn", nick=args[0])

    def _cmd_friends(self, args: list[str]) -> None:
        """``/friends``: list the friends, marked when online."""
        from p2p.protocol.identity import fingerprint

        if not len(self.peer.friends):
            self.ctl.say("friend.none")
            return
        for pk, nick in self.peer.friends.items():
            online = pk in self.peer.lobby.peers
            flag = self.t.t("friend.online" if online else "friend.offline")
            self.state.add(f"★ {nick} ({fingerprint(pk)}) {flag}")
