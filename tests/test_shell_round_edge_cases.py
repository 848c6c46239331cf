"""Bugs found by playing the shell as people do (two shells on one Mosquitto), each
through the shell's real input: what a player saw differ, cut or go wrong."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from test_shell_life_online import accepted_from, invited_and_accepted, run, said, status

from p2p.shell.connect import attach, attach_hooks_only
from p2p.shell.testing import HeadlessShell

peer_mod = pytest.importorskip("p2p.peer")
Peer = peer_mod.Peer


async def next_invitation(peer) -> None:
    for _ in range(400):
        if peer.invitations:
            return
        await asyncio.sleep(0.025)
    raise TimeoutError("no invitation arrived")


def test_a_restarted_shell_keeps_the_round_number_and_the_score(tmp_path: Path, broker_url: str) -> None:
    """Round 2 after a won round 1; the shell quits mid-round and starts again: its status
    line said "Round 1 · Score alice 0 · tester 0" while alice's said round 2 and 1:0."""
    async def scenario() -> None:
        async with Peer(broker_url, nick="alice") as alice:
            async with HeadlessShell(
                config_dir=tmp_path, lang="en", broker=broker_url, startup=attach(broker_url), rows=30, columns=100,
            ) as h:
                await h.wait_screen("Connected to", 10)
                my_id = h.controller.online.peer.peer_id
                r1 = await invited_and_accepted(alice, h)
                await r1.wait_turn(20)
                await r1.resign()
                await h.wait_for(lambda: "Round 1 · over" in status(h), 20)
                r2 = await alice.invite([my_id[:8]], "connect4", start=1)
                await h.wait_for(lambda: sum("invites you" in line for line in h.controller.state.text_lines()) == 2, 10)
                await h.type_line("/accept")
                await h.wait_for(lambda: "Round 2 · To move: Yellow (you)" in status(h), 20)
                assert "Score alice 0 · tester 1" in status(h)
                h.send("7")
                await h.wait_for(lambda: len(r2.game.history()) == 1 if r2.game else False, 10)
            await asyncio.sleep(0.3)
            async with HeadlessShell(
                config_dir=tmp_path, lang="en", broker=broker_url, startup=attach(broker_url), rows=30, columns=100,
            ) as h:
                await said(h, "Resumed round", 15)
                await h.wait_for(lambda: "To move: Red (alice)" in status(h), 10)
                assert "Round 2 · " in status(h), status(h)
                assert "Score alice 0 · tester 1" in status(h), status(h)

    run(scenario())


def test_the_score_line_counts_per_group_so_it_reads_the_same_on_every_peer(tmp_path: Path, broker_url: str) -> None:
    """We beat alice, then bob invites us: bob's shell has never seen a round of ours and
    says "Round 1 · bob 0 · tester 0"; ours said "Round 2 · bob 0 · tester 1" (the win
    over alice counted in a group bob is not in). Back with alice, her count goes on."""
    async def scenario() -> None:
        async with Peer(broker_url, nick="alice") as alice, Peer(broker_url, nick="bob") as bob, HeadlessShell(
            config_dir=tmp_path, lang="en", broker=broker_url, startup=attach(broker_url), rows=30, columns=100,
        ) as h:
            await h.wait_screen("Connected to", 10)
            my_id = h.controller.online.peer.peer_id
            for peer in (alice, bob):
                await h.wait_for(lambda peer=peer: peer.find_peer(my_id[:8]) is not None, 10)

            async def round_with(peer, seen: int) -> object:
                rnd = await peer.invite([my_id[:8]], "connect4", start=0)
                await h.wait_for(lambda: sum("invites you" in line for line in h.controller.state.text_lines())
                                 == seen, 10)
                await h.type_line("/accept")
                await rnd.wait_turn(20)
                return rnd

            r1 = await round_with(alice, 1)
            await r1.resign()
            await h.wait_for(lambda: "over: Yellow (you) wins" in status(h), 20)
            # the status reads the chain's end at once; the score follows the end's notice
            await h.wait_for(lambda: "Score alice 0 · tester 1" in status(h), 10)
            r2 = await round_with(bob, 2)
            await h.wait_for(lambda: "To move: Red (bob)" in status(h), 10)
            assert status(h).startswith("Round 1 · ") and "Score bob 0 · tester 0" in status(h), status(h)
            await r2.resign()
            await h.wait_for(lambda: "Round 1 · over: Yellow (you) wins" in status(h), 20)
            await round_with(alice, 3)
            await h.wait_for(lambda: "To move: Red (alice)" in status(h), 10)
            assert status(h).startswith("Round 2 · ") and "Score alice 0 · tester 1" in status(h), status(h)

    run(scenario())


