"""A message over the broker's size limit, as the shell's user meets it (issue 25): the
broker (Mosquitto, ``max_packet_size 900``) takes invitations and moves but not one event
of the draw that opens a round; the admin typing ``/invite`` in the shell is told in one
line, in German and in English, which broker, its limit and what did not go through."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_shell_life_online import accept_next, online_shell, run, said, seen_in_lobby

from p2p.net import known
from p2p.net.broker import LocalBroker
from p2p.peer import Peer

TOLD = {
    "en": ("/invite carol connect4", "takes messages of at most 900 bytes: a message of the round ("),
    "de": ("/einladen carol connect4", "nimmt Nachrichten nur bis 900 Bytes: eine Nachricht der Runde ("),
}


@pytest.mark.parametrize("lang", ["en", "de"])
def test_the_shell_tells_a_message_too_large_for_the_broker(tmp_path: Path, lang: str) -> None:
    known.forget()
    command, text = TOLD[lang]

    async def scenario() -> None:
        async with LocalBroker(extra_config="max_packet_size 900\n") as broker, \
                Peer(broker.url, nick="carol") as carol, \
                online_shell(tmp_path, broker.url, lang=lang) as h:
            await h.wait_for(lambda: h.controller.online is not None
                             and h.controller.online.connected(), 10)
            await seen_in_lobby(h, "carol")
            await h.type_line(command)
            await accept_next(carol)
            line = await said(h, text, 20)
            assert broker.url in line and "--broker" in line, line

    run(scenario())
