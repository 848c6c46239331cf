"""The shell's brain: executes input lines against local matches and the online session.

No prompt_toolkit here.  The app hands in four callables: ``spawn(coro)`` to run a
background task, ``refresh()`` to repaint, ``quit()`` to leave and ``notify(title,
body)`` to get the user's attention.  This module parses and dispatches lines, chat and
moves, the status line, settings and online commands; local play (the match at this
keyboard, the computer's turns and its commands) is a part it owns, ``self.local``
(``p2p.shell.local_commands.LocalPlay``).  Every command handler either changes state or adds
exactly one clear line; exceptions never escape ``handle_line`` (they are logged to the
file in the config dir and shown as one line).
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from p2p.games import Game, canonical_name, game_names
from p2p.shell import commands as cmds
from p2p.shell import move_input
from p2p.shell import settings as settings_mod
from p2p.shell.game_view import rules, view_for
from p2p.shell.i18n import Translator
from p2p.shell.local import LocalMatch
from p2p.shell.local_commands import LocalPlay
from p2p.shell.settings import Settings
from p2p.shell.state import ShellState

log = logging.getLogger("p2p.shell")

Spawn = Callable[[Coroutine[Any, Any, Any]], object]


class Controller:
    """Executes commands and moves; owns the local match and its play (``local``) and talks
    to the online session."""

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
        self._quit_asked: float | None = None
        """When ``/quit`` last asked for confirmation (a running online round)."""
        self.log_path: Path | None = None
        self.analysis_nodes: int | None = None
        """Node budget per position for /analyze; ``None``: the analyser's default."""
        self.connect_hook: Callable[[str | None], object] | None = None
        """Connects to the brokers named (``None``: those of the settings); set by
        ``p2p.shell.connect`` where the network is available."""
        self.session_brokers = ""
        """The brokers this session last connected to (``--broker``, ``/connect URL``): a
        plain ``/connect`` goes back to them, never to brokers the user did not choose."""
        self.local_broker_hook: Callable[[], object] | None = None
        """Starts a broker on this machine with a computer in its lobby (``/local``)."""
        self.local = LocalPlay(self)
        """Local play: the commands this class does not answer itself go there."""

    # -- the game being shown ----------------------------------------------------------

    def current_game(self) -> Game | None:
        """The position on the board pane (online round first, then local match)."""
        if self.online is not None:
            game = self.online.shown_game()  # (also a running round a forming one covers)
            if game is not None:
                return game
        if self.match is not None:
            return self.match.shown_game()
        return None

    def is_move(self, text: str) -> bool:
        """Whether ``text`` has the shape of a move of the game shown (legal or not).

        A move-shaped line is never chat: it is played or refused with one line.
        """
        game = self.current_game()
        if game is None:  # a lone number with no game on the board: a move typed too soon,
            return text.strip().isdigit() and len(text.strip()) <= 2  # never lobby chat
        return move_input.looks_like_move(game.name, text)

    def show_legal(self) -> bool:
        """Whether the house rule "show legal moves" is on for the game shown."""
        game = self.current_game()
        return bool(game is not None and game.options().get("show_legal", False))

    def single_key_moves(self) -> bool:
        """True when a lone digit key is a move at once (a running Connect Four round).

        Also while it is not our turn: the digit is then refused with a notice instead
        of waiting in the input line to become chat with the next key (``65``).  Boards
        wider than 9 columns need two digits, so they type a line instead.
        """
        game = self.current_game()
        if game is None or game.is_over():
            return False
        single_key = view_for(game.name).single_key
        if single_key is None or not single_key(game):
            return False
        if self.online is not None and self.online.game() is not None:
            return not self.online.round.is_over
        return self.match is not None and self.match.replay_ply is None

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
                self.handler(parsed.name)(list(parsed.args))
        except Exception as err:  # noqa: BLE001 - no traceback ever reaches the screen
            self.internal_error(err)
        finally:
            self.refresh()

    def handler(self, name: str) -> Callable[[list[str]], None]:
        """The handler of the known command ``name``: the online session's (through
        ``_online_cmd``), the controller's own, else local play's."""
        if name in self.ONLINE_COMMANDS:
            return functools.partial(self._online_cmd, name)
        found: Callable[[list[str]], None] = getattr(self, f"cmd_{name}", None) or getattr(
            self.local, f"cmd_{name}"
        )
        return found

    def internal_error(self, err: BaseException) -> None:
        """Log ``err`` with its traceback to the log file and show one line."""
        log.exception("internal error: %s", err)
        self.say("msg.internal_error", "error", path=str(self.log_path or "-"))

    def say(self, key: str, kind: str = "info", **fields: object) -> None:
        """Add a catalogue line to the chat pane."""
        self.state.add(self.t.t(key, **fields), kind)  # type: ignore[arg-type]

    def usage(self, name: str) -> None:
        self.say("msg.usage", "warn", usage=cmds.usage(name))

    # -- chat ---------------------------------------------------------------------------------

    def chat(self, text: str) -> None:
        """Send chat to the round (when in one) or the lobby; offline it is only echoed.

        A line longer than the protocol's ``MAX_CHAT`` is cut there: the sender is told
        how much went out (never silently)."""
        from p2p.protocol.chat import clean_line
        from p2p.protocol.events import MAX_CHAT
        from p2p.protocol.identity import strip_controls

        whole = strip_controls(text).strip()
        if len(whole) > MAX_CHAT:
            text = clean_line(whole)
            self.say("msg.chat_cut", "warn", sent=len(text), total=len(whole))
        if self.online is not None and self.online.connected():
            self.spawn(self.guard(self.online.send_chat(text)))
            return
        me = self.settings.nick or self.t.t("msg.you")
        self.state.add(text, "chat", sender=me)
        self.say("msg.chat_offline")

    async def guard(self, coro: Coroutine[Any, Any, Any]) -> None:
        """Run a background coroutine; failures become one line, never a crash."""
        try:
            await coro
        except Exception as err:
            log.exception("background task failed")
            self.state.add(self.t.t("net.error", reason=self.t.reason(err) or type(err).__name__), "error")
        self.refresh()

    # -- moves ----------------------------------------------------------------------------

    def play(self, text: str) -> None:
        """A person's move in the running round (local or online): a move or one line."""
        board = self.online.board_round() if self.online is not None else None
        if board is not None and board.game is not None:
            rnd = board  # the shown round, or the running one a forming round of ours covers
            if rnd.is_over or rnd.game.is_over():
                self.say("msg.game_over", "warn")
            elif (off := move_input.off_board(rnd.game, text)) is not None:
                self.say(off.key, "warn", **off.fields)  # the board before the turn
            elif not rnd.is_my_turn:
                self.say("move.not_your_turn", "warn", move=text)
            else:
                move = self.resolve(rnd.game, text)
                if move is not None:
                    self.selected = None
                    self.online.play(move)
            return
        self.local.play(text)

    def resolve(self, game: Game, text: str) -> str | None:
        """The move a typed line means, or ``None`` after one line (error or selection)."""
        outcome = move_input.resolve(game, text, self.selected, self.t.t("piece.letters"))
        if isinstance(outcome, move_input.Refused):
            fields = dict(outcome.fields)
            if isinstance(fields.get("piece"), int):
                fields["piece"] = self.t.t(f"piece.{fields['piece']}")
            self.say(outcome.key, "warn", **fields)
            return None
        if isinstance(outcome, move_input.Select):
            self.selected = outcome.square
            self.say("move.selected", piece=self.t.t(f"piece.{outcome.piece}"), square=outcome.square)
            return None
        return outcome.move

    def click(self, move: str) -> None:
        """A board click: select a chess square, or play the clicked column/pillar."""
        game = self.current_game()
        if game is not None and view_for(game.name).click_selects:
            if self.selected and self.selected != move:
                self.handle_line(f"{self.selected}-{move}")
            else:
                self.selected = move
                self.refresh()
            return
        self.handle_line(move)

    # -- labels ------------------------------------------------------------------------------

    def seat_label(self, game: Game, seat: int) -> str:
        names = game.seat_names()
        name = self.t.seat(names[seat]) if seat < len(names) else str(seat + 1)
        if self.online is not None and self.online.game() is not None:
            return self.online.seat_label(seat, name)
        if self.match is not None and self.match.seats[seat].is_computer:
            return self.t.t("seat.computer", seat=name, level=self.t.level(self.match.seats[seat].level or ""))
        return name

    def ranking_text(self, game: Game, out: set[int] | None = None) -> str:
        """Four-player chess: the players ranked by the game's rule ("1. Red (you) 12 points
        · 2. …"; equal places shared, at equal points a resigner below), those out marked; a result in chess4 is a
        ranking, not a list of winners (all at 0 points "won" together)."""
        scores = game.scores()
        gone = set(out or ()) | set(getattr(game, "eliminated", lambda: ())())
        places = getattr(game, "ranks", None)  # the game's rule: at equal points a resigner ranks below
        ranks = places() if places is not None else tuple(1 + sum(1 for o in scores if o > p) for p in scores)
        order = sorted(range(len(scores)), key=lambda s: (ranks[s], s in gone, s))  # at equal places: in before out
        parts = []
        for seat in order:
            rank = ranks[seat]
            text = self.t.t("result.rank", rank=rank, seat=self.seat_label(game, seat), points=scores[seat])
            parts.append(text + (" " + self.t.t("result.out") if seat in gone else ""))
        return self.t.t("result.ranking", ranks=" · ".join(parts))

    def result_text(self, game: Game) -> str:
        if view_for(game.name).ranking:
            return self.ranking_text(game)
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
        head, tail = self.status_parts()
        return " · ".join(part for part in (head, tail) if part)

    def status_parts(self) -> tuple[str, str]:
        """The status line as (what may be shortened, what is kept whole: the score and
        the connection), for ``p2p.shell.wrap.fit_status``."""
        parts: list[str] = []
        tail: list[str] = []
        forming = self.online.forming_text() if self.online is not None else None
        if self.online is not None and self.online.game() is not None:
            text, score = self.online.status_parts()
            parts.append(text)
            if score:
                tail.append(score)
        elif forming:
            parts.append(forming)
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
            tail.append(self.t.t("status.score", score=self.score_text(match)))
        else:
            parts.append(self.t.t("status.idle"))
        if self.state.connection:
            tail.append(self.state.connection)
        return " · ".join(parts), " · ".join(tail)

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
        # the description on a row of its own (a tab: the chat's wrap starts a row there):
        # padded into a column, a short entry's description stood at the right edge
        for cmd, meaning in self.t.help_lines():
            self.state.add(f"{cmd}\t{meaning}", "info")

    QUIT_CONFIRM_S = 30.0
    """A second ``/quit`` within this many seconds leaves a running online round's shell."""

    def cmd_quit(self, args: list[str]) -> None:
        """Leave the shell; in a running online round where we hold a seat, ask first and
        say how long there is to come back before the turn timeout."""
        now = self.clock()
        if self.online is not None and self.online.holds_running_seat() \
                and (self._quit_asked is None or now - self._quit_asked > self.QUIT_CONFIRM_S):
            self._quit_asked = now
            secs = self.online.offline_grace_s()
            self.say("msg.quit_confirm", "warn", secs=secs)
            return
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
            self.spawn(self.guard(self.online.set_nick(args[0])))
        self.say("msg.nick_set", nick=args[0])

    def cmd_broker(self, args: list[str]) -> None:
        """``/broker URL [URL ...]``: one broker, or several used at once."""
        from p2p.config import check_broker_urls

        try:
            urls = check_broker_urls(args)
        except ValueError as err:
            self.say("msg.broker_bad", "warn", url=getattr(err, "word", "") or " ".join(args))
            return
        self.settings.broker = " ".join(urls)
        self.save_settings()
        self.say("msg.broker_set", broker=self.settings.broker)

    def cmd_namespace(self, args: list[str]) -> None:
        """``/namespace [NAME]``: show or change the lobby to meet in (saved); a change
        reconnects at once, but never in the middle of a round (its topics live there)."""
        current = self.settings.namespace or "public"
        if not args:
            self.say("msg.namespace_is", namespace=current)
            return
        from p2p.config import check_namespace

        wanted = args[0].strip()
        try:
            check_namespace(wanted)
        except ValueError:
            self.say("msg.namespace_bad", "warn", namespace=wanted)
            return
        if len(args) != 1:
            self.usage("namespace")
            return
        if self.online is not None and self.online.holds_running_seat():
            self.say("msg.namespace_busy", "warn")
            return
        self.settings.namespace = "" if wanted == "public" else wanted
        self.save_settings()
        self.say("msg.namespace_set", namespace=wanted)
        hook = self.connect_hook
        if self.online is not None and hook is not None:
            brokers = " ".join(url for url, _ok in self.online.peer.brokers())
            hook(brokers or None)  # the lobby of the new namespace, on the same brokers

    def cmd_rules(self, args: list[str]) -> None:
        name = args[0].lower() if args else None
        if name is None:
            game = self.current_game()
            name = game.name if game is not None else None
        if name is None:
            self.say("msg.rules_none", "warn", known=" · ".join(game_names()))
            return
        known = canonical_name(name)
        if known is None:
            self.say("msg.unknown_game", "warn", name=name, known=", ".join(game_names()))
            return
        for line in rules(known, self.t.lang):
            self.state.add(line, "info")

    # -- commands: online (delegated) --------------------------------------------------------

    def _need_online(self) -> bool:
        if self.online is None or not self.online.connected():
            self.say("msg.offline_command", "warn")
            return False
        return True

    def cmd_who(self, args: list[str]) -> None:
        for entry in self.state.lobby:
            flag = self.t.t("lobby.you") if entry.me else self.t.t("lobby.busy" if entry.busy else "lobby.free")
            mark = "★ " if entry.friend else ""
            warn = " " + self.t.t("lobby.impostor", friend=entry.impostor) if entry.impostor else ""
            clock = self._clock_text(entry.clock_ms)
            self.state.add(f"{mark}{entry.nick} [{entry.fingerprint}] {flag}{clock}{warn}",
                           "warn" if warn else "info")
        if not self.state.lobby:
            self.say("lobby.empty")

    def _clock_text(self, offset_ms: int) -> str:
        """`` · Uhr 14 min vor`` for a peer whose clock is off by more than a few seconds."""
        from p2p.protocol.clocks import SHOWN_MS, about

        if abs(offset_ms) < SHOWN_MS:
            return ""
        amount, unit = about(offset_ms)
        key = "lobby.clock_ahead" if offset_ms > 0 else "lobby.clock_behind"
        return " · " + self.t.t(key, amount=amount, unit=unit)

    ONLINE_COMMANDS: dict[str, tuple[int, int | None]] = {
        "friend": (0, None), "unfriend": (0, None), "friends": (0, None),
        "takeover": (0, None), "accept": (0, None), "decline": (0, None),
        "cancel": (0, None), "start": (0, None), "starter": (1, 1),
        "invite": (1, None), "private": (1, None),
        "join": (1, None),  # "K7M Q2P" arrives as two words: joined there
    }
    """The commands the online session answers (``OnlineSession.command``): name to the
    fewest and most words it takes (``None``: any number); outside that, the usage line."""

    def _online_cmd(self, name: str, args: list[str]) -> None:
        fewest, most = self.ONLINE_COMMANDS[name]
        if len(args) < fewest or (most is not None and len(args) > most):
            self.usage(name)
            return
        if not self._need_online():
            return
        self.online.command(name, args)

    def cmd_rounds(self, args: list[str]) -> None:
        """``/rounds`` lists the held rounds; ``/rounds N`` shows round N."""
        if self.online is None:
            self.say("msg.offline_command", "warn")
            return
        self.online.rounds.command(args)

    def cmd_connect(self, args: list[str]) -> None:
        starter = self.connect_hook
        if starter is None:
            self.say("net.unavailable", "warn")
            return
        starter(None)

    def cmd_local(self, args: list[str]) -> None:
        starter = self.local_broker_hook
        if starter is None:
            self.say("net.unavailable", "warn")
            return
        starter()
