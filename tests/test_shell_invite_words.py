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
