"""Many rounds at once in the shell, on a real Mosquitto (issue 20 items 3 and 4): a player
with three slow rounds and one live round sees them all in ``/rounds``, is taken to the one
where it is his turn after a restart, and is told who moved while he was away -- in English
and in German."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from p2p.shell.connect import attach
from p2p.shell.testing import HeadlessShell

peer_mod = pytest.importorskip("p2p.peer")
Peer = peer_mod.Peer
DAY_S = 86_400


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 150))


def shell(tmp_path: Path, broker_url: str, lang: str = "en") -> HeadlessShell:
    return HeadlessShell(config_dir=tmp_path, lang=lang, broker=broker_url, rows=30, columns=120,
                         startup=attach(broker_url))


def lines(h: HeadlessShell) -> list[str]:
    return h.controller.state.text_lines()


async def said(h: HeadlessShell, text: str, timeout: float = 10.0, count: int = 1) -> list[str]:
    """Wait until ``count`` chat-pane lines contain ``text``; returns them."""
    await h.wait_for(lambda: sum(text in x for x in lines(h)) >= count, timeout)
    return [x for x in lines(h) if text in x]


async def listed(h: HeadlessShell, command: str, title: str) -> list[str]:
    """Type ``command`` (``/rounds``) and return the lines it listed after ``title``."""
    before = len(lines(h))
    await h.type_line(command)
    await h.wait_for(lambda: any(title in x for x in lines(h)[before:]), 15)
    new = lines(h)[before:]
    start = next(i for i, x in enumerate(new) if title in x)
    texts = [x[6:] for x in new[start + 1:]]  # without the "HH:MM " stamp
    return [x for x in texts if x[:1] in ("▶", " ") and x[1:].split()[0].isdigit()]


def number(shown: list[str], nick: str) -> str:
    """The number ``/rounds`` gave the round with ``nick``."""
    return next(x[1:].split()[0] for x in shown if f" with {nick} " in x)


async def accept(h: HeadlessShell, admin: Any, slow: bool, start: int) -> Any:
    """``admin`` invites the shell to Connect Four (slow: one day a turn); /accept."""
    peer = h.controller.online.peer
    rnd = await admin.invite([peer.peer_id], "connect4", start=start,
                             turn_limit=DAY_S if slow else None)
    await h.wait_for(lambda: peer.invitation(rnd.id) is not None, 10)
    await h.type_line("/accept")
    await rnd.wait_started(15)
    return rnd


def test_three_slow_rounds_and_a_live_one_listed_resumed_and_told(tmp_path: Path, broker_url: str) -> None:
    async def scenario() -> None:
        async with Peer(broker_url, nick="bob") as bob, Peer(broker_url, nick="carol") as carol, \
                Peer(broker_url, nick="dave") as dave, Peer(broker_url, nick="eve") as eve:
            async with shell(tmp_path, broker_url) as h:
                await h.wait_screen("Connected to", 10)
                me = h.controller.online.peer
                for other in (bob, carol, dave, eve):
                    await h.wait_for(lambda o=other: o.find_peer(me.peer_id) is not None, 10)
                live = await accept(h, eve, slow=False, start=0)  # eve to move
                assert me.busy
                slow_bob = await accept(h, bob, slow=True, start=1)  # we start, then bob
                await h.wait_for(lambda: h.controller.online.round.id == slow_bob.id, 10)
                # our own side must hold the start too before the digit can play (the
                # admin's wait_started says only that the admin has it)
                await h.wait_for(lambda: me.rounds[slow_bob.id].is_my_turn, 10)
                await h.type_line("4")
                await slow_bob.wait_turn(10)
                slow_carol = await accept(h, carol, slow=True, start=1)  # we start, then carol
                await h.wait_for(lambda: h.controller.online.round.id == slow_carol.id, 10)
                # our own side must hold the start too before the digit can play (the
                # admin's wait_started says only that the admin has it)
                await h.wait_for(lambda: me.rounds[slow_carol.id].is_my_turn, 10)
                await h.type_line("4")
                await slow_carol.wait_turn(10)
                slow_dave = await accept(h, dave, slow=True, start=0)  # dave to move
                assert me.busy and len(me.rounds) == 4  # busy: in the live round only
                # our side has its start too (the admin's wait_started says only the admin has)
                await h.wait_for(lambda: all(r.game is not None for r in me.rounds.values()), 15)
                shown = await listed(h, "/rounds", "Your rounds")
                assert len(shown) == 4, shown
                assert any("Connect Four with eve · eve to move · 14:" in x and x.endswith("· live")
                           for x in shown), shown
                for nick in ("bob", "carol", "dave"):
                    assert any(f"Connect Four with {nick} · {nick} to move · 24 hours left · 1 day per turn"
                               in x for x in shown), shown
            # away: bob moves in his slow round, nobody else does
            await slow_bob.play("3")
            await asyncio.sleep(0.3)
            async with shell(tmp_path, broker_url) as h:
                await said(h, "Resumed round", 15, count=4)
                await said(h, ">>> bob moved in Connect Four while you were away — your turn. <<<", 15)
                online = h.controller.online
                await h.wait_for(lambda: online.round is not None and online.round.id == slow_bob.id, 10)
                await h.wait_for(lambda: "(you)" in h.controller.status_text(), 10)
                shown = await listed(h, "/rounds", "Your rounds")
                assert len(shown) == 4, shown
                assert any(x.startswith("▶") and "with bob · your turn · 24 hours left" in x for x in shown), shown
                assert sum(x.startswith("▶") for x in shown) == 1
                carol_no = number(shown, "carol")
                await h.type_line(f"/rounds {carol_no}")
                await h.wait_for(lambda: online.round.id == slow_carol.id, 15)
                await said(h, f"On the board (/rounds {carol_no}): Connect Four with carol · carol to move.")
                await h.type_line("/round 99")
                await said(h, "No entry 99 in /rounds: /rounds lists your rounds.")
                bob_no = number(shown, "bob")
                await h.type_line(f"/rounds {bob_no}")
                await h.wait_for(lambda: online.round.id == slow_bob.id and online.round.is_my_turn, 15)
                await h.type_line("4")  # our move in bob's round; then away again
                await slow_bob.wait_turn(10)
            await slow_bob.play("3")
            await asyncio.sleep(0.3)
            async with shell(tmp_path, broker_url, lang="de") as h:
                await said(h, "aus dem Protokoll wieder aufgenommen", 15, count=4)
                await said(h, ">>> bob hat in Vier in einer Reihe gezogen, während du weg warst – du bist am Zug. <<<", 15)
                online = h.controller.online
                await h.wait_for(lambda: online.round is not None and online.round.id == slow_bob.id, 10)
                shown = await listed(h, "/runden", "Deine Runden")
                assert len(shown) == 4, shown
                assert any(x.startswith("▶") and "Vier in einer Reihe mit bob · du bist am Zug · noch 24 Stunden" in x
                           for x in shown), shown
                assert any("Vier in einer Reihe mit eve · eve ist am Zug" in x and x.endswith("Live-Runde")
                           for x in shown), shown
                assert not live.is_over and not slow_dave.is_over and not slow_carol.is_over
                # /leave leaves the round on the board only: the others go on
                await h.type_line("/verlassen")
                await slow_bob.wait_over(10)
                await asyncio.sleep(0.3)
                assert not live.is_over and not slow_dave.is_over and not slow_carol.is_over
                assert online.peer.busy  # still in eve's live round
                shown = await listed(h, "/runden", "Deine Runden")
                assert len(shown) == 3 and not any(" mit bob " in x for x in shown), shown

    run(scenario())
