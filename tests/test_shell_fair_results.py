"""Issue 16 item 7 in the shell, on a real Mosquitto: a round that ended by an
equivocation proof is over after a restart -- not resumed as a running round, and the
player is free (not 'already in a round')."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiomqtt
from test_integration_hostile import move_event
from test_shell_life_online import Peer, accepted_from, online_shell, run, said, status

from p2p.protocol.replay import replay_log


def test_an_equivocation_ended_round_is_not_resumed_and_the_player_is_free(
    tmp_path: Path, broker_url: str, mosquitto
) -> None:
    """alice signs two different moves for one position (her own client plays one, a
    second client of hers the other); the shell's player ends the round by the proof.
    The shell quits and starts again with the same config directory: the round log
    replays to 'ended by equivocation', the shell takes up no running round, shows no
    'To move', and a new invitation reaches the player instead of being declined as
    'already in a round'."""

    async def scenario() -> None:
        async with (
            Peer(broker_url, nick="alice") as alice,
            aiomqtt.Client("127.0.0.1", mosquitto.port, identifier="alice-2") as relay,
        ):
            async with online_shell(tmp_path, broker_url) as h:
                ra = await accepted_from(alice, h)  # alice played 1; our turn
                h.send("7")
                await ra.wait_turn(20)
                other = move_event(alice.identity, ra, "3")
                await ra.play("2")
                await relay.publish(ra.topic(), ra.sealed(other.raw), qos=1)
                mine = h.controller.online.round
                await h.wait_for(lambda: mine.is_over, 15)
                assert "equivocation" in mine.chain_state.end_reason
                assert mine.chain_state.equivocators == [0] and mine.winners == (1,)
                await h.wait_for(lambda: not h.controller.online.peer.busy, 10)
                log_path = mine.log_path
            await asyncio.sleep(0.3)
            async with online_shell(tmp_path, broker_url) as h:
                await h.wait_screen("Connected to", 15)
                my_id = h.controller.online.peer.peer_id
                await h.wait_for(lambda: alice.find_peer(my_id[:8]) is not None, 10)
                await asyncio.sleep(1.0)  # the shell looked at its round logs
                online = h.controller.online
                assert online.round is None or online.round.is_over
                assert "To move" not in status(h)
                assert not online.peer.busy
                # a new invitation reaches the player: nobody thinks it is in a round
                await alice.invite([my_id[:8]], "connect4", start=0)
                await said(h, "invites you to Connect Four")
                text = "\n".join(h.controller.state.text_lines())
                assert "declined automatically" not in text
            replay = replay_log(log_path.read_bytes().split(b"\n"))  # the log proves it
            assert replay.proof is not None
            assert "ended by equivocation" in replay.verdict_text()
            assert replay.state.state_hash() == mine.state_hash

    run(scenario())
