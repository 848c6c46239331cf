"""A throwaway local Mosquitto broker on a free loopback port.

Used by ``p2p demo``, by the shell to offer a local broker, and by the test fixtures.
The broker gets a minimal config (``docs/brokers.md``):

* ``listener PORT 127.0.0.1`` -- loopback only, never an open broker on the LAN;
* ``allow_anonymous true`` -- a config with a listener defaults to ``false`` in 2.x;
* ``max_queued_messages 0`` -- the default cap of 1000 silently drops QoS 1 messages
  when a subscriber falls behind;
* ``persistence false`` -- nothing survives a stop;
* ``set_tcp_nodelay true`` -- small messages go out at once instead of waiting for
  Nagle's algorithm (tens of milliseconds per hop otherwise).

The broker never outlives the process that started it: a small watchdog process
(``WATCHDOG``) checks twice a second whether its parent -- us -- is still there and
stops the broker when not, so a shell or demo killed with ``kill -9`` takes its
Mosquitto with it.  (Linux's ``PR_SET_PDEATHSIG`` alone is not enough: it is cleared
when Mosquitto, started as root, drops to its own user.)

Mosquitto has no "pick a free port" option (``-p 0`` is rejected), so a free port is
found by binding port 0 first; the small race is covered by retrying.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Self

__all__ = [
    "BrokerError",
    "LocalBroker",
    "bridge_config",
    "free_port",
    "mosquitto_path",
]


class BrokerError(RuntimeError):
    """The local broker could not be started; ``str(err)`` is one line for the user."""


def mosquitto_path() -> str | None:
    """Path of the ``mosquitto`` executable, or ``None`` if it is not installed.

    Debian installs it to ``/usr/sbin``, which is often not on a normal user's PATH.
    """
    found = shutil.which("mosquitto")
    if found:
        return found
    for candidate in (
        "/usr/sbin/mosquitto",
        "/usr/local/sbin/mosquitto",
        "/opt/homebrew/sbin/mosquitto",
    ):
        if Path(candidate).is_file():
            return candidate
    return None


WATCHDOG = """
import os, signal, sys, time
signal.signal(signal.SIGINT, signal.SIG_IGN)
parent, broker = int(sys.argv[1]), int(sys.argv[2])
while True:
    time.sleep(0.5)
    if os.getppid() != parent:
        try:
            os.kill(broker, signal.SIGTERM)
        except OSError:
            pass
        break
    try:
        os.kill(broker, 0)
    except OSError:
        break
