"""Helpers for the browser-face tests: ``p2p web`` as a process, Debian's Chromium through
Playwright (the system browser, nothing downloaded), and a PNG's colours counted.

Without Chromium or Playwright the browser tests are skipped with a clear message, except
in CI (env ``CI``), where the README's test command installs both and a missing one fails.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import struct
import sys
import zlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--no-first-run", "--disable-sync",
]
URL_LINE = re.compile(r"p2p web: (http://\S+)")


def require_browser() -> None:
    problem = None
    if not Path(CHROMIUM).exists():
        problem = "Debian's Chromium is not installed (apt-get install chromium)"
    else:
        try:
            import playwright  # noqa: F401
        except ImportError:
            problem = "playwright is not installed (pip install -e '.[test]')"
    if problem is None:
        return
    if os.environ.get("CI"):
        pytest.fail(problem + " -- and CI is set, so this is an error", pytrace=False)
    pytest.skip(problem)


class WebProcess:
    """``p2p web --no-open`` as a process with its own config dir; ``url`` is the link."""

    def __init__(self, proc: asyncio.subprocess.Process, url: str, config_dir: Path) -> None:
        self.proc = proc
        self.url = url
        self.config_dir = config_dir
        match = re.match(r"http://([^/]+)/\?t=(\S+)", url)
        assert match is not None, url
        self.host, self.secret = match.group(1), match.group(2)
        self.port = int(self.host.rsplit(":", 1)[1])

    @property
    def base(self) -> str:
        return f"http://{self.host}"


@contextlib.asynccontextmanager
async def web_process(config_dir: Path, *args: str) -> AsyncIterator[WebProcess]:
    """Start ``p2p web --no-open ARGS`` and wait for its link; stop it (SIGTERM) after."""
    config_dir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, P2P_CONFIG_DIR=str(config_dir))
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "p2p", "web", "--no-open", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env,
    )
    try:
        assert proc.stdout is not None
        line = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode()
        match = URL_LINE.search(line)
        if match is None:
            err = (await proc.stderr.read()).decode() if proc.stderr else ""  # type: ignore[union-attr]
            raise AssertionError(f"p2p web printed no link: {line!r} {err[-2000:]}")
        yield WebProcess(proc, match.group(1), config_dir)
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(proc.wait(), 15)
            except TimeoutError:
                proc.kill()
                await proc.wait()


@contextlib.asynccontextmanager
async def chromium() -> AsyncIterator[Any]:
    """Debian's Chromium, headless, through Playwright."""
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            await browser.close()


async def open_page(browser: Any, web: WebProcess, **context: Any) -> Any:
    """A fresh browser context on ``web``'s link, the page loaded and connected."""
    ctx = await browser.new_context(**context)
    page = await ctx.new_page()
    page.on("pageerror", lambda err: print("page error:", err))
    await page.goto(web.url)
    await page.wait_for_selector("#new-form select", timeout=20_000)
    return page


async def status(page: Any) -> dict[str, str]:
    """What the stage shows: status line, round number, moves, score, result, legal moves."""
    return dict(await page.evaluate("""() => ({
        status: document.getElementById('status').textContent,
        round_no: document.getElementById('status').dataset.roundNo || '',
        over: document.getElementById('status').dataset.over || '',
        my_turn: document.getElementById('status').dataset.myTurn || '',
        moves: document.getElementById('moves').textContent,
        score: document.getElementById('score').textContent,
        result: document.getElementById('status').dataset.result || '',
        legal: document.getElementById('board').dataset.legal || '',
        winning: document.getElementById('board').dataset.winning || '0',
    })"""))


