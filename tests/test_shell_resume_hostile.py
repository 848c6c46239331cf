"""Resume from disk with corrupt or hostile files in the config dir (real shell, real
Mosquitto): each gives one clear line and changes nothing -- no traceback, no generic
"network error", no round taken up on the wrong topics, no file rewritten."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from test_shell_life_online import accepted_from, online_shell, run, said

from p2p.shell.testing import HeadlessShell

peer_mod = pytest.importorskip("p2p.peer")
Peer = peer_mod.Peer


def lines(h: HeadlessShell) -> list[str]:
    return h.controller.state.text_lines()


def files(folder: Path) -> dict[str, bytes | None]:
    return {p.name: p.read_bytes() if p.is_file() else None for p in sorted(folder.iterdir())}


def test_hostile_files_beside_an_unfinished_round_give_one_line_and_change_nothing(
    tmp_path: Path, broker_url: str
) -> None:
    rounds = tmp_path / "rounds"

    def shell() -> HeadlessShell:
        return online_shell(tmp_path, broker_url)

    async def restarted(check) -> None:  # type: ignore[no-untyped-def]
        before = files(rounds)
        async with shell() as h:
            await h.wait_screen("Connected to", 10)
            await check(h)
            assert not any("Traceback" in x or "rror:" in x for x in lines(h)), lines(h)
            assert h.controller.online.round is None and not h.controller.online.peer.busy
        assert files(rounds) == before  # nothing rewritten

    async def scenario() -> None:
        async with Peer(broker_url, nick="alice") as alice:
            async with shell() as h:
                ra = await accepted_from(alice, h)
            side = rounds / f"round-{ra.id}.shell.json"
            key = rounds / f"round-{ra.id}.key"
            log = rounds / f"round-{ra.id}.log"
            good_key, good_log, data = key.read_bytes(), log.read_bytes(), json.loads(side.read_text())

            # 1. a round key file that is junk: one line naming the file, nothing resumed
            key.write_bytes(b"\xff\xfe junk" * 50)

            async def junk_key(h: HeadlessShell) -> None:
                line = await said(h, f"Round with id {ra.id[:8]} not resumed")
                assert "cannot read the round key" in line and "not a round key file" in line

            await restarted(junk_key)

            # 2. a well-formed key file that names another round's topics (a public
            # round's topics are its id): taking it up would subscribe and publish there
            words = good_key.decode().split()
            key.write_text(f"{words[0]} {words[1]} {'ab' * 16}\n")

            async def other_topics(h: HeadlessShell) -> None:
                line = await said(h, f"Round with id {ra.id[:8]} not resumed")
                assert "names the topics of another round" in line

            await restarted(other_topics)
            key.write_bytes(good_key)

            # 3. a damaged log: one line naming the file, not silence
            log.write_bytes(good_log.replace(b'"move":"1"', b'"move":"2"', 1))

            async def damaged(h: HeadlessShell) -> None:
                line = await said(h, f"Round with id {ra.id[:8]} not resumed")
                assert "round-" in line and "signature" in line

            await restarted(damaged)

            # 4. the log replaced by a FIFO (reading it would block for ever): one line
            log.unlink()
            os.mkfifo(log)

            async def fifo(h: HeadlessShell) -> None:
                line = await said(h, f"Round with id {ra.id[:8]} not resumed")
                assert "not a round log" in line

            await restarted(fifo)
            log.unlink()
            log.write_bytes(good_log)

            # 5. the round key file a FIFO: one line, no hang
            key.unlink()
            os.mkfifo(key)

            async def key_fifo(h: HeadlessShell) -> None:
                line = await said(h, f"Round with id {ra.id[:8]} not resumed")
                assert "not a round key file" in line

            await restarted(key_fifo)
            key.unlink()
            key.write_bytes(good_key)

            # 6. the sidecar a FIFO: ignored (read, it would block the shell), the round resumed
            side.unlink()
            os.mkfifo(side)
            async with shell() as h:
                await said(h, "Resumed round", 15)
                assert h.controller.online.round.id == ra.id
            side.unlink()

            # 7. a hostile sidecar: a code that is no string, a name with terminal escapes.
            # The round key file is fine: the round is resumed, the junk ignored.
            hostile = "\x1b[2Jbob\x07" * 9
            stranger = bytes(range(32))  # a key nobody in the lobby uses
            side.write_text(json.dumps({**data, "code": 5, "names": {
                alice.public_key.hex(): hostile, stranger.hex(): hostile, "zz": "x", "ab": 7}}))
            async with shell() as h:
                await said(h, "Resumed round", 15)
                assert h.controller.online.round.id == ra.id
                name = h.controller.online.names[stranger]
                assert name.startswith("[2Jbob") and "\x1b" not in name and "\x07" not in name
                assert len(name) <= 24
                assert not any("\x1b" in x for x in lines(h))

    run(scenario())
