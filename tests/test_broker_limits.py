"""One test per row of the broker-limits table in docs/brokers.md (issue 25): the
harness (``tests/broker_limits.py``) plays the limit, runs a live round and a slow round
between peers never online together, and the outcome must be the documented one -- and
every documented outcome either works (complete and agreed) or degrades with the line the
user is told, finished unforked once both are online together."""

from __future__ import annotations

from pathlib import Path

import pytest
from broker_limits import AGREED, KICKS, LIMITS, Limit, documented, run_limit
from conftest import run

from p2p.net.transport import PUBLISH_BURST, PUBLISH_RATE_PER_S


def test_every_limit_has_its_row_in_the_docs_and_no_row_fails() -> None:
    rows = documented()
    assert sorted(rows) == sorted(limit.name for limit in LIMITS)
    for cells in rows.values():
        assert len(cells) == 3, cells
        for cell in cells:
            assert cell == AGREED or cell.startswith("degrades: told "), cell


@pytest.mark.slow
@pytest.mark.parametrize("limit", LIMITS, ids=[f"row{i}" for i in range(len(LIMITS))])
def test_broker_limit_row(limit: Limit, tmp_path: Path, broker_url: str) -> None:
    kicks = KICKS[0]
    outcome, proxy = run(run_limit(limit, tmp_path), 150)
    assert outcome.cells() == documented()[limit.name], (
        "the harness's outcome differs from docs/brokers.md "
        "(re-run python tests/broker_limits.py --write if the change is intended)"
    )
    if proxy is not None:  # what the proxy saw of our own publishing
        assert proxy.cut_for_rate == 0 and proxy.cut_for_depth == 0
        assert proxy.max_per_second <= PUBLISH_BURST + PUBLISH_RATE_PER_S
        if limit.drop_every_s:
            assert proxy.drops >= 1
    if limit.takeover:
        assert KICKS[0] > kicks, "no takeover happened"
