"""The real ``p2p`` program with a short offline turn timeout, for end-to-end tests only.

The turn timeouts are chain rules every member of a round must share, so the command line
has no option for them; a terminal test that wants to see a forfeit within seconds (not
the protocol's 3 minutes plus a third) runs every shell through this file, which sets the
protocol's default ``offline_ms`` from ``P2P_TEST_OFFLINE_MS`` before ``p2p.cli.main``
starts.  Everything else is the unchanged program: ``python tests/p2p_short_timeouts.py
--broker URL --nick anna``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from p2p.protocol.round import DEFAULT_TIMEOUTS  # noqa: E402

# one shared instance is every default (Peer, RoundMachine, replay): set it in place
object.__setattr__(DEFAULT_TIMEOUTS, "offline_ms", int(os.environ.get("P2P_TEST_OFFLINE_MS", "180000")))

from p2p.cli import main  # noqa: E402

raise SystemExit(main())
