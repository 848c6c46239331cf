"""The draw cannot be steered, live: hostile admins and withholders on a real Mosquitto.

A hostile admin here is a real ``Peer`` whose round machine signs what an attacker would
(validly, with the admin's own key) instead of what the protocol says; the honest members
are unmodified peers.  Each test fails on the v1 rules.  Since protocol v5 every
member's commitment travels with the invitation (genesis, accept), and the start closes
the set (docs/protocol.md §7).
"""

from __future__ import annotations

import asyncio

import pytest
from conftest import Peers, eventually, invitation, play_out, run
from test_integration_hostile import expect_rejected
from test_integration_rounds import assert_same_outcome

from p2p.peer import Peer, RoundNotice
from p2p.protocol import draw, round_timers
from p2p.protocol import events as ev
from p2p.protocol.effects import Publish
from p2p.protocol.round import Phase


async def expect_notice(notes, text: str, timeout: float = 5.0) -> RoundNotice:  # type: ignore[no-untyped-def]
    """The next ``RoundNotice`` whose text contains ``text``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        note = await notes.next(max(0.01, deadline - loop.time()))
        if isinstance(note, RoundNotice) and text in note.text:
            return note


def hostile_chain_event(machine, kind: str, body: dict) -> list:  # type: ignore[no-untyped-def]
    """Sign ``kind`` at the head with the admin's key and publish it, whatever the rules say."""
    head = machine.state.head
    event = ev.make(
        machine.me,
        kind,
        head.ts + 1,
        body,
        round=machine.state.round_id,
        seq=head.seq + 1,
        prev=head.id,
    )
    return [Publish(machine.route(), event)]


async def invite_and_accept(
    admin: Peer, guests: list[Peer], game: str, options: dict, **kw
):  # type: ignore[no-untyped-def]
    rnd = await admin.invite([g.peer_id for g in guests], game, options, **kw)
    rounds = [rnd]
    for guest in guests:
        rounds.append(await (await invitation(guest, rnd.id)).accept())
    return rounds


def test_admin_drawing_on_its_own_reveal_alone_is_refused_live(peers: Peers) -> None:
    """Since v5 the start closes the commitments (bob's came in its accept); a hostile
    admin's draw that seals only its own reveal is refused and named by bob."""
    async def body() -> None:
        async with peers("admin", "bob") as (admin, bob):
            notes = bob.events()
            rnd = await admin.invite([bob.peer_id], "connect4", {})
            machine = rnd.machine
            honest_draw = machine._draw
            sent: list[bool] = []

            def draw_on_mine(now: int) -> list:  # type: ignore[type-arg]
                if sent:
                    return []
                sent.append(True)
                mine = machine.side[("reveal", machine.me.public_key)]
                seed = draw.draw_seed(
                    machine.state.round_id, [bytes.fromhex(mine.body["nonce"])]
                )
                body = {"sealed": [mine.value()], "seed": seed.hex(), "starter": 0}
                return hostile_chain_event(machine, "draw", body)

            machine._draw = draw_on_mine  # type: ignore[method-assign]
            theirs = await (await invitation(bob, rnd.id)).accept()
            await expect_rejected(notes, "the draw leaves out the reveal of seat 1")
            await expect_notice(notes, "left out the reveal of seat 1 that reached us")
            assert theirs.phase is Phase.REVEAL  # the draw did not go ahead
            assert [e.kind for e in theirs.log()] == ["genesis", "start"]
            # the honest rules: every reveal sealed, then a draw both sides verify
            machine._draw = honest_draw  # type: ignore[method-assign]
            await rnd._link.act(lambda m, now: m._draw(now))
            for r in (rnd, theirs):
                await r.wait_started(10)
            assert {r.starter for r in (rnd, theirs)} == {rnd.starter}
            assert sorted(theirs.chain_state.revealed) == [0, 1]

    run(body())


def test_admin_choosing_a_subset_after_seeing_the_reveals_is_refused_live(
    peers: Peers, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(round_timers, "REVEAL_TIMEOUT_MS", 1500)

    async def body() -> None:
        async with peers("admin", "bob", "carol") as (admin, bob, carol):
            notes = bob.events()
            rnd = await admin.invite(
                [bob.peer_id, carol.peer_id], "cube", {"players": 3}
            )
            machine = rnd.machine
            sent: list[bool] = []

            def draw_without_seat_2(now: int) -> list:  # type: ignore[type-arg]
                """Seen every reveal; seal the subset that does not contain seat 2."""
                if sent:
                    return []
                sent.append(True)
                st = machine.state
                reveals = [
                    e for e in machine.pooled("reveal") if st.seat_of(e.pk) != 2
                ]
                seed = draw.draw_seed(
                    st.round_id, [bytes.fromhex(e.body["nonce"]) for e in reveals]
                )
                body = {
                    "sealed": [e.value() for e in reveals],
                    "seed": seed.hex(),
                    "starter": draw.starter(seed, [0, 1]),
                }
                return hostile_chain_event(machine, "draw", body)

            machine._draw = draw_without_seat_2  # type: ignore[method-assign]
            rounds = [rnd]
            for guest in (bob, carol):
                rounds.append(await (await invitation(guest, rnd.id)).accept())
            await expect_rejected(notes, "the draw leaves out the reveal of seat 2")
            await expect_notice(notes, "left out the reveal of seat 2 that reached us")
            assert rounds[1].phase is Phase.REVEAL and rounds[2].phase is Phase.REVEAL
            # the admin's remaining choice is to cancel: the members see what it threw away
            await rnd.cancel("I did not like the draw")
            await expect_notice(notes, "every reveal reached us; seat")
            for r in rounds:
                await r.wait_over(10)
                assert r.phase is Phase.CANCELLED and r.starter is None

    run(body())


def test_withheld_reveal_cancels_the_draw_live(
    peers: Peers, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(round_timers, "REVEAL_TIMEOUT_MS", 1500)

    async def body() -> None:
        async with peers("fair1", "fair2", "cheat") as (p1, p2, cheat):
            # The cheater commits, then never publishes its reveal.
            # (its payloads are sealed: drop the reveal before it is sealed and sent)
            original = cheat.publish_for

            def withhold(link, effect):  # type: ignore[no-untyped-def]
                if effect.event.kind != "reveal":
                    original(link, effect)

            cheat.publish_for = withhold  # type: ignore[method-assign]
            rounds = await invite_and_accept(p1, [p2, cheat], "cube", {"players": 3})
            for r in rounds:
                await r.wait_started(10)
            cheat_seat = rounds[2].my_seat
            for r in rounds:
                st = r.chain_state
                assert st.phase is Phase.CANCELLED and st.starter is None
                assert st.end_reason == (
                    f"cancelled: seat {cheat_seat} did not reveal for the draw in time"
                )

    run(body())


def test_named_starter_with_a_computer_mixes_every_members_nonce_live(
    peers: Peers,
) -> None:
    async def body() -> None:
        async with peers("host", "guest") as (host, guest):
            rounds = await invite_and_accept(
                host, [guest], "cube", {"players": 3}, computers=["neuling"], start=1
            )
            for r in rounds:
                await r.wait_started(10)
            st = rounds[1].chain_state
            assert st.starter == 1 and sorted(st.revealed) == [0, 1]
            assert st.seed == draw.draw_seed(
                st.round_id, [st.revealed[0], st.revealed[1]]
            )
            assert st.seed != draw.fixed_seed(
                st.round_id
            )  # the round id alone no longer decides
            await play_out(rounds, 20)
            assert_same_outcome(rounds)
            await eventually(lambda: not host.busy and not guest.busy, 20, "both free")

    run(body())
