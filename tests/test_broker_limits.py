"""One test per row of the broker-limits table in docs/brokers.md (issue 25): the
harness (``tests/broker_limits.py``) plays the limit, runs its scenarios (a live round, a
3-seat round, a slow round between peers never online together, a private round joined
by code, a resume after ``kill -9``), and the outcome must be the documented one -- and
every documented outcome either works (complete and agreed) or degrades with the line the
user is told, finished unforked once both are online together."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from broker_limits import AGREED, KICKS, LARGEST, LIMITS, Limit, documented, run_limit
from conftest import eventually, invitation, meet, run
from faults import MqttLimits

from p2p.net import known
from p2p.net.broker import LocalBroker
from p2p.net.transport import (
    PUBLISH_BURST,
    PUBLISH_RATE_PER_S,
    Refused,
    Transport,
    packet_size,
)
from p2p.peer import Peer, RoundNotice
from p2p.protocol.round_store import STORE_BYTES
from p2p.protocol.sealing import ROUND_OVERHEAD
from p2p.protocol.topics import Topics
from p2p.shell.i18n import Translator


def test_every_limit_has_its_row_in_the_docs_and_no_row_fails() -> None:
    rows = documented()
    assert sorted(rows) == sorted(limit.name for limit in LIMITS)
    for cells in rows.values():
        assert len(cells) == 5, cells
        for cell in cells:
            assert cell == AGREED or cell.startswith("degrades: told "), cell


@pytest.mark.slow
@pytest.mark.parametrize("limit", LIMITS, ids=[f"row{i}" for i in range(len(LIMITS))])
def test_broker_limit_row(limit: Limit, tmp_path: Path, broker_url: str) -> None:
    kicks = KICKS[0]
    outcome, proxy = run(run_limit(limit, tmp_path), 150)
    assert outcome.cells() == documented()[limit.name], (
        "the harness's outcome differs from docs/brokers.md "
        "(re-run python tests/broker_limits.py --write if the change is intended)"
    )
    if proxy is not None:  # what the proxy saw of our own publishing
        assert proxy.cut_for_rate == 0 and proxy.cut_for_depth == 0
        assert proxy.max_per_second <= PUBLISH_BURST + PUBLISH_RATE_PER_S
        if limit.drop_every_s:
            assert proxy.drops >= 1
    if limit.takeover:
        assert KICKS[0] > kicks, "no takeover happened"
    # what the product sent stays under 8 KB as one packet (the 8 KB rows' premise)
    assert 0 < LARGEST[0] <= 8192


# -- messages over a broker's size limit (issue 25) -----------------------------------------

BIG = 9000
"""A payload over an 8 KB limit (the product's own messages stay under it: below)."""


async def _through_limit(conf: str, protocol: str) -> tuple[list[Refused], int, list[str], str]:
    """A big message, then a small one, twice, on a Mosquitto with ``conf``: what was
    refused, how often the connection was lost, what came back, what was learned."""
    known.forget()
    async with LocalBroker(extra_config=conf) as broker:
        transport = Transport(broker.url, protocol=protocol)
        refused: list[Refused] = []
        losses: list[str] = []
        transport.on_refused(refused.append)
        transport.on_state(lambda state, _: losses.append(state.value) if state.value == "lost" else None)
        got: list[str] = []
        async with transport:
            await transport.subscribe("t/#", qos=1)

            async def receive() -> None:
                async for message in transport.messages():
                    got.append(message.topic)

            receiver = asyncio.create_task(receive())
            try:
                transport.publish_nowait("t/big", b"x" * BIG, qos=1)
                transport.publish_nowait("t/small", b"s" * 100, qos=1)
                await eventually(lambda: "t/small" in got, 30, "the small message behind the big one")
                lost_before = len(losses)
                transport.publish_nowait("t/big2", b"x" * BIG, qos=1)
                transport.publish_nowait("t/small2", b"s" * 100, qos=1)
                await eventually(lambda: "t/small2" in got, 30, "the second small message")
                assert len(losses) == lost_before, "a limit known by now must cost no more cuts"
            finally:
                receiver.cancel()
        return refused, len(losses), got, known.facts(broker.url).get("max_packet", "")


@pytest.mark.parametrize(
    ("conf", "protocol", "announced"),
    [
        ("max_packet_size 8192\n", "5", True),  # in the v5 CONNACK: refused before sending
        ("max_packet_size 8192\n", "3.1.1", False),  # not announced: cut, twice, learned
        ("message_size_limit 8192\n", "5", False),  # Mosquitto 2.0 cuts a v5 client
    ],
    ids=["max_packet_size-v5", "max_packet_size-3.1.1", "message_size_limit-v5"],
)
def test_a_message_over_the_brokers_limit_is_refused_and_the_rest_goes_on(
    conf: str, protocol: str, announced: bool
) -> None:
    refused, losses, got, learned = run(_through_limit(conf, protocol), 90)
    assert [r.topic for r in refused] == ["t/big", "t/big2"], refused
    assert all(r.size > r.limit for r in refused)
    assert "t/big" not in got and "t/big2" not in got
    assert got.count("t/small") == 1 and got.count("t/small2") == 1
    if announced:
        assert losses == 0 and refused[0].limit == 8192 and not refused[0].learned
        assert learned == ""
    else:  # the same message was followed by a cut twice: its size is over the limit
        assert losses == 2 and refused[0].learned
        assert 8192 <= refused[0].limit < refused[0].size and learned == str(refused[0].limit)


def test_a_slow_rounds_store_fits_an_8_KB_packet() -> None:
    """The largest store, sealed, on the longest store topic, fits 8192 bytes as one
    MQTT packet (so a broker limited to 8 KB messages or packets carries every store)."""
    topics = Topics(namespace="n" * 32, app="a" * 32)
    topic = topics.round_store("f" * 64, "0" * 32).topic
    payload = b"x" * (STORE_BYTES + ROUND_OVERHEAD)
    assert packet_size(topic, payload, 1, True, None) <= 8192


SMALL_LIMIT = 900


async def _told(tmp: Path) -> tuple[list[RoundNotice], list[str]]:
    """Alice invites bob on a broker that takes packets of at most 900 bytes: invitations
    and moves fit, but one event of the draw that opens a round does not: she is told,
    and nothing forks."""
    async with LocalBroker(extra_config=f"max_packet_size {SMALL_LIMIT}\n") as broker:
        async with Peer(broker.url, nick="alice", log_dir=tmp / "a") as alice, \
                Peer(broker.url, nick="bob", log_dir=tmp / "b") as bob:
            notes = alice.events()
            told: list[RoundNotice] = []

            async def listen() -> None:
                async for note in notes:
                    if isinstance(note, RoundNotice) and note.code == "broker_too_large":
                        told.append(note)

            listener = asyncio.create_task(listen())
            try:
                await meet(alice, bob, timeout=20)
                rnd = await alice.invite([bob.peer_id], "connect4")
                await (await invitation(bob, rnd.id)).accept()
                await eventually(lambda: bool(told), 30, "alice to be told")
                await asyncio.sleep(0.5)  # anything else refused is told by now
            finally:
                listener.cancel()
            logs = [p for p in (tmp / "a").rglob("round-*.log")]
            assert rnd.log_path is not None and rnd.log_path in logs
            return told, [p.read_text() for p in (tmp / "a").rglob("round-*.log")] + [
                p.read_text() for p in (tmp / "b").rglob("round-*.log")
            ]


def test_the_user_is_told_in_one_line_in_both_languages_and_nothing_forks(tmp_path: Path) -> None:
    told, logs = run(_told(tmp_path), 90)
    assert len(told) == len({(n.params["what"], n.params["round_id"]) for n in told}), "told once"
    note = told[0]
    assert note.params["what"] == "round" and note.params["round_id"] is not None
    assert note.params["limit"] == SMALL_LIMIT
    assert int(note.params["size"]) > SMALL_LIMIT  # type: ignore[call-overload]
    for lang in ("de", "en"):
        t = Translator(lang)
        line = t.t("notice.broker_too_large", what=t.t(f"notice.broker_too_large.{note.params['what']}"),
                   size=note.params["size"], limit=note.params["limit"], broker=note.params["broker"])
        assert "\n" not in line and str(SMALL_LIMIT) in line and "{" not in line, line
    # alice's log keeps what she signed; bob's is a prefix of it (nothing forked)
    alice_log, *others = logs
    for other in others:
        lines = [line for line in other.splitlines() if line]
        assert all(line in alice_log for line in lines[1:]), "bob holds an event alice does not"


def test_doctor_finds_a_limit_the_broker_keeps_silently_and_peers_keep_to_it(
    tmp_path: Path,
) -> None:
    """Mosquitto's ``message_size_limit`` over MQTT 3.1.1 takes an over-large message
    (PUBACK) and drops it: nothing on the wire tells.  ``p2p doctor`` sends the largest
    message to itself, sees it not come back, finds the largest that does and keeps it in
    ``brokers.json``; a transport reading that file then refuses (and reports) larger
    messages instead of losing them."""
    from test_cli_doctor import doctor

    async def body() -> None:
        async with LocalBroker(extra_config="message_size_limit 8192\n") as broker, \
                MqttLimits(broker.port, refuse_v5="connack") as proxy:
            code, out, err = await doctor(tmp_path, "--lang", "en", "--broker", proxy.url)
            assert code == 0, err
            assert "speaks: MQTT 3.1.1 only" in out
            assert "largest message: only up to about 8192 bytes" in out, out
            facts = json.loads((tmp_path / "brokers.json").read_text())
            assert facts[proxy.url]["max_packet"] == "8192"
            code, out, _ = await doctor(tmp_path, "--lang", "en", "--broker", broker.url)
            assert "largest message: " in out and "go through" not in out  # v5: cut
            known.forget()
            known.attach(tmp_path / "brokers.json")
            refused: list[Refused] = []
            async with Transport(proxy.url) as transport:
                transport.on_refused(refused.append)
                await transport.publish("t/big", b"x" * BIG, qos=1)
                await transport.publish("t/small", b"s", qos=1, wait=True)
            known.forget()
            assert [r.topic for r in refused] == ["t/big"] and refused[0].limit == 8192

    run(body(), 120)
