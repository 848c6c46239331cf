"""A test-only MQTT-over-websockets front for the local Mosquitto.

Debian's Mosquitto here cannot open a websockets listener, and no broker we can install
serves one, so the tests put this bridge in front of the plain TCP listener: a websocket
server on ``127.0.0.1`` that accepts the ``mqtt`` subprotocol (what paho asks for in
``Sec-WebSocket-Protocol``) on one path, and for every connection opens a TCP connection
to the broker and pumps bytes both ways (binary frames <-> stream).  Any other path gets
``404``.  With ``tls=True`` it serves ``wss://`` with a throwaway self-signed certificate
for ``127.0.0.1``; ``client_context`` trusts exactly that certificate.

It runs its own event loop in a thread, so it outlives the per-test ``asyncio.run``.
"""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import ssl
import tempfile
import threading
from concurrent.futures import Future
from http import HTTPStatus
from pathlib import Path
from types import TracebackType
from typing import Self

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response


def self_signed_certificate() -> tuple[bytes, bytes]:
    """A one-day certificate and key (PEM) for ``127.0.0.1`` and ``localhost``."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "p2p test bridge")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [
                    x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                    x509.DNSName("localhost"),
                ]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return cert.public_bytes(serialization.Encoding.PEM), key_pem


class WebsocketBridge:
    """``ws://`` (or ``wss://``) on a free loopback port, forwarding to ``host:port`` over TCP."""

    def __init__(
        self, host: str, port: int, *, path: str = "/mqtt", tls: bool = False
    ) -> None:
        self.target = (host, port)
        self.path = path
        self.connections = 0
        """Websocket connections accepted so far (the tests check the bridge was used)."""
        self._server_context: ssl.SSLContext | None = None
        self._cert_pem = b""
        if tls:
            self._cert_pem, key_pem = self_signed_certificate()
            self._server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            # load_cert_chain reads files only
            with tempfile.TemporaryDirectory() as tmp:
                cert_file, key_file = Path(tmp, "cert.pem"), Path(tmp, "key.pem")
                cert_file.write_bytes(self._cert_pem)
                key_file.write_bytes(key_pem)
                self._server_context.load_cert_chain(cert_file, key_file)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="ws-bridge", daemon=True
        )
        self._server: Server | None = None
        self.port = 0

    @property
    def url(self) -> str:
        scheme = "wss" if self._server_context else "ws"
        return f"{scheme}://127.0.0.1:{self.port}{self.path}"

    def client_context(self) -> ssl.SSLContext:
        """A client TLS context that trusts the bridge's self-signed certificate."""
        return ssl.create_default_context(cadata=self._cert_pem.decode())

    def start(self) -> None:
        """Start listening (returns once the port is bound)."""
        self._thread.start()
        future: Future[Server] = asyncio.run_coroutine_threadsafe(
            self._serve(), self._loop
        )
        self._server = future.result(10)
        self.port = int(next(iter(self._server.sockets)).getsockname()[1])

    def close(self) -> None:
        """Stop serving, drop every connection and end the thread."""
        if self._server is not None:

            async def stop(server: Server) -> None:
                server.close()
                await server.wait_closed()

            asyncio.run_coroutine_threadsafe(stop(self._server), self._loop).result(10)
            self._server = None
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    async def _serve(self) -> Server:
        return await serve(
            self._pump,
            "127.0.0.1",
            0,
            subprotocols=["mqtt"],  # type: ignore[list-item]
            process_request=self._check_path,
            ssl=self._server_context,
            compression=None,
            max_size=None,
        )

    def _check_path(
        self, connection: ServerConnection, request: Request
    ) -> Response | None:
        if request.path != self.path:
            return connection.respond(HTTPStatus.NOT_FOUND, "no MQTT here\n")
        return None

    async def _pump(self, ws: ServerConnection) -> None:
        """Forward one websocket connection to the broker until either side closes."""
        self.connections += 1
        reader, writer = await asyncio.open_connection(*self.target)

        async def upstream() -> None:
            try:
                async for frame in ws:
                    writer.write(frame if isinstance(frame, bytes) else frame.encode())
                    await writer.drain()
            except ConnectionClosed:
                pass

        async def downstream() -> None:
            while data := await reader.read(65536):
                await ws.send(data)

        tasks = [asyncio.create_task(upstream()), asyncio.create_task(downstream())]
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            writer.close()
            await ws.close()
