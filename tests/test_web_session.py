"""The browser face's session without a browser: what the page may ask, and the one line
it gets for anything else (nothing changes); local play; the command's bad options."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from conftest import run

from p2p.web.session import WebSession
from p2p.web.settings import WebSettings


def _session() -> tuple[WebSession, list[dict[str, Any]]]:
    session = WebSession(settings=WebSettings(nick="anna", lang="en"), config_dir=None, broker=None)
    seen: list[dict[str, Any]] = []
    session.listeners.append(seen.append)
    return session, seen


def _warnings(seen: list[dict[str, Any]]) -> list[str]:
    return [m.get("key", m.get("text", "")) for m in seen if m.get("t") == "line" and m["kind"] in ("warn", "error")]


def test_hostile_or_broken_actions_get_one_line_and_change_nothing() -> None:
    async def body() -> None:
        session, seen = _session()
        before = session.snapshot()
        for msg in ([], "play", {"a": 5}, {"a": "__init__"}, {"a": "nope"},
                    {"a": "play", "round": "x" * 5000, "move": "4"},
                    {"a": "say", "text": "hello"},  # offline: no lobby to say it in
                    {"a": "invite", "game": "go", "who": []},
                    {"a": "local_start", "game": "connect4", "options": {"width": "wide"}},
                    {"a": "local_start", "game": "connect4", "seats": [None]},
                    {"a": "local_start", "game": "connect4", "seats": [None, "grandmaster"]},
                    {"a": "local_play", "move": "4"},
                    {"a": "settings", "lang": "fr"}, {"a": "settings", "nick": "two words"},
                    {"a": "settings", "namespace": "Not Valid!"}):
            seen.clear()
            await session.handle(msg)
            warned = _warnings(seen)
            assert len(warned) == 1, (msg, warned)
            assert not any("Traceback" in w for w in warned)
        after = session.snapshot()
        for key in ("local", "rounds", "invitations", "settings"):
            assert after[key] == before[key], key

    run(body(), 20)


def test_local_play_against_the_computer_undo_again_and_replay() -> None:
    async def body() -> None:
        session, seen = _session()
        await session.handle({"a": "local_start", "game": "connect4", "seats": [None, "neuling"]})
        assert _warnings(seen) == []
        await session.handle({"a": "local_play", "move": "4"})
        for _ in range(200):  # the computer answers in a worker thread
            if len(session.local.game.history()) == 2:
                break
            await asyncio.sleep(0.01)
        snap = session.snapshot()["local"]
        assert snap["board"]["state"]["history"][0] == "4" and len(snap["board"]["state"]["history"]) == 2
        assert snap["human_turn"]
        seen.clear()
        await session.handle({"a": "local_hint"})
        hints = [m for m in seen if m.get("key") == "msg.hint"]
        assert hints and session.local.game.is_legal(str(hints[0]["params"]["move"]))
        await session.handle({"a": "local_undo"})  # our move and the computer's answer
        assert session.local.game.history() == []
        await asyncio.sleep(0.3)
        await session.handle({"a": "local_play", "move": "8"})  # no column 8: the engine's reason
        assert "err.reason" in _warnings(seen)
        await session.handle({"a": "local_resign"})
        assert session.local.game.is_over()
        await session.handle({"a": "local_replay"})
        replay = [m for m in seen if m.get("t") == "replay"]
        assert replay and replay[-1]["states"][0]["history"] == []
        assert all(s["legal"] == [] for s in replay[-1]["states"])
        await session.handle({"a": "local_again"})
        assert session.local.round_no == 2 and session.local.score() == (0, 1)
        await session.handle({"a": "local_close"})
        assert session.snapshot()["local"] is None

    run(body(), 30)


def test_the_catalogue_is_complete_in_both_languages() -> None:
    from p2p.web.i18n import CATALOGUE

    for key, (de, en) in CATALOGUE.items():
        assert de and en, key
        assert sorted(_fields(de)) == sorted(_fields(en)), key
    app = (Path(__file__).parent.parent / "p2p/web/static/app.js").read_text()
    import re

    used = set(re.findall(r"""t\('((?:ui|msg|err|net)\.[\w.]+\w)'""", app))
    used |= {f"ui.conn.{state}" for state in ("offline", "connecting", "connected", "lost")}
    assert used and used <= set(CATALOGUE), sorted(used - set(CATALOGUE))
    server = "".join((Path(__file__).parent.parent / "p2p/web" / name).read_text()
                     for name in ("session.py", "connect.py"))
    keys = set(re.findall(r'"((?:msg|err|net)\.[a-z_]+)"', server))
    keys |= {f"net.{state}" for state in ("lost", "reconnected", "closed")}
    assert keys and keys <= set(CATALOGUE), sorted(keys - set(CATALOGUE))


def _fields(text: str) -> list[str]:
    import re

    return re.findall(r"\{(\w+)\}", text)


def test_bad_options_exit_with_one_line(tmp_path: Path) -> None:
    env = dict(os.environ, P2P_CONFIG_DIR=str(tmp_path))
    for args in (["--broker", "http://x"], ["--nick", "two words"], ["--namespace", "Bad Name"], ["--port", "70000"]):
        done = subprocess.run([sys.executable, "-m", "p2p", "web", "--no-open", *args],
                              check=False, capture_output=True, text=True, env=env, timeout=30)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert done.stderr.count("\n") == 1 and done.stderr.startswith("p2p web: "), done.stderr
        assert "Traceback" not in done.stderr


def test_the_two_faces_do_not_import_each_other() -> None:
    """``p2p/web`` and ``p2p/shell`` sit side by side over ``p2p.peer``: neither imports
    the other (what both need lives below them: ``p2p.ledger``, ``p2p.bot``)."""
    import re

    root = Path(__file__).parent.parent / "p2p"
    pattern = {"web": re.compile(r"^\s*(from|import)\s+p2p\.shell\b", re.M),
               "shell": re.compile(r"^\s*(from|import)\s+p2p\.web\b", re.M)}
    for face, imports_other in pattern.items():
        found = [str(p.relative_to(root)) for p in (root / face).rglob("*.py") if imports_other.search(p.read_text())]
        assert found == [], f"p2p/{face} imports the other face: {found}"
    found = [p.name for p in (root / "commands").glob("web.py") if pattern["web"].search(p.read_text())]
    assert found == []


def test_rules_of_every_game_and_statistics_of_rounds_against_the_computer(tmp_path: Path) -> None:
    """``/rules`` and ``/stats`` as the page asks for them: the rules of each registered
    game in the page's language; a round here against the computer counts once in the
    statistics (saved in web.json), hot-seat does not; an unknown game is one line."""
    from p2p.games import game_names
    from p2p.web.settings import load_settings

    async def body() -> None:
        session = WebSession(settings=WebSettings(nick="anna", lang="de"), config_dir=tmp_path, broker=None)
        seen: list[dict[str, Any]] = []
        session.listeners.append(seen.append)
        for game in game_names():
            await session.handle({"a": "rules", "game": game})
            rules = [m for m in seen if m.get("t") == "rules"][-1]
            assert rules["game"] == game and len(rules["lines"]) >= 2, rules
        german = [m["lines"][0] for m in seen if m.get("t") == "rules" and m["game"] == "connect4"]
        assert german == ["Vier in einer Reihe"]
        seen.clear()
        await session.handle({"a": "rules", "game": "go"})
        assert _warnings(seen) == ["err.game"]
        # against the computer: resigned, then asked for the statistics twice (counted once)
        await session.handle({"a": "local_start", "game": "connect4", "seats": [None, "neuling"]})
        await session.handle({"a": "local_resign"})
        await session.handle({"a": "stats"})
        await session.handle({"a": "stats"})
        stats = [m for m in seen if m.get("t") == "stats"][-1]
        assert stats["local"] == [{"game": "connect4", "level": "neuling", "won": 0, "lost": 1, "drawn": 0}]
        assert stats["online"] == []  # not connected: no round logs of ours
        # hot-seat counts nothing; four-player chess where the three computers give up at
        # once: all on 0 points, and a seat that resigned ranks below one that did not
        # (the house rule), so the person is first alone: won
        await session.handle({"a": "local_start", "game": "connect4", "seats": [None, None]})
        await session.handle({"a": "local_resign"})
        await session.handle({"a": "local_start", "game": "chess4", "seats": [None, "einfach", "einfach", "einfach"]})
        assert session.local is not None
        game = session.local.game
        await session.handle({"a": "local_play", "move": game.legal_moves()[0]})
        for seat in (1, 2, 3):
            game.resign(seat)
        await session.handle({"a": "stats"})
        stats = [m for m in seen if m.get("t") == "stats"][-1]
        assert {(r["game"], r["level"], r["won"], r["lost"], r["drawn"]) for r in stats["local"]} == {
            ("connect4", "neuling", 0, 1, 0), ("chess4", "einfach", 1, 0, 0)}, stats
        assert load_settings(tmp_path).stats == {"connect4": {"neuling": {"won": 0, "lost": 1, "drawn": 0}},
                                                 "chess4": {"einfach": {"won": 1, "lost": 0, "drawn": 0}}}
        await session.close()

    run(body(), 30)


def test_no_review_for_a_pop_out_round_says_so_in_one_line() -> None:
    """The solver knows only drops: a finished Pop Out round gets one line, not an empty
    chart claiming no mistakes."""
    async def body() -> None:
        session, seen = _session()
        await session.handle({"a": "local_start", "game": "connect4", "options": {"popout": True},
                              "seats": [None, None]})
        assert session.local is not None
        for col in "1212121":
            session.local.game.push(col)
        await session.handle({"a": "local_analysis"})
        assert _warnings(seen) == ["err.no_analysis"]
        assert not [m for m in seen if m.get("t") == "analysis"]

    run(body(), 20)
