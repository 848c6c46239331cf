"""Private rounds against a stranger on ``#``: the retained genesis cannot be hijacked.

The stranger ("mallory", a raw aiomqtt client subscribed to ``#``) learns the private
round's topics from the traffic, then overwrites the retained genesis with a validly
signed round of its own, or deletes it.  Joiners ignore anything that is not sealed with
the key only the join code gives, and the admin publishes its genesis again.
"""

from __future__ import annotations

import asyncio

import aiomqtt
import pytest
from conftest import (
    Peers,
    autoplay,
    eventually,
    first_legal,
    invitation,
    meet,
    play_out,
    run,
    start_round,
)
from test_integration_rounds import assert_same_outcome

from p2p.peer import Peer
from p2p.peer import config as peer_config
from p2p.protocol import canonical, sealing
from p2p.protocol import events as ev
from p2p.protocol.identity import Identity


async def genesis_topic(mallory: aiomqtt.Client) -> str:
    """The first retained genesis topic a ``#`` subscriber sees."""
    async for message in mallory.messages:
        if message.topic.value.endswith("/genesis") and message.payload:
            return message.topic.value
    raise AssertionError("no genesis seen")


async def retained(port: int, topic: str) -> bytes:
    """What a fresh subscriber gets as the retained message of ``topic`` (b"" if none)."""
    async with aiomqtt.Client("127.0.0.1", port, identifier="probe") as probe:
        await probe.subscribe(topic, qos=1)
        try:
            async with asyncio.timeout(0.5):
                async for message in probe.messages:
                    return bytes(message.payload)
        except TimeoutError:
            return b""
    return b""


def fake_genesis(stranger: Identity, admin_key: str, private: bool = True) -> ev.Event:
    """A validly signed round of the stranger's (seats: the stranger, one open)."""
    return ev.make(
        stranger,
        "genesis",
        ev.MAX_TS // 2,
        {
            "game": "connect4",
            "options": {},
            "seats": [
                {"pk": stranger.pk_hex, "level": None},
                {"pk": None, "level": None}
                if private
                else {"pk": None, "level": "normal"},
            ],
            "start": 0,
            "expires": ev.MAX_TS // 2 + 600_000,
            "private": private,
            # a computer seat draws its seed: the admin's commitment (v5, §7)
            **({} if private else {"commit": "11" * 32}),
        },
        round=admin_key,
        seq=0,
    )


