"""The online session's round files: the names and code kept beside each round log, and the
unfinished rounds taken up again after a restart. A part owned by ``OnlineSession``
(``p2p.shell.online``), which it reads and updates as ``s``."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from p2p.protocol.identity import sanitize_nickname
from p2p.shell.names import NickBook
from p2p.shell.session_part import PartHost, SessionPart

if TYPE_CHECKING:
    from p2p.protocol.round import RoundState

log = logging.getLogger("p2p.shell")
RESUME_WINDOW_S = 15 * 60
"""A live round's log written to within this long is taken up again on start (the
protocol's silent-seat timeout: older rounds have forfeited us or moved on without us)."""
RESUME_CANDIDATES = 5
"""At most this many of the newest live round logs are looked at on start."""
RESUME_SLOW = 32
"""At most this many of the newest slow round logs are looked at on start."""


def _count(value: object) -> int:
    """A round number or win count read back from a sidecar: a small int, else 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 1 << 20 else 0


class _Rounds(Protocol):
    def show(self, rnd: Any) -> None: ...

    def show_your_turn(self) -> None: ...


class FilesHost(PartHost, Protocol):
    """What the round files read and change of the online session (``p2p.shell.online.OnlineSession``
    implements it)."""

    counted: set[str]
    names: NickBook

    def nick_of(self, pk: bytes, fallback: str = "") -> str: ...

    def refresh_standing(self) -> None: ...

    round: Any
    round_no: int

    @property
    def rounds(self) -> _Rounds: ...

    seen_starts: set[str]
    starter_said: set[str]
    wins: dict[bytes, int]


class RoundFiles(SessionPart[FilesHost]):
    """The online session's round files: the names and code kept beside each round
    log, and the unfinished rounds taken up again after a restart."""


    def _sidecar(self, rnd_id: str) -> Path | None:
        log_dir = self.peer.log_dir
        return None if log_dir is None else Path(log_dir) / f"round-{rnd_id}.shell.json"

    def save_sidecar(self, rnd: Any) -> None:
        """The join code and the members' names beside the round log (the log has neither)."""
        path = self._sidecar(rnd.id)
        if path is None or path.exists() and not path.is_file():  # a FIFO would block
            return
        names = {s.pk.hex(): self.s.nick_of(s.pk, s.nick) for s in rnd.chain_state.seats if s.pk is not None}
        # the round number and this group's score, so a restart shows the same status line
        wins = {s.pk.hex(): self.s.wins.get(s.pk, 0) for s in rnd.chain_state.seats if s.pk is not None}
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps({"code": rnd.code, "names": names, "broker": self._broker_key(),
                                        "round_no": self.s.round_no, "wins": wins}))
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

    def _candidates(self, log_dir: Path) -> list[Path]:
        """The round logs worth replaying, newest first: a live round's written to within
        ``RESUME_WINDOW_S``; a slow round's (its genesis names ``turn``) within two of its
        turns and that window -- we moved, the other took nearly a turn, we have one
        (docs/protocol.md §6.7).  Only a log's first line is read to tell them apart."""
        from p2p.protocol import events as ev
        from p2p.protocol.round import MAX_TURN_S

        now = time.time()
        live: list[tuple[float, Path]] = []
        slow: list[tuple[float, Path]] = []
        for path in Path(log_dir).glob("round-*.log"):
            try:
                mtime = path.stat().st_mtime
            except OSError:
                continue
            age = now - mtime
            if age <= RESUME_WINDOW_S:
                live.append((mtime, path))  # slow or live: replayed (the window is short)
                continue
            if age > 2 * MAX_TURN_S + RESUME_WINDOW_S or not path.is_file():
                continue
            try:
                with path.open("rb") as handle:
                    turn = ev.parse(handle.readline(1 << 16).rstrip(b"\n")).body.get("turn")
            except (OSError, ev.EventError, ValueError):
                continue  # an old, unreadable file: not worth a warning
            if isinstance(turn, int) and age <= 2 * turn + RESUME_WINDOW_S:
                slow.append((mtime, path))
        live.sort(reverse=True)
        slow.sort(reverse=True)
        return [p for _, p in live[:RESUME_CANDIDATES + RESUME_SLOW]] + [p for _, p in slow[:RESUME_SLOW]]

    def _unfinished_logs(self) -> list[tuple[Path, RoundState | str]]:
        """The newest round logs in which we still hold a seat of a running round.

        A damaged one is listed with its problem (a string) instead of a state."""
        from p2p.peer import MAX_LOG_BYTES
        from p2p.protocol.replay import LogError, replay_log

        log_dir = self.peer.log_dir
        if log_dir is None or not Path(log_dir).is_dir():
            return []
        found: list[tuple[Path, RoundState | str]] = []
        for path in self._candidates(Path(log_dir)):
            try:
                if not path.is_file() or path.stat().st_size > MAX_LOG_BYTES:
                    raise ValueError("not a round log (no regular file, or too large)")
                state = replay_log(path.read_bytes().split(b"\n"), self.peer.turn_timeouts).state
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
        """After a start: take up every unfinished round we hold a log of (the slow ones and
        the newest live one), resync them, and show the one where it is our turn (else the
        newest); the others wait in ``/rounds``."""
        if self.s.round is not None or self.peer.busy:
            return
        found = await asyncio.to_thread(self._unfinished_logs)
        resumed: list[Any] = []
        live = False
        for path, state in found:
            if isinstance(state, str):  # a damaged log: say so once, never guess
                rid = path.name.removeprefix("round-").removesuffix(".log")
                self.ctl.say("round.resume_failed", "warn", code=rid[:8], reason=state)
                continue
            slow = state.genesis.body.get("turn") is not None
            if state.round_id in self.peer.rounds or (live and not slow):
                continue  # held already; or an older live round (one live round at a time)
            rnd = await self._resume(path, state)
            if rnd is None:
                continue
            live = live or not slow
            resumed.append(rnd)
        if not resumed:
            return
        self.s.rounds.show(resumed[0])  # the newest, unless it is our turn elsewhere
        self.s.rounds.show_your_turn()
        rnd = self.s.round
        moves: list[str] = rnd.game.history() if rnd is not None and rnd.game is not None else []
        if moves:
            self.state.add(self.t.t("round.history", moves=" ".join(moves)), "round")
        self.ctl.refresh()

    async def _resume(self, path: Path, state: RoundState) -> Any:
        """Take up one round from its log with what its sidecar kept (names, code, round
        number and score); ``None`` after one line if it cannot be (or was played elsewhere)."""
        side = self._load_sidecar(state.round_id)
        if side.get("broker") not in (None, self._broker_key()):
            return None  # played elsewhere: its members are not here (and must not be forfeited)
        names: dict[str, Any] = side["names"] if isinstance(side.get("names"), dict) else {}
        for pk_hex, nick in names.items():
            nick = sanitize_nickname(nick) if isinstance(nick, str) else ""
            try:
                if nick:  # the file is ours, but read it as any name from outside
                    self.s.names.setdefault(bytes.fromhex(pk_hex), nick)
            except ValueError:
                continue
        from p2p.peer import ActionError

        code = side.get("code") if isinstance(side.get("code"), str) else None
        try:
            rnd = await self.peer.resume(path, code=code)
        except ActionError as err:
            self.ctl.say("round.resume_failed", "warn", code=state.round_id[:8], reason=err)
            return None
        self.s.seen_starts.add(rnd.id)
        self.s.counted.add(rnd.id)  # its count comes from the sidecar below
        self.s.starter_said.add(rnd.id)
        self.s.rounds.show(rnd)  # its group's round number and score, for the lines below
        self.s.round_no = max(self.s.round_no, _count(side.get("round_no")), 1)
        wins: dict[str, Any] = side["wins"] if isinstance(side.get("wins"), dict) else {}
        for seat in rnd.chain_state.seats:
            if seat.pk is not None and seat.pk not in self.s.wins:
                self.s.wins[seat.pk] = _count(wins.get(seat.pk.hex()))
        self.s.refresh_standing()
        self.save_sidecar(rnd)
        moves = rnd.game.history() if rnd.game is not None else []
        self.state.add(self.t.t("round.resumed", code=rnd.id[:8], game=self.t.game(rnd.game_name),
                                moves=len(moves)), "round")
        return rnd
