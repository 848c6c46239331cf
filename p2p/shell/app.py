"""The full-screen application: layout, keys, completion; state lives in the controller.

Layout (prompt_toolkit's calculator/split-screen pattern)::

    ┌ Lobby (n online) ┐┌ Board ───────┐
    │ alice [3f2a] frei ││  · · ● · · · │
    └──────────────────┘│  ...          │
    ┌ Chat ────────────┐│               │
    │ 12:01 bob: hi    ││               │
    └──────────────────┘└───────────────┘
    Runde 1 · Am Zug: Rot · Stand 0:0
    > _

The board pane takes the width its game needs; the lobby and chat take the rest, so a
wider terminal gives the chat more room.  Everything shown is computed from state on
each render; background tasks call ``invalidate()``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prompt_toolkit.application import Application
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.data_structures import Point
from prompt_toolkit.document import Document
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.history import FileHistory, History, InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.layout import HSplit, Layout, VSplit, Window
from prompt_toolkit.layout.controls import FormattedTextControl, UIContent
from prompt_toolkit.layout.dimension import Dimension
from prompt_toolkit.output import ColorDepth
from prompt_toolkit.styles import Style
from prompt_toolkit.widgets import Frame, TextArea

from p2p.games import game_names
from p2p.shell import boards
from p2p.shell import commands as cmds
from p2p.shell.controller import Controller
from p2p.shell.i18n import Translator
from p2p.shell.notify import (
    FOCUS_IN_KEY,
    FOCUS_OFF,
    FOCUS_ON,
    FOCUS_OUT_KEY,
    Notifier,
    install_focus_keys,
)
from p2p.shell.settings import Settings
from p2p.shell.state import MAX_LINES, ShellState
from p2p.shell.wrap import display_width, fit_status, terminal_safe, wrap_fragments

log = logging.getLogger("p2p.shell")

STYLE = Style.from_dict(
    {
        "status": "reverse",
        "time": "fg:ansibrightblack",
        "sender": "bold",
        "me": "bold fg:ansicyan",
        "warn": "fg:ansiyellow",
        "error": "fg:ansired bold",
        "round": "fg:ansicyan",
        "invite": "bold reverse",
        "lobby.busy": "fg:ansibrightblack",
        "lobby.me": "bold",
        "lobby.impostor": "bold fg:ansired",
    }
)
MAX_INPUT_ROWS = 5
"""The input line grows to this many rows for a long line (a chat line of ``MAX_CHAT``
characters fits at 80 columns), so the prompt stays in sight."""
KIND_STYLE = {"warn": "class:warn", "error": "class:error", "round": "class:round", "invite": "class:invite"}


@dataclass
class ShellOptions:
    """How the shell was started (command-line options after settings are applied)."""

    nick: str
    broker: str | None
    """``None``: local play only."""
    lang: str
    color: bool = True
    config_dir: Path | None = None
    settings: Settings | None = None


def _safe(view: Callable[..., Any], fallback: Callable[[], Any]) -> Callable[..., Any]:
    """Wrap a render callable: an error is logged once per message and drawn as one line.

    A bug in a board renderer must never take the whole screen (or a traceback) with it.
    """
    seen: set[str] = set()

    def wrapped(*args: Any) -> Any:
        try:
            return view(*args)
        except Exception as err:
            key = f"{type(err).__name__}: {err}"
            if key not in seen:
                seen.add(key)
                log.exception("render failed: %s", key)
            return fallback()

    return wrapped


class SizedTextControl(FormattedTextControl):
    """A ``FormattedTextControl`` whose text callable may read the width it is drawn at
    (``self.width``), so the chat can be word-wrapped by the shell itself."""

    width = 80

    def create_content(self, width: int, height: int | None) -> UIContent:
        if width != self.width:
            self.width = width
            self._fragment_cache.clear()
        return super().create_content(width, height)


class ShellCompleter(Completer):
    """Completes command names, then nicknames, games, levels and languages."""

    def __init__(self, controller: Controller) -> None:
        self.controller = controller

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        text = document.text_before_cursor
        word = document.get_word_before_cursor(WORD=True)
        if text.startswith("/") and " " not in text:
            for name in cmds.COMMANDS:
                if name.startswith(text[1:].lower()):
                    yield Completion("/" + name, start_position=-len(text))
            return
        candidates = [e.nick for e in self.controller.state.lobby if not e.me]
        if text.startswith("/"):
            head = cmds.canonical(text[1:].split()[0]) or ""
            if head in ("play", "invite", "private", "rules"):
                candidates += list(game_names())
            if head in ("play", "level"):
                from p2p.ai import levels

                for game in game_names():
                    try:
                        candidates += [self.controller.t.level(lv) for lv in levels(game)]
                    except ImportError:
                        pass
            if head == "lang":
                candidates = ["de", "en"]
            if head == "notify":
                candidates = ["on", "off"]
            if head == "replay":
                candidates = ["start", "prev", "next", "end", "stop"]
            if head == "starter":
                candidates.append("draw")
        seen: set[str] = set()
        for cand in candidates:
            if cand not in seen and cand.lower().startswith(word.lower()) and word:
                seen.add(cand)
                yield Completion(cand, start_position=-len(word))


class ShellApp:
    """Builds the application around a controller and runs it."""

    def __init__(self, options: ShellOptions, history: History | None = None) -> None:
        self.options = options
        self.settings = options.settings or Settings()
        self.t = Translator(options.lang)
        self.state = ShellState()
        self.chat_scroll = 0
        """Rows the chat is scrolled up from its end (PageUp/PageDown)."""
        self.chat_rows = 0
        self._wrapped: dict[tuple[Any, int], list[StyleAndTextTuples]] = {}
        """Word-wrapped rows per (chat line, width)."""
        """Rows the word-wrapped chat took at the last render."""
        self.lobby_control = SizedTextControl(lambda: self._lobby())
        self.chat_control = SizedTextControl(lambda: self._chat(), get_cursor_position=lambda: self._chat_cursor())
        self.controller = Controller(
            state=self.state,
            settings=self.settings,
            settings_dir=options.config_dir,
            translator=self.t,
            spawn=self._spawn,
            refresh=self._refresh,
            quit=self._quit,
            notify=self._notify,
        )
        if options.config_dir is not None:
            self.controller.log_path = options.config_dir / "shell.log"
        install_focus_keys()
        if history is None:
            history = (
                FileHistory(str(options.config_dir / "history"))
                if options.config_dir is not None else InMemoryHistory()
            )
        self.input = TextArea(
            # a line wider than the screen wraps inside the input (up to 4 rows), so the
            # "> " prompt never scrolls out of sight
            height=1,
            prompt="> ",
            multiline=False,
            wrap_lines=True,
            history=history,
            completer=ShellCompleter(self.controller),
            complete_while_typing=False,
            accept_handler=self._accept,
        )
        self.input.buffer.on_text_changed += self._text_changed
        # TextArea fixes a single-line input at one row; let it grow instead
        self.input.window.height = lambda: Dimension.exact(self._input_rows())
        self.app: Application[int] = Application(
            layout=Layout(self._container(), focused_element=self.input),
            key_bindings=self._keys(),
            style=STYLE if options.color else Style([]),
            full_screen=True,
            mouse_support=True,
            color_depth=None if options.color else ColorDepth.DEPTH_1_BIT,
        )
        self.notifier = Notifier(self._write_raw, lambda: self.settings.notifications)
        self.tasks: set[asyncio.Task[Any]] = set()
        self.on_exit: list[Callable[[], Coroutine[Any, Any, None]]] = []
        """Clean-up coroutines run after the screen closes, newest first (peer, broker)."""

    # -- plumbing for the controller ------------------------------------------------------

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> object:
        task = asyncio.get_running_loop().create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    def _refresh(self) -> None:
        self.app.invalidate()

    def _quit(self) -> None:
        if self.app.is_running and not self.app.future.done():  # type: ignore[union-attr]
            self.app.exit(result=0)

    def _notify(self, title: str, body: str) -> None:
        self.notifier.attention(title, body)

    def _write_raw(self, data: str) -> None:
        try:
            self.app.output.write_raw(data)
            self.app.output.flush()
        except Exception:
            log.exception("could not write to the terminal")

    def _accept(self, buffer: Any) -> bool:
        self.chat_scroll = 0
        self.input.window.horizontal_scroll = 0
        self.input.window.vertical_scroll = 0
        self.controller.preview = ""  # the buffer's reset fires no text-changed event
        self.controller.handle_line(buffer.text)
        return False

    def _input_rows(self) -> int:
        """Rows the wrapped input line needs (prompt included), at most ``MAX_INPUT_ROWS``."""
        try:
            columns = max(10, self.app.output.get_size().columns)
        except Exception:  # noqa: BLE001 - no output yet
            return 1
        used = 2 + display_width(self.input.text) + 1
        return max(1, min(MAX_INPUT_ROWS, -(-used // columns)))

    def _text_changed(self, _buffer: Any) -> None:
        text = self.input.text
        safe = terminal_safe(text)
        if safe != text:  # emoji sequences terminals draw at another width: base characters
            cursor = len(terminal_safe(text[: self.input.buffer.cursor_position]))
            self.input.buffer.set_document(Document(safe, cursor_position=cursor), bypass_readonly=True)
            return
        self.controller.preview = text.strip()

    # -- views ----------------------------------------------------------------------------------

    def _lobby_title(self) -> str:
        if not self.state.online:
            return self.t.t("pane.lobby.offline")
        namespace = self.settings.namespace
        if namespace:  # a lobby of its own: say which, so nobody wonders where everyone is
            return self.t.t("pane.lobby.ns", namespace=namespace, count=len(self.state.lobby))
        return self.t.t("pane.lobby", count=len(self.state.lobby))

    def _lobby(self) -> StyleAndTextTuples:
        out: StyleAndTextTuples = []
        if not self.state.lobby:  # a sentence: wrapped between words like the chat, never cut
            note = self.t.t("lobby.empty" if self.state.online else "lobby.offline")
            rows = wrap_fragments([("class:lobby.busy", note)], self.lobby_control.width, indent=1)
            return [frag for index, row in enumerate(rows) for frag in ([("", "\n")] if index else []) + row]
        for entry in self.state.lobby:
            if entry.me:
                flag, style = self.t.t("lobby.you"), "class:lobby.me"
            elif entry.busy:
                flag, style = self.t.t("lobby.busy"), "class:lobby.busy"
            else:
                flag, style = self.t.t("lobby.free"), ""
            mark = "★ " if entry.friend else ""
            out.append((style, f"{mark}{terminal_safe(entry.nick)} [{entry.fingerprint}] {flag}"))
            if entry.impostor:
                warning = self.t.t("lobby.impostor", friend=terminal_safe(entry.impostor))
                out.append(("class:lobby.impostor", " " + warning))
            out.append((style, "\n"))
        return out

    def _chat(self) -> StyleAndTextTuples:
        """Chat lines word-wrapped to the pane (never in the middle of a word)."""
        width = self.chat_control.width
        out: StyleAndTextTuples = []
        rows = 0
        if len(self._wrapped) > 4 * MAX_LINES:
            self._wrapped.clear()
        for line in self.state.lines:
            rows_of = self._wrapped.get((line, width))
            if rows_of is None:  # wrapped once per line and width, not on every render
                frags: StyleAndTextTuples = [("class:time", line.clock + " ")]
                if line.sender:
                    frags.append(("class:sender", terminal_safe(line.sender) + ": "))
                frags.append((KIND_STYLE.get(line.kind, ""), terminal_safe(line.text)))
                rows_of = self._wrapped[(line, width)] = wrap_fragments(frags, width)
            for row in rows_of:
                out.extend(row)
                out.append(("", "\n"))
                rows += 1
        if out:
            out.pop()
        self.chat_rows = rows
        return out

    def _chat_cursor(self) -> Point:
        return Point(0, max(0, self.chat_rows - 1 - self.chat_scroll))

    def _board(self) -> StyleAndTextTuples:
        game = self.controller.current_game()
        online = self.controller.online
        draw = online.draw_lines() if online is not None else []
        if game is None:
            if draw:
                return self._board_lines(draw, 28)
            return [("", self.t.t("board.none"))]
        view = boards.BoardView(
            color=self.options.color,
            preview=self.controller.preview or None,
            selected=self.controller.selected,
            show_legal=self.controller.show_legal(),
            on_click=self.controller.click,
        )
        picture = boards.render(game, view, self.t)
        if draw:  # until the first move: the draw that chose the starter
            picture = [*picture, ("", "\n"), *self._board_lines(draw, max(boards.width(game), boards.MIN_WIDTH))]
        return picture

    def _board_lines(self, lines: list[str], width: int) -> StyleAndTextTuples:
        """Plain lines for the board pane, word-wrapped to ``width``."""
        out: StyleAndTextTuples = []
        for line in lines:
            for row in wrap_fragments([("class:round", line)], width):
                out.extend(row)
                out.append(("", "\n"))
        return out

    def _board_width(self) -> Dimension:
        game = self.controller.current_game()
        if game is None:
            return Dimension(preferred=30, max=34)
        return Dimension.exact(max(boards.width(game), boards.MIN_WIDTH) + 2)

    def _board_title(self) -> str:
        game = self.controller.current_game()
        return self.t.game(game.name) if game is not None else self.t.t("pane.board")

    def _status_rows(self) -> list[str]:
        """The status line broken into rows (between its parts, never in a word)."""
        try:
            columns = max(10, self.app.output.get_size().columns)
        except Exception:  # noqa: BLE001 - no output yet
            columns = 80
        head, tail = self.controller.status_parts()
        return fit_status(terminal_safe(head), columns - 2, keep=terminal_safe(tail))

    def _status(self) -> StyleAndTextTuples:
        return [("class:status", "\n".join(" " + row for row in self._status_rows()))]

    def _status_height(self) -> int:
        try:
            return max(1, len(self._status_rows()))
        except Exception:  # noqa: BLE001 - a display aid
            return 1

    def _container(self) -> HSplit:
        error = lambda: [("class:error", self.t.t("msg.render_error"))]
        self._lobby = _safe(self._lobby, error)  # type: ignore[method-assign]
        self._chat = _safe(self._chat, error)  # type: ignore[method-assign]
        self._board = _safe(self._board, error)  # type: ignore[method-assign]
        self._status = _safe(self._status, error)  # type: ignore[method-assign]
        self._board_width = _safe(self._board_width, lambda: Dimension(preferred=30))  # type: ignore[method-assign]
        self._board_title = _safe(self._board_title, lambda: "?")  # type: ignore[method-assign]
        self._lobby_title = _safe(self._lobby_title, lambda: "?")  # type: ignore[method-assign]
        lobby = Frame(
            Window(self.lobby_control, wrap_lines=False),
            title=self._lobby_title,
            height=Dimension(min=3, max=8, preferred=6),
        )
        chat = Frame(
            Window(self.chat_control, wrap_lines=False),
            title=self.t.t("pane.chat"),
        )
        board = Frame(
            Window(FormattedTextControl(self._board), wrap_lines=False),
            title=self._board_title,
            width=self._board_width,
        )
        return HSplit(
            [
                VSplit([HSplit([lobby, chat]), board]),
                Window(FormattedTextControl(self._status), height=lambda: Dimension.exact(self._status_height()),
                       style="class:status", wrap_lines=False),
                self.input,
            ]
        )

    # -- keys ---------------------------------------------------------------------------------

    def _keys(self) -> KeyBindings:
        kb = KeyBindings()

        @kb.add("c-q")
        @kb.add("c-c")
        def _exit(event: KeyPressEvent) -> None:
            self._quit()

        @kb.add(FOCUS_IN_KEY)
        def _focus_in(event: KeyPressEvent) -> None:
            self.notifier.set_focus(True)

        @kb.add(FOCUS_OUT_KEY)
        def _focus_out(event: KeyPressEvent) -> None:
            self.notifier.set_focus(False)

        @kb.add("pageup")
        def _up(event: KeyPressEvent) -> None:
            self.chat_scroll = min(max(0, self.chat_rows - 1), self.chat_scroll + 5)

        @kb.add("pagedown")
        def _down(event: KeyPressEvent) -> None:
            self.chat_scroll = max(0, self.chat_scroll - 5)

        single = Condition(lambda: self.input.text == "" and self.controller.single_key_moves())
        for digit in "0123456789":

            @kb.add(digit, filter=single)
            def _column(event: KeyPressEvent, digit: str = digit) -> None:
                self.controller.handle_line(digit)

        return kb

    # -- running ------------------------------------------------------------------------------

    async def run(self, startup: Callable[[ShellApp], Coroutine[Any, Any, None]] | None = None) -> int:
        """Run until the user quits; ``startup`` runs as a background task once started."""

        def started() -> None:
            self._write_raw(FOCUS_ON)
            if startup is not None:
                self._spawn(self._guarded_startup(startup))

        self.app.pre_run_callables.append(started)
        loop = asyncio.get_running_loop()
        previous = loop.get_exception_handler()
        loop.set_exception_handler(self._loop_exception)
        try:
            result = await self.app.run_async(set_exception_handler=False)
        finally:
            self._write_raw(FOCUS_OFF)
            for cleanup in reversed(self.on_exit):
                try:
                    await asyncio.wait_for(cleanup(), 5)
                except Exception:
                    log.exception("clean-up failed")
            for task in list(self.tasks):
                task.cancel()
            if self.tasks:
                await asyncio.gather(*self.tasks, return_exceptions=True)
            loop.set_exception_handler(previous)
        return int(result or 0)

    def _loop_exception(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        """Errors of background tasks go to the log file and one line, never the screen."""
        err = context.get("exception")
        log.error("unhandled in the event loop: %s", context.get("message"), exc_info=err)
        if isinstance(err, BaseException):
            self.controller.internal_error(err)
        self._refresh()

    async def _guarded_startup(self, startup: Callable[[ShellApp], Coroutine[Any, Any, None]]) -> None:
        try:
            await startup(self)
        except asyncio.CancelledError:
            raise
        except Exception as err:  # noqa: BLE001
            self.controller.internal_error(err)
        self._refresh()
