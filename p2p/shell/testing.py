"""Driving the real shell headlessly: pipe input in, the rendered screen out.

Used by the tests and the start-up benchmark.  The application runs unchanged inside
``create_app_session`` with a pipe input (``docs/shell.md``)
and a VT100 output into a string buffer of a fixed size; ``screen()`` reads the cells the
renderer last drew (prompt_toolkit keeps them in ``renderer._last_screen``, the one
private attribute used here).
"""

from __future__ import annotations

import asyncio
import io
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

from prompt_toolkit.application import create_app_session
from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output.vt100 import Vt100_Output

from p2p.shell.app import ShellApp
from p2p.shell.settings import Settings
from p2p.shell.startup import make_shell


class HeadlessShell:
    """``async with HeadlessShell(...) as h``: a running shell to type into and read from."""

    def __init__(
        self,
        *,
        config_dir: Path | None = None,
        lang: str = "en",
        color: bool = True,
        rows: int = 24,
        columns: int = 80,
        settings: Settings | None = None,
        broker: str | None = None,
        startup: Callable[[ShellApp], Any] | None = None,
        corrupt_settings: str | None = None,
    ) -> None:
        self.corrupt_settings = corrupt_settings
        self.config_dir = config_dir
        self.lang = lang
        self.color = color
        self.size = Size(rows=rows, columns=columns)
        self.settings = settings or Settings(nick="tester")
        self.broker = broker
        self.startup = startup
        self.raw = io.StringIO()
        self.shell: ShellApp | None = None
        self._task: asyncio.Task[int] | None = None

    async def __aenter__(self) -> HeadlessShell:
        self._pipe_cm = create_pipe_input()
        self.pipe = self._pipe_cm.__enter__()
        output = Vt100_Output(self.raw, lambda: self.size, term="xterm")
        self._session_cm = create_app_session(input=self.pipe, output=output)
        self._session_cm.__enter__()
        self.shell = make_shell(
            settings=self.settings, config_dir=self.config_dir, lang=self.lang,
            broker=self.broker, color=self.color, corrupt_settings=self.corrupt_settings,
        )
        self._task = asyncio.create_task(self.shell.run(self.startup))
        await self.wait_for(lambda: self.app.is_running and self.screen().strip() != "", 5)
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        try:
            if self._task is not None and not self._task.done():
                self.shell.controller.quit()  # type: ignore[union-attr]
                try:
                    await asyncio.wait_for(self._task, 5)
                except (TimeoutError, Exception):  # noqa: BLE001
                    self._task.cancel()
        finally:
            self._session_cm.__exit__(exc_type, exc, tb)
            self._pipe_cm.__exit__(exc_type, exc, tb)

    @property
    def app(self) -> Any:
        assert self.shell is not None
        return self.shell.app

    @property
    def controller(self) -> Any:
        assert self.shell is not None
        return self.shell.controller

    @property
    def exit_code(self) -> int | None:
        """The shell's result once it has ended, else ``None``."""
        if self._task is None or not self._task.done():
            return None
        return self._task.result()

    def send(self, text: str) -> None:
        """Type ``text`` as keys (``\\r`` is Enter)."""
        self.pipe.send_text(text)

    async def type_line(self, text: str, settle: float = 0.05) -> None:
        """Type a line and press Enter, then let the app process it."""
        self.send(text + "\r")
        # generous: on a loaded machine (CI with -n 4 on 2 cores) the Enter can wait seconds
        await self.wait_for(lambda: self.shell is not None and self.shell.input.text == "", 10)
        await asyncio.sleep(settle)

    def screen(self) -> str:
        """The text of the screen as last rendered, one line per row, right-stripped."""
        renderer = self.app.renderer
        screen = getattr(renderer, "_last_screen", None)
        if screen is None:
            return ""
        rows = []
        for y in range(self.size.rows):
            row = screen.data_buffer[y]
            rows.append("".join(row[x].char for x in range(self.size.columns)).rstrip())
        return "\n".join(rows)

    async def wait_for(self, predicate: Callable[[], bool], timeout: float = 15.0) -> None:
        """Poll ``predicate`` until true; ``TimeoutError`` with the screen if it never is."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                if predicate():
                    return
            except Exception:  # noqa: BLE001, S110 - state may be half-built while polling
                pass
            if time.monotonic() > deadline:
                raise TimeoutError("condition not met; screen:\n" + self.screen())
            await asyncio.sleep(0.02)

    async def wait_screen(self, text: str, timeout: float = 15.0) -> str:
        """Wait until ``text`` appears on the rendered screen; returns the screen."""
        await self.wait_for(lambda: text in self.screen(), timeout)
        return self.screen()