"""
"""Run as ``python -c WATCHDOG PARENT_PID BROKER_PID`` beside every broker: stops the
broker once the parent is gone (reparented), ends by itself once the broker is gone."""


def bridge_config(name: str, address: str, topics: str = "p2p/#") -> str:
    """Mosquitto config lines that bridge this broker to the one at ``address``.

    Messages on ``topics`` flow both ways at QoS 1; ``try_private`` lets two Mosquittos
    recognise the bridge and not send a message back where it came from; the bridge
    speaks MQTT v5 so message expiry (presence TTL) crosses it.  ``docs/brokers.md``
    explains it; the bridge test uses exactly these lines.
    """
    return (
        f"connection {name}\n"
        f"address {address}\n"
        f"topic {topics} both 1\n"
        "bridge_protocol_version mqttv50\n"
        "try_private true\n"
        "cleansession true\n"
        "notifications false\n"
        "restart_timeout 1 5\n"
    )


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


class LocalBroker:
    """A Mosquitto child process listening on ``127.0.0.1:port``.

    Synchronous ``start()``/``stop()`` for fixtures and the CLI; ``async with`` for
    asyncio code (start and stop run in a worker thread so the loop never blocks)::

        async with LocalBroker() as broker:
            print(broker.url)          # mqtt://127.0.0.1:PORT

    ``restart()`` stops and starts it again on the same port, which drops every client
    connection: the tests use it to exercise reconnection.
    """

    def __init__(
        self,
        port: int | None = None,
        *,
        executable: str | None = None,
        extra_config: str = "",
    ) -> None:
        self._fixed_port = port
        self.extra_config = extra_config
        """Lines appended to the config, e.g. a bridge to another broker (docs/brokers.md)."""
        self.port: int = port or 0
        self._executable = executable
        self._process: subprocess.Popen[bytes] | None = None
        self._watchdog: subprocess.Popen[bytes] | None = None
        self._dir: tempfile.TemporaryDirectory[str] | None = None
        self._log_path: Path | None = None

    @property
    def url(self) -> str:
        """Broker URL for ``Peer`` and the transport: ``mqtt://127.0.0.1:PORT``."""
        return f"mqtt://127.0.0.1:{self.port}"

    @property
    def running(self) -> bool:
        """True while the child process is alive."""
        return self._process is not None and self._process.poll() is None

    def start(self, timeout: float = 5.0) -> Self:
        """Start the broker and wait until it accepts connections; raises ``BrokerError``."""
        if self.running:
            return self
        executable = self._executable or mosquitto_path()
        if executable is None:
            raise BrokerError(
                "mosquitto is not installed (Debian/Ubuntu: apt-get install mosquitto; "
                "macOS: brew install mosquitto); or pass --broker URL"
            )
        if self._dir is None:
            self._dir = tempfile.TemporaryDirectory(prefix="p2p-mosquitto-")
        attempts = 1 if self._fixed_port else 5
        last_error = "unknown error"
        for _ in range(attempts):
            port = self._fixed_port or free_port()
            try:
                self._spawn(executable, port, timeout)
            except BrokerError as err:
                last_error = str(
                    err
                )  # most likely the port was taken meanwhile: try another
                continue
            self.port = port
            return self
        raise BrokerError(last_error)

    def _spawn(self, executable: str, port: int, timeout: float) -> None:
        assert self._dir is not None
        conf = Path(self._dir.name) / "mosquitto.conf"
        conf.write_text(
            f"listener {port} 127.0.0.1\n"
            "allow_anonymous true\n"
            "max_queued_messages 0\n"
            "persistence false\n"
            "set_tcp_nodelay true\n"
            "log_dest stderr\n"
            "log_type error\n"
            "log_type warning\n" + self.extra_config
        )
        self._log_path = Path(self._dir.name) / "mosquitto.log"
        log = self._log_path.open("ab")
        try:
            self._process = subprocess.Popen(
                [executable, "-c", str(conf)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
            )
        except OSError as err:
            raise BrokerError(f"cannot run {executable}: {err}") from None
        finally:
            log.close()
        self._start_watchdog(self._process.pid)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                self._process = None
                raise BrokerError(f"mosquitto exited at start: {self._log_tail()}")
            if _accepts(port):
                return
            time.sleep(0.01)
        self._kill()
        raise BrokerError(
            f"mosquitto did not accept connections on port {port} within {timeout:g} s"
        )

    def _log_tail(self) -> str:
        if self._log_path is None or not self._log_path.exists():
            return "no log"
        lines = self._log_path.read_text(errors="replace").strip().splitlines()
        return lines[-1] if lines else "no log"

    def _start_watchdog(self, broker_pid: int) -> None:
        """The process that stops the broker if we die without stopping it (``WATCHDOG``)."""
        try:
            self._watchdog = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", WATCHDOG, str(os.getpid()), str(broker_pid)],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )
        except OSError:
            self._watchdog = None  # the broker still works; it is only not guarded

    def _kill(self) -> None:
        watchdog, self._watchdog = self._watchdog, None
        if watchdog is not None:  # it ends by itself once the broker is gone; reap it
            watchdog.kill()
            watchdog.wait(timeout=3)
        process, self._process = self._process, None
        if process is None:
            return
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=3)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=3)

    def stop(self) -> None:
        """Stop the broker (every client is disconnected); safe to call twice."""
        self._kill()

    def close(self) -> None:
        """Stop the broker and remove its temporary directory."""
        self._kill()
        if self._dir is not None:
            self._dir.cleanup()
            self._dir = None

    def restart(self, down_for: float = 0.0) -> None:
        """Stop, wait ``down_for`` seconds, start again on the same port."""
        port = self.port
        self._kill()
        if down_for > 0:
            time.sleep(down_for)
        executable = self._executable or mosquitto_path()
        assert executable is not None
        for _ in range(50):  # the port can linger for a moment after the stop
            try:
                self._spawn(executable, port, 5.0)
                return
            except BrokerError:
                time.sleep(0.05)
        raise BrokerError(f"mosquitto could not restart on port {port}")

    # -- context managers ------------------------------------------------------------

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> Self:
        return await asyncio.to_thread(self.start)

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.to_thread(self.close)
