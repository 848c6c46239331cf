"""Brokers nobody here wrote, started as child processes on free loopback ports.

* ``AedesBroker``: aedes 1.x on Node.js (``tests/aedes/broker.mjs``; the README's test
  command runs ``npm ci --prefix tests/aedes``).
* ``RabbitBroker``: RabbitMQ's MQTT plugin (Debian's ``rabbitmq-server``, 3.10 on
  bookworm), a node of its own: its own nodename, ports, config, data and log directory
  and Erlang cookie in a temporary directory, started as a normal process (no service).
  It speaks MQTT 3.1.1 only and hands retained messages only to exact subscriptions.
  It takes about 10 s to start on the shared 2-core machine.

``start()`` raises ``Unavailable`` (one line: what is missing) when the broker cannot run
here; the fixtures skip with that line, except in CI where it is a failure.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from p2p.net.broker import _accepts, free_port

HERE = Path(__file__).resolve().parent
AEDES_DIR = HERE / "aedes"
RABBIT_SERVER = "/usr/lib/rabbitmq/bin/rabbitmq-server"


class Unavailable(RuntimeError):
    """The broker cannot run on this machine; ``str(err)`` says why in one line."""


class _Child:
    """A broker child process on ``127.0.0.1:port``."""

    name = "broker"

    def __init__(self) -> None:
        self.port = 0
        self._process: subprocess.Popen[bytes] | None = None
        self.started_in = 0.0
        """Seconds from spawning to the first accepted connection (measured)."""

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    def _wait(self, timeout: float, log: Path) -> None:
        assert self._process is not None
        begin = time.monotonic()
        deadline = begin + timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                tail = log.read_text(errors="replace").strip().splitlines()[-3:]
                self._process = None
                raise Unavailable(f"{self.name} exited at start: {' | '.join(tail)}")
            if _accepts(self.port):
                self.started_in = time.monotonic() - begin
                return
            time.sleep(0.05)
        self.stop()
        raise Unavailable(f"{self.name} did not accept connections within {timeout:g} s")

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        if process.stdin is not None:
            process.stdin.close()
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)


class AedesBroker(_Child):
    """aedes on Node.js; needs ``node`` and ``npm ci --prefix tests/aedes``."""

    name = "aedes"

    def start(self, timeout: float = 20.0) -> AedesBroker:
        node = shutil.which("node")
        if node is None:
            raise Unavailable("node is not installed (apt-get install nodejs npm)")
        if not (AEDES_DIR / "node_modules" / "aedes").is_dir():
            raise Unavailable("aedes is not installed (npm ci --prefix tests/aedes)")
        self._dir = tempfile.TemporaryDirectory(prefix="p2p-aedes-")
        log = Path(self._dir.name) / "aedes.log"
        self.port = free_port()
        with log.open("wb") as out:
            self._process = subprocess.Popen(
                [node, str(AEDES_DIR / "broker.mjs"), str(self.port)],
                cwd=AEDES_DIR, stdin=subprocess.PIPE, stdout=out, stderr=out,
            )
        self._wait(timeout, log)
        return self


class RabbitBroker(_Child):
    """RabbitMQ with its MQTT plugin, a node of its own in a temporary directory."""

    name = "rabbitmq"

    def start(self, timeout: float = 90.0) -> RabbitBroker:
        if not Path(RABBIT_SERVER).is_file():
            raise Unavailable("rabbitmq-server is not installed (apt-get install rabbitmq-server)")
        self._dir = tempfile.TemporaryDirectory(prefix="p2p-rabbitmq-")
        base = Path(self._dir.name)
        self.port = free_port()
        amqp, dist = free_port(), free_port()
        (base / "rabbitmq.conf").write_text(
            f"listeners.tcp.1 = 127.0.0.1:{amqp}\n"  # loopback only
            f"mqtt.listeners.tcp.1 = 127.0.0.1:{self.port}\n"
            "mqtt.allow_anonymous = true\n"
            "loopback_users = none\n"
            "mqtt.retained_message_store = rabbit_mqtt_retained_msg_store_ets\n"
        )
        (base / "enabled_plugins").write_text("[rabbitmq_mqtt].\n")
        env = {
            **os.environ,
            "HOME": str(base),  # the Erlang cookie goes here
            "RABBITMQ_NODENAME": f"p2ptest{self.port}@localhost",
            "RABBITMQ_NODE_IP_ADDRESS": "127.0.0.1",
            "RABBITMQ_DIST_PORT": str(dist),
            "RABBITMQ_CONFIG_FILE": str(base / "rabbitmq"),
            "RABBITMQ_ENABLED_PLUGINS_FILE": str(base / "enabled_plugins"),
            "RABBITMQ_MNESIA_BASE": str(base / "mnesia"),
            "RABBITMQ_LOG_BASE": str(base / "log"),
            "RABBITMQ_PID_FILE": str(base / "pid"),
        }
        log = base / "server.log"
        with log.open("wb") as out:
            self._process = subprocess.Popen(
                [RABBIT_SERVER], env=env, stdin=subprocess.PIPE, stdout=out, stderr=out,
                cwd=base, start_new_session=True,
            )
        self._wait(timeout, log)
        return self

    def stop(self) -> None:
        process = self._process
        super().stop()
        if process is not None:  # the server script's Erlang children (epmd stays: shared)
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except OSError:
                pass
