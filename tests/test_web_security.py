"""Nobody else drives the page: ``p2p web`` as a process against a real Mosquitto.

A request without the secret, with a foreign ``Origin`` or with a foreign ``Host`` (DNS
rebinding) is refused with one line and changes nothing: a scripted peer in the same
lobby sees no chat line and no round from the refused attempts, while the same action
over an allowed WebSocket does arrive (so the check can fail).  A page of another origin
in the very browser that holds the cookie cannot drive it either.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import aiohttp
import pytest
from conftest import eventually, run
from webface import chromium, open_page, require_browser, web_process

from p2p.peer import ChatMessage, Peer

NAMESPACE = "web-security"


async def _login(http: aiohttp.ClientSession, web) -> str:
    """Follow the opened link as a browser would: the answer sets the secret cookie."""
    answer = await http.get(web.url, allow_redirects=False, headers={"Host": web.host})
    assert answer.status == 303, await answer.text()
    cookie = answer.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie, cookie
    return cookie.split(";", 1)[0]


def test_foreign_requests_are_refused_and_change_nothing(broker_url: str, tmp_path: Path) -> None:
    async def body() -> None:
        async with web_process(tmp_path / "victim", "--broker", broker_url, "--nick", "victim",
                               "--namespace", NAMESPACE) as web, \
                Peer(broker_url, nick="watcher", namespace=NAMESPACE) as watcher:
            heard: list[str] = []
            notes = watcher.events()

            async def listen() -> None:
                async for note in notes:
                    if isinstance(note, ChatMessage):
                        heard.append(note.text)

            listener = asyncio.create_task(listen())
            await eventually(lambda: watcher.find_peer("victim") is not None, 20, "the web peer in the lobby")
            async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as http:
                cookie = await _login(http, web)
                port = web.port
                ours = {"Host": web.host, "Origin": web.base}
                attempts = {
                    "no secret": dict(ours),
                    "wrong secret": {**ours, "Cookie": cookie.split("=")[0] + "=guessed"},
                    "foreign Origin": {**ours, "Cookie": cookie, "Origin": "http://evil.example"},
                    "other local port": {**ours, "Cookie": cookie, "Origin": f"http://127.0.0.1:{port + 1}"},
                    "foreign Host": {"Host": f"evil.example:{port}", "Origin": f"http://evil.example:{port}",
                                     "Cookie": cookie},
                    "no Origin on the socket": {"Host": web.host, "Cookie": cookie},
                }
                for what, headers in attempts.items():
                    with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                        ws = await http.ws_connect(f"{web.base}/ws", headers=headers)
                        await ws.send_str(json.dumps({"a": "say", "text": f"evil {what}"}))
                    assert refused.value.status == 403, what
                    if what == "no Origin on the socket":
                        continue  # a plain GET needs no Origin
                    for path in ("/", "/static/app.js", f"/?t={web.secret}x"):
                        answer = await http.get(f"{web.base}{path}", headers=headers, allow_redirects=False)
                        text = await answer.text()
                        assert answer.status == 403, (what, path, answer.status)
                        assert text.startswith("refused: ") and text.count("\n") == 1, text
                        assert "Traceback" not in text
                        assert "default-src 'self'" in answer.headers["Content-Security-Policy"]
                # Actions never travel by HTTP: a POST is refused before any handler.
                answer = await http.post(f"{web.base}/ws", headers={**ours, "Cookie": cookie},
                                         data=json.dumps({"a": "say", "text": "evil post"}))
                assert answer.status == 405
                # The same action through an allowed socket arrives: the checks above can fail.
                ws = await http.ws_connect(f"{web.base}/ws", headers={**ours, "Cookie": cookie})
                await ws.send_str(json.dumps({"a": "say", "text": "hello from the page"}))
                await eventually(lambda: "hello from the page" in heard, 15, "the allowed chat line")
                # The page itself is served with the strict headers.
                page = await http.get(f"{web.base}/", headers={**ours, "Cookie": cookie})
                assert page.status == 200
                csp = page.headers["Content-Security-Policy"]
                assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp
                assert "unsafe-inline" not in csp
                assert page.headers["X-Content-Type-Options"] == "nosniff"
                assert page.headers["Referrer-Policy"] == "no-referrer"
                await ws.close()
            await asyncio.sleep(0.5)
            assert heard == ["hello from the page"], heard
            assert watcher.invitations == [] and watcher.rounds == {}
            rounds = web.config_dir / "rounds"
            assert not rounds.exists() or not list(rounds.glob("round-*.log"))
            listener.cancel()

    run(body(), 90)


def test_a_page_of_another_origin_in_the_same_browser_cannot_drive_it(broker_url: str, tmp_path: Path) -> None:
    """The browser holds our cookie (SameSite ignores ports: 127.0.0.1:OTHER is the same
    site), yet a page served from another port can neither open our WebSocket nor read
    our page: the Origin check refuses it."""
    require_browser()
    from aiohttp import web as aioweb

    evil_page = """<!doctype html><script>
      window.result = new Promise((done) => {
        const ws = new WebSocket('ws://HOST/ws');
        ws.onopen = () => { ws.send(JSON.stringify({a: 'say', text: 'evil from another page'})); done('open'); };
        ws.onerror = () => done('refused');
      });
      window.fetched = fetch('http://HOST/', {credentials: 'include', mode: 'no-cors'})
        .then((r) => r.type).catch(() => 'refused');
    </script>"""

    async def body() -> None:
        async with web_process(tmp_path / "victim", "--broker", broker_url, "--nick", "victim2",
                               "--namespace", NAMESPACE + "-2") as web, \
                Peer(broker_url, nick="watcher2", namespace=NAMESPACE + "-2") as watcher, chromium() as browser:
            heard: list[str] = []
            notes = watcher.events()

            async def listen() -> None:
                async for note in notes:
                    if isinstance(note, ChatMessage):
                        heard.append(note.text)

            listener = asyncio.create_task(listen())
            async def serve_evil(request: aioweb.Request) -> aioweb.Response:
                return aioweb.Response(text=evil_page.replace("HOST", web.host), content_type="text/html")

            evil = aioweb.Application()
            evil.router.add_get("/", serve_evil)
            runner = aioweb.AppRunner(evil)
            await runner.setup()
            site = aioweb.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            evil_port = runner.addresses[0][1]
            try:
                page = await open_page(browser, web)  # the browser now holds our cookie
                other = await page.context.new_page()
                await other.goto(f"http://127.0.0.1:{evil_port}/")
                assert await other.evaluate("window.result") == "refused"
                await other.evaluate("window.fetched")
                # our own page still works, and its chat line is the only one heard
                await page.select_option("#chat-target", "")
                await page.fill("#chat-input", "hello from our page")
                await page.press("#chat-input", "Enter")
                await eventually(lambda: "hello from our page" in heard, 15, "our own chat line")
                await asyncio.sleep(0.5)
                assert heard == ["hello from our page"], heard
            finally:
                await runner.cleanup()
                listener.cancel()

    run(body(), 90)


def test_lan_link_works_once_and_says_what_it_exposes(tmp_path: Path) -> None:
    """``--lan``: the terminal says what is exposed, shows a QR code and a one-time link;
    the link lets one browser in, then it is spent."""
    import os
    import re
    import signal
    import sys

    async def body() -> None:
        env = dict(os.environ, P2P_CONFIG_DIR=str(tmp_path))
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "p2p", "web", "--lan", "--local", "--no-open",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env)
        try:
            out = ""
            while True:
                line = (await asyncio.wait_for(proc.stdout.readline(), 20)).decode()  # type: ignore[union-attr]
                assert line, out
                out += line
                if "One-time link" in out and len(out.split("One-time link", 1)[1].splitlines()) > 8:
                    break
            assert "drives your p2p key" in out and "ONCE" in out and "not encrypted" in out
            link = re.search(r"One-time link: (http://(\S+?)/\?t=\S+)", out)
            assert link is not None, out
            assert "█" in out or "▀" in out or "▄" in out, "a QR code in the terminal"
            url, host = link.group(1), link.group(2)
            async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as http:
                first = await http.get(url, allow_redirects=False, headers={"Host": host})
                assert first.status == 303 and "HttpOnly" in first.headers["Set-Cookie"]
                cookie = first.headers["Set-Cookie"].split(";", 1)[0]
                again = await http.get(url, allow_redirects=False, headers={"Host": host})
                assert again.status == 403 and "used already" in await again.text()
                page = await http.get(f"http://{host}/", headers={"Host": host, "Cookie": cookie})
                assert page.status == 200
        finally:
            proc.send_signal(signal.SIGTERM)
            await asyncio.wait_for(proc.wait(), 15)

    run(body(), 60)
