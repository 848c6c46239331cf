"""A player in a process of its own, for tests that kill it with SIGKILL.

``python tests/peer_process.py BROKER SEED_HEX LOG_DIR SILENT_MS OFFLINE_MS MOVES``

Uses only the public ``Peer`` API: connects with the identity of ``SEED_HEX``, accepts
the first invitation, plays its first legal move on each of its first ``MOVES`` turns,
and on the turn after that prints ``THINKING <round id>`` and waits (to be killed).
Every line it prints is flushed at once; the parent reads them.
"""

from __future__ import annotations

import asyncio
import sys

from p2p.peer import InvitationReceived, Peer
from p2p.protocol.identity import Identity
from p2p.protocol.round import TurnTimeouts


async def main(argv: list[str]) -> None:
    url, seed, log_dir, silent, offline, moves = argv
    timeouts = TurnTimeouts(silent_ms=int(silent), offline_ms=int(offline))
    identity = Identity.from_seed(bytes.fromhex(seed))
    async with Peer(
        url, nick="bob", identity=identity, log_dir=log_dir, turn_timeouts=timeouts
    ) as peer:
        notes = peer.events()
        print("ONLINE", flush=True)
        while True:
            note = await notes.next(60)
            if isinstance(note, InvitationReceived):
                break
        rnd = await note.invitation.accept()
        for _ in range(int(moves)):
            if not await rnd.wait_turn(30):
                return
            await rnd.play(rnd.game.legal_moves()[0])
        if await rnd.wait_turn(30):
            print("THINKING", rnd.id, flush=True)
        await asyncio.sleep(3600)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
