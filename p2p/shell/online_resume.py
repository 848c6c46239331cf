"""The online session's round files: the names and code kept beside each round log, and the
unfinished rounds taken up again after a restart. A part owned by ``OnlineSession``
(``p2p.shell.online``), which it reads and updates as ``s``."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from p2p.protocol.identity import sanitize_nickname
from p2p.shell.session_part import SessionPart

if TYPE_CHECKING:
    from p2p.protocol.round import RoundState

log = logging.getLogger("p2p.shell")
RESUME_WINDOW_S = 15 * 60
"""A round log written to within this long is taken up again on start (the protocol's
silent-seat timeout: older rounds have forfeited us or moved on without us)."""
RESUME_CANDIDATES = 5
"""At most this many of the newest round logs are looked at on start."""


def _count(value: object) -> int:
    """A round number or win count read back from a sidecar: a small int, else 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 1 << 20 else 0


class RoundFiles(SessionPart):
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

    def _unfinished_logs(self) -> list[tuple[Path, RoundState | str]]:
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
        found: list[tuple[Path, RoundState | str]] = []
        for _, path in sorted(paths, reverse=True)[:RESUME_CANDIDATES]:
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
        """After a start: take up the newest unfinished round from its log and resync it."""
        if self.s.round is not None or self.peer.busy:
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
                continue
            others = [s.pk for s in rnd.chain_state.seats
                      if s.pk is not None and not s.is_computer and s.pk != self.peer.public_key]
            self.s.adopt_round(rnd, rnd.game_name, dict(rnd.chain_state.options), others)
            self.s.seen_starts.add(rnd.id)
            self.s.starter_said.add(rnd.id)
            self.s.enter_group(rnd)
            self.s.round_no = max(self.s.round_no, _count(side.get("round_no")), 1)
            wins: dict[str, Any] = side["wins"] if isinstance(side.get("wins"), dict) else {}
            for seat in rnd.chain_state.seats:
                if seat.pk is not None and seat.pk not in self.s.wins:
                    self.s.wins[seat.pk] = _count(wins.get(seat.pk.hex()))
            self.s.refresh_standing()
            self.ctl.match = None
            moves = rnd.game.history() if rnd.game is not None else []
            self.state.add(self.t.t("round.resumed", code=rnd.id[:8], game=self.t.game(rnd.game_name),
                                    moves=len(moves)), "round")
            if moves:
                self.state.add(self.t.t("round.history", moves=" ".join(moves)), "round")
            self.ctl.refresh()
            return
