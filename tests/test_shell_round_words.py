""""Round" means one thing (issue 26.9): the group's count the status line shows. The
round id is called "round id" (not "Round f220120b starts", not "code" beside the join
codes), and ``/rounds N`` names its list entry, not "Round N" beside a status line that
says another number. Both languages, through the real input on a real Mosquitto."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_shell_life_online import online_shell, run, said, seen_in_lobby, status

peer_mod = pytest.importorskip("p2p.peer")
Peer = peer_mod.Peer

WORDS = {
    "en": {"sent": "sent (round id ", "starts": "Round 1 starts: Connect Four (round id ", "status": "Round 1 · ",
           "shown": "On the board (/rounds 1): Connect Four with alice", "round": "Round", "code": "code"},
    "de": {"sent": "gesendet (Runden-ID ", "starts": "Runde 1 beginnt: Vier in einer Reihe (Runden-ID ",
           "status": "Runde 1 · ", "shown": "Auf dem Brett (/rounds 1): Vier in einer Reihe mit alice",
           "round": "Runde", "code": "Code"},
}


@pytest.mark.parametrize("lang", ["en", "de"])
def test_round_means_the_groups_count_and_the_id_is_called_an_id(tmp_path: Path, broker_url: str,
                                                                 lang: str) -> None:
    w = WORDS[lang]

    async def scenario() -> None:
        async with Peer(broker_url, nick="alice") as alice, online_shell(tmp_path, broker_url, lang=lang) as h:
            await h.wait_for(lambda: h.controller.online is not None and h.controller.online.connected(), 10)
            await seen_in_lobby(h, "alice")
            await h.type_line("/invite alice connect4 start=me")
            sent = await said(h, w["sent"])
            await h.wait_for(lambda: alice.invitations, 10)
            await alice.invitations[-1].accept()
            started = await said(h, w["starts"], 20)
            rid = h.controller.online.round.id[:8]
            assert rid in sent and rid in started
            await h.wait_for(lambda: status(h).startswith(w["status"]), 10)
            await h.type_line("/rounds 1")
            await said(h, w["shown"])
            for line in h.controller.state.text_lines():
                # "Round"/"Runde" is followed by the count, never by the id; no "code" for an id
                assert not re.search(rf"{w['round']} {rid}", line), line
                assert not re.search(rf"{w['code']} {rid}", line), line

    run(scenario())
