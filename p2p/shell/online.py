"""The shell's online side: one connected ``p2p.peer.Peer``, mirrored into state.

``OnlineSession`` answers the controller's questions about the current online round
(game, turn, seat labels, status line), turns commands into ``Peer`` and ``Round`` calls
(every ``ActionError`` becomes one warning line) and pumps the peer's notifications into
the lobby and chat panes.  Connecting lives in ``p2p.shell.connect``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from p2p.games import GAME_NAMES, Game
from p2p.protocol.chat import TokenBucket
from p2p.protocol.identity import sanitize_nickname
from p2p.shell import commands as cmds
from p2p.shell.app import ShellApp
from p2p.shell.i18n import CATALOGUE
from p2p.shell.state import LobbyEntry

log = logging.getLogger("p2p.shell")
RESUME_WINDOW_S = 15 * 60
"""A round log written to within this long is taken up again on start (the protocol's
silent-seat timeout: older rounds have forfeited us or moved on without us)."""
RESUME_CANDIDATES = 5
"""At most this many of the newest round logs are looked at on start."""
LOBBY_REFRESH_S = 0.2
"""The lobby pane is rebuilt at most this often (a presence flood must not cost O(N)
per presence)."""
PRESENCE_LINES_BURST = 5
PRESENCE_LINES_EVERY_MS = 5_000
"""Strangers' join/leave lines: 5 at once, then one per 5 s; the rest are counted."""
MAX_PRESENT = 5_000
"""Announced labels remembered (the lobby itself keeps at most 4,096 strangers)."""


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


