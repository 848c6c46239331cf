"""A stranger deleting retained presences in a loop gets no N-fold amplification.

A peer re-publishes only its *own* presence, only when its own retained copy is gone,
and within ``REPAIR_BUDGET`` (3, then 1 per 10 s); a ``hello`` is answered under the
same budget and only while our presence is missing. So a stranger must send one message
per peer per repair (every peer's presence topic is a topic of its own), and each
message buys at most one re-publication: 1:1, never N-fold, and bounded per peer by
the budget whatever the stranger's rate.
"""

from __future__ import annotations

from test_protocol_lobby_flood import ME, T0, hello, keys, publishes

from p2p.protocol.lobby import Lobby


def test_ten_minutes_of_deletions_and_hellos_cost_one_presence_per_10_s() -> None:
    lobby = Lobby(ME, "me", bytes(16))
    own = lobby.will_route().topic
    lobby.connect(T0)
    strangers = keys(40, salt=9)
    sent = republished = 0
    for step in range(6_000):  # every 100 ms for 10 minutes
        now = T0 + step * 100
        lobby.receive_bytes(b"", now, own)  # our retained presence deleted
        lobby.receive(hello(strangers[step % 40], now), now)  # and a hello after it
        sent += 2
        republished += len(publishes(lobby.answer_due(now + 50)))
    assert republished <= 3 + 600 // 10 + 1
    assert republished >= 600 // 10 - 1  # the repair works while the attack lasts
    assert sent / republished > 90
