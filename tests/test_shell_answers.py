"""Every command answers (issue 19), through the shell's real input on a real Mosquitto:
a decline is confirmed, a take-back among three is answered by the player to move only,
an invitation names who starts, a seat count that does not fit says how to fix it, and
/quit in a running round asks first and says how long there is to come back."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from test_shell_life_online import online_shell, run, said, seen_in_lobby

from p2p.shell.testing import HeadlessShell

peer_mod = pytest.importorskip("p2p.peer")
Peer = peer_mod.Peer


async def my_id_known(h: HeadlessShell, *peers: Peer) -> str:
    await h.wait_for(lambda: h.controller.online is not None and h.controller.online.connected(), 10)
    my_id = h.controller.online.peer.peer_id
    for peer in peers:
        await h.wait_for(lambda peer=peer: peer.find_peer(my_id[:8]) is not None, 10)
    return my_id


def lines(h: HeadlessShell) -> list[str]:
    return h.controller.state.text_lines()


def test_decline_is_confirmed_and_the_invitation_names_who_starts(tmp_path: Path, broker_url: str) -> None:
    """/decline said nothing to the decliner; an invitation with a chosen starter said
    "starter: chosen" without a name. German too."""
    async def scenario() -> None:
        async with Peer(broker_url, nick="alice") as alice, online_shell(tmp_path, broker_url, lang="de") as h:
            my_id = await my_id_known(h, alice)
            await alice.invite([my_id[:8]], "connect4", start=0)
            await said(h, "lädt dich zu Vier in einer Reihe ein")
            await said(h, "wer beginnt: alice (gewählt)")
            await h.type_line("/decline")
            await said(h, "Du hast die Einladung von alice zu Vier in einer Reihe abgelehnt.")
            # the decline reaches alice a moment after the shell says it was sent
            await h.wait_for(lambda: not alice.busy, 10)
            await alice.invite([my_id[:8]], "connect4", start=1)
            await said(h, "wer beginnt: du (gewählt)")

    run(scenario())


def test_a_take_back_among_three_is_answered_by_the_player_to_move(tmp_path: Path, broker_url: str) -> None:
    """Cube for three: alice moves and asks to take it back; bob is to move. The shell
    (not to move) was told "/accept or /decline" and /accept then said "No open
    invitation"; now it says bob decides, and /accept says it is bob's to answer."""
    async def scenario() -> None:
        async with Peer(broker_url, nick="alice") as alice, Peer(broker_url, nick="bob") as bob, \
                online_shell(tmp_path, broker_url) as h:
            my_id = await my_id_known(h, alice, bob)
            await h.wait_for(lambda: alice.find_peer("bob") is not None, 10)
            ra = await alice.invite(["bob", my_id[:8]], "cube", {"players": 3}, start=0)
            for _ in range(400):
                if bob.invitations:
                    break
                await asyncio.sleep(0.025)
            await bob.invitations[-1].accept()
            await said(h, "invites you to 3D Connect Four")
            await h.type_line("/accept")
            await ra.wait_turn(20)
            await ra.play("a1")
            await said(h, "(alice): a1")
            await ra.request_takeback()
            line = await said(h, "asks to take back the move a1")
            assert "bob is to move and decides" in line, line
            assert "/accept" not in line
            await h.type_line("/accept")
            await said(h, "The take-back is for bob (to move) to answer, not you.")
            assert not any("No open invitation" in x for x in lines(h))

    run(scenario())


def test_the_asker_is_told_who_must_agree_in_german(tmp_path: Path, broker_url: str) -> None:
    """The German line said "wenn der andere zustimmt" (one other) also among three."""
    async def scenario() -> None:
        async with Peer(broker_url, nick="alice") as alice, online_shell(tmp_path, broker_url, lang="de") as h:
            my_id = await my_id_known(h, alice)
            ra = await alice.invite([my_id[:8]], "connect4", start=1)
            await said(h, "lädt dich zu")
            await h.type_line("/accept")
            await h.wait_for(lambda: h.controller.online.round is not None and h.controller.online.round.is_my_turn, 20)
            await h.type_line("4")
            await h.wait_for(lambda: ra.is_my_turn, 10)
            await h.type_line("/undo")
            await said(h, "Bitte um Rücknahme von 4 gesendet; sie gilt, wenn alice (am Zug) zustimmt.")

    run(scenario())


