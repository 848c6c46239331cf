"""Result lines as players read them (issue 19): a four-player chess result is a ranking
with points (all at 0 are not "all winners", the resigned marked out), and your own
actions are told in the second person ("You resign.", "You did not move ..."), in
both languages."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from test_shell_life_online import accepted_from, online_shell, run, said, status

from p2p.shell.testing import HeadlessShell

peer_mod = pytest.importorskip("p2p.peer")
Peer = peer_mod.Peer


def fast_clock(h: HeadlessShell) -> None:
    ticks = itertools.count(1000)
    h.controller.clock = lambda: float(next(ticks))


def test_chess4_ends_with_a_ranking_with_points(tmp_path: Path) -> None:
    async def scenario(lang: str, words: tuple[str, str, str]) -> None:
        (tmp_path / lang).mkdir()
        async with HeadlessShell(config_dir=tmp_path / lang, lang=lang, color=False, rows=30, columns=100) as h:
            fast_clock(h)
            await h.type_line("/play chess4 move_limit=6")
            await h.type_line("/resign")
            await said(h, words[0])
            await h.wait_for(lambda: h.controller.match.game.is_over(), 60)
            line = await said(h, words[1], 10)
            ranking, out = words[2], "(out)" if lang == "en" else "(raus)"
            assert ranking in line, line
            assert line.count("1. ") >= 1 and line.count(out) >= 1, line
            assert " win" not in line and "gewinn" not in line, line
            game = h.controller.match.game
            for seat, points in enumerate(game.scores()):
                assert f"{h.controller.seat_label(game, seat)} {points} " in line, (seat, line)

    run(scenario("en", ("You resign.", "Round 1 over", "ranking 1. ")))
    run(scenario("de", ("Du gibst auf.", "Runde 1 vorbei", "Rangfolge 1. ")))


def test_your_own_resignation_online_is_in_the_second_person(tmp_path: Path, broker_url: str) -> None:
    """"bob resigns." stood on bob's own screen."""
    async def scenario() -> None:
        async with Peer(broker_url, nick="alice") as alice, online_shell(tmp_path, broker_url) as h:
            ra = await accepted_from(alice, h)
            await h.type_line("/resign")
            await ra.wait_over(10)
            await said(h, "You resign.")
            assert not any("tester resigns" in x for x in h.controller.state.text_lines())

    run(scenario())


def test_your_own_forfeit_after_a_restart_is_in_the_second_person(tmp_path: Path, broker_url: str) -> None:
    """"anna hat 60 s nicht gezogen … und ist raus" stood on anna's own screen."""
    from p2p.protocol.round import TurnTimeouts

    fast = TurnTimeouts(silent_ms=600_000, offline_ms=2_000)
    options = {"turn_timeouts": fast}

    async def scenario() -> None:
        async with Peer(broker_url, nick="alice", turn_timeouts=fast) as alice:
            async with online_shell(tmp_path, broker_url, peer_options=options) as h:
                ra = await accepted_from(alice, h)
            await ra.wait_over(20)
            async with online_shell(tmp_path, broker_url, peer_options=options) as h:
                await h.wait_for(lambda: "over" in status(h), 20)
                # the status reads the chain's end at once; the line follows the end's notice
                await h.wait_for(lambda: any("You did not move for" in x and "are out" in x
                                             for x in h.controller.state.text_lines()), 10)
                texts = h.controller.state.text_lines()
                assert not any("tester did not move" in x for x in texts), texts

    run(scenario())


@pytest.mark.parametrize("lang", ["en", "de"])
def test_a_fair_forfeit_learned_after_a_restart_raises_no_warning(tmp_path: Path, broker_url: str,
                                                                 lang: str) -> None:
    """Issue 26.2: forfeited on our turn while the shell was away, we read on restart "You
    did not move for 3 s (went offline) and are out" and then "Warning: by our clock the
    turn timeout of tester came after 0 s": our clock took the resumed head as just seen
    and accused a fair winner. Our clock never saw that head arrive: no warning."""
    from p2p.protocol.round import TurnTimeouts

    # long enough that a forfeit arriving just after our resume is "too soon" by the
    # notice's clock grace (5 s), were the resumed head taken as seen live
    fast = TurnTimeouts(silent_ms=600_000, offline_ms=8_000)
    options = {"turn_timeouts": fast}
    out, over, warning = {"en": ("and are out", "Round 1 over", "Warning"),
                          "de": ("und bist raus", "Runde 1 vorbei", "Warnung")}[lang]

    async def scenario() -> None:
        async with Peer(broker_url, nick="alice", turn_timeouts=fast) as alice:
            async with online_shell(tmp_path, broker_url, peer_options=options) as h:
                ra = await accepted_from(alice, h)
            await ra.wait_over(30)
            assert ra.winners == (0,)
            async with online_shell(tmp_path, broker_url, lang=lang, peer_options=options) as h:
                await said(h, out, 20)
                await said(h, over, 10)
                await h.wait_for(lambda: h.controller.online.round.is_over, 10)
                texts = h.controller.state.text_lines()
                assert not any(warning in x for x in texts), "\n".join(texts)
                assert not any("clock" in x or "Uhr" in x for x in texts), "\n".join(texts)

    run(scenario())