def test_local_without_mosquitto_says_why_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``/local`` on a machine without Mosquitto: the line naming the missing program, not
    "unexpected error, see shell.log" (a NameError in the failure path)."""
    import p2p.net.broker as broker_mod

    monkeypatch.setattr(broker_mod, "mosquitto_path", lambda: None)  # as on a machine without it

    async def hooks(shell) -> None:
        attach_hooks_only(shell)

    async def scenario() -> None:
        async with HeadlessShell(config_dir=tmp_path, lang="en", startup=hooks) as h:
            await h.type_line("/local")
            line = await said(h, "Local broker does not start")
            assert "mosquitto is not installed" in line
            assert not any("shell.log" in text for text in h.controller.state.text_lines())

    run(scenario())


def test_german_piece_letters_in_the_english_shell_play_and_never_show_a_raw_key(tmp_path: Path) -> None:
    """``Sb5`` typed in the English shell said "No piece.0 can move to b5."; German letters
    that clash with no English one (S, L, T, U) are understood as well."""
    import itertools

    async def scenario() -> None:
        async with HeadlessShell(config_dir=tmp_path, lang="en", color=False, rows=30, columns=100) as h:
            counter = itertools.count(1000)
            h.controller.clock = lambda: float(next(counter))  # no input lock between lines
            await h.type_line("/play chess4 2p")
            await h.wait_screen("Round 1 · To move: Red")
            await h.type_line("Si3")  # S(pringer): the one knight that reaches i3
            await h.wait_for(lambda: h.controller.match.game.history() == ["j1-i3"])
            await h.type_line("Sb5")  # Blue: no knight reaches b5
            await said(h, "No knight can move to b5.")
            assert not any("piece." in line for line in h.controller.state.text_lines())

    run(scenario())


def test_joining_the_same_code_twice_says_so_in_the_users_language(tmp_path: Path, broker_url: str) -> None:
    """A second ``/join CODE`` while waiting for the others said "Fehler: das geht gerade
    nicht (Details in shell.log)"; the player is told they are already in that round."""
    async def scenario() -> None:
        async with Peer(broker_url, nick="host") as host, HeadlessShell(
            config_dir=tmp_path, lang="de", broker=broker_url, startup=attach(broker_url), rows=30, columns=100,
        ) as h:
            await h.wait_screen("Verbunden mit", 10)
            rh = await host.open_private("cube", {"players": 3}, open_seats=2)
            await h.type_line(f"/join {rh.code}")
            await said(h, "beigetreten")
            await h.type_line(f"/join {rh.code}")
            await said(h, "Du bist dieser Runde schon beigetreten")
            assert not any("shell.log" in line for line in h.controller.state.text_lines())

    run(scenario())


def test_the_analysis_summary_says_one_mistake_not_one_mistakes(tmp_path: Path) -> None:
    """A round with one mistake ended "Analysis done: 1 mistakes, 1 of them estimated."."""
    import itertools

    async def scenario() -> None:
        async with HeadlessShell(config_dir=tmp_path, lang="en", color=False, rows=30, columns=120) as h:
            counter = itertools.count(1000)
            h.controller.clock = lambda: float(next(counter))  # no input lock between moves
            await h.type_line("/play connect4 2p")
            for move in "524324657":  # Red's 5 at move 8 loses; the only mistake
                await h.type_line(move)
            await h.wait_for(lambda: h.controller.match.game.is_over(), 10)
            await h.type_line("/analyze")
            summary = await said(h, "Analysis done", 60)
            assert "1 mistake," in summary and "mistakes" not in summary, summary

    run(scenario())


