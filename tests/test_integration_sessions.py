"""One identity, one seat at a time, live (issue 17 item 5): the same key open in two
peers on a real Mosquitto.  The later session is told at once and watches (it cannot
accept or move), takes over explicitly, the first steps back, and the round completes
with one chain and no equivocation."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

import aiomqtt
import pytest
from conftest import eventually, first_legal, invitation, meet, run

from p2p.peer import ActionError, Equivocated, Peer, RoundNotice
from p2p.protocol import events as ev
from p2p.protocol import lobby as lobby_rules
from p2p.protocol.identity import Identity
from p2p.protocol.round import Phase, TurnTimeouts, verify_chain

SHORT = TurnTimeouts(silent_ms=60_000, offline_ms=30_000)


def _collect(peer: Peer, into: list) -> asyncio.Task:
    feed = peer.events()

    async def collect() -> None:
        async for note in feed:
            if isinstance(note, (RoundNotice, Equivocated)):
                into.append(note)

    return asyncio.get_running_loop().create_task(collect())


def _codes(notes: list) -> list[str]:
    return [n.code for n in notes if isinstance(n, RoundNotice)]


def test_two_sessions_of_one_key_take_turns_without_equivocation(
    broker_url: str, tmp_path: Path
) -> None:
    async def body() -> None:
        key = Identity.from_seed(os.urandom(32))
        first = Peer(broker_url, nick="anna", identity=key, turn_timeouts=SHORT,
                     log_dir=tmp_path / "one")
        bob = Peer(broker_url, nick="bob", turn_timeouts=SHORT)
        told: dict[str, list] = {"first": [], "second": [], "bob": []}
        await first.start()
        await bob.start()
        tasks = [_collect(first, told["first"]), _collect(bob, told["bob"])]
        second = Peer(broker_url, nick="anna", identity=key, turn_timeouts=SHORT,
                      log_dir=tmp_path / "two")
        try:
            await meet(first, bob)
            await second.start()
            tasks.append(_collect(second, told["second"]))
            # the later session is told at once, and watches
            await eventually(lambda: "other_session" in _codes(told["second"]), 10,
                             "the second session to be told")
            await eventually(lambda: "other_session" in _codes(told["first"]), 10,
                             "the first session to be told")
            assert not second.acting and first.acting
            rnd_bob = await bob.invite([first.peer_id], "connect4", start=0)
            pending = await invitation(second, rnd_bob.id)
            try:
                await pending.accept()
                raise AssertionError("a watching session accepted")
            except ActionError as err:
                assert err.code == "other_session"
            rnd_first = await (await invitation(first, rnd_bob.id)).accept()
            await rnd_first.wait_started(20)
            await rnd_bob.play(first_legal(rnd_bob.game))
            await eventually(lambda: rnd_first.is_my_turn, 10, "anna's turn")
            # the second session takes the round up as another machine would (its files)
            for suffix in (".log", ".key"):
                src = tmp_path / "one" / f"round-{rnd_first.id}{suffix}"
                (tmp_path / "two").mkdir(exist_ok=True)
                shutil.copy(src, tmp_path / "two" / src.name)
            rnd_second = await second.resume(tmp_path / "two" / f"round-{rnd_first.id}.log")
            await eventually(lambda: rnd_second.is_my_turn, 10, "the second to catch up")
            try:
                await rnd_second.play(first_legal(rnd_second.game))
                raise AssertionError("a watching session moved")
            except ActionError as err:
                assert err.code == "other_session"
            await second.take_over()
            await eventually(lambda: not first.acting, 10, "the first to step back")
            assert "other_session_took_over" in _codes(told["first"])
            await eventually(lambda: second.acting, 10, "the takeover to settle")
            try:
                await rnd_first.play(first_legal(rnd_first.game))
                raise AssertionError("the stepped-back session moved")
            except ActionError as err:
                assert err.code == "other_session"

            async def play(rnd) -> None:  # type: ignore[no-untyped-def]
                while await rnd.wait_turn(20):
                    await rnd.play(first_legal(rnd.game))

            await asyncio.gather(play(rnd_second), play(rnd_bob))
            for r in (rnd_second, rnd_bob, rnd_first):
                await r.wait_over(20)
            chains = {tuple(e.id for e in r.log()) for r in (rnd_second, rnd_bob, rnd_first)}
            assert len(chains) == 1
            assert verify_chain(rnd_bob.log()).phase is Phase.OVER
            signers = {e.pk for e in rnd_bob.log()[3:] if e.kind == "move"}
            assert key.public_key in signers
            await eventually(lambda: rnd_bob.agreed, 10, "every ack")
            assert not any(isinstance(n, Equivocated) for notes in told.values() for n in notes)
            assert bob.stats.dropped.get("equivocation", 0) == 0
        finally:
            for task in tasks:
                task.cancel()
            for peer in (first, second, bob):
                await peer.close()

    run(body(), 90)


@pytest.mark.parametrize("will", ["held", "emptied"])
def test_live_a_stranger_replaying_a_crashed_runs_presences_never_makes_the_restarted_client_watch(
    mosquitto, broker_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, will: str
) -> None:
    """Issue 23 item 4: anna's client crashes (the broker publishes its Will, retained)
    and she starts it again.  A stranger who recorded the old run's signed online
    presences replays them on her presence topic, one per heartbeat, each newer than the
    last.  ``held``: the restarted client reads the Will on subscribing, so the old
    session is over.  ``emptied``: the stranger deleted the retained Will first; the
    client knows the run as its own from its runs file next to the key
    (``p2p.peer.runs``).  Either way it never watches, accepts bob's invitation and
    moves (before: every action refused with ``other_session`` for up to 5 minutes)."""
    monkeypatch.setattr(lobby_rules, "HEARTBEAT_MS", 300)  # heartbeats to record, fast
    runs = tmp_path / "runs"

    async def body() -> None:
        key = Identity.from_seed(os.urandom(32))
        old = Peer(broker_url, nick="anna", identity=key, turn_timeouts=SHORT, runs_dir=runs)
        async with (
            Peer(broker_url, nick="bob", turn_timeouts=SHORT) as bob,
            aiomqtt.Client("127.0.0.1", mosquitto.port, identifier="stranger") as stranger,
        ):
            topic = bob.topics.presence(old.peer_id).topic
            await stranger.subscribe(topic, qos=1)
            await old.start()
            session = old.lobby.session
            recorded: list[ev.Event] = []
            last_will: ev.Event | None = None
            async with asyncio.timeout(20):
                async for message in stranger.messages:
                    if not message.payload:
                        continue
                    event = ev.parse(bytes(message.payload))
                    if event.body["status"] == "online":
                        recorded.append(event)
                        if len(recorded) == 8:
                            old.transport.interrupt(hold=600)  # the crash
                    elif recorded and event.body["session"] == session:
                        last_will = event  # the broker published its Will
                        break
            await old.close()
            assert last_will is not None and len({e.ts for e in recorded}) >= 8
            if will == "emptied":
                await stranger.publish(topic, b"", qos=1, retain=True)
            new = Peer(broker_url, nick="anna", identity=key, turn_timeouts=SHORT, runs_dir=runs)
            told: list = []
            await new.start()
            tasks = [_collect(new, told)]
            replayed = 0
            acting_all_along = True

            async def replay() -> None:
                nonlocal replayed
                for event in recorded:  # oldest first: each newer than the last
                    await stranger.publish(topic, event.raw, qos=1)
                    replayed += 1
                    await asyncio.sleep(0.3)

            async def watch() -> None:
                nonlocal acting_all_along
                while True:
                    acting_all_along = acting_all_along and new.acting
                    await asyncio.sleep(0.02)

            try:
                await meet(new, bob)
                tasks += [asyncio.create_task(replay()), asyncio.create_task(watch())]
                await eventually(lambda: replayed >= 3, 10, "the first replays")
                rnd_bob = await bob.invite([new.peer_id], "connect4", start=1)
                rnd_new = await (await invitation(new, rnd_bob.id)).accept()
                await rnd_new.wait_started(20)
                assert await rnd_new.wait_turn(20)
                await rnd_new.play(first_legal(rnd_new.game))
                await eventually(lambda: rnd_bob.is_my_turn, 10, "anna's move to reach bob")
                await eventually(lambda: replayed == len(recorded), 10, "every replay")
                await asyncio.sleep(0.5)
                assert acting_all_along and new.acting
                assert "other_session" not in _codes(told), _codes(told)
                assert not new.lobby.sessions.others
            finally:
                for task in tasks:
                    task.cancel()
                await new.close()

    run(body(), 90)
