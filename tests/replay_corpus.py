"""The verdict ``p2p replay`` gives a log, as one comparable record (issue 27's "``p2p
replay`` of every log in the suite gives the same verdicts as before").

Kept free of anything newer than ``replay_log``, ``LogError`` and ``TurnTimeouts`` so the
same function computed the recorded verdicts on the older commit the corpus names
(``tests/data/replay_corpus/README.md``)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

CORPUS = Path(__file__).resolve().parent / "data" / "replay_corpus"


def verdict_of(lines: list[bytes], timeouts: dict[str, int] | None = None) -> dict[str, Any]:
    """What replaying ``lines`` (with the round's turn timeouts) proves: the verdict and
    the end it names (phase, winners, head, state hash, acks, disputes, judged conflicts),
    or the one-line error of a log that does not verify."""
    from p2p.protocol.replay import LogError, replay_log
    from p2p.protocol.round import TurnTimeouts

    try:
        result = replay_log(lines, TurnTimeouts(**(timeouts or {})))
    except LogError as err:
        return {"error": str(err)}
    st = result.state
    return {
        "verdict": result.verdict,
        "phase": st.phase.value,
        "winners": list(st.winners()),
        "chain": len(result.chain),
        "head": st.head.id,
        "state_hash": st.state_hash(),
        "acks": sorted(result.acks),
        "disputes": sorted(result.disputes),
        "conflicts": [[c.seq, c.judged.id, c.disputed] for c in result.conflicts],
    }


def log_lines(path: Path) -> list[bytes]:
    """A log file's lines as ``p2p replay`` reads them (``.gz``: as stored in the corpus)."""
    data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    return data.split(b"\n")


def entries() -> dict[str, dict[str, Any]]:
    """The corpus: per log name (``<name>.log.gz``) the test that wrote it (``source``),
    its turn timeouts (``None``: the defaults, as ``p2p replay`` uses), the verdict it got
    then (``then``) and, where a deliberate rule change altered it, the commit
    (``changed_by``) and the verdict now (``now``)."""
    data: dict[str, dict[str, Any]] = json.loads((CORPUS / "verdicts.json").read_text(encoding="utf-8"))
    return data
