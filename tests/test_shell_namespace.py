"""A group of friends has a lobby of its own from the shell (issue 19, docs/protocol.md
§5): ``--namespace`` and ``/namespace``, remembered in the settings, shown in the lobby
pane's title, validated like everywhere else."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_shell_life_online import run, said

from p2p.shell.connect import attach
from p2p.shell.settings import Settings
from p2p.shell.testing import HeadlessShell

peer_mod = pytest.importorskip("p2p.peer")
Peer = peer_mod.Peer
ROOT = Path(__file__).resolve().parents[1]


def test_the_shell_meets_only_its_namespace_and_says_which(tmp_path: Path, broker_url: str) -> None:
    async def scenario() -> None:
        settings = Settings(nick="tester", namespace="club-7")
        async with Peer(broker_url, nick="anna", namespace="club-7") as anna, \
                Peer(broker_url, nick="stranger") as stranger, \
                HeadlessShell(config_dir=tmp_path, settings=settings, broker=broker_url, rows=30, columns=100,
                              startup=attach(broker_url)) as h:
            await h.wait_for(lambda: any(e.nick == "anna" for e in h.controller.state.lobby), 10)
            await h.wait_screen("Lobby club-7 (2 online)")
            await asyncio.sleep(0.5)
            assert not any(e.nick == "stranger" for e in h.controller.state.lobby)
            assert h.controller.online.peer.find_peer("stranger") is None
            assert anna.find_peer("tester") is not None and stranger.find_peer("tester") is None

            await h.type_line("/namespace Bad_NS")
            await said(h, "Bad namespace Bad_NS: 1-32 characters")
            assert h.controller.settings.namespace == "club-7"

            await h.type_line("/namespace public")
            await said(h, "Lobby namespace public saved")
            await h.wait_for(lambda: any(e.nick == "stranger" for e in h.controller.state.lobby), 10)
            assert "Lobby (" in h.screen() and "club-7" not in h.screen().splitlines()[0]
            saved = json.loads((tmp_path / "shell.json").read_text())
            assert saved["namespace"] == ""
            await h.type_line("/namespace")
            await said(h, "Lobby namespace: public.")

    run(scenario())


def test_the_namespace_option_is_checked_and_saved(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "P2P_CONFIG_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-m", "p2p", "--namespace", "Bad_NS"], capture_output=True, text=True,
                         env=env, timeout=30, check=False)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.strip().splitlines() == [
        "p2p shell: bad namespace 'Bad_NS': a namespace is 1-32 characters of a-z, 0-9 and '-'"]


def test_a_hand_edited_bad_namespace_falls_back_to_public(tmp_path: Path) -> None:
    from p2p.shell import settings as settings_mod

    (tmp_path / "shell.json").write_text(json.dumps({"namespace": "Bad NS/#"}))
    loaded, corrupt = settings_mod.load(tmp_path)
    assert loaded.namespace == "" and corrupt is None
    (tmp_path / "shell.json").write_text(json.dumps({"namespace": "club-7"}))
    assert settings_mod.load(tmp_path)[0].namespace == "club-7"