def test_two_people_with_one_name_are_told_apart_not_called_nobody(tmp_path: Path, broker_url: str) -> None:
    """Two "bob"s in the lobby (a friend and someone using the name): ``/invite bob`` and
    ``/friend bob`` said "Nobody called bob in the lobby."; they now say there are
    several, with the fingerprints to choose by, and the fingerprint works."""
    from p2p.protocol.identity import fingerprint

    async def scenario() -> None:
        async with Peer(broker_url, nick="bob") as bob1, Peer(broker_url, nick="bob") as bob2, HeadlessShell(
            config_dir=tmp_path, lang="en", broker=broker_url, startup=attach(broker_url), rows=30, columns=100,
        ) as h:
            await h.wait_screen("Connected to", 10)
            await h.wait_for(lambda: sum(e.nick == "bob" for e in h.controller.state.lobby) == 2, 10)
            await h.type_line("/invite bob connect4")
            line = await said(h, "Several in the lobby are called bob")
            assert fingerprint(bob1.public_key)[:9] in line and fingerprint(bob2.public_key)[:9] in line
            await h.type_line("/friend bob")
            await h.wait_for(lambda: sum("Several in the lobby" in t for t in h.controller.state.text_lines()) == 2)
            assert not any("Nobody called" in t for t in h.controller.state.text_lines())
            await h.type_line(f"/invite {fingerprint(bob2.public_key)[:9].replace(' ', '')} connect4")
            await said(h, "Invitation to bob for Connect Four sent")
            await next_invitation(bob2)

    run(scenario())


def test_the_player_who_left_counts_the_others_win_like_they_do(tmp_path: Path, broker_url: str) -> None:
    """We /leave a Connect Four round, alice wins by it and invites us again: her score
    line said "alice 1 · tester 0", ours "alice 0 · tester 0" (the leaver's shell forgot
    the round it left before its end arrived)."""
    async def scenario() -> None:
        async with Peer(broker_url, nick="alice") as alice, HeadlessShell(
            config_dir=tmp_path, lang="en", broker=broker_url, startup=attach(broker_url), rows=30, columns=100,
        ) as h:
            r1 = await accepted_from(alice, h)
            my_id = h.controller.online.peer.peer_id
            h.send("7")
            await r1.wait_turn(20)
            await h.type_line("/leave")
            await r1.wait_over(20)
            assert r1.winners == (0,)
            await asyncio.sleep(0.5)  # the end reaches the shell that left
            await alice.invite([my_id[:8]], "connect4", start=1)
            await h.wait_for(lambda: sum("invites you" in line for line in h.controller.state.text_lines()) == 2, 10)
            await h.type_line("/accept")
            await h.wait_for(lambda: "Round 2 · To move: Yellow (you)" in status(h), 20)
            assert "Score alice 1 · tester 0" in status(h), status(h)

    run(scenario())


def test_again_in_a_running_online_round_does_not_claim_it_is_over(tmp_path: Path, broker_url: str) -> None:
    """``/again`` while the online round runs said "The round is over. /again for another
    round." with the status line showing whose move it is."""
    async def scenario() -> None:
        async with Peer(broker_url, nick="alice") as alice, HeadlessShell(
            config_dir=tmp_path, lang="en", broker=broker_url, startup=attach(broker_url), rows=30, columns=100,
        ) as h:
            await h.wait_screen("Connected to", 10)
            my_id = h.controller.online.peer.peer_id
            await h.wait_for(lambda: alice.find_peer(my_id[:8]) is not None, 10)
            await alice.invite([my_id[:8]], "connect4", start=1)
            await said(h, "invites you to Connect Four")
            await h.type_line("/accept")
            await h.wait_for(lambda: "Round 1 · To move: Yellow (you)" in status(h), 20)
            await h.type_line("/again")
            await said(h, "The round is still running")
            assert not any("The round is over" in line for line in h.controller.state.text_lines())

    run(scenario())


