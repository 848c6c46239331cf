"""Warnings mean something (issue 19): everyday drops (a sync request too soon after a
resume, a forfeit that lost to the move, a copy after the end) go to the log file only;
a drop that may be an attack is a warning naming the signer as the screen shows people:
nickname and the fingerprint groups of the lobby, not 8 hex digits of the raw key."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest
from test_shell_life_online import online_shell, run

from p2p.protocol.identity import fingerprint

peer_mod = pytest.importorskip("p2p.peer")
Peer = peer_mod.Peer


@pytest.mark.parametrize("reason", [
    "sync request too soon",
    "position 7 is already taken",
    "position 7 was forfeited (this event is late)",
    "the forfeit at 7 is final (60 s)",
    "answers an event a forfeit replaced",
    "the round has ended here (resignation)",
    "the invitation has expired",
])
def test_everyday_drops_stay_in_the_log(tmp_path: Path, broker_url: str, reason: str,
                                        caplog: pytest.LogCaptureFixture) -> None:
    async def scenario() -> None:
        async with Peer(broker_url, nick="bob") as bob, online_shell(tmp_path, broker_url) as h:
            await h.wait_for(lambda: h.controller.online.peer.lobby.peers.get(bob.public_key) is not None, 10)
            session = h.controller.online
            before = list(h.controller.state.text_lines())
            with caplog.at_level(logging.INFO, logger="p2p.shell"):
                # through the peer, which tells routine drops from warnings (p2p.peer.checks)
                session.peer.warn(f"dropped move from {bob.public_key.hex()[:8]}: {reason}",
                                  None, reason, "move", bob.public_key.hex()[:8])
                await asyncio.sleep(0.3)
            assert h.controller.state.text_lines() == before
            assert any(reason in r.getMessage() for r in caplog.records)

    run(scenario())


def test_a_real_warning_names_the_signer_as_the_lobby_does(tmp_path: Path, broker_url: str) -> None:
    """"Warning: an invalid event from 947c1df3 was refused": 947c1df3 matched no
    fingerprint on the screen."""
    async def scenario() -> None:
        async with Peer(broker_url, nick="bob") as bob, online_shell(tmp_path, broker_url, lang="de") as h:
            await h.wait_for(lambda: h.controller.online.peer.lobby.peers.get(bob.public_key) is not None, 10)
            session = h.controller.online
            prefix = bob.public_key.hex()[:8]
            session.notes.handle(peer_mod.Rejected(f"dropped move from {prefix}: bad signature", None,
                                             "bad signature", "move", prefix))
            session.notes.handle(peer_mod.Rejected("dropped move from 00ff00ff: bad signature", None,
                                             "bad signature", "move", "00ff00ff"))
            lines = h.controller.state.text_lines()
            warned = [x for x in lines if "Warnung" in x]
            assert len(warned) == 2, lines
            assert f"bob ({fingerprint(bob.public_key)})" in warned[0]
            assert prefix not in warned[0]
            assert "von einem unbekannten Schlüssel (00ff00ff…)" in warned[1], warned[1]

    run(scenario())


def test_the_routine_patterns_match_what_the_protocol_says() -> None:
    """The shell's list follows the protocol's own wording (a renamed reason would
    otherwise become a warning again)."""
    import inspect

    from p2p.peer.checks import is_routine
    from p2p.protocol import round_conflicts, round_machine, round_receive, round_side

    source = "".join(inspect.getsource(m) for m in (round_conflicts, round_machine, round_receive, round_side))
    for text in ("sync request too soon", "is already taken", "was forfeited (this event is late)",
                 "the round has ended here", "answers an event a forfeit replaced"):
        assert text in source, text
    assert not is_routine("bad signature")
    assert not is_routine("forfeit by a key that may not forfeit position 3")
    assert not is_routine("chain event by a non-member")
