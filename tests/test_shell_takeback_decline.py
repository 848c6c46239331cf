"""A declined take-back reaches the asker at once (issue 26.13), live on Mosquitto
through the real shell, in both languages: before, the asker learnt it only when the
decliner moved ("bob played on; your take-back request lapsed").  The player to move
signs a ``takeback_decline`` (docs/protocol.md §6.3): it changes nothing in the chain,
the asker's shell says who declined which move, and the public peer API tells a script
(``Round.decline_takeback``, ``RoundNotice`` ``takeback_declined``)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from test_shell_life_online import bob_accepts, online_shell, run, said, status

peer_mod = pytest.importorskip("p2p.peer")
Peer = peer_mod.Peer
RoundNotice = peer_mod.RoundNotice

WORDS = {
    "en": {"connected": "Connected to", "undo": "/undo", "decline": "/decline", "accept": "/accept",
           "asked": "Asked to take back 4", "told": "bob declined to take back your move 4; bob is to move.",
           "lapsed": "your take-back request lapsed", "request": "bob asks to take back the move 5",
           "declined": "Take-back declined – bob is told at once.", "you_move": "To move: Red (you)",
           "nothing": "No open invitation.", "once": "You have already asked for a take-back in this round."},
    "de": {"connected": "Verbunden mit", "undo": "/zurück", "decline": "/ablehnen", "accept": "/annehmen",
           "asked": "Bitte um Rücknahme von 4 gesendet",
           "told": "bob lehnt es ab, deinen Zug 4 zurückzunehmen; bob ist am Zug.",
           "lapsed": "Bitte um Rücknahme ist hinfällig", "request": "bob möchte den Zug 5 zurücknehmen",
           "declined": "Rücknahme abgelehnt – bob erfährt es sofort.", "you_move": "Am Zug: Rot (du)",
           "nothing": "Keine offene Einladung.", "once": "Du hast in dieser Runde schon einmal um Rücknahme gebeten."},
}


def warnings(h) -> list[str]:
    return [line.text for line in h.controller.state.lines if line.kind in ("warn", "error")]


@pytest.mark.parametrize("lang", ["en", "de"])
def test_our_take_back_declined_is_told_before_the_decliner_moves(tmp_path: Path, broker_url: str, lang: str) -> None:
    w = WORDS[lang]

    async def scenario() -> None:
        async with online_shell(tmp_path, broker_url, lang) as h, Peer(broker_url, nick="bob") as bob:
            await h.wait_screen(w["connected"], 10)
            rb = await bob_accepts(h, bob, "connect4 start=me")
            await h.wait_for(lambda: w["you_move"] in status(h), 20)
            h.send("4")
            await h.wait_for(lambda: rb.game is not None and rb.game.history() == ["4"], 10)
            await h.type_line(w["undo"])
            await said(h, w["asked"])
            await rb.wait_until(lambda r: r.takeback_asked == 0, 10)
            await rb.decline_takeback()  # bob says no, and does not move
            await said(h, w["told"], 10)
            assert rb.game.history() == ["4"] and h.controller.online.round.game.history() == ["4"]
            assert h.controller.online.takeback_for is None  # our request is answered
            await h.type_line(w["undo"])  # one request per round, answered or not
            await said(h, w["once"])
            await rb.play("3")
            await h.wait_for(lambda: h.controller.online.round.game.history() == ["4", "3"], 10)
            assert not any(w["lapsed"] in x for x in h.controller.state.text_lines())  # answered, not lapsed
            assert warnings(h) == [w["once"]]  # no other warning

    run(scenario())


@pytest.mark.parametrize("lang", ["en", "de"])
def test_our_decline_reaches_the_asking_peer_at_once(tmp_path: Path, broker_url: str, lang: str) -> None:
    w = WORDS[lang]

    async def scenario() -> None:
        async with online_shell(tmp_path, broker_url, lang) as h, Peer(broker_url, nick="bob") as bob:
            feed = bob.events()
            await h.wait_screen(w["connected"], 10)
            rb = await bob_accepts(h, bob, "connect4 start=me")
            await h.wait_for(lambda: w["you_move"] in status(h), 20)
            h.send("3")
            await rb.wait_turn(10)
            await rb.play("5")
            await rb.request_takeback()
            await said(h, w["request"])
            await h.type_line(w["decline"])
            await said(h, w["declined"])
            rnd = h.controller.online.round
            me = rnd.my_seat
            while True:  # bob's script is told at once, by a public notice
                note = await feed.next(10)
                if isinstance(note, RoundNotice) and note.code == "takeback_declined":
                    break
            assert note.round.id == rb.id and note.params == {"seat": rb.my_seat, "by": me}
            assert rb.takeback_asked is None and rnd.takeback_asked is None
            assert rb.game.history() == rnd.game.history() == ["3", "5"]  # nothing changed
            await h.type_line(w["accept"])  # the request is answered: nothing to agree to now
            await said(h, w["nothing"])
            h.send("3")
            await h.wait_for(lambda: rb.game.history() == ["3", "5", "3"], 10)
            assert rb.state_hash == rnd.state_hash
            assert warnings(h) == [w["nothing"]]  # no other warning
            feed.close()

    run(scenario())


@pytest.mark.parametrize(("lang", "asks", "told"), [
    ("en", "alice asks to take back the move b2; bob is to move and decides.",
     "bob declined to take back alice's move b2."),
    ("de", "alice möchte den Zug b2 zurücknehmen; bob ist am Zug und entscheidet.",
     "bob lehnt es ab, den Zug b2 von alice zurückzunehmen."),
])
def test_the_third_player_reads_who_declined_whose_take_back(tmp_path: Path, broker_url: str, lang: str,
                                                             asks: str, told: str) -> None:
    """Three seats (the cube): alice asks, bob (to move) declines; our shell, neither
    asked nor asking, reads both lines at once, and nothing in the round changes."""

    async def scenario() -> None:
        async with online_shell(tmp_path, broker_url, lang) as h, Peer(broker_url, nick="alice") as alice, \
                Peer(broker_url, nick="bob") as bob:
            await h.wait_screen(WORDS[lang]["connected"], 10)
            for nick in ("alice", "bob"):
                await h.wait_for(lambda n=nick: any(e.nick == n for e in h.controller.state.lobby), 10)
            await h.type_line("/invite alice bob cube players=3 start=me")
            for _ in range(400):
                if alice.invitations and bob.invitations:
                    break
                await asyncio.sleep(0.025)
            ra = await alice.invitations[-1].accept()
            rb = await bob.invitations[-1].accept()
            rnd = h.controller.online
            await h.wait_for(lambda: rnd.round is not None and rnd.round.game is not None and rnd.round.is_my_turn, 20)
            await h.type_line("a1")
            await ra.wait_turn(20)
            await ra.play("b2")
            await ra.request_takeback()
            await said(h, asks)
            await rb.wait_until(lambda r: r.takeback_asked == ra.my_seat, 10)
            await rb.decline_takeback()
            await said(h, told)
            assert rnd.round.game.history() == ["a1", "b2"] and rnd.round.takeback_asked is None
            await rb.play("c3")
            await h.wait_for(lambda: rnd.round.game.history() == ["a1", "b2", "c3"], 10)
            assert warnings(h) == []

    run(scenario())
