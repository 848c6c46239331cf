"""``p2p doctor`` as a process (issue 25): what a broker supports and what works there,
in German and English; an unreachable broker is one line and exit status 1, a bad URL a
usage error, never a traceback."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from conftest import run
from faults import MqttLimits

from p2p.net.broker import LocalBroker

ROOT = Path(__file__).resolve().parents[1]


async def doctor(tmp: Path, *args: str) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "p2p", "doctor", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "P2P_CONFIG_DIR": str(tmp)},
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


def test_doctor_tells_version_retained_delivery_round_trip_and_features(
    broker_url: str, tmp_path: Path
) -> None:
    port = int(broker_url.rsplit(":", 1)[1])

    async def body() -> None:
        async with MqttLimits(port, refuse_v5=True) as proxy, \
                LocalBroker(extra_config="retain_available false\n") as bare:
            code, out, err = await doctor(tmp_path, "--lang", "en", "--broker", broker_url,
                                          "--broker", proxy.url, "--broker", bare.url)
            assert code == 0, err
            assert "Traceback" not in out + err
            first, second, third = out.split("Broker ")[1:]
            assert "speaks: MQTT 5" in first
            assert "retained messages to wildcard and exact subscriptions" in first
            assert "so: lobby, live, slow and private rounds work" in first
            assert "round trip: " in first and " ms" in first
            assert "speaks: MQTT 3.1.1 only" in second
            assert "no retained messages" in third
            assert "slow rounds only while online together" in third
            facts = json.loads((tmp_path / "brokers.json").read_text())
            assert facts[proxy.url] == {"protocol": "3.1.1", "retained": "wildcard"}
            assert facts[bare.url]["retained"] == "none"
            code, out, _ = await doctor(tmp_path, "--lang", "de", "--broker", bare.url)
            assert code == 0
            assert "keine gespeicherten Nachrichten" in out
            assert "langsame Runden nur, solange ihr gleichzeitig online seid" in out

    run(body(), 120)


def test_doctor_on_an_unreachable_broker_and_a_bad_url(tmp_path: Path) -> None:
    async def body() -> None:
        code, out, err = await doctor(tmp_path, "--lang", "en", "--broker",
                                      "mqtt://127.0.0.1:1", "--timeout", "3")
        assert code == 1 and out == ""
        assert err.strip().splitlines() == [err.strip()]  # one line
        assert "unreachable" in err and "Traceback" not in err
        code, out, err = await doctor(tmp_path, "--broker", "ftp://nowhere")
        assert code == 2 and "bad broker URL" in err and "Traceback" not in err

    run(body(), 60)