def test_with_a_computer_seat_the_drawn_starter_is_named(tmp_path: Path, broker_url: str) -> None:
    """Four-player chess with two computer seats, the starter drawn: the "X starts
    (drawn)" line was missing (a computer's first move came in the same step)."""
    async def scenario() -> None:
        async with Peer(broker_url, nick="bob") as bob, online_shell(tmp_path, broker_url) as h:
            await my_id_known(h, bob)
            await seen_in_lobby(h, "bob")
            await h.type_line("/invite bob chess4 level=einfach")
            for _ in range(400):
                if bob.invitations:
                    break
                await asyncio.sleep(0.025)
            await bob.invitations[-1].accept()
            await said(h, "starts (drawn).", 20)

    run(scenario())


def test_a_computer_that_starts_is_named_before_its_first_move(tmp_path: Path, broker_url: str) -> None:
    """The computer seat chosen to start moves in the same step as the start: the
    starter line was skipped because the board already held a move."""
    async def scenario() -> None:
        async with Peer(broker_url, nick="alice") as alice, online_shell(tmp_path, broker_url) as h:
            my_id = await my_id_known(h, alice)
            await alice.invite([my_id[:8]], "chess4", computers=["einfach", "einfach"], start=2)
            await said(h, "starter: computer easy (chosen)")
            await h.type_line("/accept")
            line = await said(h, "starts (chosen).", 20)
            assert "(computer easy)" in line, line

    run(scenario())


def test_a_seat_count_that_does_not_fit_says_how_to_fill_it(tmp_path: Path, broker_url: str) -> None:
    """/invite bob cube players=3 said "needs 3 seats" with no hint to add a computer."""
    async def scenario() -> None:
        async with Peer(broker_url, nick="bob") as bob, online_shell(tmp_path, broker_url) as h:
            await my_id_known(h, bob)
            await seen_in_lobby(h, "bob")
            await h.type_line("/invite bob cube players=3")
            line = await said(h, "needs 3 seats, you named 2 (with you)")
            assert "ai=1" in line, line
            assert h.controller.online.round is None

    run(scenario())


def test_quit_in_a_running_round_asks_first_and_says_how_long_to_come_back(tmp_path: Path, broker_url: str) -> None:
    """/quit mid-round exited at once, with no word about the minute to come back."""
    async def scenario() -> None:
        async with Peer(broker_url, nick="alice") as alice, online_shell(tmp_path, broker_url, lang="de") as h:
            my_id = await my_id_known(h, alice)
            await alice.invite([my_id[:8]], "connect4", start=0)
            await said(h, "lädt dich zu")
            await h.type_line("/accept")
            await h.wait_for(lambda: h.controller.online.round is not None
                             and h.controller.online.round.game is not None, 20)
            await h.type_line("/quit")
            line = await said(h, "Die Runde läuft noch.")
            from p2p.peer.config import offline_grace_ms

            # the others forfeit us after the offline limit plus a third (issue 26.3)
            secs = offline_grace_ms(h.controller.online.peer.turn_timeouts.offline_ms) // 1000
            assert f" {secs} s" in line and "/quit" in line, line
            assert h.exit_code is None and h.app.is_running
            await h.type_line("/quit")
            await h.wait_for(lambda: h.exit_code is not None, 20)

    run(scenario())


def test_quit_without_a_round_quits_at_once(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with HeadlessShell(config_dir=tmp_path) as h:
            await h.type_line("/quit")
            await h.wait_for(lambda: h.exit_code is not None, 20)

    run(scenario())
