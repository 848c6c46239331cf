"""The online session's side of the peer's notifications: presence, notices, connection
changes, round updates and ends, turned into lines in the lobby and chat panes. A part
owned by ``OnlineSession`` (``p2p.shell.online``), which it reads and updates as ``s``."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, Protocol

from p2p.games import Game
from p2p.protocol.chat import TokenBucket
from p2p.protocol.outcome import RoundEnd
from p2p.shell.game_view import view_for
from p2p.shell.i18n import CATALOGUE
from p2p.shell.names import NickBook
from p2p.shell.session_part import PartHost, SessionPart

log = logging.getLogger("p2p.shell")
START_NOW_REASON = "the host started with who was there"
"""The cancel reason the host's "/start now" sends; receivers show it in their language."""
MAX_PRESENT = 5_000
"""Announced labels remembered (the lobby itself keeps at most 4,096 strangers)."""
PRESENCE_LINES_BURST = 5
PRESENCE_LINES_EVERY_MS = 5_000
"""Strangers' join/leave lines: 5 at once, then one per 5 s; the rest are counted."""


def _options_text(options: dict[str, Any]) -> str:
    """Game options as ``key=value`` words (``first`` is decided by the round)."""
    return " ".join(f"{k}={v}" for k, v in sorted(options.items()) if k != "first") or "-"


class _Commands(Protocol):
    def show_takeback_request(self, seat: int) -> None: ...


class _Files(Protocol):
    def save_sidecar(self, rnd: Any) -> None: ...


class _Rounds(Protocol):
    def your_turn(self, rnd: Any) -> None: ...

    def moved_while_away(self, note: Any) -> None: ...

    def say_move(self, rnd: Any, seq: int, seat: int | None = None) -> None: ...

    def say_shown(self, rnd: Any) -> None: ...


class NotesHost(PartHost, Protocol):
    """What the notifications' lines read and change of the online session (``p2p.shell.online.OnlineSession``
    implements it)."""

    absent_wait: float
    away: set[bytes]

    def away_countdown(self) -> tuple[str, dict[str, Any]] | None: ...

    def back_to_behind(self, rnd: Any) -> None: ...

    covered: list[Any]

    def board_round(self) -> Any: ...

    @property
    def commands(self) -> _Commands: ...

    def connected(self) -> bool: ...

    def count_start(self, rnd: Any) -> None: ...

    @property
    def files(self) -> _Files: ...

    group: frozenset[bytes]
    groups: dict[frozenset[bytes], tuple[int, dict[bytes, int]]]
    left: set[str]

    def member_nick(self, seat: int, with_fingerprint: bool = True) -> str: ...

    names: NickBook

    def nick_of(self, pk: bytes, fallback: str = "") -> str: ...

    own_cancels: set[str]

    def refresh_lobby(self) -> None: ...

    def refresh_lobby_soon(self) -> None: ...

    def refresh_standing(self) -> None: ...

    def result_text(self) -> str: ...

    round: Any
    round_no: int

    @property
    def rounds(self) -> _Rounds: ...

    def seat_label(self, seat: int, name: str) -> str: ...

    def seat_nick(self, pk: bytes) -> str: ...

    def seconds_left(self, rnd: Any, silent: bool = False) -> int: ...

    seen_starts: set[str]
    starter_said: set[str]
    takeback_for: tuple[str, str] | None
    wins: dict[bytes, int]


