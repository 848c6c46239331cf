"""The local web server: the page, its assets and one WebSocket, all behind the ``Guard``.

aiohttp serves HTTP and the WebSocket in the asyncio loop the peer runs in, so the page
talks to the very ``Peer`` object the process holds.  Every request passes one middleware:
``Host``, ``Origin`` and the per-run secret are checked first (``p2p.web.guard``); a
refused request gets ``403`` and one line and reaches no handler; every answer carries a
strict Content-Security-Policy, ``nosniff``, ``no-referrer`` and ``no-store``.  Only
``GET`` exists: everything the page does goes through the WebSocket, whose handshake
passes the same checks (a browser always sends ``Origin`` there).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from aiohttp import WSMsgType, web

from p2p.web.guard import Guard, same_secret
from p2p.web.session import WebSession

log = logging.getLogger("p2p.web")
STATIC = Path(__file__).with_name("static")
MAX_MESSAGE = 64 * 1024
"""The largest WebSocket message the page may send (an action is a few hundred bytes)."""
QUEUE = 2000
"""Messages queued for one page before it is dropped as too slow (it reconnects)."""
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'"
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def refused(reason: str, status: int = 403) -> web.Response:
    """One line, no detail beyond the reason, the security headers on it too."""
    return web.Response(status=status, text=f"refused: {reason}\n", headers=HEADERS)


class WebServer:
    """The page's server over one ``WebSession``; ``start()`` binds, ``close()`` ends."""

    def __init__(self, session: WebSession, guard: Guard, host: str = "127.0.0.1") -> None:
        self.session = session
        self.guard = guard
        self.host = host
        self.refusals = 0
        """Requests refused by the guard (tests read it)."""
        self._runner: web.AppRunner | None = None
        self._sockets: set[web.WebSocketResponse] = set()

    # -- the app -------------------------------------------------------------------------------

    def app(self) -> web.Application:
        app = web.Application(middlewares=[self._middleware], client_max_size=MAX_MESSAGE)
        app.router.add_get("/", self._index)
        app.router.add_get("/ws", self._websocket)
        app.router.add_static("/static", STATIC, follow_symlinks=False)
        return app

    @web.middleware
    async def _middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        try:
            return await self._guarded(request, handler)
        except web.HTTPException as err:
            if err.status >= 400:
                return refused(err.reason or "not found", err.status)
            raise
        except Exception:  # noqa: BLE001 - no traceback ever reaches a browser
            log.exception("request %s failed", request.path)
            return refused("internal error", 500)

    async def _guarded(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        guard = self.guard
        if request.method not in ("GET", "HEAD"):
            self.refusals += 1
            return refused("only GET (actions go through the WebSocket)", 405)
        token = request.query.get("t")
        if request.path == "/" and token is not None:
            problem = guard.check_host(request.headers) or guard.check_origin(request.headers, False)
            if problem is None and (same_secret(token, guard.secret) or guard.spend(token)):
                answer = web.HTTPSeeOther("/", headers=HEADERS)
                answer.set_cookie(guard.cookie_name, guard.secret, httponly=True, samesite="Strict",
                                  path="/")
                return answer
            self.refusals += 1
            log.info("refused %s: %s", request.path, problem or "wrong or spent link")
            return refused(problem or "this link is wrong or was used already")
        problem = guard.check(request.headers, request.cookies.get(guard.cookie_name), token,
                              websocket=request.path == "/ws")
        if problem is not None:
            self.refusals += 1
            log.info("refused %s: %s", request.path, problem)
            return refused(problem)
        response = await handler(request)
        if not isinstance(response, web.WebSocketResponse):
            response.headers.update(HEADERS)
        return response

    async def _index(self, request: web.Request) -> web.StreamResponse:
        return web.FileResponse(STATIC / "index.html", headers={"Content-Type": "text/html; charset=utf-8"})

    async def _websocket(self, request: web.Request) -> web.StreamResponse:
        ws = web.WebSocketResponse(heartbeat=20, max_msg_size=MAX_MESSAGE)
        await ws.prepare(request)
        queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue(QUEUE)

        def listen(message: dict[str, Any]) -> None:
            if queue.full():
                with contextlib.suppress(asyncio.QueueEmpty):
                    queue.get_nowait()  # a page this far behind gets the next snapshot
            queue.put_nowait(message)

        session = self.session
        session.listeners.append(listen)
        self._sockets.add(ws)
        listen(session.hello())
        listen({"t": "history", "lines": list(session.lines)})
        listen(session.snapshot())

        async def send() -> None:
            while True:
                message = await queue.get()
                if message is None:
                    return
                await ws.send_str(json.dumps(message, separators=(",", ":")))

        sender = asyncio.get_running_loop().create_task(send())
        try:
            async for msg in ws:
                if msg.type != WSMsgType.TEXT:
                    continue
                try:
                    data = json.loads(msg.data)
                except (ValueError, RecursionError):  # not JSON, or nested beyond reason
                    session.line("warn", "err.action")
                    continue
                session.spawn(session.handle(data))
        finally:
            with contextlib.suppress(ValueError):
                session.listeners.remove(listen)
            self._sockets.discard(ws)
            sender.cancel()
            with contextlib.suppress(BaseException):
                await sender
        return ws

    # -- running -------------------------------------------------------------------------------

    async def start(self, port: int = 0) -> int:
        """Bind ``host:port`` (0: a free port) and serve; returns the port."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((self.host, port))
        except OSError:
            sock.close()
            raise
        self.guard.port = sock.getsockname()[1]
        self._runner = web.AppRunner(self.app(), access_log=None, handle_signals=False)
        await self._runner.setup()
        await web.SockSite(self._runner, sock).start()
        return self.guard.port

    def url(self, host: str | None = None, token: str | None = None) -> str:
        """The link that lets a browser in (``/?t=SECRET``)."""
        return f"http://{host or self.host}:{self.guard.port}/?t={token or self.guard.secret}"

    async def close(self) -> None:
        for ws in list(self._sockets):
            with contextlib.suppress(Exception):
                await ws.close()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