@pytest.mark.parametrize("attack", ["overwrite", "delete", "code holder"])
def test_stranger_cannot_hijack_or_kill_a_private_round(
    broker_url: str, mosquitto, attack: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(peer_config, "GENESIS_REPAIR_S", 1.5)

    async def body() -> None:
        stranger = Identity.from_seed(bytes(range(7, 39)))
        async with (
            aiomqtt.Client(
                "127.0.0.1", mosquitto.port, identifier=f"mallory-{attack[:4]}"
            ) as mallory,
            Peer(broker_url, nick="host") as host,
            Peer(broker_url, nick="early") as early,
            Peer(broker_url, nick="late") as late,
        ):
            await mallory.subscribe("#", qos=1)
            rh = await host.open_private("cube", {"players": 3}, open_seats=2)
            topic = await genesis_topic(mallory)
            assert rh.machine.key in topic
            real = rh._link.genesis_payload
            assert real is not None and await retained(mosquitto.port, topic) == real
            opened = sealing.open_round(rh.sealing_key, "genesis", real)
            assert ev.parse(opened).id == rh.log()[0].id

            # The attack lands; the admin repairs it only after a while (slowed down here
            # so that a joiner surely meets the stranger's retained message first) ...
            forged = fake_genesis(stranger, "ab" * 16)
            if attack == "delete":
                bad = [b""]
            elif (
                attack == "code holder"
            ):  # has the key: seals a public round of its own
                public = fake_genesis(stranger, "cd" * 16, private=False)
                bad = [
                    sealing.seal_round(rh.sealing_key, bytes(12), "genesis", public.raw)
                ]
            else:  # a plain signed genesis, and one sealed with a key of its own
                bad = [
                    forged.raw,
                    sealing.seal_round(bytes(32), bytes(12), "genesis", forged.raw),
                ]
            for payload in bad:
                await mallory.publish(topic, payload, qos=1, retain=True)
            seen = "retained genesis " + (
                "deleted" if attack == "delete" else "overwritten"
            )
            await eventually(
                lambda: host.stats.dropped.get(seen, 0) >= 1, 5, "the host to see it"
            )
            assert await retained(mosquitto.port, topic) == bad[-1]
            # ... a joiner meets the stranger's message, ignores it and keeps waiting ...
            joining = asyncio.create_task(early.join(rh.code, timeout=10))
            if attack != "delete":
                reason = {
                    "overwrite": "not sealed with the round key",
                    "code holder": "not a private round",
                }[attack]
                await eventually(
                    lambda: early.stats.dropped.get(reason, 0) >= 1,
                    5,
                    "the joiner to ignore the stranger's genesis",
                )
            re = await joining
            # ... and the admin's genesis is back for anyone who subscribes later.
            assert await retained(mosquitto.port, topic) == real
            rl = await late.join(rh.code, timeout=10)
            re = await joining
            rounds = [rh, re, rl]
            assert {r.id for r in rounds} == {rh.id}
            assert all(r.admin == host.public_key for r in rounds)
            for r in rounds:
                await r.wait_started(30)
            await play_out(rounds, 20)
            assert_same_outcome(rounds)

    run(body(), timeout=90)


def test_an_eavesdropper_on_hash_learns_no_move_chat_or_seat(
    peers: Peers, broker_url: str, mosquitto
) -> None:
    """A subscriber to ``#`` sees a whole round with chat and the draw, and an invitation:
    it decodes every payload it gets and finds no move, chat text, seat key or event of
    the round; the lobby alone is public."""

    async def body() -> None:
        seen: list[tuple[str, bytes]] = []
        async with aiomqtt.Client("127.0.0.1", mosquitto.port, identifier="eve") as eve:
            await eve.subscribe("#", qos=1)

            async def listen() -> None:
                async for message in eve.messages:
                    seen.append((message.topic.value, bytes(message.payload)))

            listening = asyncio.create_task(listen())
            async with peers("alice", "bob") as (alice, bob):
                ra, rb = await start_round(alice, [bob], "connect4")  # with the draw
                await ra.say("meet me at the old oak at nine")
                await rb.say("bring the blue notebook")
                await eventually(
                    lambda: len(rb.machine.state.chain) >= 3, 10, "the draw"
                )
                await asyncio.gather(
                    autoplay(ra, first_legal), autoplay(rb, first_legal)
                )
                await ra.wait_over(10)
                await rb.wait_over(10)
                log = ra.log()
                assert len(log) > 8 and ra.game.history()
                # a private round: a code joiner whose join carries its nickname
                async with Peer(broker_url, nick="zebra quill") as carol:
                    rp = await alice.open_private("connect4", open_seats=1, start=0)
                    rc = await carol.join(rp.code)
                    await rc.wait_started(20)
                    await rc.say("under the willow")
                    await asyncio.gather(
                        autoplay(rp, first_legal), autoplay(rc, first_legal)
                    )
                    await rc.wait_over(10)
                    log += rp.log()
                    code = rp.code
                await asyncio.sleep(0.3)  # the last payloads reach eve too
            listening.cancel()
        members = [alice.public_key, bob.public_key, carol.public_key]
        secrets = [b"old oak", b"blue notebook", b"under the willow", b'"move"']
        secrets += [b'"kind":"move"', code.encode()]
        secrets += [e.raw for e in log] + [e.id.encode() for e in log]
        secrets += [e.sig.hex().encode() for e in log]
        round_payloads = 0
        for topic, payload in seen:
            lobby = "/lobby/" in topic
            try:
                value = canonical.decode(payload)
            except canonical.CanonicalError:
                value = None
            if value is not None:  # readable: only the public lobby may be
                assert lobby, f"readable payload on {topic}"
                event = ev.parse(payload)
                assert event.round is None and event.kind in (
                    "presence",
                    "hello",
                    "chat",
                )
            else:
                assert not lobby, f"unreadable lobby payload on {topic}"
                round_payloads += "/round/" in topic
                for pk in members:  # nobody's key, nobody's fingerprint
                    assert pk not in payload and pk.hex().encode() not in payload
                assert b"zebra quill" not in payload  # the joiner's nickname
            for secret in secrets:
                assert secret not in payload, f"{secret[:40]!r} readable on {topic}"
        assert round_payloads >= len(log), "eve saw the round's (sealed) traffic"
        assert any("/inbox/" in topic for topic, _ in seen), "and the invitation"

    run(body(), timeout=90)


def test_a_peer_invited_into_a_private_round_plays_and_can_decline(
    broker_url: str,
) -> None:
    """An invitee of a private round cannot compute its topics (no code): the sealed
    invitation names them.  It plays with a code joiner; a second invitee's decline (sent
    on the invitation's topics) calls the host's next round off."""

    async def body() -> None:
        async with (
            Peer(broker_url, nick="host") as host,
            Peer(broker_url, nick="guest") as guest,
            Peer(broker_url, nick="coder") as coder,
        ):
            await meet(host, guest)
            rh = await host.open_private(
                "cube", {"players": 3}, open_seats=1, peers=[guest.peer_id]
            )
            rg = await (await invitation(guest, rh.id)).accept()
            assert rg.machine.key == rh.machine.key != rh.id
            rc = await coder.join(rh.code)
            rounds = [rh, rg, rc]
            for r in rounds:
                await r.wait_started(20)
            await play_out(rounds, 20)
            assert_same_outcome(rounds)

            again = await host.open_private(
                "cube", {"players": 3}, open_seats=1, peers=[guest.peer_id]
            )
            await (await invitation(guest, again.id)).decline()
            await again.wait_over(10)
            assert "declined" in again.chain_state.end_reason

    run(body(), timeout=90)


def test_a_flood_on_the_genesis_topic_costs_the_admin_one_repair_per_interval(
    broker_url: str, mosquitto
) -> None:
    """300 overwrites in a burst: the admin re-publishes at most once per
    ``GENESIS_REPAIR_S`` (however fast the stranger writes), and its genesis is the
    retained one afterwards."""

    async def body() -> None:
        loop = asyncio.get_running_loop()
        async with (
            aiomqtt.Client(
                "127.0.0.1", mosquitto.port, identifier="flooder"
            ) as mallory,
            Peer(broker_url, nick="host") as host,
        ):
            await mallory.subscribe("#", qos=1)
            rh = await host.open_private("connect4", open_seats=1)
            topic = await genesis_topic(mallory)
            real = rh._link.genesis_payload
            repairs = 0

            async def count() -> None:
                nonlocal repairs
                async for message in mallory.messages:
                    if message.topic.value == topic and bytes(message.payload) == real:
                        repairs += 1

            counting = asyncio.create_task(count())
            started = loop.time()
            for i in range(300):
                await mallory.publish(topic, b"junk %d" % i, qos=0, retain=True)
            await eventually(
                lambda: (
                    host.stats.dropped.get("retained genesis overwritten", 0) >= 300
                ),
                10,
                "the host to see the flood",
            )
            await asyncio.sleep(2 * peer_config.GENESIS_REPAIR_S)
            elapsed = loop.time() - started
            counting.cancel()
            assert await retained(mosquitto.port, topic) == real
            assert 1 <= repairs <= elapsed / peer_config.GENESIS_REPAIR_S + 1

    run(body(), timeout=60)


def test_an_invitee_of_a_private_round_resumes_without_the_code(
    broker_url: str, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    """The key file beside the log keeps the round key and the code's topic key, so an
    invitee who never had the code takes its round up again after a restart."""
    from p2p.protocol.identity import Identity

    async def body() -> None:
        me = Identity.from_seed(bytes(range(90, 122)))
        async with Peer(broker_url, nick="host") as host:
            first = Peer(broker_url, nick="guest", identity=me, log_dir=tmp_path)
            await first.start()
            await meet(host, first)
            rh = await host.open_private(
                "cube", {"players": 3}, open_seats=1, peers=[first.peer_id], start=0
            )
            rg = await (await invitation(first, rh.id)).accept()
            async with Peer(broker_url, nick="coder") as coder:
                rc = await coder.join(rh.code)
                rounds = [rh, rg, rc]
                for r in rounds:
                    await r.wait_started(20)
                await rh.play(first_legal(rh.game))
                await rg.wait_turn(10)
                path = rg.log_path
                await first.close()  # the guest's program ends; its turn waits
                async with Peer(
                    broker_url, nick="guest", identity=me, log_dir=tmp_path
                ) as again:
                    rr = await again.resume(path)  # no code given
                    assert rr.machine.key == rh.machine.key
                    assert await rr.wait_turn(10)
                    rounds = [rh, rr, rc]
                    await play_out(rounds, 20)
                    assert_same_outcome(rounds)

    run(body(), timeout=90)
