"""The shell's pure parts: input grammar, catalogue, settings, local match, notifications."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from p2p.games.base import MoveError
from p2p.games.match import MatchError
from p2p.shell import commands as cmds
from p2p.shell.i18n import CATALOGUE, Translator, detect_language
from p2p.shell.local import (
    INPUT_LOCK_SECONDS,
    LocalMatch,
    LockedError,
    NotHumanTurn,
    Seat,
)
from p2p.shell.notify import Notifier, desktop_sequences
from p2p.shell.settings import Settings, load, save

SHELL_DIR = Path(__file__).resolve().parents[1] / "p2p" / "shell"


def test_parse_line_chat_move_command() -> None:
    is_move = lambda text: text in {"4", "b3", "h2-h4"}
    assert cmds.parse_line("", is_move) is None
    assert cmds.parse_line("   ", is_move) is None
    assert cmds.parse_line("4", is_move) == cmds.Move("4")
    assert cmds.parse_line(" h2-h4 ", is_move) == cmds.Move("h2-h4")
    assert cmds.parse_line("4 wins", is_move) == cmds.Chat("4 wins")
    assert cmds.parse_line("hello", is_move) == cmds.Chat("hello")
    assert cmds.parse_line("//not a command", is_move) == cmds.Chat("/not a command")
    assert cmds.parse_line("/invite bob connect4", is_move) == cmds.Command("invite", ("bob", "connect4"))
    assert cmds.parse_line("/HILFE", is_move) == cmds.Command("help")
    assert cmds.parse_line("/zurück", is_move) == cmds.Command("undo")
    assert cmds.parse_line("/frob x", is_move) == cmds.Command("frob", ("x",), known=False)


def test_parse_options_types() -> None:
    options, words = cmds.parse_options(("bob", "popout=true", "width=8", "start=me", "show_legal=off"))
    assert words == ["bob"]
    assert options == {"popout": True, "width": 8, "start": "me", "show_legal": False}


def test_every_catalogue_key_used_in_the_shell_exists_in_both_languages() -> None:
    used: set[str] = set()
    pattern = re.compile(r"""(?:\.t|say|_say)\(\s*["']([a-z0-9_.]+)["']""")
    for path in SHELL_DIR.glob("*.py"):
        used |= set(pattern.findall(path.read_text(encoding="utf-8")))
    assert len(used) > 60
    missing = sorted(key for key in used if key not in CATALOGUE)
    assert missing == []
    for key, (de, en) in CATALOGUE.items():
        assert de and en, key
        assert set(re.findall(r"{(\w+)(?::[^}]*)?}", de)) == set(re.findall(r"{(\w+)(?::[^}]*)?}", en)), key


def test_every_command_has_one_handler() -> None:
    """The controller hands the online commands to the session, answers some itself and
    hands the rest to the local-play part it owns: every known command finds exactly one
    handler."""
    from p2p.shell.controller import Controller
    from p2p.shell.local_commands import LocalPlay
    from p2p.shell.state import ShellState

    ctl = Controller(
        state=ShellState(), settings=Settings(), settings_dir=None, translator=Translator("en"),
        spawn=lambda coro: coro.close(), refresh=lambda: None, quit=lambda: None,
    )
    own = {name for name in cmds.COMMANDS if hasattr(Controller, f"cmd_{name}")}
    online = set(Controller.ONLINE_COMMANDS)
    local = {name for name in cmds.COMMANDS if hasattr(LocalPlay, f"cmd_{name}")}
    assert own & local == own & online == local & online == set()
    assert own | online | local == set(cmds.COMMANDS)
    assert {"play", "undo", "analyze"} <= local and {"invite", "join"} <= online
    for name in cmds.COMMANDS:
        handler = ctl.handler(name)
        if name in online:
            assert handler.func == ctl._online_cmd and handler.args == (name,)  # type: ignore[attr-defined]
        else:
            assert handler.__self__ is (ctl.local if name in local else ctl)  # type: ignore[attr-defined]


def test_translator_switches_and_formats() -> None:
    t = Translator("de")
    assert t.t("status.round", round=1, seat=t.seat("Red")) == "Runde 1 · Am Zug: Rot"
    assert t.set_language("en") and t.t("status.round", round=1, seat=t.seat("Red")) == "Round 1 · To move: Red"
    assert not t.set_language("fr") and t.lang == "en"
    assert t.t("no.such.key") == "no.such.key"
    assert detect_language({"LANG": "de_DE.UTF-8"}) == "de"
    assert detect_language({"LC_ALL": "C", "LANG": "de_DE.UTF-8"}) == "en"
    assert detect_language({}) == "en"


def test_settings_round_trip_and_corrupt_file(tmp_path: Path) -> None:
    s = Settings(nick="zoe", lang="de", notifications=False, levels={"connect4": "stark"})
    s.record_connect4("stark", "won")
    s.record_connect4("stark", "lost")
    save(s, tmp_path)
    loaded, corrupt = load(tmp_path)
    assert corrupt is None and loaded == s
    (tmp_path / "shell.json").write_text('{"nick": 5, "lang": "xx", "notifications": "yes"}')
    loaded, corrupt = load(tmp_path)
    assert corrupt is None and loaded == Settings()  # wrong types fall back field by field
    (tmp_path / "shell.json").write_text("[1, 2")
    loaded, corrupt = load(tmp_path)
    assert corrupt == str(tmp_path / "shell.json") and loaded == Settings()


def test_local_match_input_lock_undo_and_rounds() -> None:
    match = LocalMatch("connect4", {}, (Seat(), Seat()))
    assert match.play_human("4", now=10.0) == "4"
    with pytest.raises(LockedError):
        match.play_human("4", now=10.0 + INPUT_LOCK_SECONDS / 2)
    assert match.game.history() == ["4"]
    match.play_human("3", now=11.0)
    assert match.undo() == ["3"]
    with pytest.raises(MoveError):
        match.play_human("9", now=12.0)
    for ply, col in enumerate("545454"):
        match.play_human(col, now=20.0 + ply)
    assert match.game.winners() == (0,) and match.score == (1, 0)
    with pytest.raises(MatchError):
        match.undo()
    match.another_round()
    assert match.round_no == 2 and match.game.to_move() == 1 and match.score == (1, 0)


def test_local_match_against_the_computer_undo_takes_back_both() -> None:
    match = LocalMatch("connect4", {}, (Seat(), Seat("neuling")))
    match.play_human("4", now=0.0)
    assert match.computer_to_move()
    with pytest.raises(NotHumanTurn):
        match.play_human("3", now=5.0)
    match.play_computer("3")
    assert match.undo() == ["3", "4"] and match.game.history() == []


def test_notifier_policy_and_sequences() -> None:
    written: list[str] = []
    ran: list[list[str]] = []
    enabled = [True]
    n = Notifier(written.append, lambda: enabled[0], environ={"DISPLAY": ":0"}, run=ran.append)
    n.set_focus(True)
    assert not n.attention("Your turn", "Connect Four") and written == []
    n.set_focus(False)
    assert n.attention("Your turn", "Connect Four")
    assert written[0] == "\x07"
    assert "\x1b]777;notify;Your turn;Connect Four\x07" in written[1]
    assert "\x1b]9;Your turn: Connect Four\x07" in written[1]
    if ran:  # notify-send exists on this machine
        assert ran[0][:3] == ["notify-send", "-a", "p2p"]
    enabled[0] = False
    assert not n.attention("Your turn", "x")
    wrapped = desktop_sequences("a;b", "c\x1bd", {"TMUX": "/tmp/x"})
    assert wrapped.startswith("\x1bPtmux;\x1b\x1b]777;notify;ab;cd")


def test_completion_of_commands_games_levels_and_nicknames() -> None:
    from prompt_toolkit.completion import CompleteEvent
    from prompt_toolkit.document import Document

    from p2p.shell.app import ShellCompleter
    from p2p.shell.state import LobbyEntry, ShellState

    class FakeController:
        state = ShellState()
        t = Translator("de")

    ctl = FakeController()
    ctl.state.lobby = [LobbyEntry("anna", "aa", me=True), LobbyEntry("bob", "bb"), LobbyEntry("bodo", "cc")]
    completer = ShellCompleter(ctl)  # type: ignore[arg-type]

    def complete(text: str) -> list[str]:
        return [c.text for c in completer.get_completions(Document(text), CompleteEvent())]

    assert complete("/inv") == ["/invite"]
    assert set(complete("/re")) == {"/replay", "/resign"}
    assert complete("/invite bo") == ["bob", "bodo"]
    assert complete("/invite bob con") == ["connect4"]
    assert complete("/lang d") == ["de"]
    assert "Neuling" in complete("/play connect4 neu")
    FakeController.t = Translator("en")
    assert "master" in complete("/play connect4 ma")  # level names in the user's language
    assert complete("hi b") == ["bob", "bodo"]  # nicknames in chat too, never our own
    assert complete("hi a") == []


def test_board_pictures_highlight_what_matters() -> None:
    from prompt_toolkit.formatted_text import fragment_list_to_text

    from p2p.games import create_game
    from p2p.shell.boards import DIM, BoardView, render

    t = Translator("en")
    c4 = create_game("connect4")
    for col in "4545454":
        c4.push(col)
    fragments = render(c4, BoardView(color=True), t)
    winning = [f for f in fragments if f[1] == " ◆"]
    assert len(winning) == 4 and all("reverse" in f[0] for f in winning)
    others = [f for f in fragments if f[1] == " ●"]
    # the losing discs keep their colour (issue 11.10): you can still tell whose they were
    assert len(others) == 3 and all(f[0] == "fg:ansiyellow bold" and f[0] != DIM for f in others)
    plain = fragment_list_to_text(render(c4, BoardView(color=False), t))
    assert plain.count("X") == 4 and plain.count("o") == 3

    chess = create_game("chess4", {"show_legal": True})
    chess.resign(1)  # Blue is out: its pieces turn grey
    text = fragment_list_to_text(render(chess, BoardView(color=False, selected="h2", show_legal=True), t))
    assert "bK" not in text and "xK" in text and "out: Blue" in text
    assert text.count(" *") == 2  # h3 and h4: the pawn's legal targets
    chess.push(chess.legal_moves()[0])
    assert "Last move:" in fragment_list_to_text(render(chess, BoardView(), t))


def test_forfeit_notices_of_the_round_machine_are_translated() -> None:
    from types import SimpleNamespace

    from p2p.protocol.effects import Notice
    from p2p.protocol.identity import Identity
    from p2p.protocol.loopback import Loopback
    from p2p.protocol.round_machine import RoundMachine
    from p2p.shell.online import OnlineSession
    from p2p.shell.state import ShellState

    alice, bob = (Identity.from_seed(bytes([i]) * 32) for i in (1, 2))
    seats = [{"pk": alice.pk_hex, "level": None}, {"pk": bob.pk_hex, "level": None}]
    admin, effects = RoundMachine.open(alice, 0, "5a" * 16, "connect4", {}, seats, 1, b"\x01" * 32)
    member = RoundMachine(bob, admin.state.genesis, b"\x02" * 32)
    net = Loopback()
    net.add("a", admin, effects)
    net.add("b", member, member.accept(1))
    net.run()
    from p2p.protocol.round import DEFAULT_TIMEOUTS

    offline_ms = DEFAULT_TIMEOUTS.offline_ms
    from p2p.peer import RoundNotice
    from p2p.protocol import events

    will = events.make(  # bob's own signed Last Will: the evidence an offline forfeit needs
        bob, "presence", 0,
        {"nick": "bob", "status": "offline", "busy": False, "session": "ab" * 16, "ttl": 60},
    )
    now = admin.state.head.ts + offline_ms
    notices = [
        RoundNotice(None, e.text, e.code, e.params)
        for e in admin.tick(now, frozenset({bob.public_key}), {bob.public_key: (will, 0)})
        if isinstance(e, Notice)
    ]
    state = ShellState()
    shell = SimpleNamespace(controller=None, t=Translator("de"), state=state)
    session = OnlineSession(shell, peer=None)  # type: ignore[arg-type]
    for note in notices:
        session.notes.notice(note)
    shown = state.text_lines()
    expected = f"hat {offline_ms // 1000} s nicht gezogen (offline gegangen) und ist raus"
    assert any(expected in line for line in shown), (notices, shown)
