"""The shell's brain: executes input lines against local matches and the online session.

No prompt_toolkit here.  The app hands in four callables: ``spawn(coro)`` to run a
background task, ``refresh()`` to repaint, ``quit()`` to leave and ``notify(title,
body)`` to get the user's attention.  Computer moves are computed with
``asyncio.to_thread`` so the screen stays responsive.  Every command handler either
changes state or adds exactly one clear line; exceptions never escape ``handle_line``
(they are logged to the file in the config dir and shown as one line).
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from p2p.games import GAME_NAMES, Game
from p2p.games.base import MoveError, OptionError
from p2p.games.match import MatchError
from p2p.shell import commands as cmds
from p2p.shell import settings as settings_mod
from p2p.shell.i18n import Translator
from p2p.shell.local import LocalMatch, LockedError, NotHumanTurn, Seat, replay_step
from p2p.shell.settings import Settings
from p2p.shell.state import ShellState

log = logging.getLogger("p2p.shell")

Spawn = Callable[[Coroutine[Any, Any, Any]], object]


def available_levels(game_name: str) -> tuple[str, ...]:
    """The computer levels of a game, or ``()`` when its computer player is missing."""
    from p2p.ai import levels

    try:
        return levels(game_name)
    except ImportError:
        return ()


def default_level(game_name: str) -> str:
    """The computer level offered first: the weakest one (fast on any machine)."""
    known = available_levels(game_name)
    return known[0] if known else ""


class Controller:
    """Executes commands and moves; owns the local match and talks to the online session."""

    def __init__(
        self,
        *,
        state: ShellState,
        settings: Settings,
        settings_dir: Path | None,
        translator: Translator,
        spawn: Spawn,
        refresh: Callable[[], None],
        quit: Callable[[], None],
        notify: Callable[[str, str], None] = lambda _title, _body: None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.state = state
        self.settings = settings
        self.settings_dir = settings_dir
        self.t = translator
        self.spawn = spawn
        self.refresh = refresh
        self.quit = quit
        self.notify = notify
        self.clock = clock
        self.match: LocalMatch | None = None
        self.online: Any = None
        """The online session (``p2p.shell.online.OnlineSession``) once connected."""
        self.selected: str | None = None
        self.preview: str = ""
        self._thinking = False
        self.log_path: Path | None = None
        self.analysis_nodes: int | None = None
        """Node budget per position for /analyze; ``None``: the analyser's default."""

    # -- the game being shown ----------------------------------------------------------

    def current_game(self) -> Game | None:
        """The position on the board pane (online round first, then local match)."""
        if self.online is not None and self.online.game() is not None:
            return self.online.shown_game()
        if self.match is not None:
            return self.match.shown_game()
        return None

    def is_move(self, text: str) -> bool:
        """Whether ``text`` reads as a move of the running game (syntax only)."""
        game = self.current_game()
        if game is None or game.is_over():
            return False
        try:
            game.normalize(text)
        except MoveError:
            return False
        return True

    def show_legal(self) -> bool:
        """Whether the house rule "show legal moves" is on for the game shown."""
        game = self.current_game()
        return bool(game is not None and game.options().get("show_legal", False))

    def single_key_moves(self) -> bool:
        """True when a lone digit should play at once (Connect Four, a person to move)."""
        game = self.current_game()
        if game is None or game.name != "connect4" or game.is_over():
            return False
        if self.online is not None and self.online.game() is not None:
            return self.online.my_turn()
        return self.match is not None and not self.match.computer_to_move() and self.match.replay_ply is None

    # -- entry points from the app --------------------------------------------------------

    def handle_line(self, text: str) -> None:
        """Execute one input line; never raises."""
        try:
            parsed = cmds.parse_line(text, self.is_move)
            if parsed is None:
                return
            if isinstance(parsed, cmds.Chat):
                self.chat(parsed.text)
            elif isinstance(parsed, cmds.Move):
                self.play(parsed.text)
            elif not parsed.known:
                self.say("msg.unknown_command", "warn", name="/" + parsed.name)
            else:
                getattr(self, f"cmd_{parsed.name}")(list(parsed.args))
        except Exception as err:  # noqa: BLE001 - no traceback ever reaches the screen
            self.internal_error(err)
        finally:
            self.refresh()

    def internal_error(self, err: BaseException) -> None:
        """Log ``err`` with its traceback to the log file and show one line."""
        log.exception("internal error: %s", err)
        self.say("msg.internal_error", "error", path=str(self.log_path or "-"))

    def say(self, key: str, kind: str = "info", **fields: object) -> None:
        """Add a catalogue line to the chat pane."""
        self.state.add(self.t.t(key, **fields), kind)  # type: ignore[arg-type]

    def usage(self, name: str) -> None:
        self.say("msg.usage", "warn", usage=cmds.COMMANDS[name])

    # -- chat ---------------------------------------------------------------------------------

    def chat(self, text: str) -> None:
        """Send chat to the round (when in one) or the lobby; offline it is only echoed."""
        if self.online is not None and self.online.connected():
            self.spawn(self._guard(self.online.send_chat(text)))
            return
        me = self.settings.nick or self.t.t("msg.you")
        self.state.add(text, "chat", sender=me)
        self.say("msg.chat_offline")

    async def _guard(self, coro: Coroutine[Any, Any, Any]) -> None:
        """Run a background coroutine; failures become one line, never a crash."""
        try:
            await coro
        except Exception as err:
            log.exception("background task failed")
            self.state.add(self.t.t("net.error", reason=str(err) or type(err).__name__), "error")
        self.refresh()

    # -- moves ----------------------------------------------------------------------------

    def play(self, text: str) -> None:
        """A person's move in the running round (local or online)."""
        if self.online is not None and self.online.game() is not None:
            self.online.play(text)
            return
        match = self.match
        if match is None:
            self.say("msg.no_game", "warn")
            return
        if match.replay_ply is not None:
            match.stop_replay()
        if self._thinking or match.computer_to_move():
            self.say("msg.computer_thinking", "warn")
            return
        try:
            match.play_human(text, self.clock())
        except LockedError:
            self.say("msg.too_fast", "warn")
            return
        except NotHumanTurn:
            self.say("msg.not_your_turn", "warn")
            return
        except MoveError as err:
            if match.game.is_over():
                self.say("msg.game_over", "warn")
            else:
                self.say("msg.bad_move", "warn", move=text, reason=err)
            return
        self.selected = None
        self._after_move()

    def click(self, move: str) -> None:
        """A board click: select a chess square, or play the clicked column/pillar."""
        game = self.current_game()
        if game is not None and game.name == "chess4":
            if self.selected and self.selected != move:
                self.handle_line(f"{self.selected}-{move}")
            else:
                self.selected = move
                self.refresh()
            return
        self.handle_line(move)

    def _after_move(self) -> None:
        match = self.match
        if match is None:
            return
        if match.game.is_over():
            self._round_over()
        elif match.computer_to_move():
            self._start_computer()

    def _start_computer(self) -> None:
        if self._thinking or self.match is None:
            return
        self._thinking = True
        self.spawn(self._computer_turns(self.match))

    async def _computer_turns(self, match: LocalMatch) -> None:
        """Let computer seats move until a person is to move or the round ends."""
        from p2p.ai import choose_move

        try:
            while self.match is match and match.computer_to_move():
                seat = match.seat_to_move()
                assert seat is not None
                level = match.seats[seat].level or default_level(match.game_name)
                self.state.busy = self.seat_label(match.game, seat)
                self.refresh()
                snapshot = match.game.copy()
                plies = len(match.game.history())
                move = await asyncio.to_thread(choose_move, snapshot, level, os.urandom(8))
                if self.match is not match or len(match.game.history()) != plies:
                    return  # the round changed while the computer was thinking
                match.play_computer(move)
                self.state.add(f"{self.seat_label(match.game, seat)}: {move}", "round")
            if self.match is match:
                if match.game.is_over():
                    self._round_over()
                else:
                    self.notify(self.t.t("notify.turn"), self.t.game(match.game_name))
        except Exception as err:  # noqa: BLE001
            self.internal_error(err)
        finally:
            self._thinking = False
            self.state.busy = ""
            self.refresh()

    def _round_over(self) -> None:
        match = self.match
        if match is None:
            return
        self.say(
            "msg.round_over", "round", round=match.round_no,
            result=self.result_text(match.game), score=self.score_text(match),
        )
        self._record_stats(match)

    def _record_stats(self, match: LocalMatch) -> None:
        """Connect Four against one computer: count won/lost/drawn per level."""
        if match.game_name != "connect4" or len(match.human_seats()) != 1:
            return
        human = match.human_seats()[0]
        level = match.seats[1 - human].level or ""
        winners = match.game.winners()
        outcome = "drawn" if not winners else ("won" if human in winners else "lost")
        self.settings.record_connect4(level, outcome)
        self.save_settings()

    # -- labels ------------------------------------------------------------------------------

    def seat_label(self, game: Game, seat: int) -> str:
        names = game.seat_names()
        name = self.t.seat(names[seat]) if seat < len(names) else str(seat + 1)
        if self.online is not None and self.online.game() is not None:
            return self.online.seat_label(seat, name)
        if self.match is not None and self.match.seats[seat].is_computer:
            return self.t.t("seat.computer", seat=name, level=self.match.seats[seat].level)
        return name

    def result_text(self, game: Game) -> str:
        winners = game.winners()
        if not winners:
            return self.t.t("result.draw")
        names = [self.seat_label(game, s) for s in winners]
        if len(names) == 1:
            return self.t.t("result.win", seat=names[0])
        return self.t.t("result.wins", seats=", ".join(names))

    def score_text(self, match: LocalMatch) -> str:
        return ":".join(str(s) for s in match.score)

    def status_text(self) -> str:
        """The status line: round, whose turn, result, score, connection."""
        parts: list[str] = []
        if self.online is not None and self.online.game() is not None:
            parts.append(self.online.status_text())
        elif self.match is not None:
            match = self.match
            game = match.game
            if match.replay_ply is not None:
                parts.append(self.t.t("status.replay", ply=match.replay_ply, total=len(game.history())))
            elif game.is_over():
                parts.append(self.t.t("status.over", round=match.round_no, result=self.result_text(game)))
            elif self.state.busy:
                parts.append(self.t.t("status.thinking", round=match.round_no, seat=self.state.busy))
            else:
                seat = game.to_move()
                assert seat is not None
                parts.append(self.t.t("status.round", round=match.round_no, seat=self.seat_label(game, seat)))
            parts.append(self.t.t("status.score", score=self.score_text(match)))
        else:
            parts.append(self.t.t("status.idle"))
        if self.state.connection:
            parts.append(self.state.connection)
        return " · ".join(parts)

    # -- settings --------------------------------------------------------------------------

    def save_settings(self) -> None:
        if self.settings_dir is None:
            return
        try:
            settings_mod.save(self.settings, self.settings_dir)
        except OSError as err:
            self.say("msg.settings_unsaved", "warn", reason=err.strerror or err)

    # -- commands: general -------------------------------------------------------------------

    def cmd_help(self, args: list[str]) -> None:
        for line in self.t.help_lines():
            self.state.add(line, "info")

    def cmd_quit(self, args: list[str]) -> None:
        self.quit()

    def cmd_lang(self, args: list[str]) -> None:
        if len(args) != 1 or not self.t.set_language(args[0].lower()):
            self.say("msg.lang_bad", "warn")
            return
        self.settings.lang = self.t.lang
        self.save_settings()
        self.say("msg.lang_set")

    def cmd_notify(self, args: list[str]) -> None:
        if len(args) != 1 or args[0].lower() not in ("on", "off", "an", "aus"):
            self.usage("notify")
            return
        self.settings.notifications = args[0].lower() in ("on", "an")
        self.save_settings()
        self.say("msg.notify_on" if self.settings.notifications else "msg.notify_off")

    def cmd_nick(self, args: list[str]) -> None:
        if len(args) != 1 or not 1 <= len(args[0]) <= 20 or args[0].startswith("/"):
            self.say("msg.nick_bad", "warn")
            return
        self.settings.nick = args[0]
        self.save_settings()
        if self.online is not None:
            self.spawn(self._guard(self.online.set_nick(args[0])))
        self.say("msg.nick_set", nick=args[0])

    def cmd_broker(self, args: list[str]) -> None:
        if len(args) != 1 or "://" not in args[0] and ":" not in args[0]:
            self.say("msg.broker_bad", "warn")
            return
        self.settings.broker = args[0] if "://" in args[0] else "mqtt://" + args[0]
        self.save_settings()
        self.say("msg.broker_set", broker=self.settings.broker)

    def cmd_rules(self, args: list[str]) -> None:
        from p2p.shell.rules_text import rules

        name = args[0].lower() if args else None
        if name is None:
            game = self.current_game()
            name = game.name if game is not None else None
        if name is None:
            self.say("msg.rules_none", "warn")
            return
        if name not in GAME_NAMES:
            self.say("msg.unknown_game", "warn", name=name)
            return
        for line in rules(name, self.t.lang):
            self.state.add(line, "info")

    # -- commands: local play -------------------------------------------------------------

    def cmd_play(self, args: list[str]) -> None:
        """``/play GAME [ai|2p] [LEVEL] [key=value ...]``: start a local match."""
        options, words = cmds.parse_options(tuple(args))
        if not words:
            self.usage("play")
            return
        name = words[0].lower()
        aliases = {"4": "connect4", "c4": "connect4", "vier": "connect4", "3d": "cube", "chess": "chess4", "schach": "chess4"}
        name = aliases.get(name, name)
        if name not in GAME_NAMES:
            self.say("msg.unknown_game", "warn", name=words[0])
            return
        known_levels = available_levels(name)
        mode = "2p" if name == "connect4" else "ai"
        level = self.settings.levels.get(name, default_level(name))
        if level not in known_levels:
            level = default_level(name)
        for word in words[1:]:
            low = word.lower()
            if low in ("ai", "computer", "cpu", "ki"):
                mode = "ai"
            elif low in ("2p", "local", "lokal", "zwei", "hotseat"):
                mode = "2p"
            elif low in known_levels:
                mode, level = "ai", low
            else:
                self.say("msg.unknown_level", "warn", level=word, levels=", ".join(known_levels))
                return
        try:
            from p2p.games import create_game

            players = create_game(name, options).players
        except OptionError as err:
            self.say("msg.bad_option", "warn", reason=err)
            return
        if mode == "ai" and not known_levels:
            self.say("msg.no_computer", "warn", game=self.t.game(name))
            return
        if mode == "2p":
            seats = tuple(Seat() for _ in range(players))
        else:
            seats = (Seat(),) + tuple(Seat(level) for _ in range(players - 1))
        self.match = LocalMatch(name, dict(options), seats)
        self.selected = None
        self.settings.levels[name] = level
        self._announce_round()

    def _announce_round(self) -> None:
        match = self.match
        assert match is not None
        self.say(
            "msg.new_round", "round", round=match.round_no, game=self.t.game(match.game_name),
            seat=self.seat_label(match.game, match.starter),
        )
        if match.computer_to_move():
            self._start_computer()

    def cmd_again(self, args: list[str]) -> None:
        if self.online is not None and self.online.game() is not None:
            self.spawn(self._guard(self.online.again()))
            return
        if self.match is None:
            self.say("msg.no_game", "warn")
            return
        if self._thinking:
            self.say("msg.computer_thinking", "warn")
            return
        self.match.another_round()
        self._announce_round()

    def cmd_undo(self, args: list[str]) -> None:
        if self.online is not None and self.online.game() is not None:
            self.say("msg.undo_online", "warn")
            return
        if self.match is None:
            self.say("msg.no_game", "warn")
            return
        if self._thinking:
            self.say("msg.computer_thinking", "warn")
            return
        try:
            taken = self.match.undo()
        except MatchError:
            self.say("msg.undo_decided", "warn")
            return
        if not taken:
            self.say("msg.nothing_to_undo", "warn")
            return
        self.say("msg.undo", moves=", ".join(taken))
        if self.match.computer_to_move():
            self._start_computer()

    def cmd_resign(self, args: list[str]) -> None:
        if self.online is not None and self.online.game() is not None:
            self.spawn(self._guard(self.online.resign()))
            return
        match = self.match
        if match is None or match.game.is_over():
            self.say("msg.no_game", "warn")
            return
        seat = match.seat_to_move()
        if seat is None or match.seats[seat].is_computer:
            self.say("msg.not_your_turn", "warn")
            return
        try:
            match.resign(seat)
        except MoveError as err:
            self.say("msg.bad_move", "warn", move="/resign", reason=err)
            return
        self._round_over()

    def cmd_leave(self, args: list[str]) -> None:
        if self.online is not None and self.online.round_active():
            self.spawn(self._guard(self.online.leave()))
            return
        if self.match is None:
            self.say("msg.no_game", "warn")
            return
        self.match = None
        self.selected = None

    def _finished(self) -> tuple[Any, Game] | None:
        """The finished round to replay or analyse and what holds its replay cursor."""
        if self.online is not None and self.online.game() is not None:
            game = self.online.game()
            return (self.online, game) if game.is_over() else None
        if self.match is not None and self.match.game.is_over():
            return self.match, self.match.game
        return None

    def cmd_replay(self, args: list[str]) -> None:
        finished = self._finished()
        if finished is None:
            self.say("msg.replay_needs_end", "warn")
            return
        holder, game = finished
        step = args[0].lower() if args else "next"
        if step == "stop":
            holder.replay_ply = None
            self.say("msg.replay_stopped")
            return
        if step not in ("start", "prev", "next", "end"):
            self.say("msg.replay_help", "warn")
            return
        holder.replay_ply = replay_step(holder.replay_ply, step, len(game.history()))

    def cmd_level(self, args: list[str]) -> None:
        game = self.current_game()
        name = game.name if game is not None else "connect4"
        known = available_levels(name)
        current = self.settings.levels.get(name, default_level(name))
        if not args:
            self.say("msg.levels", game=self.t.game(name), levels=", ".join(known), level=current)
            return
        level = args[0].lower()
        if level not in known:
            self.say("msg.unknown_level", "warn", level=args[0], levels=", ".join(known))
            return
        self.settings.levels[name] = level
        self.save_settings()
        if self.match is not None and self.match.game_name == name:
            self.match.seats = tuple(Seat(level) if s.is_computer else s for s in self.match.seats)
        self.say("msg.level_set", game=self.t.game(name), level=level)

    def cmd_stats(self, args: list[str]) -> None:
        stats = self.settings.connect4_stats
        if not stats:
            self.say("msg.stats", game=self.t.game("connect4"), level="-", won=0, lost=0, drawn=0)
        for level, entry in sorted(stats.items()):
            self.say(
                "msg.stats", game=self.t.game("connect4"), level=level,
                won=entry.get("won", 0), lost=entry.get("lost", 0), drawn=entry.get("drawn", 0),
            )

    def cmd_select(self, args: list[str]) -> None:
        if len(args) != 1:
            self.usage("select")
            return
        self.selected = args[0].lower()

    def cmd_hint(self, args: list[str]) -> None:
        if self.online is not None and self.online.game() is not None:
            self.say("msg.hint_local_only", "warn")
            return
        game = self.current_game()
        if game is None or game.is_over():
            self.say("msg.no_game", "warn")
            return
        self.spawn(self._hint(game.copy()))

    async def _hint(self, game: Game) -> None:
        try:
            if game.name == "connect4":
                try:
                    from p2p.ai.connect4_ai import hint
                except ImportError:
                    hint = None
                if hint is not None:
                    move = await asyncio.to_thread(hint, game)
                    text = move if isinstance(move, str) else str(getattr(move, "move", move))
                    self.say("msg.hint", move=text)
                    return
            from p2p.ai import choose_move, levels

            level = levels(game.name)[-1] if game.name != "chess4" else levels(game.name)[0]
            move = await asyncio.to_thread(choose_move, game, level, b"hint")
            self.say("msg.hint", move=move)
        except Exception as err:  # noqa: BLE001
            self.internal_error(err)
        finally:
            self.refresh()

    def cmd_analyze(self, args: list[str]) -> None:
        finished = self._finished()
        game = None if finished is None else finished[1]
        if game is None or game.name != "connect4" or not game.is_over():
            self.say("msg.analysis_unavailable", "warn")
            return
        try:
            from p2p.ai.connect4_ai import analyze_round
        except ImportError:
            self.say("msg.analysis_missing", "warn")
            return
        self.say("msg.analysis_running")
        self.spawn(self._analyze(analyze_round, game.copy()))

    async def _analyze(self, analyze_round: Callable[..., Any], game: Game) -> None:
        from p2p.shell.analysis_text import describe

        try:
            options = game.options()
            extra = {} if self.analysis_nodes is None else {"node_limit": self.analysis_nodes}
            result = await asyncio.to_thread(
                analyze_round, [m for m in game.history() if not m.startswith("resign:")],
                int(options["width"]), int(options["height"]), **extra,
            )
            for line in describe(result, game, self.t, self.seat_label):
                self.state.add(line, "info")
        except Exception as err:
            log.exception("analysis failed")
            self.say("msg.analysis_failed", "warn", reason=err)
        finally:
            self.refresh()

    # -- commands: online (delegated) --------------------------------------------------------

    def _need_online(self) -> bool:
        if self.online is None or not self.online.connected():
            self.say("msg.offline_command", "warn")
            return False
        return True

    def cmd_who(self, args: list[str]) -> None:
        for entry in self.state.lobby:
            flag = self.t.t("lobby.you") if entry.me else self.t.t("lobby.busy" if entry.busy else "lobby.free")
            self.state.add(f"{entry.nick} [{entry.fingerprint}] {flag}")
        if not self.state.lobby:
            self.say("lobby.empty")

    def _online_cmd(self, name: str, args: list[str]) -> None:
        if not self._need_online():
            return
        self.online.command(name, args)

    def cmd_invite(self, args: list[str]) -> None:
        if not args:
            self.usage("invite")
            return
        self._online_cmd("invite", args)

    def cmd_accept(self, args: list[str]) -> None:
        self._online_cmd("accept", args)

    def cmd_decline(self, args: list[str]) -> None:
        self._online_cmd("decline", args)

    def cmd_cancel(self, args: list[str]) -> None:
        self._online_cmd("cancel", args)

    def cmd_start(self, args: list[str]) -> None:
        self._online_cmd("start", args)

    def cmd_starter(self, args: list[str]) -> None:
        if len(args) != 1:
            self.usage("starter")
            return
        self._online_cmd("starter", args)

    def cmd_join(self, args: list[str]) -> None:
        if len(args) != 1:
            self.usage("join")
            return
        self._online_cmd("join", args)

    def cmd_connect(self, args: list[str]) -> None:
        starter = getattr(self, "connect_hook", None)
        if starter is None:
            self.say("net.unavailable", "warn")
            return
        starter(None)

    def cmd_local(self, args: list[str]) -> None:
        starter = getattr(self, "local_broker_hook", None)
        if starter is None:
            self.say("net.unavailable", "warn")
            return
        starter()
