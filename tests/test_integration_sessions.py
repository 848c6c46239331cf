"""One identity, one seat at a time, live (issue 17 item 5): the same key open in two
peers on a real Mosquitto.  The later session is told at once and watches (it cannot
accept or move), takes over explicitly, the first steps back, and the round completes
with one chain and no equivocation."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

from conftest import eventually, first_legal, invitation, meet, run

from p2p.peer import ActionError, Equivocated, Peer, RoundNotice
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
