"""What an invitation that does not go out says (issue 26, items 4-6), in both languages,
through the shell's real input on a real Mosquitto: a refused option names the option
and its range (German said only "das geht gerade nicht (Details in shell.log)")."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_shell_life_online import online_shell, run, seen_in_lobby

peer_mod = pytest.importorskip("p2p.peer")
Peer = peer_mod.Peer

OPTION_CASES = {
    "en": [("/invite carol cube players=5", "option players must be between 2 and 3"),
           ("/invite carol connect4 width=20", "option width must be between 4 and 10"),
           ("/invite carol connect4 foo=bar", "unknown option: foo"),
           ("/private cube players=9", "option players must be between 2 and 3")],
    "de": [("/einladen carol cube players=5", "Option players muss zwischen 2 und 3 liegen"),
           ("/einladen carol connect4 width=20", "Option width muss zwischen 4 und 10 liegen"),
           ("/einladen carol connect4 foo=bar", "unbekannte Option: foo"),
           ("/privat cube players=9", "Option players muss zwischen 2 und 3 liegen")],
}


def new_lines(h, before: int) -> list[str]:
    return [line.text for line in list(h.controller.state.lines)[before:]]


@pytest.mark.parametrize("lang", ["en", "de"])
def test_a_refused_option_says_why_in_both_languages(tmp_path: Path, broker_url: str, lang: str) -> None:
    async def scenario() -> None:
        async with Peer(broker_url, nick="carol") as carol, online_shell(tmp_path, broker_url, lang=lang) as h:
            await h.wait_for(lambda: h.controller.online is not None and h.controller.online.connected(), 10)
            await seen_in_lobby(h, "carol")
            for command, reason in OPTION_CASES[lang]:
                before = len(h.controller.state.lines)
                await h.type_line(command)
                await h.wait_for(lambda before=before: new_lines(h, before), 5)
                said = new_lines(h, before)
                assert any(reason in x for x in said), (command, said)
                assert not any("shell.log" in x for x in said), said
                assert h.controller.online.round is None and not carol.invitations

    run(scenario())


@pytest.mark.parametrize("lang", ["en", "de"])
def test_inviting_yourself_says_it_is_you_not_nobody(tmp_path: Path, broker_url: str, lang: str) -> None:
    """Issue 26.5: "Nobody called tester in the lobby" while the lobby lists tester as you."""
    expected = {"en": " is you", "de": " bist du selbst"}[lang]

    async def scenario() -> None:
        async with Peer(broker_url, nick="carol") as carol, online_shell(tmp_path, broker_url, lang=lang) as h:
            await h.wait_for(lambda: h.controller.online is not None and h.controller.online.connected(), 10)
            await seen_in_lobby(h, "carol")
            my_id = h.controller.online.peer.peer_id
            for command in ("/invite tester connect4", f"/invite carol {my_id[:8]} cube",
                            "/private connect4 TESTER"):
                before = len(h.controller.state.lines)
                await h.type_line(command)
                await h.wait_for(lambda before=before: new_lines(h, before), 5)
                said = new_lines(h, before)
                assert any(expected in x for x in said), (command, said)
                assert not any("Nobody" in x or "Niemand" in x for x in said), said
                assert h.controller.online.round is None and not carol.invitations
            # naming ourselves as the starter is "me"
            await h.type_line("/invite carol connect4 start=tester")
            await h.wait_for(lambda: carol.invitations, 10)
            assert carol.invitations[-1].genesis.body["start"] == 0

    run(scenario())


@pytest.mark.parametrize("lang", ["en", "de"])
def test_a_busy_player_is_not_reported_as_declining(tmp_path: Path, broker_url: str, lang: str) -> None:
    """Issue 26.6: bob plays another round, so his client declines our invitation by
    itself; the shell said "bob hat abgelehnt" although bob never answered. A real
    decline still reads as one."""
    busy, declined = {"en": ("bob is playing another round", "bob declined"),
                      "de": ("bob spielt gerade eine andere Runde", "bob hat abgelehnt")}[lang]

    async def scenario() -> None:
        async with Peer(broker_url, nick="bob") as bob, Peer(broker_url, nick="carol") as carol, \
                online_shell(tmp_path, broker_url, lang=lang) as h:
            await h.wait_for(lambda: h.controller.online is not None and h.controller.online.connected(), 10)
            await seen_in_lobby(h, "bob")
            # a real decline first
            await h.type_line("/invite bob connect4")
            await h.wait_for(lambda: bob.invitations, 10)
            await bob.invitations[-1].decline()
            await h.wait_for(lambda: any(declined in x for x in h.controller.state.text_lines()), 10)
            await h.wait_for(lambda: h.controller.online.round is None or h.controller.online.round.is_over
                             or h.controller.online.round.phase.value == "cancelled", 10)
            # bob goes into a round with carol: busy
            await h.wait_for(lambda: carol.find_peer("bob") is not None, 10)
            rc = await carol.invite(["bob"], "connect4", start=0)
            await h.wait_for(lambda: bob.invitations, 10)
            await bob.invitations[-1].accept()
            await rc.wait_started(10)
            await h.wait_for(lambda: any(e.nick == "bob" and e.busy for e in h.controller.state.lobby), 10)
            await h.type_line("/invite bob connect4")
            await h.wait_for(lambda: any(busy in x for x in h.controller.state.text_lines()), 10)
            assert sum(declined in x for x in h.controller.state.text_lines()) == 1, h.controller.state.text_lines()

    run(scenario())
