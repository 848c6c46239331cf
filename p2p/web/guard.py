"""Who may drive the page: the per-run secret, the ``Host`` and the ``Origin`` checks.

The browser face drives a signing key, so every HTTP request and the WebSocket must show
that it comes from the page this process opened (docs/web.md):

* the **secret**: a random token made per run (``secrets.token_urlsafe``); the URL the
  process opens carries it once (``/?t=SECRET``), the answer sets it as an HttpOnly,
  SameSite=Strict cookie; every later request must carry that cookie (or the token);
* the **Host** header must name this server as we bound it (``127.0.0.1:PORT`` or
  ``localhost:PORT``; with ``--lan`` also the LAN address): a DNS-rebinding site whose
  name now points at 127.0.0.1 sends its own name and is refused;
* the **Origin** header, when a browser sends one (always on a WebSocket handshake and a
  POST), must be our own origin: another page in the same browser cannot drive us.

Pure decisions, no I/O: ``Guard.check`` returns ``None`` (let it in) or a one-line reason.

>>> g = Guard("s3cret", port=8765)
>>> g.check({"Host": "127.0.0.1:8765"}, cookie="s3cret", token=None, websocket=False) is None
True
>>> g.check({"Host": "evil.example:8765"}, cookie="s3cret", token=None, websocket=False)
'foreign Host header'
>>> g.check({"Host": "localhost:8765", "Origin": "http://evil.example"}, "s3cret", None, False)
'foreign Origin header'
>>> g.check({"Host": "localhost:8765"}, cookie="guess", token=None, websocket=False)
'missing or wrong secret'
>>> g.check({"Host": "localhost:8765"}, cookie="s3cret", token=None, websocket=True)
'a WebSocket needs our Origin'
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field

COOKIE_PREFIX = "p2p_web_"
"""The cookie's name is this plus the port: cookies do not tell ports apart, and two
``p2p web`` processes on one machine must not overwrite each other's secret."""


def new_secret() -> str:
    """A fresh per-run secret (32 random bytes, URL-safe)."""
    return secrets.token_urlsafe(32)


def same_secret(given: str | None, secret: str) -> bool:
    """``given`` equals ``secret`` (compared in constant time).

    >>> same_secret("abc", "abc"), same_secret("abd", "abc"), same_secret(None, "abc")
    (True, False, False)
    """
    if not given:
        return False
    return hmac.compare_digest(given.encode(), secret.encode())


@dataclass
class Guard:
    """The checks every request passes: secret, Host, Origin (and a one-time LAN link)."""

    secret: str
    port: int
    lan_host: str | None = None
    """The LAN address we are bound to with ``--lan`` (then it is a valid Host too)."""
    one_time: set[str] = field(default_factory=set)
    """Tokens that let a browser in once (the ``--lan`` link): spent on first use."""

    @property
    def cookie_name(self) -> str:
        return f"{COOKIE_PREFIX}{self.port}"

    def hosts(self) -> set[str]:
        """The ``Host`` values that name this server."""
        names = {f"127.0.0.1:{self.port}", f"localhost:{self.port}"}
        if self.lan_host:
            names.add(f"{self.lan_host}:{self.port}")
        return names

    def origins(self) -> set[str]:
        """Our own origins (``http://`` plus a valid host)."""
        return {f"http://{host}" for host in self.hosts()}

    def check_host(self, headers: Mapping[str, str]) -> str | None:
        host = headers.get("Host", "").strip().lower()
        return None if host in self.hosts() else "foreign Host header"

    def check_origin(self, headers: Mapping[str, str], required: bool) -> str | None:
        origin = headers.get("Origin")
        if origin is None:
            return "a WebSocket needs our Origin" if required else None
        if origin.strip().lower() not in self.origins():
            return "foreign Origin header"
        if headers.get("Sec-Fetch-Site", "same-origin") not in ("same-origin", "none"):
            return "a cross-site request"
        return None

    def authorized(self, cookie: str | None, token: str | None) -> bool:
        """The request carries the secret (cookie or token)."""
        return same_secret(cookie, self.secret) or same_secret(token, self.secret)

    def spend(self, token: str | None) -> bool:
        """``token`` is an unused one-time token: it is spent now (True) or unknown (False)."""
        for candidate in list(self.one_time):
            if same_secret(token, candidate):
                self.one_time.discard(candidate)
                return True
        return False

    def check(
        self, headers: Mapping[str, str], cookie: str | None, token: str | None, websocket: bool
    ) -> str | None:
        """``None`` if the request may pass, else the one-line reason it is refused."""
        problem = self.check_host(headers) or self.check_origin(headers, required=websocket)
        if problem is not None:
            return problem
        if not self.authorized(cookie, token):
            return "missing or wrong secret"
        return None
