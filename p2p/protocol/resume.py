"""Taking a round up again from its log (pure): what a restarted peer and the simulator share.

``p2p.peer.opening.resume`` reads the file and checks who may take it up; the machine it
gets is built here, from the log's replay (``p2p.protocol.replay.replay_log``), so the
simulator (``p2p.sim``) resumes a member exactly as a restarted peer does: the verified
chain, the equivocation proof the round ended by, the evidence beside the chain and the
closing acks of the final head (docs/protocol.md §9).
"""

from __future__ import annotations

from p2p.protocol.identity import Identity
from p2p.protocol.replay import Replay
from p2p.protocol.round import TurnTimeouts
from p2p.protocol.round_machine import RoundMachine
from p2p.protocol.topics import Topics


def machine_from_replay(
    me: Identity,
    replay: Replay,
    nonce: bytes,
    topics: Topics | None = None,
    code: str | None = None,
    now: int = 0,
    timeouts: TurnTimeouts | None = None,
    secret: bytes | None = None,
) -> RoundMachine:
    """The round machine a member resumes with from its log's ``replay``.

    Raises ``p2p.protocol.round.ChainError`` if the chain does not verify (``replay_log``
    already checked it, so only a log of other chain rules does).
    """
    return RoundMachine.from_log(
        me,
        replay.chain,
        nonce,
        topics,
        code,
        now,
        timeouts,
        proof=replay.proof,
        acks=replay.acks.values(),
        evidence=replay.evidence(),
        secret=secret,
    )