async def play_when_my_turn(page: Any, choose: Any = None) -> bool:
    """If it is this page's turn, type a legal move into the move field (as a person
    would type it) and press Enter; ``True`` if a move was sent."""
    st = await status(page)
    if st["my_turn"] != "yes" or not st["legal"]:
        return False
    legal = st["legal"].split()
    move = choose(legal) if choose else legal[0]
    try:
        await page.fill("#move-input", move, timeout=2000)
        await page.press("#move-input", "Enter", timeout=2000)
    except Exception:  # noqa: BLE001 - the turn passed meanwhile (a newer snapshot hid the field)
        return False
    # One move per turn: wait until the page shows it (or the turn is gone).
    await wait_status(page, lambda s: s["moves"] != st["moves"] or s["my_turn"] != "yes", 30, "the move shown")
    return True


async def wait_status(page: Any, predicate: Any, timeout: float = 30.0, what: str = "status") -> dict[str, str]:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        st = await status(page)
        if predicate(st):
            return st
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}; page shows {st}")
        await asyncio.sleep(0.05)


def png_colours(data: bytes, limit: int = 10_000) -> int:
    """How many distinct colours a PNG (8-bit RGB or RGBA, as Chromium writes) has."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width, height, ctype = 8, b"", 0, 0, 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype in (2, 6), f"unexpected PNG format {depth}/{ctype}"
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    prev = bytearray(stride)
    colours: set[bytes] = set()
    for y in range(height):
        start = y * (stride + 1)
        kind = raw[start]
        line = bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pred) & 255
        for x in range(0, stride, bpp * 3):  # every third pixel is plenty
            colours.add(bytes(line[x:x + 3]))
        if len(colours) >= limit:
            break
        prev = line
    return len(colours)


BACKGROUND_TAB = """
(() => {
  const Real = window.Notification;
  window.__notes = [];
  window.Notification = class extends Real {
    constructor(title, options) {
      super(title, options);
      window.__notes.push([title, options && options.body, Real.permission]);
    }
  };
  window.__hidden = false;
  Object.defineProperty(Document.prototype, 'hidden', { configurable: true, get: () => window.__hidden });
  Object.defineProperty(Document.prototype, 'visibilityState', {
    configurable: true, get: () => (window.__hidden ? 'hidden' : 'visible') });
})();
"""
"""An init script for a page whose tab the test puts in the background: the browser's own
``Notification`` (the permission granted to the context) with each one created recorded in
``window.__notes`` (title, body, permission); and ``document.hidden`` set by
``window.__hidden``, since headless Chromium never hides a tab (neither another tab in
front nor a minimized window changes its visibility)."""


async def background(page: Any, hidden: bool) -> None:
    """Put the tab in the background (or bring it back), as the page sees it."""
    await page.evaluate(f"window.__hidden = {'true' if hidden else 'false'}; "
                        "document.dispatchEvent(new Event('visibilitychange'))")


async def notifying_page(browser: Any, web: WebProcess) -> Any:
    """A page on ``web`` whose context allows notifications (``BACKGROUND_TAB`` loaded)."""
    ctx = await browser.new_context()
    await ctx.grant_permissions(["notifications"], origin=web.base)
    await ctx.add_init_script(BACKGROUND_TAB)
    page = await ctx.new_page()
    page.on("pageerror", lambda err: print("page error:", err))
    await page.goto(web.url)
    await page.wait_for_selector("#new-form select", timeout=20_000)
    return page


SHOTS = Path(os.environ.get("P2P_SCREENSHOTS", "")) if os.environ.get("P2P_SCREENSHOTS") else None
"""Set ``P2P_SCREENSHOTS=docs/images`` to keep the boards' screenshots for the docs."""


async def board_shot(page: Any, name: str, tmp: Path) -> Path:
    """Screenshot the stage (board, status, result) to ``tmp/name.png`` (and to
    ``$P2P_SCREENSHOTS`` when set); assert it is not blank (many colours)."""
    path = tmp / f"{name}.png"
    data = await page.locator("#stage").screenshot(path=str(path))
    colours = png_colours(data)
    assert colours >= 8, f"{name}: the board screenshot looks blank ({colours} colours)"
    if SHOTS is not None:
        SHOTS.mkdir(parents=True, exist_ok=True)
        (SHOTS / f"{name}.png").write_bytes(data)
    return path
