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


def ask_all(who, ts: int):  # type: ignore[no-untyped-def]
    """A newcomer's ``hello`` asking everyone present to answer (``all``)."""
    from p2p.protocol import events
    from p2p.protocol.topics import Topics

    return events.make(who, "hello", ts, {"nick": "new", "ns": Topics().root, "all": True})


def test_a_hello_asking_everyone_is_answered_once_where_retained_presences_miss_wildcards() -> None:
    """On a broker that hands retained presences to no wildcard filter (RabbitMQ) a
    newcomer asks; every present peer answers once after a back-off, even with its own
    retained presence intact, unless a presence of its went out meanwhile."""
    from p2p.protocol.lobby import Backoff

    lobby = Lobby(ME, "me", bytes(16))
    own = lobby.will_route().topic
    (mine,) = publishes(lobby.connect(T0))
    lobby.receive_bytes(mine.event.raw, T0 + 1, own)  # the broker holds our presence
    newcomer = keys(1, salt=3)[0]
    # a peer on a broker that delivers retained presences normally ignores it
    assert lobby.receive(ask_all(newcomer, T0 + 2), T0 + 2) == []
    lobby.answers_everyone = True
    assert lobby.receive(ask_all(newcomer, T0 + 3), T0 + 3) == [Backoff(1_000)]
    (answer,) = publishes(lobby.answer_due(T0 + 500))
    assert answer.event.body["status"] == "online" and answer.route == lobby.will_route()
    # asked again, but a heartbeat went out before the back-off ended: no extra answer
    assert lobby.receive(ask_all(newcomer, T0 + 4_000), T0 + 4_000) == [Backoff(1_000)]
    (beat,) = publishes(lobby.set_busy(False, T0 + 4_100))
    lobby.receive_bytes(beat.event.raw, T0 + 4_101, own)  # and came back from the broker
    assert publishes(lobby.answer_due(T0 + 4_500)) == []


def test_a_flood_of_hellos_asking_everyone_costs_at_most_one_presence_per_10_s() -> None:
    """The stranger's amplification is bounded per answering peer, whatever its rate
    and however many fresh keys it signs with: 3, then one presence per 10 s (the
    heartbeat sends one per 20 s), so lobby traffic stays within 3x its idle rate."""
    from p2p.protocol.lobby import Backoff

    lobby = Lobby(ME, "me", bytes(16))
    lobby.answers_everyone = True
    lobby.connect(T0)
    strangers = keys(40, salt=11)
    sent = answered = 0
    for step in range(6_000):  # every 100 ms for 10 minutes
        now = T0 + step * 100
        effects = lobby.receive(ask_all(strangers[step % 40], now), now)
        sent += 1
        if any(isinstance(e, Backoff) for e in effects):  # as the peer's timer does
            answered += len(publishes(lobby.answer_due(now + 50)))
    assert answered <= 3 + 600 // 10 + 1
    assert sent / answered > 90
