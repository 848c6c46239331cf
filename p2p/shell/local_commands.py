"""Local play: matches at this keyboard, computer turns, undo, replay, analysis.

``LocalPlay`` is a part the ``Controller`` (``p2p.shell.controller``) owns: it is given
the controller as its host (``LocalHost``, exactly what local play needs from it: the
shared state, settings, translator, the shown match and selection, and the callables
``spawn``, ``refresh``, ``say``, ``notify``).  The controller hands it the local moves
and the commands it does not answer itself.  Computer moves, hints and the solver's
analysis run in worker threads (``asyncio.to_thread``) so the screen stays responsive;
a round that changed meanwhile discards the result.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Coroutine
from typing import Any, Protocol

from p2p.games import Game, canonical_name, game_names, spec
from p2p.games.base import MoveError, OptionError
from p2p.games.match import MatchError
from p2p.shell import commands as cmds
from p2p.shell.game_view import view_for
from p2p.shell.i18n import Translator
from p2p.shell.local import LocalMatch, LockedError, NotHumanTurn, Seat, replay_step
from p2p.shell.settings import Settings
from p2p.shell.state import ShellState

log = logging.getLogger("p2p.shell")


START_RULES = {
    "alternate": "alternate", "abwechselnd": "alternate", "alt": "alternate",
    "me": "me", "ich": "me",
    "computer": "computer", "ai": "computer", "cpu": "computer",
}
"""``/play GAME ai start=...``: who starts each round against the computer."""


def available_levels(game_name: str) -> tuple[str, ...]:
    """The computer levels of a game, or ``()`` when its computer player is missing."""
    from p2p.ai import levels

    try:
        return levels(game_name)
    except ImportError:
        return ()


def level_id(word: str, known: tuple[str, ...]) -> str | None:
    """The level id for ``word``: the id itself or its name in either language."""
    from p2p.shell.i18n import CATALOGUE

    low = word.lower()
    for level in known:
        if low == level or low in (name.lower() for name in CATALOGUE.get(f"level.{level}", ())):
            return level
    return None


def _analyzer(game_name: str) -> Callable[..., Any] | None:
    """The computer player's ``analyze_round`` (a finished round's review), if it has one."""
    from p2p.ai import module

    try:
        found: Callable[..., Any] | None = getattr(module(game_name), "analyze_round", None)
    except ImportError:
        return None
    return found


def default_level(game_name: str) -> str:
    """The computer level offered first: the weakest one (fast on any machine)."""
    known = available_levels(game_name)
    return known[0] if known else ""


class LocalHost(Protocol):
    """What local play needs from the controller that owns it."""

    state: ShellState
    settings: Settings
    t: Translator
    match: LocalMatch | None
    """The local match shown (``None``: none, or an online round took its place)."""
    online: Any
    """The online session (``p2p.shell.online.OnlineSession``) once connected."""
    selected: str | None
    analysis_nodes: int | None

    def spawn(self, coro: Coroutine[Any, Any, Any], /) -> object: ...
    def refresh(self) -> None: ...
    def notify(self, title: str, body: str, /) -> None: ...
    def clock(self) -> float: ...
    def say(self, key: str, kind: str = "info", **fields: object) -> None: ...
    def usage(self, name: str) -> None: ...
    def internal_error(self, err: BaseException) -> None: ...
    def guard(self, coro: Coroutine[Any, Any, Any]) -> Coroutine[Any, Any, None]: ...
    def save_settings(self) -> None: ...
    def resolve(self, game: Game, text: str) -> str | None: ...
    def seat_label(self, game: Game, seat: int) -> str: ...
    def result_text(self, game: Game) -> str: ...
    def score_text(self, match: LocalMatch) -> str: ...
    def current_game(self) -> Game | None: ...


class LocalPlay:
    """``/play``, ``/again``, ``/undo``, ``/resign``, ``/leave``, ``/replay``, ``/level``,
    ``/stats``, ``/select``, ``/hint``, ``/analyze``, a person's local move and the
    computer's turns."""

    def __init__(self, host: LocalHost) -> None:
        self.ctl = host
        self.thinking = False
        """A computer seat is choosing its move (in a worker thread)."""

    # -- a person's move ---------------------------------------------------------------------

    def play(self, text: str) -> None:
        """A person's move in the local match: played, or one line saying why not."""
        ctl = self.ctl
        match = ctl.match
        if match is None:
            ctl.say("msg.no_game_move", "warn", move=text)
            return
        if match.replay_ply is not None:
            match.stop_replay()
        if match.game.is_over():
            ctl.say("msg.game_over", "warn")
            return
        from p2p.shell.move_input import off_board

        off = off_board(match.game, text)
        if off is not None:  # the board before the turn, as online
            ctl.say(off.key, "warn", **off.fields)
            return
        if self.thinking or match.computer_to_move():
            ctl.say("msg.computer_thinking", "warn")
            return
        resolved = ctl.resolve(match.game, text)
        if resolved is None:
            return
        text = resolved
        try:
            match.play_human(text, ctl.clock())
        except LockedError:
            ctl.say("msg.too_fast", "warn")
            return
        except NotHumanTurn:
            ctl.say("msg.not_your_turn", "warn")
            return
        except MoveError as err:
            if match.game.is_over():
                ctl.say("msg.game_over", "warn")
            else:
                ctl.say("msg.bad_move", "warn", move=text, reason=ctl.t.reason(err))
            return
        ctl.selected = None
        self._after_move()

    # -- after a move ------------------------------------------------------------------------

    def _say_move_notes(self, game: Game) -> None:
        """What the last move did: chess4 check, mate, points ...; cube lines; a double four."""
        from p2p.shell.move_notes import say_notes

        for line in say_notes(game, self.ctl.t.t, lambda seat: self.ctl.seat_label(game, seat)):
            self.ctl.state.add(line, "round")

    def _after_move(self) -> None:
        match = self.ctl.match
        if match is None:
            return
        self._say_move_notes(match.game)
        if match.game.is_over():
            self._round_over()
        elif match.computer_to_move():
            self._start_computer()

    def _start_computer(self) -> None:
        if self.thinking or self.ctl.match is None:
            return
        self.thinking = True
        self.ctl.spawn(self._computer_turns(self.ctl.match))

    async def _computer_turns(self, match: LocalMatch) -> None:
        """Let computer seats move until a person is to move or the round ends."""
        from p2p.ai import choose_move

        try:
            while self.ctl.match is match and match.computer_to_move():
                seat = match.seat_to_move()
                assert seat is not None
                level = match.seats[seat].level or default_level(match.game_name)
                self.ctl.state.busy = self.ctl.seat_label(match.game, seat)
                self.ctl.refresh()
                game = match.game
                snapshot = game.copy()
                plies = len(game.history())
                move = await asyncio.to_thread(choose_move, snapshot, level, os.urandom(8))
                if self.ctl.match is not match:
                    return  # another match was started meanwhile
                if match.game is not game or len(game.history()) != plies:
                    continue  # /again or /resign meanwhile: think again about the new position
                match.play_computer(move)
                self.ctl.state.add(f"{self.ctl.seat_label(match.game, seat)}: {move}", "round")
                self._say_move_notes(match.game)
            if self.ctl.match is match:
                if match.game.is_over():
                    self._round_over()
                else:
                    self.ctl.notify(self.ctl.t.t("notify.turn"), self.ctl.t.game(match.game_name))
        except Exception as err:  # noqa: BLE001
            self.ctl.internal_error(err)
        finally:
            self.thinking = False
            self.ctl.state.busy = ""
            self.ctl.refresh()

    def _round_over(self) -> None:
        match = self.ctl.match
        if match is None:
            return
        analyzable = _analyzer(match.game_name) is not None  # /analyze only where it works
        self.ctl.say(
            "msg.round_over.analyze" if analyzable else "msg.round_over", "round", round=match.round_no,
            result=self.ctl.result_text(match.game), score=self.ctl.score_text(match),
        )
        self._record_stats(match)

    def _record_stats(self, match: LocalMatch) -> None:
        """Connect Four against one computer: count won/lost/drawn per level (the settings
        file keeps Connect Four's counts only: ``/stats`` is that game's feature)."""
        if match.game_name != "connect4" or len(match.human_seats()) != 1:
            return
        human = match.human_seats()[0]
        level = match.seats[1 - human].level or ""
        winners = match.game.winners()
        outcome = "drawn" if not winners else ("won" if human in winners else "lost")
        self.ctl.settings.record_connect4(level, outcome)
        self.ctl.save_settings()

    # -- commands ---------------------------------------------------------------------------

    def cmd_play(self, args: list[str]) -> None:
        """``/play GAME [ai|2p] [LEVEL] [key=value ...]``: start a local match."""
        options, words = cmds.parse_options(tuple(args))
        if not words:
            self.ctl.usage("play")
            return
        start = START_RULES.get(str(options.pop("start", "alternate")).lower())
        if start is None:
            self.ctl.say("play.start_bad", "warn")
            return
        name = canonical_name(words[0]) or ""
        if not name:
            self.ctl.say("msg.unknown_game", "warn", name=words[0], known=", ".join(game_names()))
            return
        known_levels = available_levels(name)
        mode = view_for(name).default_mode
        level = self.ctl.settings.levels.get(name, default_level(name))
        if level not in known_levels:
            level = default_level(name)
        for word in words[1:]:
            low = word.lower()
            if low in ("ai", "computer", "cpu", "ki"):
                mode = "ai"
            elif low in ("2p", "local", "lokal", "zwei", "hotseat"):
                mode = "2p"
            elif level_id(low, known_levels) is not None:
                mode, level = "ai", level_id(low, known_levels) or level
            else:
                self.ctl.say("msg.unknown_level", "warn", level=word, levels=self.ctl.t.levels(known_levels))
                return
        try:
            from p2p.games import create_game

            players = create_game(name, options).players
        except OptionError as err:
            self.ctl.say("msg.bad_option", "warn", reason=self.ctl.t.reason(err))
            return
        if mode == "ai" and not known_levels:
            self.ctl.say("msg.no_computer", "warn", game=self.ctl.t.game(name))
            return
        if mode == "2p":
            seats = tuple(Seat() for _ in range(players))
        else:
            seats = (Seat(),) + tuple(Seat(level) for _ in range(players - 1))
        self.ctl.match = LocalMatch(name, dict(options), seats, start=start)
        self.ctl.selected = None
        self.ctl.settings.levels[name] = level
        if mode == "ai":
            self.ctl.say(f"play.start_rule.{start}")
        self._announce_round()

    def _announce_round(self) -> None:
        match = self.ctl.match
        assert match is not None
        self.ctl.say(
            "msg.new_round", "round", round=match.round_no, game=self.ctl.t.game(match.game_name),
            seat=self.ctl.seat_label(match.game, match.starter),
        )
        if match.computer_to_move():
            self._start_computer()

    def _idle_match(self) -> LocalMatch | None:
        """The local match when there is one and the computer is not thinking (else say why)."""
        if self.ctl.match is None:
            self.ctl.say("msg.no_game", "warn")
            return None
        if self.thinking:
            self.ctl.say("msg.computer_thinking", "warn")
            return None
        return self.ctl.match

    def cmd_again(self, args: list[str]) -> None:
        if self.ctl.online is not None and self.ctl.online.game() is not None:
            self.ctl.spawn(self.ctl.guard(self.ctl.online.again()))
            return
        match = self.ctl.match
        if match is None:
            self.ctl.say("msg.no_game", "warn")
            return
        # Also while a computer thinks: its answer for the old position is thrown away.
        match.another_round()
        self.ctl.selected = None
        self._announce_round()

    def cmd_undo(self, args: list[str]) -> None:
        if self.ctl.online is not None and self.ctl.online.game() is not None:
            self.ctl.online.request_takeback()
            return
        match = self._idle_match()
        if match is None:
            return
        try:
            taken = match.undo()
        except MatchError:
            self.ctl.say("msg.undo_decided", "warn")
            return
        if not taken:
            self.ctl.say("msg.nothing_to_undo", "warn")
            return
        self.ctl.say("msg.undo", moves=", ".join(taken))
        if match.computer_to_move():
            self._start_computer()

    def cmd_resign(self, args: list[str]) -> None:
        if self.ctl.online is not None and self.ctl.online.game() is not None:
            self.ctl.spawn(self.ctl.guard(self.ctl.online.resign()))
            return
        match = self.ctl.match
        if match is None or match.game.is_over():
            self.ctl.say("msg.no_game", "warn")
            return
        seat = match.seat_to_move()
        if seat is None or match.seats[seat].is_computer:
            self.ctl.say("msg.not_your_turn", "warn")
            return
        try:
            match.resign(seat)
        except MoveError as err:
            if getattr(err, "code", None) == "no_resign":  # the cube: a command, not a bad move
                self.ctl.say("msg.no_resign", "warn", game=self.ctl.t.game(match.game_name))
            else:
                self.ctl.say("msg.bad_move", "warn", move="/resign", reason=self.ctl.t.reason(err))
            return
        self.ctl.selected = None
        if any(s.is_computer for s in match.seats):  # against the computer "you" are the person
            self.ctl.say("round.you_resign")
        else:  # two or more people at one keyboard: say whose resignation
            self.ctl.say("round.resigned", nick=self.ctl.seat_label(match.game, seat))
        self._after_move()  # over now, or (chess4, the cube) the others play on

    def cmd_leave(self, args: list[str]) -> None:
        if self.ctl.online is not None and (self.ctl.online.round is not None or self.ctl.online.peer.busy):
            self.ctl.spawn(self.ctl.guard(self.ctl.online.leave()))
            return
        if self.ctl.match is None:
            self.ctl.say("msg.no_game", "warn")
            return
        self.ctl.match = None
        self.ctl.selected = None

    def _finished(self) -> tuple[Any, Game] | None:
        """The finished round to replay or analyse and what holds its replay cursor (an
        online round is over when its chain says so: a leave in the cube, a forfeit)."""
        online = self.ctl.online
        if online is not None and online.game() is not None:
            game = online.game()
            return (online, game) if game.is_over() or online.round.is_over else None
        if self.ctl.match is not None and self.ctl.match.game.is_over():
            return self.ctl.match, self.ctl.match.game
        return None

    def cmd_replay(self, args: list[str]) -> None:
        finished = self._finished()
        online = self.ctl.online
        if finished is None:  # (an online round over before its game began: nothing to show)
            over = online is not None and online.round is not None and online.round.is_over
            self.ctl.say("msg.replay_no_moves" if over else "msg.replay_needs_end", "warn")
            return
        holder, game = finished
        if not game.board_moves():
            self.ctl.say("msg.replay_no_moves", "warn")
            return
        step = args[0].lower() if args else "next"
        if step == "stop":
            holder.replay_ply = None
            self.ctl.say("msg.replay_stopped")
            return
        if step not in ("start", "prev", "next", "end"):
            self.ctl.say("msg.replay_help", "warn")
            return
        holder.replay_ply = replay_step(holder.replay_ply, step, len(game.history()))

    def cmd_level(self, args: list[str]) -> None:
        game = self.ctl.current_game()
        name = game.name if game is not None else "connect4"
        known = available_levels(name)
        current = self.ctl.settings.levels.get(name, default_level(name))
        if not args:
            self.ctl.say("msg.levels", game=self.ctl.t.game(name), levels=self.ctl.t.levels(known), level=self.ctl.t.level(current))
            return
        level = level_id(args[0], known) or ""
        if level not in known:
            self.ctl.say("msg.unknown_level", "warn", level=args[0], levels=self.ctl.t.levels(known))
            return
        self.ctl.settings.levels[name] = level
        self.ctl.save_settings()
        if self.ctl.match is not None and self.ctl.match.game_name == name:
            self.ctl.match.seats = tuple(Seat(level) if s.is_computer else s for s in self.ctl.match.seats)
        self.ctl.say("msg.level_set", game=self.ctl.t.game(name), level=self.ctl.t.level(level))

    def cmd_stats(self, args: list[str]) -> None:
        stats = self.ctl.settings.connect4_stats
        if not stats:
            self.ctl.say("msg.stats", game=self.ctl.t.game("connect4"), level="-", won=0, lost=0, drawn=0)
        for level, entry in sorted(stats.items()):
            self.ctl.say(
                "msg.stats", game=self.ctl.t.game("connect4"), level=self.ctl.t.level(level),
                won=entry.get("won", 0), lost=entry.get("lost", 0), drawn=entry.get("drawn", 0),
            )

    def cmd_select(self, args: list[str]) -> None:
        if len(args) != 1:
            self.ctl.usage("select")
            return
        self.ctl.selected = args[0].lower()

    def cmd_hint(self, args: list[str]) -> None:
        if self.ctl.online is not None and self.ctl.online.game() is not None:
            self.ctl.say("msg.hint_local_only", "warn")
            return
        game = self.ctl.current_game()
        if game is None or game.is_over():
            self.ctl.say("msg.no_game" if game is None else "msg.game_over", "warn")
            return
        if not spec(game.name).ai:  # hints come from the game's computer player
            self.ctl.say("msg.hint_unavailable", "warn")
            return
        self.ctl.spawn(self._hint(game.copy()))

    async def _hint(self, game: Game) -> None:
        try:
            from p2p.ai import hint

            move = await asyncio.to_thread(hint, game)
            self.ctl.say("msg.hint", move=move)
        except Exception as err:  # noqa: BLE001
            self.ctl.internal_error(err)
        finally:
            self.ctl.refresh()

    def cmd_analyze(self, args: list[str]) -> None:
        finished = self._finished()
        game = None if finished is None else finished[1]
        analyze_round = None if game is None or not game.is_over() else _analyzer(game.name)
        if game is None or analyze_round is None:
            self.ctl.say("msg.analysis_unavailable", "warn")
            return
        self.ctl.say("msg.analysis_running")
        self.ctl.spawn(self._analyze(analyze_round, game.copy()))

    async def _analyze(self, analyze_round: Callable[..., Any], game: Game) -> None:
        from p2p.shell.analysis_text import describe

        try:
            options = game.options()
            extra = {} if self.ctl.analysis_nodes is None else {"node_limit": self.ctl.analysis_nodes}
            result = await asyncio.to_thread(
                analyze_round, game.board_moves(),
                int(options["width"]), int(options["height"]), **extra,
            )
            for line in describe(result, game, self.ctl.t, self.ctl.seat_label):
                self.ctl.state.add(line, "info")
        except Exception as err:
            log.exception("analysis failed")
            self.ctl.say("msg.analysis_failed", "warn", reason=err)
        finally:
            self.ctl.refresh()
