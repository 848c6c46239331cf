"""``p2p replay`` of the suite's logs gives the same verdicts as before the house changes
of issue 27 (its done-when: "``p2p replay`` of every log in the suite gives the same
verdicts as before").

The corpus (``tests/data/replay_corpus/``, built as its README says) holds 160 logs the
suite wrote or replayed -- the round-file tests, the protocol and integration tests, the
simulator's seeded schedules -- each with the verdict ``replay_log`` gave it at commit
``db992b6``, the last commit before the house refactors (the module split ``4a7e27f``, the
phase table, the typed outcome, the narrow hosts).  A log whose verdict changed since is
recorded with the commit that changed it, and that commit must be one of the deliberate
rule changes below, each changing only what its rule is about."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from replay_corpus import CORPUS, entries, log_lines, verdict_of

VERDICTS_FROM = "db992b6"
"""The commit the recorded (``then``) verdicts were computed at."""

RULE_CHANGES: dict[str, tuple[str, set[str]]] = {
    "3a27930": (
        "issue 26.12, four-player chess: at equal points a seat that resigned (left, was "
        "forfeited) ranks below every seat that played on; a round where the humans all "
        "resigned at 0 points was won by all four, now by the computer(s) that played on",
        {"winners"},
    ),
    "3a07464": (
        "issue 23, replay: an ack naming an earlier event of the chain is no end, only a "
        "sign (simulator mixed/3): such a log was 'disputed', now 'agreed' or "
        "'unacknowledged' by the acks of the final head",
        {"verdict", "disputes"},
    ),
    "08e81a0": (
        "issue 23, rules: a settled position is disputed only if it was at its last "
        "judgement (simulator honest/661, mixed/139): the conflicts judged are the same, "
        "their 'disputed' flag follows the rule",
        {"conflicts"},
    ),
    "e1c71a0": (
        "issue 23, rules v3 (T7): a forfeit that beat a late move is disputed while its seat "
        "still claims the move: such a log was 'unacknowledged', now 'disputed'",
        {"conflicts", "verdict"},
    ),
}
"""Deliberate rule changes since ``VERDICTS_FROM`` that change a corpus log's verdict:
commit -> (why, the record fields it may change).  None of them is a house change."""

CORPUS_ENTRIES = entries()


def _changed_fields(then: dict[str, Any], now: dict[str, Any]) -> set[str]:
    return {key for key in then.keys() | now.keys() if then.get(key) != now.get(key)}


@pytest.mark.parametrize("name", sorted(CORPUS_ENTRIES))
def test_replay_gives_the_recorded_verdict(name: str) -> None:
    entry = CORPUS_ENTRIES[name]
    got = verdict_of(log_lines(CORPUS / f"{name}.log.gz"), entry["timeouts"])
    if "changed_by" not in entry:
        assert got == entry["then"], f"{name} ({entry['source']}): the verdict changed"
        return
    why, fields = RULE_CHANGES[entry["changed_by"]]
    assert got == entry["now"], f"{name}: {why}"
    changed = _changed_fields(entry["then"], entry["now"])
    assert changed and changed <= fields, f"{name}: {changed} is more than the rule ({why}) changes"


def test_the_corpus_covers_every_verdict_and_the_suites_sources() -> None:
    verdicts = {e["then"].get("verdict", "error") for e in CORPUS_ENTRIES.values()}
    assert verdicts == {"agreed", "unacknowledged", "disputed", "prefix", "error"}
    sources = {e["source"].split("::")[0] for e in CORPUS_ENTRIES.values()}
    for part in ("tests/test_simulation.py", "tests/test_round_log_file.py",
                 "tests/test_protocol_replay.py", "tests/test_integration_results.py"):
        assert part in sources
    changed = [e for e in CORPUS_ENTRIES.values() if "changed_by" in e]
    assert {e["changed_by"] for e in changed} == set(RULE_CHANGES)
    assert len(CORPUS_ENTRIES) == 160
    from dataclasses import asdict

    from p2p.protocol.timeouts import TurnTimeouts

    assert asdict(TurnTimeouts()) == DEFAULT_TIMEOUTS


DEFAULT_TIMEOUTS = {"silent_ms": 900_000, "offline_ms": 180_000}
"""``p2p replay`` judges by the protocol's turn timeouts (``p2p.protocol.timeouts``)."""


def _one_of_each() -> list[str]:
    """One log per verdict (and one that does not verify), made with the default timeouts."""
    picked: dict[str, str] = {}
    for name, entry in sorted(CORPUS_ENTRIES.items()):
        if entry["timeouts"] in (None, DEFAULT_TIMEOUTS) and "changed_by" not in entry:
            picked.setdefault(entry["then"].get("verdict", "error"), name)
    return sorted(picked.values())


@pytest.mark.parametrize("name", _one_of_each())
def test_p2p_replay_as_a_process_agrees(name: str, tmp_path: Path) -> None:
    """``p2p replay FILE`` as people run it: the same head and verdict, or the same error."""
    entry = CORPUS_ENTRIES[name]
    path = tmp_path / f"round-{name}.log"
    path.write_bytes(b"\n".join(log_lines(CORPUS / f"{name}.log.gz")))
    run = subprocess.run([sys.executable, "-m", "p2p", "replay", str(path)],
                         check=False, capture_output=True, text=True, timeout=120)
    then = entry["then"]
    if "error" in then:
        assert run.returncode != 0 and then["error"] in run.stderr
        assert "Traceback" not in run.stderr
        return
    assert run.returncode == 0, run.stderr
    assert f"last event {then['head']}" in run.stdout
    assert f"state hash {then['state_hash']}" in run.stdout
    word = {"agreed": "complete and agreed", "unacknowledged": "not acknowledged by every member",
            "disputed": "disputed", "prefix": "a valid prefix"}[then["verdict"]]
    assert "verdict: " in run.stdout and word in run.stdout.split("verdict: ")[1]