class OnlineNotes(SessionPart[NotesHost]):
    """The online session's side of the peer's notifications: presence, notices,
    connection changes, round updates and ends, shown in the lobby and chat panes."""

    def __init__(self, session: NotesHost) -> None:
        super().__init__(session)
        peer = session.peer  # None in unit tests of the lines alone
        self._brokers_up: set[str] = {url for url, ok in peer.brokers() if ok} if peer is not None else set()
        """With several brokers: those connected when we last looked."""
        self._counted: set[str] = set()
        """Rounds whose end was counted in the score."""
        self._shown_results: dict[str, str] = {}
        """Per round id: the result line shown at its end (a corrected end says so)."""
        self._announced_out: dict[str, int] = {}
        """Per round id: how many resigned/left seats were already announced."""
        self._present: dict[bytes, str] = {}
        """Who we have announced as online, with the label shown (joins are said once)."""
        self._presence_lines = TokenBucket(PRESENCE_LINES_BURST, PRESENCE_LINES_EVERY_MS)
        """Join/leave lines of strangers share this budget; a lobby flood cannot fill the chat."""
        self._presence_hidden = 0
        """Join/leave/rename lines of strangers held back by that budget, said as one count."""
        self._lost_at: float | None = None
        """``time.monotonic()`` when our own link went down (``None`` while it is up)."""
        self._cancel_said: set[str] = set()
        """Forming rounds that covered a running one and whose cancel was said (bounded:
        one per such invitation)."""
        self._back_timer: asyncio.TimerHandle | None = None

    async def pump(self) -> None:
        """Mirror the peer's notifications into the shell until it closes."""
        events = self.peer.events()
        self.s.refresh_lobby()
        for info in self.peer.online():  # already there: shown in the lobby pane, not "joined"
            self._present.setdefault(info.pk, info.label)
        if self.peer.lobby.sessions.others:  # told before we listened: say it now
            way = "plays" if self.peer.acting else "watches"
            self.state.add(self.t.t(f"notice.other_session.{way}"), "warn")
        self.ctl.refresh()
        self.ctl.spawn(self._tick())
        async for note in events:
            try:
                self.handle(note)
            except Exception as err:  # noqa: BLE001 - a display bug must not stop the pump
                self.ctl.internal_error(err)
            self.ctl.refresh()

    async def _tick(self) -> None:
        """Repaint once a second while a countdown is on the status line."""
        while True:
            await asyncio.sleep(1.0)
            if self._lost_at is not None:
                self.state.connection = self._reconnecting_text()
                self.ctl.refresh()
            elif self.s.away_countdown() is not None:
                self.ctl.refresh()

    def handle(self, note: Any) -> None:
        from p2p import peer as p

        t = self.t
        if isinstance(note, p.ChatMessage):
            clock = time.strftime("%H:%M", time.localtime(note.ts / 1000))
            tag = t.t("chat.round_tag") + " " if note.round_id is not None else ""
            # Others are shown with their fingerprint: a nickname alone proves nothing.
            sender = self.peer.nick if note.sender == self.peer.public_key else note.label
            if note.nick and note.nick != "?":
                self.s.names.setdefault(note.sender, note.nick)
            self.state.add(tag + note.text, "chat", sender=sender, clock=clock)
        elif isinstance(note, p.PresenceChanged):
            if note.online:
                self.s.names[note.peer.pk] = note.peer.nick
            self.s.refresh_lobby_soon()
            self._presence(note.peer.pk, note.peer.label, note.online, note.retained)
            self._member_presence(note.peer, note.online)
        elif isinstance(note, p.InvitationReceived):
            invitation = note.invitation
            inviter = invitation.admin_label
            self.state.add(t.t("net.invited", nick=inviter, game=t.game(invitation.game)), "invite")
            self._warn_impostor(invitation.admin)
            how = t.t("net.starter.drawn") if invitation.drawn else self._invited_starter(invitation)
            options = _options_text(invitation.options)
            details = t.t("net.invite_details", options=options, how=how) if options != "-" \
                else t.t("net.invite_details.plain", how=how)
            levels = [str(seat.get("level")) for seat in invitation.genesis.body.get("seats", [])
                      if isinstance(seat, dict) and seat.get("level")]
            if levels:  # computer seats (chess4 fills free seats): say so before anyone accepts
                details += t.t("net.invite_computers", count=len(levels),
                               levels=", ".join(t.level(lv) for lv in dict.fromkeys(levels)))
            self.state.add(details, "invite")
            if invitation.turn_limit:  # a slow round (p2p/shell/turn_limit.py)
                from p2p.shell.turn_limit import say_turn_limit

                self.state.add(t.t("net.invite_turn", limit=say_turn_limit(t, invitation.turn_limit)), "invite")
            self.state.add(t.t("net.invite_answer"), "invite")
            self.ctl.notify(t.t("notify.invite", nick=inviter), t.game(invitation.game))
        elif isinstance(note, p.RoundUpdate):
            self._round_update(note)
        elif isinstance(note, p.YourTurn):
            if note.round is self.s.round:
                self.ctl.notify(t.t("notify.turn"), t.game(note.round.game_name))
            else:  # another round we hold (a slow one): one line, or the board shows it
                self.s.rounds.your_turn(note.round)
        elif isinstance(note, p.MovedWhileAway):
            self.s.rounds.moved_while_away(note)
        elif isinstance(note, p.RoundOver):
            self._round_over(note)
        elif isinstance(note, p.RoundNotice):
            self.notice(note)
        elif isinstance(note, p.Rejected):
            if note.routine:
                log.info("dropped (routine): %s", note.text)  # the log file only
                return
            log.warning("rejected: %s", note.text)
            self.state.add(t.t("net.rejected", who=self._signer(note.sender)), "warn")
        elif isinstance(note, p.Equivocated):
            log.warning("%s", note.text)
            self.state.add(t.t("net.equivocated", who=self.peer.label_of(note.first.pk)), "warn")
        elif isinstance(note, p.ConnectionChanged):
            self._connection(note.state)
        elif isinstance(note, p.Resynced) and note.round is self.s.round:
            # (the other rounds' catch-ups: "moved while you were away", MovedWhileAway)
            self.state.add(t.t("net.resynced", count=note.applied), "round")

    def _invited_starter(self, invitation: Any) -> str:
        """Who starts a round we are invited to, named: "anna (chosen)", "you (chosen)"."""
        body = invitation.genesis.body
        start, seats = body.get("start"), body.get("seats") or []
        if not isinstance(start, int) or not 0 <= start < len(seats):
            return self.t.t("net.starter.chosen")
        seat = seats[start]
        if seat.get("level") is not None:
            name = f"{self.t.t('msg.computer')} {self.t.level(str(seat['level']))}"
        elif seat.get("pk") is None:
            name = "?"
        else:
            pk = bytes.fromhex(seat["pk"])
            name = self.t.t("msg.you") if pk == self.peer.public_key else self.s.nick_of(pk, "?")
        return self.t.t("net.starter.named", nick=name)

    def _signer(self, prefix: str) -> str:
        """Who signed a refused event, as people see them: ``bob (3efd 3d96 e0ab 9f59)``.

        The peer layer names the signer by the first hex digits of its public key, which
        match no fingerprint on the screen; look the key up among the people we know."""
        from p2p.protocol.identity import fingerprint, label

        prefix = (prefix or "").lower()
        if len(prefix) < 8:
            return self.t.t("net.unknown_signer", id=prefix or "?")
        known: dict[bytes, str] = dict(self.s.names)
        for pk, info in self.peer.lobby.peers.items():
            known[pk] = info.nick
        if self.s.round is not None:
            for seat in self.s.round.chain_state.seats:
                if seat.pk is not None:
                    known.setdefault(seat.pk, seat.nick or "")
        for pk, nick in known.items():
            if pk.hex().startswith(prefix):
                return label(nick, pk) if nick else f"? ({fingerprint(pk)})"
        return self.t.t("net.unknown_signer", id=prefix)

    def _in_running_round(self, pk: bytes) -> bool:
        """Whether ``pk`` plays on in the shown live round (``_member_presence`` speaks of it)."""
        rnd = self.s.round
        if rnd is None or rnd.is_over or rnd.game is None or not self.s.connected():
            return False  # while we are cut off ourselves, everyone's presence merely expires
        if rnd.turn_limit is not None:
            return False  # a slow round: members come and go, each turn keeps its limit (§6.7)
        st = rnd.chain_state
        seat = st.seat_of(pk)
        return not (seat is None or pk == self.peer.public_key or seat in st.left or seat in st.resigned)

    def _member_presence(self, info: Any, online: bool) -> None:
        """A member of the running round went offline (how long until the forfeit) or is back."""
        if not self._in_running_round(info.pk):
            return
        rnd = self.s.round
        st = rnd.chain_state
        nick = self.s.nick_of(info.pk, info.nick)
        if online:
            if info.pk in self.s.away and info.busy:  # back, and in a round (ours, resumed)
                self.s.away.discard(info.pk)
                self.state.add(self.t.t("round.back", nick=nick), "round")
            elif info.pk in self.s.away:  # online again; in the round once it resumes it
                self.ctl.spawn(self._absent_check(info.pk, rnd, self.s.absent_wait))
            return
        if info.pk in self.s.away:
            return
        self.s.away.add(info.pk)
        secs = rnd.machine.timeouts.offline_ms // 1000  # the round's limit, as the status line's
        if st.owner() != info.pk:  # neither its seat nor a computer seat it plays is to move
            self.state.add(self.t.t("round.away_later", nick=nick, secs=secs), "warn")
            return
        to_move = rnd.game.to_move()
        if to_move is not None and st.seats[to_move].is_computer:  # the host of the computers
            self.state.add(self.t.t("round.host_away", nick=nick, secs=self.s.seconds_left(rnd),
                                    computer=self.ctl.seat_label(rnd.game, to_move)), "warn")
            return
        humans_in = [s for s in st.human_seats() if s not in st.left and s not in st.resigned]
        key = "round.away_win" if len(humans_in) == 2 and rnd.my_seat in humans_in else "round.away_out"
        self.state.add(self.t.t(key, nick=nick, secs=self.s.seconds_left(rnd)), "warn")

    def _presence(self, pk: bytes, label: str, online: bool, retained: bool = False) -> None:
        """Say when someone comes or goes, or changes name; a busy/free flip is silent.

        A retained presence (read on subscribing) is someone already there: lobby pane only.

        Friends and people we play with are always announced; strangers share one small
        budget, and what it holds back is said as a single count (the lobby pane lists
        them all), so thousands of fresh keys cannot push the conversation out of view.
        """
        known = self._present.get(pk)
        if not online:
            if self._present.pop(pk, None) is not None and not self._in_running_round(pk):
                # (a member of the running round gets one line: "went offline — …")
                self._say_presence(pk, self.t.t("net.left", nick=known))
        elif known is None:
            self._present[pk] = label
            if len(self._present) > MAX_PRESENT:  # bounded memory per stranger
                self._present.pop(next(iter(self._present)))
            if not retained:
                self._say_presence(pk, self.t.t("net.joined", nick=label))
            self._warn_impostor(pk)
        elif known != label:
            self._present[pk] = label
            self._say_presence(pk, self.t.t("net.renamed", old=known, nick=label))
            self._warn_impostor(pk)

    def _say_presence(self, pk: bytes, line: str) -> None:
        """One join/leave/rename line, within the strangers' budget (see ``_presence``)."""
        friendly = self.peer.lobby.rank(pk) == 0
        now = int(asyncio.get_running_loop().time() * 1000)
        if not friendly and not self._presence_lines.take(now):
            self._presence_hidden += 1
            return
        if self._presence_hidden:
            self.state.add(self.t.t("net.presence_hidden", count=self._presence_hidden))
            self._presence_hidden = 0
        self.state.add(line)

    def _warn_impostor(self, pk: bytes) -> bool:
        """Say so when ``pk`` uses a friend's nickname with another key; ``True`` if it did."""
        from p2p.protocol.identity import fingerprint

        nick = self.s.nick_of(pk)
        friend = self.peer.friends.impostor_of(nick, pk)
        if friend is None:
            return False
        self.state.add(self.t.t("friend.impostor", nick=nick, fp=fingerprint(pk),
                                friend=self.peer.friends.nick_of(friend) or "?",
                                friend_fp=fingerprint(friend)), "warn")
        return True

    def notice(self, note: Any) -> None:
        """A protocol notice in the user's language, chosen by its code (never its text)."""
        log.info("notice %s: %s", note.code or "-", note.text)
        code, params, t = note.code, note.params, self.t
        rnd = note.round if note.round is self.s.round else None
        seat = params.get("seat")
        nick = self.s.member_nick(seat, with_fingerprint=False) if rnd is not None and isinstance(seat, int) else "?"
        if code in ("starts", "over", "invited", "peer_online", "peer_left", "peer_silent"):
            return  # shown from the round's updates, the invitation or the lobby
        if note.round is not None and rnd is None:
            return  # a round that is not on the board (e.g. one we left)
        if code == "takeback_asked" and isinstance(seat, int) and rnd is not None:
            self.s.commands.show_takeback_request(seat)
        elif code == "takeback_declined" and isinstance(seat, int) and rnd is not None:
            self._takeback_declined(rnd, seat, params.get("by"))
        elif code == "drawing":
            self.state.add(t.t("net.drawing"), "round")
        elif code in ("expired", "invitation_expired"):
            self.state.add(t.t("net.expired"), "warn")
            if rnd is not None:
                self._said_cancel(rnd)
        elif code == "forfeit":
            how = t.t("net.forfeit.offline" if params.get("reason") == "offline" else "net.forfeit.silent")
            mine = rnd is not None and seat == rnd.my_seat
            key = "net.forfeited_you" if mine else "net.forfeited"
            at = self._computer_at_forfeit(rnd, seat) if rnd is not None and isinstance(seat, int) else None
            computer = ""
            if rnd is not None and at is not None:  # the host of the computer seats, at a computer's turn
                key = "net.forfeited_host_you" if mine else "net.forfeited_host"
                computer = self.ctl.seat_label(rnd.game, at)
            self.state.add(t.t(key, nick=nick, secs=params.get("waited", "?"), how=how, computer=computer),
                           "warn")
        elif code in ("forfeit_ahead", "forfeit_seen_online", "forfeit_early", "reveal_left_out",
                      "event_ahead", "forfeit_replaced"):
            self.state.add(t.t(f"notice.{code}", nick=nick, secs=params.get("secs", "?"),
                               limit=params.get("limit", "?")), "warn")
        elif code == "rewound":
            self.state.add(t.t("net.rewound"), "warn")
        elif code == "disputed":
            by_seat = params.get("forfeiter")
            by = (self.s.member_nick(by_seat, with_fingerprint=False)
                  if rnd is not None and isinstance(by_seat, int) else "?")
            kept = "forfeit" if params.get("kept") == "forfeit" else "move"
            self.state.add(t.t(f"notice.disputed.{kept}", nick=nick, by=by,
                               seq=params.get("seq", "?")), "warn")
        elif code == "other_version":
            self.state.add(t.t("notice.other_version", nick=params.get("nick", "?"),
                               theirs=params.get("theirs", "?"), ours=params.get("ours", "?")), "warn")
        elif code == "auto_declined":
            self.state.add(t.t("net.auto_declined"), "warn")
        elif code in ("clock_off", "clock_far"):
            way = "ahead" if params.get("ahead") else "behind"
            unit = str(params.get("unit", "min"))
            self.state.add(t.t(f"notice.{code}.{way}", nick=params.get("nick", "?"),
                               amount=params.get("amount", "?"), unit=unit), "warn")
        elif code in ("draw_stalled", "drawing_seed", "draw_cancelled_commits", "draw_cancelled_reveals"):
            self.state.add(t.t(f"notice.{code}", nick=nick), "round" if code == "drawing_seed" else "warn")
        elif code == "agreed":
            self.state.add(t.t("notice.agreed"), "round")
        elif code == "other_session":
            way = "plays" if params.get("acting") else "watches"
            self.state.add(t.t(f"notice.other_session.{way}"), "warn")
        elif code == "broker_too_large":
            what = t.t(f"notice.broker_too_large.{params.get('what')}")
            self.state.add(t.t("notice.broker_too_large", what=what, size=params.get("size", "?"),
                               limit=params.get("limit", "?"), broker=params.get("broker", "?")), "warn")
        elif code in ("other_session_took_over", "other_session_gone", "took_over", "broker_no_retained",
                      "goes_on"):
            self.state.add(t.t(f"notice.{code}"), "warn")
        elif code == "draw_left_out":
            seats = params.get("seats") or []
            names = ", ".join(self.s.member_nick(s, with_fingerprint=False) for s in seats if isinstance(s, int))
            self.state.add(t.t("notice.draw_left_out", seats=names or "?"), "warn")
        elif code in ("cancelled", "invitation_cancelled"):
            if rnd is not None and rnd.id in self.s.own_cancels:
                return
            why = str(params.get("reason", "other"))
            key = f"notice.{code}.{why}"
            outcome = rnd.outcome if rnd is not None else None
            text = outcome.detail if outcome is not None else ""
            if text == START_NOW_REASON:  # our own clients' token, said in the reader's language
                key = "notice.cancelled.start_now"
            elif key == "notice.cancelled.declined" and self._busy_member(rnd, seat):
                key = "notice.cancelled.busy"  # his client answered for him: he is in another round
            self.state.add(t.t(key if key in CATALOGUE else f"notice.{code}.other", nick=nick, text=text), "warn")
            if rnd is not None:
                self._said_cancel(rnd)
        else:
            self.state.add(t.t("notice.untranslated", text=note.text), "info")

    def _takeback_declined(self, rnd: Any, seat: int, by: object) -> None:
        """The player to move said no to a take-back (signed, at once): the asker is told
        and its request is answered; the others read who declined whose move."""
        if by == rnd.my_seat:
            return  # our own "no": /decline said so
        head = rnd.chain_state.head
        move = head.body.get("move", "?") if head.kind == "move" else "?"
        decliner = self.s.member_nick(by, with_fingerprint=False) if isinstance(by, int) else "?"
        if seat == rnd.my_seat:
            self.s.takeback_for = None
            self.state.add(self.t.t("takeback.declined_mine", nick=decliner, move=move), "round")
        else:
            self.state.add(self.t.t("takeback.declined_other", by=decliner, move=move,
                                    nick=self.s.member_nick(seat, with_fingerprint=False)), "round")

    def _said_cancel(self, rnd: Any) -> None:
        """Why ``rnd`` was called off is on the screen: a running round it covered may go
        back on the board now (``_back_after_notice``)."""
        if not self.s.covered:
            return
        self._cancel_said.add(rnd.id)
        if self._back_timer is not None and rnd.phase.value == "cancelled":
            self._back_timer.cancel()
            self._back_timer = None
            self.s.back_to_behind(rnd)

    def _busy_member(self, rnd: Any, seat: object) -> bool:
        """Whether the member at ``seat`` is busy in our lobby (playing another live round):
        its client declines every live invitation by itself (``Notice`` ``auto_declined``)."""
        if rnd is None or not isinstance(seat, int) or not 0 <= seat < len(rnd.chain_state.seats):
            return False
        pk = rnd.chain_state.seats[seat].pk
        info = self.peer.lobby.peers.get(pk) if pk is not None else None
        return info is not None and bool(info.busy)

    @staticmethod
    def _computer_at_forfeit(rnd: Any, seat: int) -> int | None:
        """The computer seat that was to move when the human ``seat`` (its host) was
        forfeited, else ``None`` (the seat's own turn).

        An engine with resignation holds the forfeit as the seat's resignation turn in its
        history: the position before that turn is the one forfeited; one without (the
        cube) ends the round where it stood."""
        from p2p.shell.local import position_after

        game = rnd.game
        if game is None:
            return None
        turns = game.turns()
        gave_up = [i for i, turn in enumerate(turns) if turn.is_resignation and turn.seat == seat]
        at = position_after(game, gave_up[-1]) if gave_up else game
        to_move = at.to_move()
        seats = rnd.chain_state.seats
        if to_move is None or to_move == seat or to_move >= len(seats) or not seats[to_move].is_computer:
            return None
        return to_move

    def _reconnecting_text(self) -> str:
        """The status line's note while our own link is down: for how long."""
        secs = int(time.monotonic() - self._lost_at) if self._lost_at is not None else 0
        return self.t.t("status.reconnecting", time=f"{secs // 60}:{secs % 60:02d}")

    def _connection(self, state: str) -> None:
        t = self.t
        self._broker_changes()
        if state != "lost":
            self._lost_at = None
        if state == "lost":
            if self._lost_at is None:
                self._lost_at = time.monotonic()
            self.state.connection = self._reconnecting_text()
            self.state.online = False
            self.state.add(t.t("net.disconnected"), "warn")
        elif state in ("reconnected", "connected"):
            brokers = self.peer.brokers()
            up = sum(ok for _, ok in brokers)
            self.state.connection = (
                t.t("status.brokers", up=up, total=len(brokers)) if up < len(brokers) else ""
            )
            self.state.online = True
            if state == "reconnected":
                self.state.add(t.t("net.reconnected"), "round")
            self.s.refresh_lobby()
        elif state == "closed":
            self.state.online = False

    def _broker_changes(self) -> None:
        """With several brokers: say which one went away or came back."""
        brokers = self.peer.brokers()
        if len(brokers) < 2:
            return
        up_now = {url for url, ok in brokers if ok}
        before, self._brokers_up = self._brokers_up, up_now
        for url in sorted(before - up_now):
            self.state.add(self.t.t("net.broker_down", broker=url, up=len(up_now), total=len(brokers)), "warn")
        for url in sorted(up_now - before):
            self.state.add(self.t.t("net.broker_up", broker=url, up=len(up_now), total=len(brokers)), "round")

    def _round_update(self, note: Any) -> None:
        t = self.t
        rnd = note.round
        if rnd is not self.s.round:
            if rnd is not self.s.board_round():
                return
            # the board shows it while a round of ours forms: its moves are listed, and a
            # round we accepted that starts only now (after our invitation) says it took the board
            if note.kind == "move":
                self.s.rounds.say_move(rnd, note.seq, note.seat)
            elif note.kind == "start" and rnd.id not in self.s.seen_starts:
                self.s.rounds.say_shown(rnd)
            return
        st = rnd.chain_state
        if note.kind == "start" and rnd.id not in self.s.seen_starts:
            self.s.seen_starts.add(rnd.id)
            self.s.count_start(rnd)
            self.s.files.save_sidecar(rnd)  # now with every member's name
            self.ctl.match = None
            self.state.add(t.t("net.round_started", round=self.s.round_no, code=rnd.id[:8],
                               game=t.game(rnd.game_name)), "round")
        elif note.kind == "draw":
            # commitments and reveals are shown in the board pane (draw_lines), not as hex in the chat
            self.state.add(t.t("net.seed", seed=st.seed.hex()[:8] if st.seed else "-"), "round")
        elif note.kind == "move":
            # The note's own event and seat: by the time we show it the chain may hold more
            # (the computer seats' answers are applied in the same step as a human move).
            chain = st.chain
            event = chain[note.seq] if 0 < note.seq < len(chain) else None
            if event is not None and event.kind == "move" and rnd.game is not None:
                seat = note.seat if note.seat is not None else st.seat_of(event.pk)
                mover = self.ctl.seat_label(rnd.game, seat) if seat is not None else "?"
                self.state.add(t.t("net.moved", nick=mover, move=event.body["move"]), "round")
                if self.s.takeback_for == (rnd.id, event.prev) and event.pk != self.peer.public_key:
                    self.s.takeback_for = None  # played past our request: it lapsed
                    self.state.add(t.t("takeback.lapsed", nick=self.s.member_nick(seat, with_fingerprint=False)
                                       if seat is not None else "?"), "round")
                self._move_notes(rnd.game, int(event.body["ply"]))
                self._host_waiting(rnd)
        if rnd.is_over or note.kind == "seal":
            self.s.refresh_standing()  # a corrected end (a forfeit that did not stand) corrects the score
        if note.kind == "seal":
            event = st.chain[note.seq] if 0 < note.seq < len(st.chain) else None
            taken = [e for e in event.sealed() if e.kind == "takeback"] if event is not None else []
            if taken:
                self.s.takeback_for = None
                moved = next((e for e in st.chain if e.id == taken[0].prev), None)
                seat = st.seat_of(taken[0].pk)
                key = "takeback.done_mine" if taken[0].pk == self.peer.public_key else "takeback.done"
                self.state.add(t.t(key, move=moved.body["move"] if moved else "?",
                                   nick=self.s.member_nick(seat, with_fingerprint=False) if seat is not None else "?"),
                               "round")
            self._announce_out(rnd)
        if note.kind in ("start", "draw", "move") and st.starter is not None and rnd.game is not None \
                and rnd.id not in self.s.starter_said:
            # Once per round, when the starter is known (start or draw); computer seats may
            # already have moved in the same step. A resumed round is marked as said.
            self.s.starter_said.add(rnd.id)
            name = t.seat(rnd.game.seat_names()[st.starter])
            how = t.t("net.starter.drawn") if st.start_seat is None else t.t("net.starter.chosen")
            self.state.add(t.t("net.starter", nick=self.s.seat_label(st.starter, name), how=how), "round")
            if rnd.is_my_turn:
                self.ctl.notify(t.t("notify.turn"), t.game(rnd.game_name))

    def _host_waiting(self, rnd: Any) -> None:
        """After a move: a computer seat is to move whose host we saw go offline -- say
        why nothing happens, and how long until the host is out."""
        st = rnd.chain_state
        to_move = rnd.game.to_move() if rnd.game is not None and not rnd.is_over else None
        host = st.owner()
        if to_move is None or not st.seats[to_move].is_computer or host not in self.s.away:
            return
        self.state.add(self.t.t("round.host_waiting", computer=self.ctl.seat_label(rnd.game, to_move),
                                nick=self.s.nick_of(host, self.s.seat_nick(host)),
                                secs=self.s.seconds_left(rnd)), "warn")

    def _round_over(self, note: Any) -> None:
        rnd = note.round
        if rnd.id in self._counted and rnd is self.s.round:
            self._corrected_over(rnd)
            return
        if rnd is not self.s.round and rnd.id not in self.s.left or rnd.id in self._counted:
            return
        self._counted.add(rnd.id)
        seats = rnd.chain_state.seats
        if len(note.winners) == 1:
            pk = seats[note.winners[0]].pk
            group = frozenset(s.pk for s in seats if s.pk is not None)
            wins = self.s.wins if group == self.s.group else self.s.groups.setdefault(group, (1, {}))[1]
            if pk is not None:
                wins[pk] = wins.get(pk, 0) + 1
        if rnd is not self.s.round:
            return  # a round we left: counted, but nothing more to say
        self.s.refresh_standing()
        self.s.away.clear()
        if rnd.game is None or rnd.phase.value == "cancelled":
            self._back_after_notice(rnd)  # the running round it covered goes on the board again
            return  # a round called off before play: its notice said why
        result = self.s.result_text()
        self._shown_results[rnd.id] = result
        st = rnd.chain_state
        end = note.outcome.end if note.outcome is not None else None  # typed: no reason text parsed
        why = end.value if end in (RoundEnd.RESIGNATION, RoundEnd.FORFEIT) else ""
        if end is RoundEnd.RESIGNATION and st.resigned and st.resigned[-1] in st.left:
            why = "left"  # the protocol puts a leave out like a resignation; say which it was
        why_key = f"end.{why}"
        if why and why_key in CATALOGUE:
            # a ranking ends in the seats' list: the reason goes before it, not beside the last seat
            key = "net.round_over_ranking_why" if view_for(rnd.game_name).ranking else "net.round_over_why"
            self.state.add(self.t.t(key, round=self.s.round_no, result=result, why=self.t.t(why_key)), "round")
        else:
            self.state.add(self.t.t("net.round_over", round=self.s.round_no, result=result), "round")

    def _back_after_notice(self, rnd: Any) -> None:
        """A forming round of ours was called off: the running round it covered goes back
        on the board once the notice that says why is shown (it may come just after the
        end), or a moment later."""
        if not self.s.covered or rnd is not self.s.round:
            return
        if rnd.id in self._cancel_said:
            self.s.back_to_behind(rnd)
            return
        self._back_timer = asyncio.get_running_loop().call_later(1.0, self.s.back_to_behind, rnd)

    def _corrected_over(self, rnd: Any) -> None:
        """A second outcome of a round whose end we showed (the peer says each outcome
        once; a forfeit replaced by the move made in time changes it): the score follows
        the chain, and one line corrects the result shown before."""
        self.s.refresh_standing()
        if rnd.game is None or rnd.phase.value == "cancelled" or not rnd.is_over:
            return
        result = self.s.result_text()
        if self._shown_results.get(rnd.id, result) != result:
            self._shown_results[rnd.id] = result
            self.state.add(self.t.t("net.round_over_corrected", round=self.s.round_no, result=result), "warn")

    def _move_notes(self, game: Game, ply: int) -> None:
        """What the move with 0-based ``ply`` did (chess4 check, mate, points; cube lines ...)."""
        from p2p.shell.local import position_after
        from p2p.shell.move_notes import say_notes

        moves = 0
        turns = game.turns()
        for index, turn in enumerate(turns):
            if turn.is_resignation:
                continue
            if moves == ply:
                shown = game if index + 1 == len(turns) else position_after(game, index + 1)
                for line in say_notes(shown, self.t.t, lambda seat: self.ctl.seat_label(game, seat)):
                    self.state.add(line, "round")
                return
            moves += 1

    def _announce_out(self, rnd: Any) -> None:
        """After a seal: who resigned or left (each seat said once)."""
        st = rnd.chain_state
        done = self._announced_out.get(rnd.id, 0)
        for seat in st.resigned[done:]:
            if seat in st.forfeited:
                continue  # said by the forfeit notice
            nick = self.s.member_nick(seat, with_fingerprint=False)
            key = "net.left_round" if seat in st.left else "net.resigned"
            if seat == rnd.my_seat:  # our own action: in the second person
                key = "round.you_left" if seat in st.left else "round.you_resign"
            self.state.add(self.t.t(key, nick=nick), "round")
        self._announced_out[rnd.id] = len(st.resigned)

    async def _absent_check(self, pk: bytes, rnd: Any, wait: float = 5.0) -> None:
        """Online again but, after a moment, still not back in the round: say what follows."""
        await asyncio.sleep(wait)
        info = self.peer.lobby.peers.get(pk)
        if rnd is not self.s.round or rnd.is_over or pk not in self.s.away or info is None or info.busy:
            return
        st = rnd.chain_state
        seat = st.seat_of(pk)
        nick = self.s.nick_of(pk, info.nick)
        if seat is not None and rnd.game is not None and st.owner() == pk:  # its turn (or its computers')
            secs = self.s.seconds_left(rnd, silent=True)
            self.state.add(self.t.t("round.absent", nick=nick, minutes=max(1, (secs + 59) // 60)), "warn")
        else:
            self.state.add(self.t.t("round.absent_later", nick=nick,
                                    minutes=self.peer.turn_timeouts.silent_ms // 60_000), "warn")
        self.ctl.refresh()
