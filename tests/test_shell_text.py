"""What the shell says, typed into the real shell (headless pipe input, rendered screen):
analysis wording, chess4 notices, ends and refusals, the screen's wrapping and prompt."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import re
from pathlib import Path

import pytest

from p2p.shell.testing import HeadlessShell


def run(coro, timeout: float = 90):
    return asyncio.run(asyncio.wait_for(coro, timeout))


def fast_clock(h: HeadlessShell) -> None:
    counter = itertools.count(1000)
    h.controller.clock = lambda: float(next(counter))


def chat_texts(h: HeadlessShell) -> list[str]:
    return [line.text for line in h.controller.state.lines]


async def wait_chat(h: HeadlessShell, text: str, timeout: float = 10) -> None:
    """Wait for a chat line containing ``text`` (the screen may wrap it over two rows)."""
    await h.wait_for(lambda: any(text in t for t in chat_texts(h)), timeout)


# -- analysis (issue 11.9) -----------------------------------------------------------------


def test_analysis_estimates_early_moves_and_counts_exactly_the_marked_mistakes(tmp_path: Path) -> None:
    """Yellow does not block Red's three in column 4 (move 6): found although the solver
    cannot answer that early; the summary counts exactly the lines that say "mistake"."""
    pytest.importorskip("p2p.ai.connect4_ai")

    async def scenario() -> None:
        async with HeadlessShell(config_dir=tmp_path, lang="en", columns=120, rows=40) as h:
            fast_clock(h)
            await h.type_line("/play connect4")
            for col in ["4", "1", "4", "1", "4", "2", "4"]:
                await h.type_line(col, settle=0.0)
            await h.wait_screen("over: Red wins")
            await h.type_line("/analyze")
            await h.wait_for(lambda: any(t.startswith("Analysis done") for t in chat_texts(h)), 60)
            lines = chat_texts(h)
            reviews = [t for t in lines if t.startswith("Move ")]
            assert len(reviews) == 7
            assert not any("too early" in t or "(unknown)" in t for t in reviews)
            assert sum("(estimate)" in t for t in reviews) >= 5
            move6 = next(t for t in reviews if t.startswith("Move 6 "))
            assert "mistake" in move6 and "loses" in move6
            marked = sum("mistake" in t for t in reviews)
            summary = next(t for t in lines if t.startswith("Analysis done"))
            assert re.search(rf"\b{marked} mistakes?\b", summary), (summary, reviews)
            assert any("strongest search" in t for t in lines)

    run(scenario())


# -- four-player chess notices (issue 11.6) -------------------------------------------------

MATE_LINE = [
    "e1-d3", "b9-c9", "e13-e11", "m9-k9", "d1-e1", "a8-f13", "g14-f13", "k9-j9", "d3-b4", "a4-b4",
    "i13-i11", "m11-k11", "f2-f4", "b4-f4", "f13-e12", "m8-l8", "g1-b6", "a7-b6", "h14-k11", "n11-k11",
    "g2-g4", "f4-f1", "f14-e13", "n9-k6", "e1-f1", "b10-c10",
]
"""Four people at one keyboard; the last move (Blue) checkmates Yellow."""


@pytest.mark.parametrize("lang", ["en", "de"])
def test_chess4_says_check_mate_elimination_and_points(tmp_path: Path, lang: str) -> None:
    async def scenario() -> None:
        async with HeadlessShell(config_dir=tmp_path, lang=lang, columns=100, rows=40) as h:
            fast_clock(h)
            await h.type_line("/play chess4 2p")
            game = h.controller.match.game
            saw_marker = False
            for move in MATE_LINE:
                await h.type_line(move, settle=0.0)
                await h.wait_for(lambda move=move: game.history()[-1:] == [move], 5)
                if any(game.in_check(s) for s in range(4) if s not in game.eliminated()):
                    screen = await h.wait_screen("+ check:" if lang == "en" else "+ Schach:")
                    board = screen.split("│")
                    assert any(re.search(r"\+[rbygü]K", cell) for cell in board), screen
                    saw_marker = True
            assert game.eliminated() == (2,)
            texts = chat_texts(h)
            if lang == "en":
                assert saw_marker and any(t.endswith("is in check (from Blue).") or "is in check" in t for t in texts)
                assert "Blue checkmates Yellow – Yellow is out." in texts
                assert any(re.fullmatch(r"Blue: \+20 points \(checkmate\), now \d+\.", t) for t in texts), texts
                assert any(re.search(r": \+\d+ points \(capture\), now \d+\.", t) for t in texts)
                # the board pane is redrawn after the chat line: poll it (read at once it failed under load)
                await h.wait_for(lambda: "out: Yellow" in h.screen() and "D promoted queen" in h.screen(), 10)
            else:
                assert "Blau setzt Gelb matt – Gelb ist raus." in texts
                assert any(re.fullmatch(r"Blau: \+20 Punkte \(Matt\), jetzt \d+\.", t) for t in texts), texts
                await h.wait_for(lambda: "raus: Gelb" in h.screen() and "U umgewandelte Dame" in h.screen(), 10)

    run(scenario())


def test_chess4_points_line_wraps_inside_the_board_pane() -> None:
    from prompt_toolkit.formatted_text import fragment_list_to_text

    from p2p.games import create_game
    from p2p.shell.boards import BoardView, render
    from p2p.shell.i18n import Translator
    from p2p.shell.views.chess4 import BOARD_WIDTH

    game = create_game("chess4", {})
    game.position.scores[:] = [120, 135, 140, 155]  # type: ignore[attr-defined]
    for lang in ("de", "en"):
        text = fragment_list_to_text(render(game, BoardView(color=False), Translator(lang)))
        assert all(len(line) <= BOARD_WIDTH for line in text.splitlines()), text
        assert "155" in text and ("Grün" in text or "Green" in text)


# -- ends and refusals in plain words (issue 11.7) ---------------------------------------------


def test_ends_and_refusals_read_as_plain_words(tmp_path: Path, broker_url: str,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Declines both ways, an expired invitation and a resignation, in German: one plain
    line each, no protocol text, no warning for the expected cancel, "bob ist da." once."""
    from p2p import peer as peer_mod
    from p2p.protocol import round_machine
    from p2p.shell.connect import attach

    english = re.compile(r"\b(cancel(led)?|declined|seat \d|invitation|expired|resignation|is now part)\b")

    async def scenario() -> None:
        async with HeadlessShell(config_dir=tmp_path, lang="de", broker=broker_url,
                                 startup=attach(broker_url), columns=120, rows=40) as h:
            await h.wait_screen("Verbunden mit", 10)
            me = h.controller.online.peer.peer_id
            async with peer_mod.Peer(broker_url, nick="bob") as bob:
                for _ in range(200):
                    if bob.find_peer(me[:8]) is not None and h.controller.online.peer.find_peer("bob"):
                        break
                    await asyncio.sleep(0.05)
                await wait_chat(h, "ist da.")
                # 1. bob invites us, we decline: bob's cancel that follows is no warning.
                rnd = await bob.invite([me[:8]], "connect4")
                await wait_chat(h, "/accept oder /decline")
                await h.type_line("/decline")
                await h.wait_for(lambda: rnd.is_over, 10)
                await asyncio.sleep(0.5)
                # 2. we invite bob, he declines: one line saying so.
                await h.type_line("/invite bob connect4")
                await h.wait_for(lambda: bob.invitations, 10)
                await bob.invitations[-1].decline()
                await wait_chat(h, "bob hat abgelehnt; die Runde ist abgesagt.")
                # 3. an invitation that runs out.
                monkeypatch.setattr(round_machine, "INVITE_TTL_MS", 1500)
                await bob.invite([me[:8]], "connect4")
                await wait_chat(h, "/accept oder /decline")
                await wait_chat(h, "Die Einladung ist abgelaufen.", 15)
                monkeypatch.setattr(round_machine, "INVITE_TTL_MS", 60_000)
                await asyncio.sleep(1.5)  # the admin's cancel after expiry must stay silent
                # 4. a round where bob resigns.
                await h.type_line("/invite bob connect4 start=me")
                await h.wait_for(lambda: bob.invitations, 10)
                theirs = await bob.invitations[-1].accept()
                await h.wait_screen("(du)", 15)
                await theirs.resign()
                await wait_chat(h, "bob gibt auf.")
                await wait_chat(h, "gewinnt (Aufgabe)")
            texts = chat_texts(h)
            assert not [t for t in texts if t.startswith("Warnung")], texts
            assert texts.count("Die Einladung ist abgelaufen.") == 1, texts
            assert sum(t.startswith("bob") and t.endswith("ist da.") for t in texts) == 1, texts
            foreign = [t for t in texts if english.search(t)]
            assert foreign == [], foreign

    run(scenario())