def test_hint_after_a_finished_round_says_it_is_over_not_that_no_game_runs(tmp_path: Path) -> None:
    """``/hint`` after a local Connect Four round said "No game is running." beside the
    finished board; it says the round is over (and /analyze still works)."""
    import itertools

    async def scenario() -> None:
        async with HeadlessShell(config_dir=tmp_path, lang="en", color=False, rows=30, columns=120) as h:
            counter = itertools.count(1000)
            h.controller.clock = lambda: float(next(counter))
            await h.type_line("/play connect4 2p")
            for move in "1212121":
                await h.type_line(move)
            await h.wait_for(lambda: h.controller.match.game.is_over(), 10)
            await h.type_line("/hint")
            await said(h, "The round is over. /again for another round.")
            assert not any("No game is running" in line for line in h.controller.state.text_lines())

    run(scenario())


def test_resign_in_the_local_cube_is_no_invalid_move(tmp_path: Path) -> None:
    """``/aufgeben`` in a local cube round said "Ungültiger Zug /resign: in diesem Spiel gibt
    es kein Aufgeben" (a command called a move, in the other language's spelling)."""
    async def scenario() -> None:
        async with HeadlessShell(config_dir=tmp_path, lang="de", color=False, rows=30, columns=120) as h:
            await h.type_line("/spiel cube")
            await h.wait_screen("Am Zug: Rot")
            await h.type_line("/aufgeben")
            line = await said(h, "Aufgeben")
            assert "Viergewinnt 3D" in line and "/nochmal" in line, line
            assert not any("Ungültiger Zug" in t or "/resign" in t for t in h.controller.state.text_lines())

    run(scenario())


def test_start_now_is_said_once_in_the_hosts_and_the_joiners_language(tmp_path: Path, broker_url: str) -> None:
    """The German host's ``/start now`` printed "Die Runde ist abgesagt: the host started
    with who was there" (English inside German, and noise: the host did it); a German
    joiner got the same English reason."""
    async def scenario() -> None:
        async with Peer(broker_url, nick="guest") as guest, HeadlessShell(
            config_dir=tmp_path / "host", lang="de", broker=broker_url, startup=attach(broker_url), rows=30, columns=100,
        ) as h:
            await h.wait_screen("Verbunden mit", 10)
            await h.type_line("/privat cube open=2")
            line = await said(h, ">>> Beitrittscode: ")
            code = line.split("/join ")[1].split()[0]
            waiting = h.controller.online.round
            await guest.join(code)
            await h.wait_for(lambda: any(k == "join" for k, _ in waiting.machine.side), 10)
            await h.type_line("/start now")
            await said(h, "Start mit guest")
            await h.wait_for(lambda: waiting.phase.value == "cancelled", 10)
            await asyncio.sleep(0.3)
            lines = h.controller.state.text_lines()
            assert not any("abgesagt" in t or "the host started" in t for t in lines), lines
        # The joiner's side: a German shell in a private round its host starts now.
        async with Peer(broker_url, nick="host") as host, HeadlessShell(
            config_dir=tmp_path / "joiner", lang="de", broker=broker_url, startup=attach(broker_url), rows=30, columns=100,
        ) as h:
            await h.wait_screen("Verbunden mit", 10)
            rh = await host.open_private("cube", {"players": 3}, open_seats=2)
            await h.type_line(f"/join {rh.code}")
            await said(h, "beigetreten")
            from p2p.shell.online_notes import START_NOW_REASON

            await rh.cancel(START_NOW_REASON)
            await said(h, "Der Gastgeber hat mit den Anwesenden begonnen")
            assert not any("the host started" in t for t in h.controller.state.text_lines())

    run(scenario())
