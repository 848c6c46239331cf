"""One identity, one seat at a time (issue 17 item 5): two sessions of one key agree,
without a server, which one signs; the other watches until it takes over.

Pure: lobbies and round machines fed each other's validly signed events by hand."""

from __future__ import annotations

import pytest

from p2p.protocol import events
from p2p.protocol.effects import Equivocation, Notice, Publish
from p2p.protocol.identity import Identity
from p2p.protocol.lobby import Lobby
from p2p.protocol.loopback import Loopback
from p2p.protocol.round import Phase
from p2p.protocol.round_machine import ActionError, RoundMachine
from p2p.protocol.sessions import SETTLE_MS, SILENCE_MS

ME = Identity.from_seed(b"\x07" * 32)
OTHER = Identity.from_seed(b"\x08" * 32)


def session(me: Identity, n: int, now: int) -> tuple[Lobby, Publish]:
    """A lobby of ``me`` connected at ``now`` with session bytes ``n``; its presence."""
    lobby = Lobby(me, "anna", bytes([n]) * 16)
    lobby.will(now, session=bytes([n]) * 16)
    (presence,) = lobby.connect(now)
    assert isinstance(presence, Publish)
    return lobby, presence


def own(lobby: Lobby, publish: Publish, now: int, retained: bool = False) -> list:
    """Deliver ``publish`` (from another session) on ``lobby``'s own presence topic."""
    return lobby.receive_bytes(publish.payload, now, lobby.will_route().topic, retained)


def codes(effects: list) -> list[str]:
    return [e.code for e in effects if isinstance(e, Notice)]


def test_the_later_session_watches_and_is_told_at_once() -> None:
    first, p1 = session(ME, 1, 1_000)
    second, p2 = session(ME, 2, 9_000)
    told = own(second, p1, 9_001, retained=True)  # the broker's retained copy
    assert codes(told) == ["other_session"] and told[0].params == {"acting": False}
    assert not second.sessions.acting and first.sessions.acting
    told = own(first, p2, 9_002)
    assert codes(told) == ["other_session"] and told[0].params == {"acting": True}
    assert first.sessions.acting
    # the watcher refuses to answer invitations (it would sign for the seat)
    with pytest.raises(ActionError) as err:
        second.take_invitation("00" * 16)
    assert err.value.code == "other_session"
    # no repair war: a live presence of our own key on our topic is not "missing"
    assert not any(isinstance(e, Publish) for e in own(first, p2, 9_003))


def test_both_sessions_agree_on_who_acts_in_any_order() -> None:
    first, p1 = session(ME, 1, 1_000)
    second, p2 = session(ME, 2, 1_000)  # same start: the session nonce decides
    own(first, p2, 1_001)
    own(second, p1, 1_001)
    assert first.sessions.acting != second.sessions.acting


def test_take_over_then_the_older_one_steps_back() -> None:
    first, p1 = session(ME, 1, 1_000)
    second, p2 = session(ME, 2, 9_000)
    own(second, p1, 9_001, retained=True)
    own(first, p2, 9_002)
    effects = second.take_over(10_000)
    (claim,) = [e for e in effects if isinstance(e, Publish)]
    assert claim.event.body["lead"] == 1
    assert not second.sessions.acting  # it waits for in-flight events of the other
    told = own(first, claim, 10_001)
    assert codes(told) == ["other_session_took_over"] and not first.sessions.acting
    with pytest.raises(ActionError):
        first.decline_invitation("00" * 16, 10_002)
    second.tick(10_000 + SETTLE_MS)
    assert second.sessions.acting
    # the old one's heartbeat (lead 0) changes nothing
    (beat,) = [e for e in first.tick(10_000 + 20_000) if isinstance(e, Publish)]
    own(second, beat, 30_001)
    assert second.sessions.acting and not first.sessions.acting


def test_the_watcher_acts_when_the_other_leaves_and_the_old_one_then_watches() -> None:
    first, p1 = session(ME, 1, 1_000)
    second, p2 = session(ME, 2, 9_000)
    own(second, p1, 9_001, retained=True)
    own(first, p2, 9_002)
    will = first.will(1_000)  # its Last Will, as the broker publishes it
    will_bytes = Publish(first.will_route(), will)
    told = own(second, will_bytes, 12_000)
    assert codes(told) == ["other_session_gone"] and second.sessions.acting
    assert second.sessions.lead == 1  # it leads now
    # the old session comes back (new connection): it sees the lead and watches
    first.will(70_000, session=b"\x03" * 16)
    (back,) = first.connect(70_000)
    (beat,) = [e for e in second.tick(70_000) if isinstance(e, Publish)] or [
        second._announce("online", 70_000)
    ]
    own(first, beat, 70_001)
    own(second, back, 70_002)
    assert second.sessions.acting and not first.sessions.acting
    # a replay of the Will that ended session 1 does not end its new connection
    own(second, will_bytes, 70_003)
    assert second.sessions.others


