"""A broker that speaks only MQTT 3.1.1: amqtt (a pure-Python broker, test extra).

Mosquitto speaks v5, 3.1.1 and 3.1 and has no option to refuse v5, so "a 3.1.1 broker"
in the tests is amqtt (https://github.com/Yakifo/amqtt), which implements 3.1.1 only and
answers a v5 CONNECT with "unacceptable protocol version": exactly what the transport's
fallback must handle.  It runs in a child process, like Mosquitto, on a free loopback port.
"""

from __future__ import annotations

import subprocess
import sys
import time

from p2p.net.broker import _accepts, free_port

_SCRIPT = """
import asyncio, logging, sys
from amqtt.broker import Broker
logging.basicConfig(level=logging.ERROR)
async def main(port):
    broker = Broker({
        "listeners": {"default": {"type": "tcp", "bind": f"127.0.0.1:{port}"}},
        "plugins": {"amqtt.plugins.authentication.AnonymousAuthPlugin": {"allow_anonymous": True}},
    })
    await broker.start()
    await asyncio.Event().wait()
asyncio.run(main(int(sys.argv[1])))
"""


class Mqtt311Broker:
    """amqtt on ``127.0.0.1:port`` in a child process; ``start()``/``stop()``."""

    def __init__(self) -> None:
        self.port = 0
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    def start(self, timeout: float = 20.0) -> Mqtt311Broker:
        self.port = free_port()
        self._process = subprocess.Popen(
            [sys.executable, "-c", _SCRIPT, str(self.port)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                err = self._process.stderr.read().decode(errors="replace") if self._process.stderr else ""
                raise RuntimeError(f"amqtt exited at start: {err.strip().splitlines()[-1:]}")
            if _accepts(self.port):
                return self
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"amqtt did not listen on port {self.port} within {timeout:g} s")

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(5)