# -- the screen (issue 11.10) ----------------------------------------------------------------------


def _chat_rows(screen: str, width: int) -> list[str]:
    """The rows of the left panes (lobby and chat) of a rendered screen."""
    return [row.split("│")[1] for row in screen.splitlines() if row.startswith("│")]


def test_help_and_chat_wrap_between_words_and_a_cut_line_is_announced(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with HeadlessShell(config_dir=tmp_path, lang="en", columns=80, rows=40) as h:
            await h.type_line("/help")
            long_words = " ".join(f"word{i:02d}" for i in range(45))  # ~300 characters
            await h.type_line(long_words)
            await wait_chat(h, "characters go out.")
            assert any(re.search(r"only the first 2\d\d of 314 characters", t) for t in chat_texts(h))
            rows = _chat_rows(h.screen(), 80)
            tokens = {tok for row in rows for tok in row.split()}
            helps = [t for t in chat_texts(h) if "\t" in t and not t.startswith("word")]
            assert helps
            for line in helps[-5:] + [long_words[:195]]:
                for word in line.split():
                    if len(word) < 25:  # a word is never broken over two rows
                        assert word in tokens, (word, rows)

    run(scenario())


def test_a_line_wider_than_the_screen_never_hides_the_prompt(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with HeadlessShell(config_dir=tmp_path, lang="en", columns=80, rows=24) as h:
            h.send("x" * 150)
            await h.wait_for(lambda: any(row.startswith("> xxxx") for row in h.screen().splitlines()))
            h.send("\r")
            await h.wait_for(lambda: h.shell.input.text == "")
            h.send("abc")
            await h.wait_for(lambda: h.screen().splitlines()[-1].startswith("> abc"))

    run(scenario())


def test_cube_lines_stay_marked_and_connect4_losers_keep_their_colour(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with HeadlessShell(config_dir=tmp_path, lang="en", columns=100, rows=30, color=False) as h:
            fast_clock(h)
            await h.type_line("/play cube 2p")
            for move in ["a1", "b1", "a1", "b1", "a1", "b1", "a1"]:  # Red fills pillar a1
                await h.type_line(move, settle=0.0)
            game = h.controller.match.game
            while not game.is_over():
                await h.type_line(game.legal_moves()[-1], settle=0.0)
            await h.wait_screen("over:")
            assert "Red: 1 new line of four, now 1 point." in chat_texts(h)
            row1 = next(r for r in h.screen().splitlines() if re.search(r"│1 \S", r))
            # pillar a1 (first cell after each level's "1") scored by Red: lower case, at the end
            assert len(re.findall(r"(?:│|   )1 x", row1)) == 4, row1
        async with HeadlessShell(config_dir=tmp_path, lang="en", columns=100, rows=30, color=True) as h:
            fast_clock(h)
            await h.type_line("/play connect4")
            for col in "4545454":
                await h.type_line(col, settle=0.0)
            await h.wait_screen("over: Red wins")
            fragments = h.shell._board()
            losers = [f for f in fragments if f[1] == " ●"]
            assert len(losers) == 3 and all("ansiyellow" in f[0] for f in losers), losers
            await h.type_line("/play connect4")
            for col in "2552354651517435227466447223":  # ends with a double four
                await h.type_line(col, settle=0.0)
            await h.wait_screen("over:")
            assert any(t.startswith("Double four: ") and "2 lines at once" in t for t in chat_texts(h))

    run(scenario())


@pytest.mark.skipif(__import__("shutil").which("tmux") is None, reason="tmux is not installed")
def test_emoji_in_the_chat_do_not_shift_the_board_pane_in_a_real_terminal(tmp_path: Path) -> None:
    """tmux draws emoji sequences (❤️, 👍🏽, flags) at other widths than the screen model
    counts: the row with them lost its frame.  Every framed row must be 80 cells wide."""
    import os
    import subprocess
    import sys
    import time
    import uuid

    from prompt_toolkit.utils import get_cwidth

    sock = f"p2p-text-{uuid.uuid4().hex[:8]}"

    def tmux(*args: str) -> str:
        return subprocess.run(["tmux", "-L", sock, *args], capture_output=True, text=True,
                              timeout=10, check=True).stdout

    env = {"P2P_CONFIG_DIR": str(tmp_path), "PYTHONPATH": str(Path(__file__).resolve().parents[1]),
           "TERM": "xterm-256color", "LANG": "C.UTF-8", "PATH": os.environ.get("PATH", "")}
    exports = " ".join(f"{k}='{v}'" for k, v in env.items())
    tmux("new-session", "-d", "-s", "main", "-x", "80", "-y", "24",
         f"env {exports} {sys.executable} -m p2p --local --lang en --nick anna; sleep 30")
    try:
        def wait(text: str) -> str:
            deadline = time.monotonic() + 15
            while text not in (screen := tmux("capture-pane", "-p", "-t", "main")):
                assert time.monotonic() < deadline, screen
                time.sleep(0.05)
            return screen

        wait("No game")
        tmux("send-keys", "-t", "main", "-l", "/play connect4")
        tmux("send-keys", "-t", "main", "Enter")
        wait("To move")
        tmux("send-keys", "-t", "main", "-l", "hi \u2764\ufe0f \U0001f44d\U0001f3fd \U0001f1e9\U0001f1ea ok end")
        tmux("send-keys", "-t", "main", "Enter")
        screen = wait("ok end")
        time.sleep(0.3)
        screen = tmux("capture-pane", "-p", "-t", "main")
        framed = [row for row in screen.splitlines()[:22]]
        bad = [row for row in framed if row[:1] not in "┌│└" or get_cwidth(row) != 80]
        assert bad == [], screen
    finally:
        subprocess.run(["tmux", "-L", sock, "kill-server"], capture_output=True, timeout=10, check=False)


def test_two_shells_same_score_line_stable_colours_and_the_draw_in_the_board(
    tmp_path: Path, broker_url: str
) -> None:
    """Two shells at 80x24: the draw's commitments show in the board pane, not as hex lines
    in the narrow chat; both read the same score line; when the invited player asks for
    another round, everyone keeps their seat and colour."""
    from p2p.shell.connect import attach
    from p2p.shell.settings import Settings

    async def play_out(shells: list[HeadlessShell]) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 60
        while loop.time() < deadline:
            rounds = [s.controller.online.round for s in shells]
            if all(r is not None and r.is_over for r in rounds):
                return
            for s, rnd in zip(shells, rounds):
                if rnd is not None and rnd.game is not None and rnd.is_my_turn:
                    plies = len(rnd.game.history())
                    await s.type_line(rnd.game.legal_moves()[0], settle=0.0)
                    await s.wait_for(lambda r=rnd, n=plies: r.is_over or len(r.game.history()) > n, 10)
            await asyncio.sleep(0.02)
        raise TimeoutError("round did not end")

    async def scenario() -> None:
        a_dir, b_dir = tmp_path / "a", tmp_path / "b"
        a_dir.mkdir()
        b_dir.mkdir()
        async with HeadlessShell(config_dir=a_dir, lang="en", broker=broker_url, startup=attach(broker_url),
                                 settings=Settings(nick="alice")) as alice, \
                HeadlessShell(config_dir=b_dir, lang="en", broker=broker_url, startup=attach(broker_url),
                              settings=Settings(nick="bob")) as bob:
            for h, other in ((alice, "bob"), (bob, "alice")):
                await h.wait_for(lambda h=h, o=other: h.controller.online is not None
                                 and h.controller.online.peer.find_peer(o) is not None, 15)
            await alice.type_line("/invite bob connect4")  # the starter is drawn
            await wait_chat(bob, "/accept or /decline")
            await bob.type_line("/accept")
            await bob.wait_for(lambda: bob.controller.online.round is not None
                               and bob.controller.online.round.game is not None, 20)
            await wait_chat(alice, "starts (drawn)", 20)
            rnd = alice.controller.online.round
            if not rnd.game.history():
                assert "Draw (commitment" in alice.screen() or rnd.game.history()
            for h in (alice, bob):
                texts = chat_texts(h)
                assert not [t for t in texts if "ommitment from" in t or "Reveal from" in t], texts
            await play_out([alice, bob])
            for h in (alice, bob):
                await h.wait_for(lambda h=h: "over:" in h.screen().splitlines()[-2], 10)
                # the status reads the chain's end at once; the score follows the end's notice
                await wait_chat(h, "Round 1 over", 20)

            def score_line(h: HeadlessShell) -> str:
                return h.screen().splitlines()[-2].split("Score ")[-1]

            # both notices are in: the rendered lines agree once both screens are redrawn
            with contextlib.suppress(TimeoutError):  # if they never do, the assert says how
                await alice.wait_for(lambda: score_line(alice) == score_line(bob), 10)
            line_a, line_b = score_line(alice), score_line(bob)
            assert line_a == line_b and line_a.startswith("alice ") and " · bob " in line_a, (line_a, line_b)
            assert "you" not in line_a
            # the shell's round log replays with the players' names (never "player", never hex)
            import subprocess
            import sys

            log_path = a_dir / "rounds" / f"round-{rnd.id}.log"
            out = await asyncio.to_thread(
                subprocess.run, [sys.executable, "-m", "p2p", "replay", "--moves", str(log_path)],
                capture_output=True, text=True, timeout=60, check=False,
            )
            assert out.returncode == 0, out.stderr
            assert re.search(r"seat 0 Red: alice \(", out.stdout) and re.search(r"seat 1 Yellow: bob \(", out.stdout)
            assert "player" not in out.stdout and " by Red alice (" in out.stdout, out.stdout
            seat_of_bob = bob.controller.online.round.my_seat
            await bob.type_line("/again")  # the invited player asks for another round
            await wait_chat(alice, "/accept or /decline")
            await alice.type_line("/accept")
            await bob.wait_for(lambda: bob.controller.online.round.game is not None
                               and bob.controller.online.round.id != rnd.id, 20)
            assert bob.controller.online.round.my_seat == seat_of_bob  # same seat, same colour
            colour, other = ("Red", "Yellow")[seat_of_bob], ("Red", "Yellow")[1 - seat_of_bob]
            await bob.wait_for(lambda: "Round 2 · " in bob.screen().splitlines()[-2], 10)
            status = bob.screen().splitlines()[-2]
            assert f"{colour} (you)" in status or f"{other} (alice)" in status, status
            # alice was announced once, when she came, never after a round (busy/free)
            await asyncio.sleep(1.0)  # presences after the busy/free flips have arrived
            texts = chat_texts(bob)
            first_round = next(i for i, t in enumerate(texts) if t.startswith("Round ") and "starts" in t)
            joined = [i for i, t in enumerate(texts) if t.startswith("alice") and t.endswith("joined.")]
            assert len(joined) <= 1 and all(i < first_round for i in joined), texts
            assert not any("Settings not saved" in t for t in chat_texts(bob))
            # a whole online session in English holds no German line (issue 11.8)
            from test_shell_language import ALLOWED, GERMAN_MARKERS

            for h in (alice, bob):
                german = [t for t in h.controller.state.text_lines() if GERMAN_MARKERS.search(ALLOWED.sub("", t[6:]))]
                assert german == [], german

    run(scenario(), timeout=120)


PROMOTION_LINE = [
    "h2-h4", "b4-d4", "e13-e12", "m5-k5", "h4-h5", "b5-c5", "g13-g11", "n6-m5", "h5-h6", "a6-e2",
    "j13-j12", "m5-k3", "h6-h7", "e2-d1", "e14-d12", "n5-l6", "h7-h8",
]
"""Red's h-pawn walks to h8, the promotion rank, and becomes a one-point queen."""


def test_chess4_explains_a_promoted_piece(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with HeadlessShell(config_dir=tmp_path, lang="en", columns=100, rows=40) as h:
            fast_clock(h)
            await h.type_line("/play chess4 2p")
            for move in PROMOTION_LINE:
                await h.type_line(move, settle=0.0)
            await wait_chat(h, "the pawn on h8 becomes a queen")
            line = next(t for t in chat_texts(h) if "becomes a queen" in t)
            assert line.startswith("Red") and "worth only 1 point" in line
            screen = await h.wait_screen("D promoted queen", 20)  # the legend under the board
            assert " rD" in screen

    run(scenario())
