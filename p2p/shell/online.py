"""The shell's online side: one connected ``p2p.peer.Peer``, mirrored into state.

``OnlineSession`` answers the controller's questions about the current online round
(game, turn, seat labels, status line), turns commands into ``Peer`` and ``Round`` calls
(every ``ActionError`` becomes one warning line) and pumps the peer's notifications into
the lobby and chat panes.  Connecting lives in ``p2p.shell.connect``.

The session holds what its parts share -- the shown round, its number and score, the
names seen, who went away -- and answers the controller.  It owns four parts with one
job each, each holding the session (``s``) and its own state:

* ``commands`` (``OnlineCommands``, ``p2p.shell.online_commands``): slash commands
  turned into ``Peer`` and ``Round`` calls;
* ``notes`` (``OnlineNotes``, ``p2p.shell.online_notes``): the peer's notifications
  turned into screen lines;
* ``files`` (``RoundFiles``, ``p2p.shell.online_resume``): the sidecar beside each round
  log and the unfinished rounds taken up again after a restart;
* ``rounds`` (``HeldRounds``, ``p2p.shell.online_rounds``): the several rounds held at
  once (slow ones and one live one): ``/rounds``, which one is shown, where it is our turn.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

from p2p.games import Game
from p2p.shell.app import ShellApp
from p2p.shell.game_view import view_for
from p2p.shell.names import MAX_NAMES, NickBook
from p2p.shell.online_commands import OnlineCommands
from p2p.shell.online_notes import OnlineNotes
from p2p.shell.online_resume import RoundFiles
from p2p.shell.online_rounds import HeldRounds
from p2p.shell.state import LobbyEntry

log = logging.getLogger("p2p.shell")
LOBBY_REFRESH_S = 0.2
"""The lobby pane is rebuilt at most this often (a presence flood must not cost O(N)
per presence)."""


class OnlineSession:
    """The connected peer as the controller sees it: lobby, rounds, chat, commands."""

    def __init__(self, shell: ShellApp, peer: Any) -> None:
        self.shell = shell
        self.ctl = shell.controller
        self.t = shell.t
        self.state = shell.state
        self.peer = peer
        self.round: Any = None
        """The round shown on the board: the one we play in (or the last one)."""
        self.round_no = 0
        self.wins: dict[bytes, int] = {}
        self.group: frozenset[bytes] = frozenset()
        """The members (keys) of the shown round: ``round_no`` and ``wins`` count for them."""
        self.groups: dict[frozenset[bytes], tuple[int, dict[bytes, int]]] = {}
        """Round number and wins of the other groups we played in, kept for when we meet again."""
        self.next_start: str = "draw"
        self.last_group: tuple[str, dict[str, Any], list[bytes]] | None = None
        self.left: set[str] = set()
        """Rounds we left before their end: the end is still counted in the score."""
        self.own_cancels: set[str] = set()
        """Rounds we called off ourselves (the host's "start now"): no line for their cancel."""
        self.replay_ply: int | None = None
        """While replaying the finished round: how many moves are shown."""
        self.seen_starts: set[str] = set()
        """Rounds whose start was said (its line, the sidecar) and counted (``count_start``)."""
        self.counted: set[str] = set()
        """Rounds counted in their group's round number and score (``count_start``)."""
        self.starter_said: set[str] = set()
        """Rounds whose "X starts" line was shown (once, before the first human move)."""
        self.takeback_for: tuple[str, str] | None = None
        """(round id, id of our move) while our take-back request is unanswered."""
        self.covered: list[Any] = []
        """The rounds that were on the board, oldest first, when a round of ours that is
        still forming took their place (an invitation sent or accepted, a private round):
        while the shown round has no game the board pane shows the newest of them that
        runs, moves typed go to it, and the newest still held is shown again if the new
        round is called off (issue 26.16: "No game" with a slow round running).  A list,
        not one round: a round we accepted may still wait for its start when we invite
        someone, and it must take the board once it starts, whichever comes first."""
        self.join_timeout = 10.0
        """Seconds ``/join`` waits for the round behind a code (its retained genesis)."""
        self._lobby_refresh: asyncio.TimerHandle | None = None
        self.names = NickBook(MAX_NAMES, pinned=self._in_shown_round)
        """The last nickname seen for a key (lobby, chat, round logs): a member who went
        offline keeps a name instead of a raw key.  Bounded (``MAX_NAMES``; the shown
        round's members are never pushed out), so fresh keys cannot grow it."""
        self.absent_wait = 5.0
        """Seconds a member who is online again may take to resume the round before we say so."""
        self.away: set[bytes] = set()
        """Members of the shown round whose going offline we announced (for "is back")."""
        from p2p.ledger import Ledger

        log_dir = getattr(peer, "log_dir", None) if peer is not None else None
        self.ledger: Ledger | None = Ledger(log_dir) if log_dir is not None else None
        """Round numbers and scores from the signed round logs (``p2p.ledger``);
        without a log directory they are counted as seen."""
        self.commands = OnlineCommands(self)
        self.notes = OnlineNotes(self)
        self.files = RoundFiles(self)
        self.rounds = HeldRounds(self)

    # -- the parts' entry points ---------------------------------------------------------

    def command(self, name: str, args: list[str]) -> None:
        """An online slash command (``OnlineCommands.command``)."""
        self.commands.command(name, args)

    def request_takeback(self) -> None:
        """``/undo`` online (``OnlineCommands.request_takeback``)."""
        self.commands.request_takeback()

    async def pump(self) -> None:
        """Mirror the peer's notifications into the shell (``OnlineNotes.pump``)."""
        await self.notes.pump()

    async def resume_unfinished(self) -> None:
        """Take up an unfinished round after a start (``RoundFiles.resume_unfinished``)."""
        await self.files.resume_unfinished()

    def refresh_standing(self) -> None:
        """Round number and scores of the shown round's group, from the signed logs and
        its live chain: the same on every member's screen (also after a restart)."""
        rnd = self.round
        if self.ledger is None or rnd is None or rnd.phase.value == "forming":
            return
        if rnd.game is None and rnd.phase.value == "cancelled":
            return  # called off before play: not one of the group's rounds
        from p2p.ledger import summarize

        try:
            self.round_no, self.wins = self.ledger.standing(summarize(rnd.chain_state))
        except Exception:  # noqa: BLE001 - a display aid: keep the counted figures
            log.exception("cannot compute the standing from the round logs")

    # -- questions from the controller ------------------------------------------------------

    def connected(self) -> bool:
        return bool(self.peer.connected)

    def game(self) -> Game | None:
        return self.round.game if self.round is not None else None

    def board_round(self) -> Any:
        """The round whose board the pane shows: the shown round, or while it is forming
        (no game yet) the newest running round it covers (``covered``)."""
        rnd = self.round
        if rnd is not None and rnd.game is None:
            under = next((r for r in reversed(self.covered) if r.game is not None and self._holds_seat(r)), None)
            if under is not None:
                return under
        return rnd

    def shown_game(self) -> Game | None:
        rnd = self.board_round()
        if rnd is not self.round:
            return rnd.game
        game = self.game()
        if game is None or self.replay_ply is None:
            return game
        from p2p.shell.local import position_after

        return position_after(game, self.replay_ply)

    def draw_lines(self) -> list[str]:
        """The commit-reveal draw of the shown round for the board pane (until the first move):
        per seat its commitment and reveal (short hex), then the seed; ``[]`` without one."""
        rnd = self.round
        if rnd is None or self.replay_ply is not None:
            return []
        st = rnd.chain_state
        if not st.commits and not st.revealed:
            return []
        if rnd.game is not None and rnd.game.history():
            return []
        lines = [self.t.t("draw.title")]
        for seat in sorted(set(st.commits) | set(st.revealed)):
            commit = st.commits.get(seat)
            nonce = st.revealed.get(seat)
            lines.append(self.member_nick(seat, with_fingerprint=False))
            lines.append("  " + self.t.t("draw.entry", commit=commit[:8] if commit else "-",
                                         reveal=nonce.hex()[:8] if nonce else "-"))
        if st.seed:
            lines.append(self.t.t("draw.seed", seed=st.seed.hex()[:8]))
        return lines

    def round_active(self) -> bool:
        return self.round is not None and not self.round.is_over

    def my_turn(self) -> bool:
        return self.round is not None and bool(self.round.is_my_turn)

    def member_nick(self, seat: int, with_fingerprint: bool = True) -> str:
        """Who holds ``seat``: nickname (with fingerprint), or the computer and its level."""
        if self.round is None:
            return "?"
        seats = self.round.chain_state.seats
        if seat >= len(seats):
            return "?"
        s = seats[seat]
        if s.is_computer:
            return f"{self.t.t('msg.computer')} {self.t.level(s.level or '')}"
        if s.pk is None:
            return "?"
        if with_fingerprint:
            return self.peer.label_of(s.pk, self.nick_of(s.pk, s.nick))
        return self.nick_of(s.pk, s.nick)

    def seat_label(self, seat: int, name: str) -> str:
        """``Rot (bob (1a2b3c4d))``; our own seat says "du"/"you"."""
        if self.round is not None and seat == self.round.my_seat:
            return f"{name} ({self.t.t('msg.you')})"
        return f"{name} ({self.member_nick(seat, with_fingerprint=False)})"

    def status_text(self) -> str:
        return " · ".join(part for part in self.status_parts() if part)

    def status_parts(self) -> tuple[str, str]:
        """The status line as (round and turn or result, score): the score is kept whole
        when the line must be shortened (``p2p.shell.wrap.fit_status``)."""
        rnd = self.round
        game = rnd.game
        if game is not None and rnd.id not in self.seen_starts:
            self.count_start(rnd)  # its play shows before its start notification arrived
        if self.replay_ply is not None:
            text = self.t.t("status.replay", ply=self.replay_ply, total=len(game.history()))
        elif rnd.is_over or game.is_over():
            # The chain decides (an engine without resignation keeps "running" after a leave).
            text = self.t.t("status.over", round=self.round_no, result=self.result_text())
        else:
            seat = game.to_move()
            label = self.ctl.seat_label(game, seat)
            key = "status.you" if rnd.is_my_turn else "status.round"
            text = self.t.t(key, round=self.round_no, seat=self.t.seat(game.seat_names()[seat]) if rnd.is_my_turn else label)
            away = self.away_countdown()
            if away is not None:
                key, params = away
                text += " · " + self.t.t(key, **params)
        score = self.score_text()
        return text, self.t.t("status.score", score=score) if score else ""

    def result_text(self) -> str:
        """The result of the shown round as its chain says (winners by seat label)."""
        rnd = self.round
        game = rnd.game
        if view_for(game.name).ranking:
            st = rnd.chain_state
            return self.ctl.ranking_text(game, set(st.resigned) | set(st.left))
        winners = rnd.winners if rnd.is_over else game.winners()
        if not winners:
            return self.t.t("result.draw")
        names = [self.ctl.seat_label(game, s) for s in winners]
        if len(names) == 1:
            return self.t.t("result.win", seat=names[0])
        return self.t.t("result.wins", seats=", ".join(names))

    def away_countdown(self) -> tuple[str, dict[str, Any]] | None:
        """(status key, its fields) while the position is owned by a member who went away:
        the seat to move, or -- at a computer seat's turn -- the host who plays it.

        Offline: the offline timeout runs.  Online again but not back in the round (no
        busy flag, e.g. restarted elsewhere): only the silent timeout ends the round.
        """
        rnd = self.round
        if rnd is None or rnd.is_over or rnd.game is None or not self.connected():
            return None
        if rnd.turn_limit is not None:
            return None  # a slow round: being offline is normal, the turn keeps its limit
        seat = rnd.game.to_move()
        st = rnd.chain_state
        if seat is None or seat >= len(st.seats):
            return None
        pk = st.owner()  # a computer seat's turn is its host's (the admin's)
        if pk is None or pk == self.peer.public_key:
            return None
        info = self.peer.lobby.peers.get(pk)
        nick = self.nick_of(pk, self.seat_nick(pk))
        host = st.seats[seat].is_computer
        params: dict[str, Any] = {"nick": nick}
        if host:
            params["computer"] = self.ctl.seat_label(rnd.game, seat)
        if info is None:
            secs = self.seconds_left(rnd)
            key = "status.host_away" if host else "status.away"
        elif pk in self.away and not info.busy:
            secs = self.seconds_left(rnd, silent=True)
            key = "status.host_absent" if host else "status.absent"
        else:
            return None
        params.update(secs=secs, time=f"{secs // 60}:{secs % 60:02d}")
        return key, params

    def seat_nick(self, pk: bytes) -> str:
        """The nickname the shown round's genesis gives ``pk`` ("" if none)."""
        seats = self.round.chain_state.seats if self.round is not None else []
        return next((s.nick for s in seats if s.pk == pk and s.nick), "")

    def seconds_left(self, rnd: Any, silent: bool = False) -> int:
        """Seconds until the seat to move may be forfeited, by the round's own limits (a
        slow round's come from its genesis, §6.7): silent, the limit from the head;
        offline, also the grace the forfeiter gives the goodbye it holds (the limit plus a
        third from when it arrived, ``p2p.peer.config.offline_grace_ms``; our lobby's
        arrival time stands for the forfeiter's)."""
        from p2p.peer.config import offline_grace_ms

        timeouts = rnd.machine.timeouts
        now = self.peer.now_ms()
        limit = timeouts.silent_ms if silent else timeouts.offline_ms
        left = limit - (now - rnd.chain_state.head.ts)
        if not silent:
            pk = rnd.chain_state.owner()
            held = self.peer.lobby.offline_evidence(pk) if pk is not None else None
            if held is None:  # no signed goodbye: only the silent timeout can end the turn
                return self.seconds_left(rnd, silent=True)
            left = max(left, offline_grace_ms(limit) - (now - held[1]))
        return max(0, left // 1000)

    def offline_grace_s(self) -> int:
        """Seconds a member who went offline has to come back before the others sign its
        forfeit (the offline limit plus a third)."""
        from p2p.peer.config import offline_grace_ms

        return offline_grace_ms(self.peer.turn_timeouts.offline_ms) // 1000


    def forming_text(self) -> str | None:
        """While a private round waits for its code joiners: the code, for the status line;
        while an invitation of ours waits for its answers: whom we invited, to what (not
        "No game" -- with a slow round on the board it looked as if that round had gone)."""
        rnd = self.round
        if rnd is None or rnd.phase.value != "forming":
            return None
        if rnd.code is None:
            others = [s.pk for s in rnd.chain_state.seats if s.pk is not None and s.pk != self.peer.public_key]
            return self.t.t("status.inviting", game=self.t.game(rnd.game_name),
                            nicks=", ".join(self.nick_of(pk) for pk in others) or "?")
        return self.t.t("status.forming", code=f"{rnd.code[:3]} {rnd.code[3:]}", game=self.t.game(rnd.game_name),
                        open=rnd.seats.count("open"))

    def count_start(self, rnd: Any) -> None:
        """Count a round that has started in its group's round number, once: when its
        start arrives, or earlier if the screen already shows its play (the notifications
        lag behind the live chain the status line reads)."""
        if rnd.id in self.counted:
            return
        self.counted.add(rnd.id)
        self.enter_group(rnd)
        self.round_no += 1
        self.refresh_standing()

    def enter_group(self, rnd: Any) -> None:
        """Count rounds and wins per group of members: a score line (and round number) kept
        across groups would differ from that of a peer who was not in the earlier rounds."""
        group = frozenset(s.pk for s in rnd.chain_state.seats if s.pk is not None)
        if group == self.group:
            return
        self.groups[self.group] = (self.round_no, self.wins)
        self.group = group
        self.round_no, self.wins = self.groups.pop(group, (0, {}))

    def score_text(self) -> str:
        if self.round is None:
            return ""
        parts = []
        for seat in self.round.chain_state.seats:
            if seat.pk is not None:
                # names in seat order, our own too: the line reads the same on every peer
                parts.append(f"{self.nick_of(seat.pk, seat.nick)} {self.wins.get(seat.pk, 0)}")
        return " · ".join(parts)

    # -- lobby ---------------------------------------------------------------------------------

    def refresh_lobby_soon(self) -> None:
        """Rebuild the lobby pane at most every ``LOBBY_REFRESH_S``: a flood of presences
        then costs one O(N) rebuild per interval, not one per presence."""
        if self._lobby_refresh is not None:
            return

        def now() -> None:
            self._lobby_refresh = None
            self.refresh_lobby()
            self.ctl.refresh()

        self._lobby_refresh = asyncio.get_running_loop().call_later(LOBBY_REFRESH_S, now)

    def refresh_lobby(self) -> None:
        from p2p.protocol.identity import fingerprint

        entries = [LobbyEntry(self.peer.nick, fingerprint(self.peer.public_key), self.peer.busy, me=True)]
        friends = self.peer.friends
        for info in self.peer.online():
            impostor = friends.impostor_of(info.nick, info.pk)
            entries.append(LobbyEntry(
                info.nick, fingerprint(info.pk), info.busy, friend=friends.is_friend(info.pk),
                impostor=(friends.nick_of(impostor) or "?") if impostor is not None else "",
                clock_ms=self.peer.lobby.clocks.offset(info.pk) or 0,
            ))
            self.names[info.pk] = info.nick
        self.state.lobby = entries
        self.state.online = self.connected()

    # -- actions -----------------------------------------------------------------------------

    def run(self, coro: Coroutine[Any, Any, Any]) -> None:
        self.ctl.spawn(self._guarded(coro))

    async def _guarded(self, coro: Coroutine[Any, Any, Any]) -> None:
        from p2p.peer import ActionError

        try:
            await coro
        except ActionError as err:
            log.info("action refused: %s", err)
            self.state.add(self.t.t("net.error", reason=self.t.reason(err)), "warn")
        except Exception as err:  # noqa: BLE001
            self.ctl.internal_error(err)
        self.ctl.refresh()

    def play(self, text: str) -> None:
        rnd = self.board_round()
        if rnd is None or rnd.game is None or rnd.is_over:
            self.ctl.say("msg.game_over", "warn")
            return
        if not rnd.is_my_turn:
            self.ctl.say("move.not_your_turn", "warn", move=text)
            return
        try:
            move = rnd.game.normalize(text)
        except ValueError as err:
            self.ctl.say("msg.bad_move", "warn", move=text, reason=self.t.reason(err))
            return
        if move not in rnd.game.legal_moves():
            probe = rnd.game.copy()
            try:
                probe.push(move)
            except ValueError as err:
                self.ctl.say("msg.bad_move", "warn", move=text, reason=self.t.reason(err))
                return
        self.run(rnd.play(move))

    async def send_chat(self, text: str) -> None:
        if self.round_active():
            await self.round.say(text)
        else:
            await self.peer.say(text)

    async def resign(self) -> None:
        if not self.round_active():
            self.ctl.say("msg.no_game", "warn")
            return
        await self.round.resign()

    async def leave(self) -> None:
        """Leave the shown round -- or, with none running on the board, any live round the
        peer still counts us in (never stuck); the other rounds go on (``/rounds N`` shows
        one to leave it)."""
        rounds = [self.round] if self.round is not None and not self.round.is_over else []
        if not rounds:
            rounds = [r for r in self.peer.rounds.values() if r.turn_limit is None and self._holds_seat(r)]
        if not rounds and self.round is None:
            self.ctl.say("msg.no_game", "warn")
            return
        for rnd in rounds:
            await rnd.leave()
            self.left.add(rnd.id)  # its end still counts in the score, as on the others' screens
        self.round = None
        self.covered = []
        self.away.clear()
        self.replay_ply = None
        if rounds:
            self.ctl.say("round.you_left")

    def holds_running_seat(self) -> bool:
        """True while the shown round is a live one that runs and we still play in it
        (``/quit`` asks first; a slow round waits for us on the broker)."""
        rnd = self.round
        return rnd is not None and rnd.game is not None and rnd.turn_limit is None and self._holds_seat(rnd)

    def _holds_seat(self, rnd: Any) -> bool:
        """True for a running round where we hold a seat we have not given up."""
        seat = rnd.my_seat
        st = rnd.chain_state
        return (seat is not None and not rnd.is_over and seat not in st.resigned
                and seat not in st.left and ("leave", self.peer.public_key) not in rnd.machine.side)

    async def set_nick(self, nick: str) -> None:
        # The lobby machine announces the new name with its next presence heartbeat.
        self.peer.lobby.nick = nick
        self.refresh_lobby()

    async def again(self) -> None:
        """Another round with the same people and game; the next seat starts."""
        if self.last_group is None or self.round is None:
            self.ctl.say("net.no_invite", "warn")
            return
        if not self.round.is_over:
            self.ctl.say("net.again_running", "warn")
            return
        game_name, options, others = self.last_group
        starter = self.round.starter
        seats = self.round.chain_state.seats
        if self.round.code is not None:  # a private round: the code joiners were not known at open
            others = [s.pk for s in seats if s.pk is not None and not s.is_computer and s.pk != self.peer.public_key]
        # The same seats as before, so everyone keeps their colour; the next seat starts.
        layout: list[Any] = []
        for seat in seats:
            if seat.is_computer:
                layout.append(f"computer:{seat.level}")
            elif seat.pk == self.peer.public_key:
                layout.append("me")
            else:
                layout.append(seat.pk)
        start = None if starter is None else (starter + 1) % len(seats)
        rnd = await self.peer.invite(others, game_name, options, seats=layout, start=start)
        self.adopt_round(rnd, game_name, options, others)
        self.state.add(self.t.t("net.invite_sent", nicks=", ".join(self.nick_of(pk) for pk in others),
                                game=self.t.game(game_name), code=rnd.id[:8]), "round")

    def back_to_behind(self, rnd: Any) -> None:
        """``rnd``, a round of ours that was forming, was called off: the newest round it
        covered that we still hold goes back on the board (with the rounds it covered in
        turn), said in one line."""
        if rnd is not self.round or not self.covered:
            return
        held = [r for r in self.covered if self._holds_seat(r)]
        self.covered = []
        if not held:
            return
        under = held.pop()
        self.rounds.show(under)
        self.covered = held if under.game is None else []  # a forming one covers the others again
        self.rounds.say_shown(under)

    def _in_shown_round(self, pk: bytes) -> bool:
        """True if ``pk`` holds a seat in the round on the board (its name is kept)."""
        rnd = self.round
        if rnd is None:
            return False
        try:
            return any(s.pk == pk for s in rnd.chain_state.seats)
        except AttributeError:
            return False

    def nick_of(self, pk: bytes, fallback: str = "") -> str:
        """A member's nickname: the lobby's, else the last one seen, else the seat's; never hex."""
        if pk == self.peer.public_key:
            return self.peer.nick
        info = self.peer.lobby.peers.get(pk)
        if info is not None:
            return info.nick
        return self.names.get(pk) or fallback or "?"

    def adopt_round(self, rnd: Any, game_name: str, options: dict[str, Any], others: list[bytes]) -> None:
        """Show ``rnd``, a round we just opened, accepted or joined.  While it forms, the
        round it replaces on the board stays covered (``covered``) if we hold a seat
        there -- running, or itself still forming (accepted, its start not yet in: it
        takes the board when it starts); a called-off forming round it replaces (start
        now) leaves the rounds it covered as they were."""
        old = self.round
        if rnd.game is not None or (old is not None and old.game is not None and not self._holds_seat(old)):
            self.covered = []
        elif old is not None and old is not rnd and self._holds_seat(old):
            self.covered = [r for r in self.covered if r is not old] + [old]
        self.covered = [r for r in self.covered if r is not rnd and self._holds_seat(r)]
        self.round = rnd
        self.replay_ply = None
        self.away.clear()
        self.last_group = (game_name, options, others)
        self.files.save_sidecar(rnd)