def _count(value: object) -> int:
    """A round number or win count read back from a sidecar: a small int, else 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 1 << 20 else 0


class OnlineSession:
    """The connected peer as the controller sees it: lobby, rounds, chat, commands."""

    def __init__(self, shell: ShellApp, peer: Any) -> None:
        self.shell = shell
        self.ctl = shell.controller
        self.t = shell.t
        self.state = shell.state
        self.peer = peer
        self._brokers_up = {url for url, ok in peer.brokers() if ok} if peer is not None else set()
        """With several brokers: those connected when we last looked."""
        self.round: Any = None
        """The round shown on the board: the one we play in (or the last one)."""
        self.round_no = 0
        self.wins: dict[bytes, int] = {}
        self._group: frozenset[bytes] = frozenset()
        """The members (keys) of the shown round: ``round_no`` and ``wins`` count for them."""
        self._groups: dict[frozenset[bytes], tuple[int, dict[bytes, int]]] = {}
        """Round number and wins of the other groups we played in, kept for when we meet again."""
        self.next_start: str = "draw"
        self.last_group: tuple[str, dict[str, Any], list[bytes]] | None = None
        self._counted: set[str] = set()
        self._left: set[str] = set()
        """Rounds we left before their end: the end is still counted in the score."""
        self.replay_ply: int | None = None
        """While replaying the finished round: how many moves are shown."""
        self._seen_starts: set[str] = set()
        self._announced_out: dict[str, int] = {}
        """Per round id: how many resigned/left seats were already announced."""
        self._present: dict[bytes, str] = {}
        """Who we have announced as online, with the label shown (joins are said once)."""
        self._presence_lines = TokenBucket(PRESENCE_LINES_BURST, PRESENCE_LINES_EVERY_MS)
        """Join/leave lines of strangers share this budget; a lobby flood cannot fill the chat."""
        self._presence_hidden = 0
        """Join/leave/rename lines of strangers held back by that budget, said as one count."""
        self.join_timeout = 10.0
        """Seconds ``/join`` waits for the round behind a code (its retained genesis)."""
        self._lobby_refresh: asyncio.TimerHandle | None = None
        self.names: dict[bytes, str] = {}
        """Every nickname seen for a key (lobby, chat, round logs): a member who went
        offline keeps a name instead of a raw key."""
        self.absent_wait = 5.0
        """Seconds a member who is online again may take to resume the round before we say so."""
        self.away: set[bytes] = set()
        """Members of the shown round whose going offline we announced (for "is back")."""

    # -- questions from the controller ------------------------------------------------------

    def connected(self) -> bool:
        return bool(self.peer.connected)

    def game(self) -> Game | None:
        return self.round.game if self.round is not None else None

    def shown_game(self) -> Game | None:
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
            lines.append(self._member_nick(seat, with_fingerprint=False))
            lines.append("  " + self.t.t("draw.entry", commit=commit[:8] if commit else "-",
                                         reveal=nonce.hex()[:8] if nonce else "-"))
        if st.seed:
            lines.append(self.t.t("draw.seed", seed=st.seed.hex()[:8]))
        return lines

    def round_active(self) -> bool:
        return self.round is not None and not self.round.is_over

    def my_turn(self) -> bool:
        return self.round is not None and bool(self.round.is_my_turn)

    def _member_nick(self, seat: int, with_fingerprint: bool = True) -> str:
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
            return self.peer.label_of(s.pk, self._nick(s.pk, s.nick))
        return self._nick(s.pk, s.nick)

    def seat_label(self, seat: int, name: str) -> str:
        """``Rot (bob (1a2b3c4d))``; our own seat says "du"/"you"."""
        if self.round is not None and seat == self.round.my_seat:
            return f"{name} ({self.t.t('msg.you')})"
        return f"{name} ({self._member_nick(seat, with_fingerprint=False)})"

    def status_text(self) -> str:
        rnd = self.round
        game = rnd.game
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
            away = self._away_countdown()
            if away is not None:
                key, nick, secs = away
                text += " · " + self.t.t(key, nick=nick, secs=secs, time=f"{secs // 60}:{secs % 60:02d}")
        score = self.score_text()
        return f"{text} · {self.t.t('status.score', score=score)}" if score else text

    def result_text(self) -> str:
        """The result of the shown round as its chain says (winners by seat label)."""
        rnd = self.round
        game = rnd.game
        winners = rnd.winners if rnd.is_over else game.winners()
        if not winners:
            return self.t.t("result.draw")
        names = [self.ctl.seat_label(game, s) for s in winners]
        if len(names) == 1:
            return self.t.t("result.win", seat=names[0])
        return self.t.t("result.wins", seats=", ".join(names))

    def _away_countdown(self) -> tuple[str, str, int] | None:
        """(status key, nick, seconds) while the seat to move is a member who went away.

        Offline: the offline timeout runs.  Online again but not back in the round (no
        busy flag, e.g. restarted elsewhere): only the silent timeout ends the round.
        """
        rnd = self.round
        if rnd is None or rnd.is_over or rnd.game is None or not self.connected():
            return None
        seat = rnd.game.to_move()
        seats = rnd.chain_state.seats
        if seat is None or seat >= len(seats) or seats[seat].is_computer:
            return None
        pk = seats[seat].pk
        if pk is None or pk == self.peer.public_key:
            return None
        info = self.peer.lobby.peers.get(pk)
        nick = self._nick(pk, seats[seat].nick)
        if info is None:
            return "status.away", nick, self._seconds_left(rnd)
        if pk in self.away and not info.busy:
            return "status.absent", nick, self._seconds_left(rnd, silent=True)
        return None

    def _seconds_left(self, rnd: Any, silent: bool = False) -> int:
        """Seconds until the seat to move may be forfeited (offline or silent; from the head)."""
        from p2p.peer import now_ms

        timeouts = self.peer.turn_timeouts
        limit = timeouts.silent_ms if silent else timeouts.offline_ms
        return max(0, (limit - (now_ms() - rnd.chain_state.head.ts)) // 1000)

    async def _absent_check(self, pk: bytes, rnd: Any, wait: float = 5.0) -> None:
        """Online again but, after a moment, still not back in the round: say what follows."""
        await asyncio.sleep(wait)
        info = self.peer.lobby.peers.get(pk)
        if rnd is not self.round or rnd.is_over or pk not in self.away or info is None or info.busy:
            return
        st = rnd.chain_state
        seat = st.seat_of(pk)
        nick = self._nick(pk, info.nick)
        if seat is not None and rnd.game is not None and rnd.game.to_move() == seat:
            secs = self._seconds_left(rnd, silent=True)
            self.state.add(self.t.t("round.absent", nick=nick, minutes=max(1, (secs + 59) // 60)), "warn")
        else:
            self.state.add(self.t.t("round.absent_later", nick=nick,
                                    minutes=self.peer.turn_timeouts.silent_ms // 60_000), "warn")
        self.ctl.refresh()
    def forming_text(self) -> str | None:
        """While a private round waits for its code joiners: the code, for the status line."""
        rnd = self.round
        if rnd is None or rnd.code is None or rnd.phase.value != "forming":
            return None
        return self.t.t("status.forming", code=f"{rnd.code[:3]} {rnd.code[3:]}", game=self.t.game(rnd.game_name),
                        open=rnd.seats.count("open"))

    def _enter_group(self, rnd: Any) -> None:
        """Count rounds and wins per group of members: a score line (and round number) kept
        across groups would differ from that of a peer who was not in the earlier rounds."""
        group = frozenset(s.pk for s in rnd.chain_state.seats if s.pk is not None)
        if group == self._group:
            return
        self._groups[self._group] = (self.round_no, self.wins)
        self._group = group
        self.round_no, self.wins = self._groups.pop(group, (0, {}))

    def score_text(self) -> str:
        if self.round is None:
            return ""
        parts = []
        for seat in self.round.chain_state.seats:
            if seat.pk is not None:
                # names in seat order, our own too: the line reads the same on every peer
                parts.append(f"{self._nick(seat.pk, seat.nick)} {self.wins.get(seat.pk, 0)}")
        return " · ".join(parts)

    # -- lobby ---------------------------------------------------------------------------------

    def _refresh_lobby_soon(self) -> None:
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
            ))
            self.names[info.pk] = info.nick
        self.state.lobby = entries
        self.state.online = self.connected()

    # -- actions -----------------------------------------------------------------------------

    def _run(self, coro: Coroutine[Any, Any, Any]) -> None:
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
        rnd = self.round
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
        self._run(rnd.play(move))

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
        """Leave the shown round -- or any round the peer still counts us in (never stuck)."""
        rounds = [self.round] if self.round is not None and not self.round.is_over else []
        rounds += [r for r in self.peer.rounds.values() if r is not self.round and self._holds_seat(r)]
        if not rounds and self.round is None:
            self.ctl.say("msg.no_game", "warn")
            return
        for rnd in rounds:
            await rnd.leave()
            self._left.add(rnd.id)  # its end still counts in the score, as on the others' screens
        self.round = None
        self.away.clear()
        self.replay_ply = None
        if rounds:
            self.ctl.say("round.you_left")

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
        self._adopt_round(rnd, game_name, options, others)
        self.state.add(self.t.t("net.invite_sent", nicks=", ".join(self._nick(pk) for pk in others),
                                game=self.t.game(game_name), code=rnd.id[:8]), "round")

    def _nick(self, pk: bytes, fallback: str = "") -> str:
        """A member's nickname: the lobby's, else the last one seen, else the seat's; never hex."""
        if pk == self.peer.public_key:
            return self.peer.nick
        info = self.peer.lobby.peers.get(pk)
        if info is not None:
            return info.nick
        return self.names.get(pk) or fallback or "?"

    def _adopt_round(self, rnd: Any, game_name: str, options: dict[str, Any], others: list[bytes]) -> None:
        self.round = rnd
        self.replay_ply = None
        self.away.clear()
        self.last_group = (game_name, options, others)
        self._save_sidecar(rnd)

    # -- round logs: names and codes beside them, taken up again after a restart ------------------

    def _sidecar(self, rnd_id: str) -> Path | None:
        log_dir = self.peer.log_dir
        return None if log_dir is None else Path(log_dir) / f"round-{rnd_id}.shell.json"

    def _save_sidecar(self, rnd: Any) -> None:
        """The join code and the members' names beside the round log (the log has neither)."""
        path = self._sidecar(rnd.id)
        if path is None or path.exists() and not path.is_file():  # a FIFO would block
            return
        names = {s.pk.hex(): self._nick(s.pk, s.nick) for s in rnd.chain_state.seats if s.pk is not None}
        # the round number and this group's score, so a restart shows the same status line
        wins = {s.pk.hex(): self.wins.get(s.pk, 0) for s in rnd.chain_state.seats if s.pk is not None}
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps({"code": rnd.code, "names": names, "broker": self._broker_key(),
                                        "round_no": self.round_no, "wins": wins}))
        except OSError as err:
            log.warning("cannot write %s: %s", path, err)

    def _broker_key(self) -> str:
        """Where this peer plays (one or several broker URLs), to resume a round only there."""
        url = self.peer.broker_url
        return url if isinstance(url, str) else " ".join(sorted(url))

    def _load_sidecar(self, rnd_id: str) -> dict[str, Any]:
        path = self._sidecar(rnd_id)
        try:  # ours, but read as input from outside: a FIFO or a giant is no sidecar
            usable = path is not None and path.is_file() and path.stat().st_size <= 1 << 20
            data = json.loads(path.read_text()) if usable else {}  # type: ignore[union-attr]
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _unfinished_logs(self) -> list[tuple[Path, Any]]:
        """The newest round logs in which we still hold a seat of a running round.

        A damaged one is listed with its problem (a string) instead of a state."""
        from p2p.peer import MAX_LOG_BYTES
        from p2p.protocol.replay import LogError, replay_log

        log_dir = self.peer.log_dir
        if log_dir is None or not Path(log_dir).is_dir():
            return []
        now = time.time()
        paths = []
        for path in Path(log_dir).glob("round-*.log"):
            try:
                mtime = path.stat().st_mtime
            except OSError:
                continue
            if now - mtime <= RESUME_WINDOW_S:
                paths.append((mtime, path))
        found = []
        for _, path in sorted(paths, reverse=True)[:RESUME_CANDIDATES]:
            try:
                if not path.is_file() or path.stat().st_size > MAX_LOG_BYTES:
                    raise ValueError("not a round log (no regular file, or too large)")
                state = replay_log(path.read_bytes().split(b"\n")).state
            except (LogError, OSError, ValueError) as err:
                log.info("not resuming %s: %s", path, err)
                found.append((path, f"{path.name}: {err}"))
                continue
            seat = state.seat_of(self.peer.public_key)
            if seat is None or state.phase.value in ("over", "cancelled"):
                continue
            if seat in state.resigned or seat in state.left:
                continue
            found.append((path, state))
        return found

    async def resume_unfinished(self) -> None:
        """After a start: take up the newest unfinished round from its log and resync it."""
        if self.round is not None or self.peer.busy:
            return
        found = await asyncio.to_thread(self._unfinished_logs)
        for path, state in found:
            if isinstance(state, str):  # a damaged log: say so once, never guess
                rid = path.name.removeprefix("round-").removesuffix(".log")
                self.ctl.say("round.resume_failed", "warn", code=rid[:8], reason=state)
                continue
            side = self._load_sidecar(state.round_id)
            if side.get("broker") not in (None, self._broker_key()):
                continue  # played elsewhere: its members are not here (and must not be forfeited)
            names = side.get("names") if isinstance(side.get("names"), dict) else {}
            for pk_hex, nick in names.items():
                nick = sanitize_nickname(nick) if isinstance(nick, str) else ""
                try:
                    if nick:  # the file is ours, but read it as any name from outside
                        self.names.setdefault(bytes.fromhex(pk_hex), nick)
                except ValueError:
                    continue
            from p2p.peer import ActionError

            code = side.get("code") if isinstance(side.get("code"), str) else None
            try:
                rnd = await self.peer.resume(path, code=code)
            except ActionError as err:
                self.ctl.say("round.resume_failed", "warn", code=state.round_id[:8], reason=err)
                continue
            others = [s.pk for s in rnd.chain_state.seats
                      if s.pk is not None and not s.is_computer and s.pk != self.peer.public_key]
            self._adopt_round(rnd, rnd.game_name, dict(rnd.chain_state.options), others)
            self._seen_starts.add(rnd.id)
            self._enter_group(rnd)
            self.round_no = max(self.round_no, _count(side.get("round_no")), 1)
            wins = side.get("wins") if isinstance(side.get("wins"), dict) else {}
            for seat in rnd.chain_state.seats:
                if seat.pk is not None and seat.pk not in self.wins:
                    self.wins[seat.pk] = _count(wins.get(seat.pk.hex()))
            self.ctl.match = None
            moves = rnd.game.history() if rnd.game is not None else []
            self.state.add(self.t.t("round.resumed", code=rnd.id[:8], game=self.t.game(rnd.game_name),
                                    moves=len(moves)), "round")
            if moves:
                self.state.add(self.t.t("round.history", moves=" ".join(moves)), "round")
            self.ctl.refresh()
            return

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

    def _seat_plan(self, name: str, args: list[str]) -> SeatPlan | None:
        """Parse ``/invite`` or ``/private`` words into a seat plan; ``None`` after one line."""
        options, words = cmds.parse_options(tuple(args))
        games = [w for w in words if w.lower() in GAME_NAMES]
        if len(games) != 1:
            self.ctl.usage(name)
            return None
        game_name = games[0].lower()
        nicks = [w for w in words if w.lower() not in GAME_NAMES]
        start_spec = str(options.pop("start", self.next_start))
        ai_count = options.pop("ai", 0)
        level = options.pop("level", None)
        open_seats = options.pop("open", 1) if name == "private" else 0
        if name == "private" and (not isinstance(open_seats, int) or isinstance(open_seats, bool)
                                  or not 1 <= open_seats <= 3):
            self.ctl.say("net.open_bad", "warn")
            return None
        others: list[bytes] = []
        for nick in nicks:
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
        if game_name == "chess4":
            computers += [level] * max(0, 3 - len(others) - open_seats - len(computers))
        seat_pks = [self.peer.public_key] + others
        if start_spec.lower() in ("draw", "los", "auslosen"):
            start = None
        elif start_spec.lower() in ("me", "ich"):
            start = 0
        else:
            info = self._find_peer(start_spec)
            if info is None:
                return None
            if info.pk not in seat_pks:
                self.ctl.say("net.unknown_nick", "warn", nick=start_spec)
                return None
            start = seat_pks.index(info.pk)
        return SeatPlan(game_name, dict(options), nicks, others, computers, start, open_seats)

    def _cmd_invite(self, args: list[str]) -> None:
        if self.peer.busy:
            self.ctl.say("net.busy", "warn")
            return
        plan = self._seat_plan("invite", args)
        if plan is None:
            return

        async def go() -> None:
            rnd = await self.peer.invite(plan.others, plan.game, plan.options, computers=plan.computers,
                                         start=plan.start)
            self._adopt_round(rnd, plan.game, dict(plan.options), plan.others)
            names = ", ".join(self._nick(pk) for pk in plan.others)  # the nick, also when named by fingerprint
            self.state.add(self.t.t("net.invite_sent", nicks=names, game=self.t.game(plan.game), code=rnd.id[:8]),
                           "round")

        self._run(go())

    def _cmd_private(self, args: list[str]) -> None:
        """Open a private round behind a join code and show the code to read aloud."""
        if self.peer.busy:
            self.ctl.say("net.busy", "warn")
            return
        plan = self._seat_plan("private", args)
        if plan is None:
            return

        async def go() -> None:
            rnd = await self.peer.open_private(plan.game, plan.options, open_seats=plan.open_seats,
                                               peers=plan.others, computers=plan.computers, start=plan.start)
            self._adopt_round(rnd, plan.game, dict(plan.options), plan.others)
            self._show_code(rnd)

        self._run(go())

    def _show_code(self, rnd: Any) -> None:
        """The join code as two groups of three (easy to read aloud) and how to use it."""
        from p2p.protocol.round_machine import PRIVATE_TTL_MS

        code = rnd.code or ""
        self.state.add(self.t.t("net.private_open", game=self.t.game(rnd.game_name),
                                seats=rnd.seats.count("open")), "round")
        self.state.add(self.t.t("net.private_code", spoken=f"{code[:3]} {code[3:]}", code=code,
                                minutes=PRIVATE_TTL_MS // 60_000), "invite")

    def _pending(self) -> Any:
        invitations = self.peer.invitations
        return invitations[-1] if invitations else None

    # -- take-backs: the mover asks, the player to move agrees (both signed into the chain) ------

    def _takeback_pending(self) -> Any:
        """The shown round when someone asks us to take back the last move."""
        rnd = self.round
        if rnd is None or rnd.is_over or rnd.takeback_asked is None or not rnd.is_my_turn:
            return None
        return rnd

    def request_takeback(self) -> None:
        """``/undo`` online: ask the others to take back our last move."""
        rnd = self.round
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

        async def go() -> None:
            try:
                await rnd.request_takeback()
            except ActionError:
                self.ctl.say("takeback.not_last", "warn")
                return
            self.ctl.say("takeback.asked", move=head.body["move"])

        self._run(go())

    def _show_takeback_request(self, seat: int) -> None:
        rnd = self.round
        nick = self._member_nick(seat, with_fingerprint=False)
        move = rnd.chain_state.head.body.get("move", "?")
        self.state.add(self.t.t("takeback.request", nick=nick, move=move), "invite")
        self.ctl.notify(self.t.t("notify.takeback", nick=nick), self.t.game(rnd.game_name))

    def _cmd_accept(self, args: list[str]) -> None:
        rnd = self._takeback_pending()
        if rnd is not None:
            self._run(rnd.accept_takeback())
            return
        invitation = self._pending()
        if invitation is None:
            self.ctl.say("net.no_invite", "warn")
            return

        async def go() -> None:
            rnd = await invitation.accept()
            others = [s.pk for s in rnd.chain_state.seats if s.pk is not None and s.pk != self.peer.public_key]
            self._adopt_round(rnd, rnd.game_name, dict(rnd.chain_state.options), others)

        self._run(go())

    def _cmd_decline(self, args: list[str]) -> None:
        if self._takeback_pending() is not None:
            self.ctl.say("takeback.declined")  # the move we play next is the answer
            return
        rnd = self._pending()
        if rnd is None:
            self.ctl.say("net.no_invite", "warn")
            return
        self._run(rnd.decline())

    def _cmd_cancel(self, args: list[str]) -> None:
        rnd = self.round
        if rnd is None or rnd.is_over:
            self.ctl.say("net.no_invite", "warn")
            return
        if not rnd.is_admin:
            self.ctl.say("net.only_admin", "warn")
            return
        self._run(rnd.cancel())

    def _cmd_start(self, args: list[str]) -> None:
        rnd = self.round
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
            self.names[event.pk] = str(event.body.get("nick", "")) or self.names.get(event.pk, "?")
        invited = [s.pk for s in st.seats if s.pk is not None and s.pk != self.peer.public_key]
        others = invited + [e.pk for e in joined if e.pk not in invited]
        computers = [s.level for s in st.seats if s.is_computer]
        if rnd.game_name == "chess4":
            from p2p.shell.local_commands import default_level

            level = self.ctl.settings.levels.get("chess4") or default_level("chess4")
            computers += [level] * max(0, 3 - len(others) - len(computers))
        options = {k: v for k, v in st.options.items() if k not in ("first", "players")}
        start = 0 if st.start_seat == 0 else None

        async def go() -> None:
            await rnd.cancel("the host started with who was there")
            new = await self.peer.invite(others, rnd.game_name, options, computers=computers, start=start)
            self._adopt_round(new, rnd.game_name, dict(options), others)
            self.state.add(self.t.t("net.start_now", nicks=", ".join(self._nick(pk) for pk in others),
                                    game=self.t.game(rnd.game_name)), "round")

        self._run(go())

    def _cmd_starter(self, args: list[str]) -> None:
        self.next_start = args[0]
        self.ctl.say("net.starter_set", who=args[0])

    def _cmd_join(self, args: list[str]) -> None:
        """``/join CODE``: the code in any case, spaces and dashes allowed."""
        from p2p.protocol.topics import TopicError, normalize_code

        try:
            code = normalize_code("".join(args))
        except TopicError:
            self.ctl.say("net.code_bad", "warn", code=" ".join(args))
            return
        if self.peer.busy:
            self.ctl.say("net.busy", "warn")
            return
        rnd = self.round
        if rnd is not None and rnd.code == code and rnd.phase.value == "forming":
            self.ctl.say("net.join_again", "warn")  # the peer would say "already in this round"
            return
        spoken = f"{code[:3]} {code[3:]}"
        self.ctl.say("net.joining", code=spoken)

        async def go() -> None:
            from p2p.peer import ActionError

            try:
                rnd = await self.peer.join(code, timeout=self.join_timeout)
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
            self._adopt_round(rnd, rnd.game_name, dict(rnd.chain_state.options), [])
            self.ctl.say("net.joined_round", game=self.t.game(rnd.game_name), code=spoken)

        self._run(go())

    # -- notifications from the peer -------------------------------------------------------------

    async def pump(self) -> None:
        """Mirror the peer's notifications into the shell until it closes."""
        events = self.peer.events()
        self.refresh_lobby()
        for info in self.peer.online():  # already there: shown in the lobby pane, not "joined"
            self._present.setdefault(info.pk, info.label)
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
            if self._away_countdown() is not None:
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
                self.names.setdefault(note.sender, note.nick)
            self.state.add(tag + note.text, "chat", sender=sender, clock=clock)
        elif isinstance(note, p.PresenceChanged):
            if note.online:
                self.names[note.peer.pk] = note.peer.nick
            self._refresh_lobby_soon()
            self._presence(note.peer.pk, note.peer.label, note.online)
            self._member_presence(note.peer, note.online)
        elif isinstance(note, p.InvitationReceived):
            invitation = note.invitation
            inviter = invitation.admin_label
            self.state.add(t.t("net.invited", nick=inviter, game=t.game(invitation.game)), "invite")
            self._warn_impostor(invitation.admin)
            how = t.t("net.starter.drawn") if invitation.drawn else t.t("net.starter.chosen")
            self.state.add(t.t("net.invite_details", options=_options_text(invitation.options), how=how), "invite")
            self.state.add(t.t("net.invite_answer"), "invite")
            self.ctl.notify(t.t("notify.invite", nick=inviter), t.game(invitation.game))
        elif isinstance(note, p.RoundUpdate):
            self._round_update(note)
        elif isinstance(note, p.YourTurn):
            if note.round is self.round:
                self.ctl.notify(t.t("notify.turn"), t.game(note.round.game_name))
        elif isinstance(note, p.RoundOver):
            self._round_over(note)
        elif isinstance(note, p.RoundNotice):
            self._notice(note)
        elif isinstance(note, p.Rejected):
            log.info("rejected: %s", note.text)
            self.state.add(t.t("net.rejected", who=note.sender or "?"), "warn")
        elif isinstance(note, p.Equivocated):
            log.warning("%s", note.text)
            self.state.add(t.t("net.equivocated", who=self.peer.label_of(note.first.pk)), "warn")
        elif isinstance(note, p.ConnectionChanged):
            self._connection(note.state)
        elif isinstance(note, p.Resynced):
            self.state.add(t.t("net.resynced", count=note.applied), "round")

    def _member_presence(self, info: Any, online: bool) -> None:
        """A member of the running round went offline (how long until the forfeit) or is back."""
        rnd = self.round
        if rnd is None or rnd.is_over or rnd.game is None or not self.connected():
            return  # while we are cut off ourselves, everyone's presence merely expires
        st = rnd.chain_state
        seat = st.seat_of(info.pk)
        if seat is None or info.pk == self.peer.public_key or seat in st.left or seat in st.resigned:
            return
        nick = self._nick(info.pk, info.nick)
        if online:
            if info.pk in self.away and info.busy:  # back, and in a round (ours, resumed)
                self.away.discard(info.pk)
                self.state.add(self.t.t("round.back", nick=nick), "round")
            elif info.pk in self.away:  # online again; in the round once it resumes it
                self.ctl.spawn(self._absent_check(info.pk, rnd, self.absent_wait))
            return
        if info.pk in self.away:
            return
        self.away.add(info.pk)
        secs = self.peer.turn_timeouts.offline_ms // 1000
        if rnd.game.to_move() != seat:
            self.state.add(self.t.t("round.away_later", nick=nick, secs=secs), "warn")
            return
        humans_in = [s for s in st.human_seats() if s not in st.left and s not in st.resigned]
        key = "round.away_win" if len(humans_in) == 2 and rnd.my_seat in humans_in else "round.away_out"
        self.state.add(self.t.t(key, nick=nick, secs=self._seconds_left(rnd)), "warn")

    def _presence(self, pk: bytes, label: str, online: bool) -> None:
        """Say when someone comes or goes, or changes name; a busy/free flip is silent.

        Friends and people we play with are always announced; strangers share one small
        budget, and what it holds back is said as a single count (the lobby pane lists
        them all), so thousands of fresh keys cannot push the conversation out of view.
        """
        known = self._present.get(pk)
        if not online:
            if self._present.pop(pk, None) is not None:
                self._say_presence(pk, self.t.t("net.left", nick=known))
        elif known is None:
            self._present[pk] = label
            if len(self._present) > MAX_PRESENT:  # bounded memory per stranger
                self._present.pop(next(iter(self._present)))
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

        nick = self._nick(pk)
        friend = self.peer.friends.impostor_of(nick, pk)
        if friend is None:
            return False
        self.state.add(self.t.t("friend.impostor", nick=nick, fp=fingerprint(pk),
                                friend=self.peer.friends.nick_of(friend) or "?",
                                friend_fp=fingerprint(friend)), "warn")
        return True

    # -- friends ------------------------------------------------------------------------------

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
        self.refresh_lobby()

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
                self.refresh_lobby()
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

    def _notice(self, note: Any) -> None:
        """A protocol notice in the user's language, chosen by its code (never its text)."""
        log.info("notice %s: %s", note.code or "-", note.text)
        code, params, t = note.code, note.params, self.t
        rnd = note.round if note.round is self.round else None
        seat = params.get("seat")
        nick = self._member_nick(seat, with_fingerprint=False) if rnd is not None and isinstance(seat, int) else "?"
        if code in ("starts", "over", "invited", "peer_online", "peer_left", "peer_silent"):
            return  # shown from the round's updates, the invitation or the lobby
        if note.round is not None and rnd is None:
            return  # a round that is not on the board (e.g. one we left)
        if code == "takeback_asked" and isinstance(seat, int) and rnd is not None:
            self._show_takeback_request(seat)
        elif code == "drawing":
            self.state.add(t.t("net.drawing"), "round")
        elif code in ("expired", "invitation_expired"):
            self.state.add(t.t("net.expired"), "warn")
        elif code == "forfeit":
            how = t.t("net.forfeit.offline" if params.get("reason") == "offline" else "net.forfeit.silent")
            self.state.add(t.t("net.forfeited", nick=nick, secs=params.get("waited", "?"), how=how), "warn")
        elif code in ("forfeit_ahead", "forfeit_seen_online", "forfeit_early", "reveal_left_out",
                      "event_ahead", "forfeit_replaced"):
            self.state.add(t.t(f"notice.{code}", nick=nick, secs=params.get("secs", "?"),
                               limit=params.get("limit", "?")), "warn")
        elif code == "rewound":
            self.state.add(t.t("net.rewound"), "warn")
        elif code == "auto_declined":
            self.state.add(t.t("net.auto_declined"), "warn")
        elif code in ("draw_stalled", "drawing_seed", "draw_cancelled_commits", "draw_cancelled_reveals"):
            self.state.add(t.t(f"notice.{code}", nick=nick), "round" if code == "drawing_seed" else "warn")
        elif code == "agreed":
            self.state.add(t.t("notice.agreed"), "round")
        elif code == "draw_left_out":
            seats = params.get("seats") or []
            names = ", ".join(self._member_nick(s, with_fingerprint=False) for s in seats if isinstance(s, int))
            self.state.add(t.t("notice.draw_left_out", seats=names or "?"), "warn")
        elif code in ("cancelled", "invitation_cancelled"):
            why = str(params.get("reason", "other"))
            key = f"notice.{code}.{why}"
            text = rnd.chain_state.end_reason.removeprefix("cancelled: ") if rnd is not None else ""
            self.state.add(t.t(key if key in CATALOGUE else f"notice.{code}.other", nick=nick, text=text), "warn")
        else:
            self.state.add(t.t("notice.untranslated", text=note.text), "info")

    def _connection(self, state: str) -> None:
        t = self.t
        self._broker_changes()
        if state == "lost":
            self.state.connection = t.t("status.reconnecting")
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
            self.refresh_lobby()
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
        if rnd is not self.round:
            return
        st = rnd.chain_state
        if note.kind == "start" and rnd.id not in self._seen_starts:
            self._seen_starts.add(rnd.id)
            self._enter_group(rnd)
            self.round_no += 1
            self._save_sidecar(rnd)  # now with every member's name
            self.ctl.match = None
            self.state.add(t.t("net.round_started", code=rnd.id[:8], game=t.game(rnd.game_name)), "round")
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
                self._move_notes(rnd.game, int(event.body["ply"]))
        elif note.kind == "seal":
            event = st.chain[note.seq] if 0 < note.seq < len(st.chain) else None
            taken = [e for e in event.sealed() if e.kind == "takeback"] if event is not None else []
            if taken:
                moved = next((e for e in st.chain if e.id == taken[0].prev), None)
                seat = st.seat_of(taken[0].pk)
                self.state.add(t.t("takeback.done", move=moved.body["move"] if moved else "?",
                                   nick=self._member_nick(seat, with_fingerprint=False) if seat is not None else "?"),
                               "round")
            self._announce_out(rnd)
        if note.kind in ("start", "draw") and st.starter is not None and rnd.game is not None and not rnd.game.history():
            name = t.seat(rnd.game.seat_names()[st.starter])
            how = t.t("net.starter.drawn") if st.commits else t.t("net.starter.chosen")
            self.state.add(t.t("net.starter", nick=self.seat_label(st.starter, name), how=how), "round")
            if rnd.is_my_turn:
                self.ctl.notify(t.t("notify.turn"), t.game(rnd.game_name))

    def _round_over(self, note: Any) -> None:
        rnd = note.round
        if rnd is not self.round and rnd.id not in self._left or rnd.id in self._counted:
            return
        self._counted.add(rnd.id)
        seats = rnd.chain_state.seats
        if len(note.winners) == 1:
            pk = seats[note.winners[0]].pk
            group = frozenset(s.pk for s in seats if s.pk is not None)
            wins = self.wins if group == self._group else self._groups.setdefault(group, (1, {}))[1]
            if pk is not None:
                wins[pk] = wins.get(pk, 0) + 1
        if rnd is not self.round:
            return  # a round we left: counted, but nothing more to say
        self.away.clear()
        if rnd.game is None or rnd.phase.value == "cancelled":
            return  # a round called off before play: its notice said why
        result = self.result_text()
        why_key = f"end.{note.reason}"
        if why_key in CATALOGUE:
            self.state.add(self.t.t("net.round_over_why", round=self.round_no, result=result,
                                    why=self.t.t(why_key)), "round")
        else:
            self.state.add(self.t.t("net.round_over", round=self.round_no, result=result), "round")

    def _move_notes(self, game: Game, ply: int) -> None:
        """What the move with 0-based ``ply`` did (chess4 check, mate, points; cube lines ...)."""
        from p2p.games.base import RESIGN_PREFIX
        from p2p.shell.local import position_after
        from p2p.shell.move_notes import say_notes

        moves = 0
        for index, entry in enumerate(game.history()):
            if entry.startswith(RESIGN_PREFIX):
                continue
            if moves == ply:
                shown = game if index + 1 == len(game.history()) else position_after(game, index + 1)
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
            nick = self._member_nick(seat, with_fingerprint=False)
            key = "net.left_round" if seat in st.left else "net.resigned"
            self.state.add(self.t.t(key, nick=nick), "round")
        self._announced_out[rnd.id] = len(st.resigned)


def _options_text(options: dict[str, Any]) -> str:
    """Game options as ``key=value`` words (``first`` is decided by the round)."""
    return " ".join(f"{k}={v}" for k, v in sorted(options.items()) if k != "first") or "-"