def test_a_silent_other_session_hands_over_but_not_while_we_are_cut_off() -> None:
    first, p1 = session(ME, 1, 1_000)
    second, p2 = session(ME, 2, 9_000)
    own(second, p1, 9_001, retained=True)
    second.tick(9_001 + SILENCE_MS, listening=False)  # our own outage: not its silence
    assert not second.sessions.acting and second.sessions.others
    second.tick(9_001 + SILENCE_MS + 1)  # back: its silence counts from now
    assert second.sessions.others and not second.sessions.acting
    told = second.tick(9_001 + 2 * SILENCE_MS + 10)
    assert "other_session_gone" in codes(told)
    second.tick(9_001 + 2 * SILENCE_MS + 10 + SETTLE_MS)
    assert second.sessions.acting


def test_stale_or_replayed_presences_of_our_key_are_no_other_session() -> None:
    lobby, _ = session(ME, 1, 1_000_000)
    old = Lobby(ME, "anna", b"\x09" * 16)
    old.will(1_000, session=b"\x09" * 16)
    (stale,) = old.connect(1_000)  # 16 minutes old
    assert codes(own(lobby, stale, 1_000_000)) == []
    assert lobby.sessions.acting and not lobby.sessions.others
    # our own earlier connection (same session, before a reconnect) is us
    (mine,) = lobby.connect(1_000_500)
    lobby.will(1_001_000, session=b"\x0a" * 16)
    assert own(lobby, mine, 1_001_001, retained=True) == []
    assert lobby.sessions.acting


def test_a_round_with_one_key_in_two_sessions_never_equivocates() -> None:
    """The watcher follows the chain but signs nothing; after the takeover only it signs."""
    first, p1 = session(ME, 1, 1_000)
    second, p2 = session(ME, 2, 1_500)
    own(second, p1, 1_501, retained=True)
    own(first, p2, 1_502)
    seats = [{"pk": ME.pk_hex, "level": None}, {"pk": OTHER.pk_hex, "level": None}]
    net = Loopback()
    admin, effects = RoundMachine.open(
        ME, 2_000, "5a" * 16, "connect4", {}, seats, 0, b"\x01" * 32
    )
    admin.sessions = first.sessions
    twin = RoundMachine(ME, admin.state.genesis, b"\x02" * 32, now=2_000)
    twin.sessions = second.sessions
    guest = RoundMachine(OTHER, admin.state.genesis, b"\x03" * 32, now=2_000)
    net.add("a", admin, effects)
    net.add("twin", twin)
    net.add("b", guest, guest.accept(2_001))
    net.run()
    assert {m.state.phase for m in (admin, twin, guest)} == {Phase.PLAY}
    with pytest.raises(ActionError) as err:
        twin.move("4", net.now)
    assert err.value.code == "other_session"
    net.post("a", admin.move("4", net.now))
    net.run()
    net.post("b", guest.move("4", net.now))
    net.run()
    # take over: the old one steps back at once, the new one acts after settling
    (claim,) = [e for e in second.take_over(net.now) if isinstance(e, Publish)]
    own(first, claim, net.now)
    with pytest.raises(ActionError):
        admin.move("3", net.now)
    net.now += SETTLE_MS
    second.tick(net.now)
    net.post("twin", twin.move("3", net.now))
    net.run()
    while guest.state.phase is Phase.PLAY:
        mover = twin if guest.state.owner() == ME.public_key else guest
        name = "twin" if mover is twin else "b"
        move = mover.state.game.legal_moves()[0]  # type: ignore[union-attr]
        net.post(name, mover.move(move, net.now))
        net.run()
        net.post("a", admin.tick(net.now))
        net.run()
    assert not net.effects_of(Equivocation)
    assert admin.state.head.id == twin.state.head.id == guest.state.head.id
    signers = {
        p.event.id for n, p in net.published if n == "a" and p.event.seq is not None
    }
    after = [p for n, p in net.published if n == "a" and p.event.seq and p.event.seq > 4]
    assert signers and not after  # the old session signed nothing after it stepped back
    # the acks of our key come from the acting session only
    acks = [(n, p.event) for n, p in net.published if p.event.kind == "ack"]
    assert {n for n, e in acks if e.pk == ME.public_key} == {"twin"}


