"""Issue 11 online, through the shell's real input on a real Mosquitto: the move list names
the real mover, nobody stays "in a round" that is gone, a member who goes offline is
announced with the time until the forfeit, forfeits and scores use names, a restarted
shell takes its round up again, and a digit typed out of turn never becomes chat."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
from pathlib import Path
from typing import Any

import pytest

from p2p.shell.connect import attach
from p2p.shell.testing import HeadlessShell

peer_mod = pytest.importorskip("p2p.peer")
Peer = peer_mod.Peer


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 120))


def online_shell(tmp_path: Path, broker_url: str, lang: str = "en", **attach_options: Any) -> HeadlessShell:
    """A headless shell (30 x 100) with its config in ``tmp_path``, connecting to ``broker_url``."""
    return HeadlessShell(
        config_dir=tmp_path, lang=lang, broker=broker_url, rows=30, columns=100,
        startup=attach(broker_url, **attach_options),
    )


async def said(h: HeadlessShell, text: str, timeout: float = 10.0) -> str:
    """Wait until a chat-pane line contains ``text``; returns that line."""
    def found() -> str | None:
        return next((line for line in h.controller.state.text_lines() if text in line), None)

    await h.wait_for(lambda: found() is not None, timeout)
    return found() or ""


def status(h: HeadlessShell) -> str:
    return h.controller.status_text()


async def invited_and_accepted(alice: Peer, h: HeadlessShell, start: int = 0) -> peer_mod.Round:
    """``alice`` (who sees the shell's peer) invites it to Connect Four; the shell types
    /accept; alice's ``Round`` once play has started on her side."""
    my_id = h.controller.online.peer.peer_id
    await h.wait_for(lambda: alice.find_peer(my_id[:8]) is not None, 10)
    ra = await alice.invite([my_id[:8]], "connect4", start=start)
    await said(h, "invites you to Connect Four")
    await h.type_line("/accept")
    await ra.wait_started(20)
    return ra


async def accepted_from(alice: Peer, h: HeadlessShell) -> peer_mod.Round:
    """The shell accepts ``alice``'s Connect Four invitation; alice plays 1, our turn."""
    await h.wait_screen("Connected to", 10)
    ra = await invited_and_accepted(alice, h)
    await ra.wait_turn(20)
    await ra.play("1")
    await h.wait_for(lambda: "To move: Yellow (you)" in status(h), 20)
    return ra


async def seen_in_lobby(h: HeadlessShell, nick: str) -> None:
    await h.wait_for(lambda: any(e.nick == nick for e in h.controller.state.lobby), 10)


async def accept_next(peer) -> object:
    """The scripted peer accepts the next invitation it gets."""
    for _ in range(400):
        if peer.invitations:
            return await peer.invitations[-1].accept()
        await asyncio.sleep(0.025)
    raise TimeoutError("no invitation arrived")


async def bob_accepts(h: HeadlessShell, bob: Peer, words: str) -> peer_mod.Round:
    """The shell invites ``bob`` (``/invite bob <words>``) once it sees him; bob accepts."""
    await seen_in_lobby(h, "bob")
    await h.type_line(f"/invite bob {words}")
    return await accept_next(bob)


async def autoplay(rnd, pick=lambda moves: moves[0]) -> None:
    """A scripted member plays ``pick(legal moves)`` whenever it is its turn."""
    while not rnd.is_over:
        if await rnd.wait_turn(60) and not rnd.is_over:
            await rnd.play(pick(rnd.game.legal_moves()))


def test_the_move_list_names_the_real_mover_and_a_leave_ends_the_status(tmp_path: Path, broker_url: str) -> None:
    """We run the computer seat (admin) of a 3-seat cube round: every move line names the
    seat that made it; when bob leaves (the cube has no resignation) our status says over."""
    line_re = re.compile(r"^\d\d:\d\d (Red|Yellow|Blue) \(([^)]*)\): ([a-d][1-4])$")

    async def scenario() -> None:
        async with online_shell(tmp_path, broker_url) as h:
            await h.wait_screen("Connected to", 10)
            async with Peer(broker_url, nick="bob") as bob:
                rb = await bob_accepts(h, bob, "cube ai=1 start=me")
                await h.wait_for(lambda: "To move: Red (you)" in status(h), 20)
                rnd = h.controller.online.round
                for _ in range(3):  # our move, bob's answer, the computer's answer
                    await h.wait_for(lambda: rnd.is_my_turn, 20)
                    plies = len(rnd.game.history())
                    await h.type_line(rnd.game.legal_moves()[0], settle=0.0)
                    await h.wait_for(lambda plies=plies: len(rnd.game.history()) > plies, 10)
                    await rb.wait_turn(20)
                    await rb.play(rb.game.legal_moves()[-1])
                await h.wait_for(lambda: len(rnd.game.history()) >= 9 and rnd.is_my_turn, 20)
                history = rnd.game.history()
                names = ["Red", "Yellow", "Blue"]
                movers = ["you", "bob", None]
                await h.wait_for(lambda: sum(bool(line_re.match(x)) for x in h.controller.state.text_lines()) >= len(history))
                shown = [line_re.match(x) for x in h.controller.state.text_lines()]
                shown = [(m[1], m[2], m[3]) for m in shown if m]
                assert [s[2] for s in shown] == history, shown
                for ply, (name, who, move) in enumerate(shown):
                    assert name == names[ply % 3], shown
                    expected = movers[ply % 3]
                    assert who == expected if expected else who.startswith("computer"), shown
                # bob leaves: the cube cannot go on without a seat, the round is over for us.
                await rb.leave()
                await h.wait_for(lambda: "Round 1 · over:" in status(h), 15)
                await said(h, "Round 1 over")

    run(scenario())


def test_offline_countdown_forfeit_by_name_and_no_digit_becomes_chat(tmp_path: Path, broker_url: str) -> None:
    from p2p.protocol.round import TurnTimeouts

    fast = TurnTimeouts(silent_ms=600_000, offline_ms=3_000)

    async def scenario() -> None:
        async with online_shell(tmp_path, broker_url, peer_options={"turn_timeouts": fast}) as h:
            await h.wait_screen("Connected to", 10)
            bob = Peer(broker_url, nick="bob", turn_timeouts=fast)
            await bob.start()
            try:
                await bob_accepts(h, bob, "connect4 start=me")
                await h.wait_for(lambda: "To move: Red (you)" in status(h), 20)
                rnd = h.controller.online.round
                h.send("4")  # a lone digit plays at once
                await h.wait_for(lambda: rnd.game.history() == ["4"], 10)
                # Not our turn: each digit is refused with a line, never kept to become "65".
                h.send("6")
                await said(h, "It is not your turn – 6 was not played.")
                h.send("5")
                await said(h, "It is not your turn – 5 was not played.")
                assert h.shell.input.text == ""
                assert not any(line.sender for line in h.controller.state.lines if "65" in line.text)
            finally:
                await bob.close()  # bob quits: his goodbye presence says offline
            line = await said(h, "bob went offline — you win in")
            assert "unless bob returns" in line
            await h.wait_for(lambda: "bob offline · out in" in status(h), 5)
            # The forfeit and the score use his name, never a raw key.
            forfeit = await said(h, "did not move for", 20)
            await h.wait_for(lambda: "Round 1 · over: Red (you) wins" in status(h), 10)
            assert forfeit.split(" ", 1)[1].startswith("bob did not move for")
            await h.wait_for(lambda: "tester 1 · bob 0" in status(h), 10)  # the score follows the end's notice
            for text in (forfeit, status(h), await said(h, "Round 1 over")):
                assert "?" not in text and not re.search(r"[0-9a-f]{8}", text), text

    run(scenario())


def test_leave_after_the_opponent_restarted_frees_us_for_invite_and_private(tmp_path: Path, broker_url: str) -> None:
    from p2p.protocol.identity import Identity

    seed = os.urandom(32)

    async def scenario() -> None:
        async with online_shell(tmp_path, broker_url) as h:
            await h.wait_screen("Connected to", 10)
            h.controller.online.absent_wait = 1.0
            async with Peer(broker_url, nick="bob", identity=Identity.from_seed(seed)) as bob:
                await bob_accepts(h, bob, "connect4 start=me")
                await h.wait_for(lambda: "To move: Red (you)" in status(h), 20)
                h.send("4")
                await h.wait_for(lambda: "To move: Yellow (bob)" in status(h), 10)
            await said(h, "bob went offline")
            # bob restarts without his round (a fresh program, same key): online, not in it.
            async with Peer(broker_url, nick="bob", identity=Identity.from_seed(seed)):
                await h.wait_for(lambda: any(e.nick == "bob" for e in h.controller.state.lobby), 10)
                # Not back in the round after a moment: we are told what follows, and how to get out.
                line = await said(h, "bob is online again but not in this round", 10)
                assert "out in 15 min" in line and "/leave" in line
                await h.wait_for(lambda: "bob not in the round · out in 14:" in status(h), 5)
                assert not any("bob is back" in x for x in h.controller.state.text_lines())
                await h.type_line("/leave")
                await said(h, "You left the round.")
                await h.wait_for(lambda: status(h).startswith("No game"), 5)
                assert not h.controller.online.peer.busy
                await h.type_line("/leave")
                await said(h, "No game is running.")
                await h.type_line("/private connect4")
                await said(h, ">>> Join code:")
                await h.type_line("/cancel")
                await h.wait_for(lambda: not h.controller.online.peer.busy, 10)
                await h.type_line("/invite bob connect4")
                await said(h, "Invitation to bob for Connect Four sent")
                assert not any("already in a round" in x for x in h.controller.state.text_lines())

    run(scenario())


def test_a_restarted_shell_takes_its_round_up_again(tmp_path: Path, broker_url: str) -> None:
    async def scenario() -> None:
        async with Peer(broker_url, nick="alice") as alice:
            async with online_shell(tmp_path, broker_url) as h:
                ra = await accepted_from(alice, h)
                h.send("7")
                await ra.wait_turn(20)
                await ra.play("1")
                await h.wait_for(lambda: "To move: Yellow (you)" in status(h), 10)
            # The shell quits mid-round and starts again with the same config directory.
            await asyncio.sleep(0.3)
            async with online_shell(tmp_path, broker_url) as h:
                await said(h, "Resumed round", 15)
                await said(h, "So far: 1 7 1")
                await h.wait_for(lambda: "Round 1 · To move: Yellow (you)" in status(h), 10)
                rnd = h.controller.online.round
                assert rnd.id == ra.id and h.controller.online.peer.busy
                alice_task = asyncio.create_task(autoplay(ra, lambda moves: "2"))
                for _ in range(3):
                    await h.wait_for(lambda: rnd.is_my_turn or rnd.is_over, 20)
                    if rnd.is_over:
                        break
                    plies = len(rnd.game.history())
                    h.send("7")
                    await h.wait_for(lambda plies=plies: len(rnd.game.history()) > plies, 10)
                await h.wait_for(lambda: "Round 1 · over: Yellow (you) wins" in status(h), 20)
                await asyncio.wait_for(alice_task, 20)
                assert ra.state_hash == rnd.state_hash and ra.is_over

    run(scenario())


def test_move_lines_stay_right_after_the_admin_left_and_we_run_the_computers(tmp_path: Path, broker_url: str) -> None:
    """Online four-player chess: the admin leaves, we take over its role and the computer
    seats; every move line still names the seat that made the move."""
    from p2p.games import create_game
    from p2p.shell.local_commands import default_level

    level = default_level("chess4")
    line_re = re.compile(r"^\d\d:\d\d (Red|Blue|Yellow|Green) \(([^)]*)\): ([a-n]\d+-[a-n]\d+)$")

    async def scenario() -> None:
        async with Peer(broker_url, nick="host") as host:
            async with online_shell(tmp_path, broker_url) as h:
                await h.wait_screen("Connected to", 10)
                my_id = h.controller.online.peer.peer_id
                await h.wait_for(lambda: host.find_peer(my_id[:8]) is not None, 10)
                rh = await host.invite([my_id[:8]], "chess4", {"move_limit": 16}, computers=[level, level], start=0)
                await said(h, "invites you to Four-player chess")
                await h.type_line("/accept")
                await h.wait_for(lambda: h.controller.online.round is not None, 10)
                rnd = h.controller.online.round
                for _ in range(2):  # host (Red) moves twice, then leaves
                    await rh.wait_turn(30)
                    await rh.play(rh.game.legal_moves()[0])
                    await h.wait_for(lambda: rnd.is_my_turn, 30)
                    plies = len(rnd.game.history())
                    await h.type_line(rnd.game.legal_moves()[0], settle=0.0)
                    await h.wait_for(lambda plies=plies: len(rnd.game.history()) > plies, 10)
                await rh.wait_turn(30)
                await rh.leave()
                await h.wait_for(lambda: rnd.chain_state.admin == h.controller.online.peer.public_key, 15)
                while not rnd.is_over:
                    await h.wait_for(lambda: rnd.is_my_turn or rnd.is_over, 60)
                    if rnd.is_over:
                        break
                    plies = len(rnd.game.history())
                    await h.type_line(rnd.game.legal_moves()[0], settle=0.0)
                    await h.wait_for(lambda plies=plies: len(rnd.game.history()) > plies or rnd.is_over, 10)
                await h.wait_for(lambda: "Round 1 · over:" in status(h), 30)
                # Who made each move, recomputed from the history on a fresh engine.
                game = create_game("chess4", rnd.game.options())
                names = game.seat_names()
                expected = []
                for entry in rnd.game.history():
                    if not entry.startswith("resign"):
                        seat = game.to_move()
                        who = {0: "host", 1: "you"}.get(seat, "computer")
                        expected.append((names[seat], who, entry))
                    game.apply(entry)

                def shown() -> list[tuple[str, str, str]]:
                    found = [line_re.match(x) for x in h.controller.state.text_lines()]
                    return [(m[1], "computer" if m[2].startswith("computer") else m[2], m[3]) for m in found if m]

                with contextlib.suppress(TimeoutError):  # the pane may lag the chain a moment
                    await h.wait_for(lambda: len(shown()) >= len(expected), 10)
                assert len(expected) > 6 and shown() == expected

    run(scenario())


def test_a_restarted_shell_resumes_its_private_round_with_the_code_kept_beside_the_log(
    tmp_path: Path, broker_url: str
) -> None:
    async def scenario() -> None:
        async with Peer(broker_url, nick="guest") as guest:
            async with online_shell(tmp_path, broker_url) as h:
                await h.wait_screen("Connected to", 10)
                await h.type_line("/private connect4 start=me")
                line = await said(h, ">>> Join code: ")
                code = re.search(r"Join code: (\w{3}) (\w{3})", line)
                rg = await guest.join(code[1] + code[2])
                await h.wait_for(lambda: "To move: Red (you)" in status(h), 30)
                h.send("4")
                await rg.wait_turn(20)
                await rg.play("1")
                await h.wait_for(lambda: "To move: Red (you)" in status(h), 10)
            await asyncio.sleep(0.3)
            async with online_shell(tmp_path, broker_url) as h:
                await said(h, "Resumed round", 15)
                rnd = h.controller.online.round
                assert rnd.id == rg.id and rnd.code == rg.code
                guest_task = asyncio.create_task(autoplay(rg, lambda moves: "1"))
                for _ in range(3):
                    await h.wait_for(lambda: rnd.is_my_turn, 20)
                    plies = len(rnd.game.history())
                    h.send("4")
                    await h.wait_for(lambda plies=plies: len(rnd.game.history()) > plies, 10)
                await h.wait_for(lambda: "Round 1 · over: Red (you) wins" in status(h), 20)
                await asyncio.wait_for(guest_task, 20)
                assert rg.state_hash == rnd.state_hash
                assert "guest 0" in status(h)

    run(scenario())


def test_the_host_of_a_private_round_starts_it_with_who_is_there(tmp_path: Path, broker_url: str) -> None:
    async def scenario() -> None:
        async with Peer(broker_url, nick="guest") as guest:
            async with online_shell(tmp_path, broker_url) as h:
                await h.wait_screen("Connected to", 10)
                await h.type_line("/private cube open=2 start=me")
                line = await said(h, ">>> Join code: ")
                code = re.search(r"Join code: (\w{3}) (\w{3})", line)
                await h.type_line("/start now")  # nobody there yet: one line, the code stays
                await said(h, "Nobody has joined yet")
                assert h.controller.online.round.phase.value == "forming"
                waiting = h.controller.online.round
                await guest.join(code[1] + code[2])
                await h.wait_for(lambda: any(k == "join" for k, _ in waiting.machine.side), 10)
                await h.type_line("/start now")
                await said(h, "Starting with guest: 3D Connect Four")
                rg = await accept_next(guest)
                await h.wait_for(lambda: "Round 1 · To move: Red (you)" in status(h), 30)
                assert waiting.phase.value == "cancelled"
                await rg.wait_started(30)
                assert rg.game.players == 2 and rg.id == h.controller.online.round.id

    run(scenario())


def test_an_online_take_back_the_opponent_must_accept(tmp_path: Path, broker_url: str) -> None:
    """/undo asks; the other side's /accept agrees (a signed seal); /decline keeps the move."""

    async def scenario() -> None:
        async with online_shell(tmp_path, broker_url) as h, Peer(broker_url, nick="bob") as bob:
            await h.wait_screen("Connected to", 10)
            rb = await bob_accepts(h, bob, "connect4 start=me")
            await h.wait_for(lambda: "To move: Red (you)" in status(h), 20)
            rnd = h.controller.online.round
            await h.type_line("/undo")  # nothing of ours to take back yet
            await said(h, "Online only your own last move can be taken back")
            h.send("4")
            await h.wait_for(lambda: rb.game is not None and rb.game.history() == ["4"], 10)
            await h.type_line("/undo")
            await said(h, "Asked to take back 4")
            await rb.wait_until(lambda r: r.takeback_asked == 0, 10)
            await rb.accept_takeback()  # bob agrees
            await said(h, "Your last move (4) was taken back; you move again.")
            await h.wait_for(lambda: rnd.game.history() == [] and "To move: Red (you)" in status(h), 10)
            await h.type_line("/undo")
            await said(h, "Online only your own last move")  # the take-back left nothing to undo
            h.send("3")
            await rb.wait_turn(10)
            await rb.play("5")
            await rb.request_takeback()  # now bob asks: we are told and decline
            await said(h, "bob asks to take back the move 5. /accept or /decline")
            await h.type_line("/decline")
            await said(h, "Take-back declined – bob is told at once.")
            assert rnd.game.history() == ["3", "5"]
            h.send("3")
            await h.wait_for(lambda: rb.game.history() == ["3", "5", "3"], 10)
            with pytest.raises(peer_mod.ActionError):
                await rb.accept_takeback()  # nothing pending for bob
            assert rb.state_hash == rnd.state_hash

    run(scenario())


def test_we_accept_a_take_back_with_accept(tmp_path: Path, broker_url: str) -> None:
    async def scenario() -> None:
        async with online_shell(tmp_path, broker_url, "de") as h, Peer(broker_url, nick="bob") as bob:
            await h.wait_screen("Verbunden mit", 10)
            rb = await bob_accepts(h, bob, "connect4 start=bob")
            await rb.wait_turn(20)
            await rb.play("2")
            rnd = h.controller.online.round
            await h.wait_for(lambda: rnd.game is not None and rnd.game.history() == ["2"], 10)
            await rb.request_takeback()
            await said(h, "bob möchte den Zug 2 zurücknehmen")
            await h.type_line("/annehmen")
            await said(h, "Der letzte Zug von bob (2) wurde zurückgenommen; bob ist wieder am Zug.")
            await rb.wait_until(lambda r: r.game.history() == [], 10)
            assert rb.is_my_turn and rb.state_hash == rnd.state_hash

    run(scenario())


def test_a_round_played_on_another_broker_is_not_resumed_here(tmp_path: Path, broker_url: str) -> None:
    """Its members are not on this broker: resuming would only make us forfeit them."""
    import json

    async def scenario() -> None:
        async with Peer(broker_url, nick="alice") as alice:
            async with online_shell(tmp_path, broker_url) as h:
                ra = await accepted_from(alice, h)
            side = tmp_path / "rounds" / f"round-{ra.id}.shell.json"
            data = json.loads(side.read_text())
            assert data["broker"] == broker_url
            side.write_text(json.dumps({**data, "broker": "mqtt://elsewhere.example:1883"}))
            async with online_shell(tmp_path, broker_url) as h:
                await h.wait_screen("Connected to", 10)
                await asyncio.sleep(1.5)
                assert not any("Resumed round" in x for x in h.controller.state.text_lines())
                assert h.controller.online.round is None and not h.controller.online.peer.busy

    run(scenario())


def test_a_shell_restarted_after_its_forfeit_learns_the_result_and_is_free(tmp_path: Path, broker_url: str) -> None:
    from p2p.protocol.round import TurnTimeouts

    fast = TurnTimeouts(silent_ms=600_000, offline_ms=2_000)
    options = {"turn_timeouts": fast}

    async def scenario() -> None:
        async with Peer(broker_url, nick="alice", turn_timeouts=fast) as alice:
            async with online_shell(tmp_path, broker_url, peer_options=options) as h:
                ra = await accepted_from(alice, h)
            await ra.wait_over(20)  # we quit on our turn: alice forfeits us after 2 s offline
            assert ra.winners == (0,)
            async with online_shell(tmp_path, broker_url, peer_options=options) as h:
                await said(h, "Resumed round", 15)
                await h.wait_for(lambda: "Round 1 · over: Red (alice) wins" in status(h), 20)
                await said(h, "Round 1 over")
                assert not h.controller.online.peer.busy
                assert h.controller.online.round.state_hash == ra.state_hash

    run(scenario())