def test_presence_fields_are_checked() -> None:
    lobby, p1 = session(ME, 1, 1_000)
    assert p1.event.body["since"] == 1_000 and p1.event.body["lead"] == 0
    body = dict(p1.event.body, lead=-1)
    with pytest.raises(events.EventError):
        events.parse(events.make(ME, "presence", 1_000, body).raw)


def test_a_key_alone_acts_while_its_link_is_down() -> None:
    """Our own outage alone never stops us (the outbox keeps a move); only once another
    session of our key was seen do we sign nothing while cut off."""
    lobby, _ = session(ME, 1, 1_000)
    lobby.tick(5_000, listening=False)
    assert lobby.sessions.acting
    lobby.tick(5_500)  # back
    assert lobby.sessions.acting
    other, p2 = session(ME, 2, 6_000)
    own(lobby, p2, 6_001)
    assert lobby.sessions.acting
    lobby.tick(7_000, listening=False)
    assert not lobby.sessions.acting
    lobby.tick(8_000)
    assert not lobby.sessions.acting  # settling: the others' presences come first
    lobby.tick(8_000 + SETTLE_MS)
    assert lobby.sessions.acting


def _run(n: int, since: int, beats: int) -> tuple[Lobby, Publish, list[Publish]]:
    """A session of ``ME`` started at ``since``: its Will and its online presences, one
    per heartbeat (what a stranger on ``#`` records from its presence topic)."""
    lobby = Lobby(ME, "anna", bytes([n]) * 16)
    will = Publish(lobby.will_route(), lobby.will(since, session=bytes([n]) * 16))
    beats_out = [p for p in lobby.connect(since) if isinstance(p, Publish)]
    for i in range(1, beats):
        beats_out += [p for p in lobby.tick(since + 20_000 * i) if isinstance(p, Publish)]
    return lobby, will, beats_out


def test_a_restarted_client_never_watches_because_of_its_crashed_runs_will_and_replays() -> None:
    """Issue 23 item 4: the broker holds the crashed run's Will; the new run reads it on
    subscribing and so ends that session: a stranger replaying the old run's online
    presences one per heartbeat (each newer than the last) never makes it watch."""
    _, will, beats = _run(1, 1_000, 12)  # ran for 4 minutes, then crashed
    start = 1_000 + 20_000 * 12
    new, _ = session(ME, 2, start)
    assert own(new, will, start + 1, retained=True) == []
    for i, beat in enumerate(beats):
        now = start + 2 + 20_000 * i
        own(new, beat, now)
        new.tick(now)
        assert new.sessions.acting and not new.sessions.others, i


def test_our_own_earlier_runs_are_never_another_session_even_without_their_will() -> None:
    """The Will never reached us (a stranger emptied the topic, or the broker has not
    noticed the old connection yet): the runs the driver remembers are ours."""
    _, _, beats = _run(1, 1_000, 3)
    new, _ = session(ME, 2, 50_000)
    new.sessions.earlier_runs([1_000])
    for beat in beats:
        assert own(new, beat, 50_001, retained=True) == []
        assert new.sessions.acting


def test_another_sessions_replayed_presences_make_us_watch_only_while_they_are_fresh() -> None:
    """Another session of our key (not one of our runs) went away and its Will never
    reached us; a stranger replays its presences.  We watch only while the newest one's
    signed ts is within FRESH_MS of our clock: the stall ends FRESH_MS after the newest
    presence that session signed, however the stranger orders its replays."""
    from p2p.protocol.sessions import FRESH_MS

    _, _, beats = _run(1, 1_000, 11)  # newest presence signed at 201_000
    newest = beats[-1].event.ts
    start = newest + 9_000
    new, _ = session(ME, 2, start)
    # replayed oldest first, one per heartbeat (4 min old each time): never fresh
    for i, beat in enumerate(beats[:-1]):
        own(new, beat, start + 20_000 * i)
        assert new.sessions.acting, i
    # the newest one at once: we watch, but only until it is FRESH_MS old
    new2, _ = session(ME, 3, start)
    own(new2, beats[-1], start + 1)
    assert not new2.sessions.acting
    for beat in beats:  # older ones, replayed again, extend nothing
        own(new2, beat, newest + FRESH_MS)
    new2.tick(newest + FRESH_MS)
    assert not new2.sessions.acting
    told = new2.tick(newest + FRESH_MS + 1)
    assert "other_session_gone" in codes(told) and new2.sessions.acting
