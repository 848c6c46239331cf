"""Clock offsets, pure: the estimator, and each rule that compares a peer's signed time with
ours, at offsets from -1 h to +1 h (docs/protocol.md, "Time").  No broker, no wall clock."""

from __future__ import annotations

import pytest

from p2p.protocol.clocks import (
    MAX_AGE_MS,
    MAX_KEYS,
    ROUND_TOLERANCE_MS,
    TOLERANCE_MS,
    ClockOffsets,
    about,
)
from p2p.protocol.conflicts import MAX_AHEAD_MS
from p2p.protocol.effects import Applied, ChatLine, Dropped, Notice, Publish
from p2p.protocol.identity import Identity
from p2p.protocol.lobby import HEARTBEAT_MS, Lobby
from p2p.protocol.round import Phase
from p2p.protocol.round_machine import RoundMachine
from p2p.protocol.topics import Topics

ANNA, BOB = (Identity.from_seed(bytes([i]) * 32) for i in (1, 2))
T0 = 1_700_000_000_000
MIN = 60_000
OFFSETS = [-TOLERANCE_MS, -10 * MIN, -MIN, MIN, 10 * MIN, TOLERANCE_MS]
ROUND_OFFSETS = [-10 * MIN, -MIN, MIN, 10 * MIN]


def drops(effects: list) -> list[str]:
    return [e.reason for e in effects if isinstance(e, Dropped)]


def notices(effects: list, code: str) -> list[Notice]:
    return [e for e in effects if isinstance(e, Notice) and e.code == code]


def presence(lobby: Lobby, at: int):  # type: ignore[no-untyped-def]
    (p,) = [e for e in lobby.connect(at) if isinstance(e, Publish)]
    return p.event


# -- the estimator ------------------------------------------------------------------------


def test_the_estimate_leans_on_the_largest_samples_and_ignores_one_from_the_future() -> None:
    clocks = ClockOffsets()
    pk = BOB.public_key
    for i, delay in enumerate((40, 3_000, 45_000, 30)):  # queued or replayed: smaller samples
        arrival = T0 + i * HEARTBEAT_MS
        clocks.observe(pk, arrival + 600_000 - delay, arrival)
    assert clocks.offset(pk) == 600_000 - 40
    clocks.observe(pk, T0 + 5 * HEARTBEAT_MS + 3_000_000, T0 + 5 * HEARTBEAT_MS)  # one liar
    assert clocks.offset(pk) == 600_000 - 30
    assert clocks.local(pk, T0 + 600_000) == T0 + 30


def test_corrections_are_clamped_samples_age_out_and_keys_are_bounded() -> None:
    clocks = ClockOffsets()
    far, near = b"f" * 32, b"n" * 32
    clocks.observe(far, T0 + 2 * TOLERANCE_MS, T0)
    assert clocks.correction(far) == TOLERANCE_MS
    assert clocks.local(far, T0, ROUND_TOLERANCE_MS) == T0 - ROUND_TOLERANCE_MS
    clocks.observe(near, T0 + 5_000, T0)
    clocks.observe(near, T0 + MAX_AGE_MS + 1 + 100, T0 + MAX_AGE_MS + 1)  # clock corrected
    assert clocks.offset(near) == 100  # the old sample aged out
    for i in range(MAX_KEYS + 10):
        clocks.observe(i.to_bytes(32, "big"), T0, T0)
    assert len(clocks) == MAX_KEYS and clocks.offset(far) is None  # least recent forgotten
    assert clocks.local(far, T0) == T0  # unknown: our own clock


def test_a_far_clock_is_notable_once_and_only_after_two_samples() -> None:
    clocks = ClockOffsets()
    pk = BOB.public_key
    clocks.observe(pk, T0 + 14 * MIN, T0)
    assert not clocks.notable(pk)
    clocks.observe(pk, T0 + 14 * MIN + HEARTBEAT_MS, T0 + HEARTBEAT_MS)
    assert clocks.notable(pk) and not clocks.notable(pk)
    near = ANNA.public_key
    clocks.observe(near, T0 + 9 * MIN, T0)
    clocks.observe(near, T0 + 9 * MIN + 1, T0 + 1)
    assert not clocks.notable(near)
    assert about(14 * MIN) == (14, "min") and about(-40_000) == (40, "s")


# -- the lobby ------------------------------------------------------------------------------


@pytest.mark.parametrize("offset", OFFSETS)
def test_a_live_presence_is_seen_at_any_offset_up_to_an_hour(offset: int) -> None:
    anna = Lobby(ANNA, "anna", bytes(16))
    bob = Lobby(BOB, "bob", bytes([2]) * 16)
    seen = anna.receive(presence(bob, T0 + offset), T0 + 30, bob.will_route().topic)
    assert drops(seen) == [] and [p.nick for p in anna.online()] == ["bob"]
    assert anna.clocks.offset(BOB.public_key) == offset - 30
    # a retained presence the broker says is 40 s old (MQTT v5 expiry: 60 - 20 s left)
    late = Lobby(ANNA, "anna", bytes(16))
    event = presence(bob, T0 + offset)
    seen = late.receive(event, T0 + 40_000, bob.will_route().topic, True, 20)
    assert drops(seen) == [] and late.clocks.offset(BOB.public_key) == offset


@pytest.mark.parametrize("offset", [-10 * MIN, 10 * MIN])
def test_a_retained_presence_of_unknown_age_is_judged_by_our_clock(offset: int) -> None:
    anna = Lobby(ANNA, "anna", bytes(16))
    bob = Lobby(BOB, "bob", bytes([2]) * 16)
    topic = bob.will_route().topic
    assert drops(anna.receive(presence(bob, T0 + offset), T0, topic, retained=True))
    anna.receive(presence(bob, T0 + offset + 1), T0 + 1, topic)  # live: its clock is known
    anna.receive(presence(bob, T0 + offset + 2), T0 + 2, topic)
    assert drops(anna.receive(bob._presence("online", T0 + offset + 3), T0 + 3, topic, True)) == []


def test_presences_further_off_than_an_hour_are_refused_and_said_once() -> None:
    anna = Lobby(ANNA, "anna", bytes(16))
    bob = Lobby(BOB, "bob", bytes([2]) * 16)
    topic = bob.will_route().topic
    first = anna.receive(presence(bob, T0 + 2 * TOLERANCE_MS), T0, topic)
    assert drops(first) == ["presence from the future"] and not notices(first, "clock_far")
    second = anna.receive(bob._presence("online", T0 + 2 * TOLERANCE_MS + HEARTBEAT_MS),
                          T0 + HEARTBEAT_MS, topic)
    (told,) = notices(second, "clock_far")
    assert told.params["amount"] == 2 and told.params["unit"] == "h" and told.params["ahead"]
    assert "bob" in told.text and "ahead of yours" in told.text
    third = anna.receive(bob._presence("online", T0 + 2 * TOLERANCE_MS + 2 * HEARTBEAT_MS),
                         T0 + 2 * HEARTBEAT_MS, topic)
    assert drops(third) and not notices(third, "clock_far")  # once
    assert anna.online() == []


def test_a_clock_past_the_round_tolerance_is_said_once_naming_whose() -> None:
    anna = Lobby(ANNA, "anna", bytes(16))
    bob = Lobby(BOB, "bob", bytes([2]) * 16)
    topic = bob.will_route().topic
    said = []
    for i in range(4):
        said += notices(anna.receive(bob._presence("online", T0 - 14 * MIN + i * HEARTBEAT_MS),
                                     T0 + i * HEARTBEAT_MS + 50, topic), "clock_off")
    (told,) = said
    assert told.text.startswith("bob") and "about 14 min behind yours" in told.text
    assert told.params == {"nick": told.params["nick"], "amount": 14, "unit": "min", "ahead": False}


@pytest.mark.parametrize("offset", OFFSETS)
def test_lobby_chat_and_hello_windows_are_judged_in_the_senders_frame(offset: int) -> None:
    anna = Lobby(ANNA, "anna", bytes(16))
    bob = Lobby(BOB, "bob", bytes([2]) * 16)
    (line,) = bob.chat("hi", T0 + offset)
    (hello,) = bob.hello(T0 + offset)
    if abs(offset) > 120_000:  # before anna knows bob's clock: refused as stale or ahead
        assert drops(anna.receive(line.event, T0)) == ["outside the replay window"]
    anna.receive(presence(bob, T0 + offset), T0, bob.will_route().topic)
    (fresh,) = bob.chat("hi again", T0 + offset + 5)
    assert isinstance(anna.receive(fresh.event, T0 + 5)[0], ChatLine)
    assert drops(anna.receive(hello.event, T0 + 6)) == []
    stale = bob.chat("old", T0 + offset - 10 * MIN)[0]  # stale in bob's own frame
    assert drops(anna.receive(stale.event, T0 + 7)) == ["outside the replay window"]


def _invite(offset: int, at: int = 0) -> tuple[RoundMachine, object]:
    admin, effects = RoundMachine.open(
        ANNA, T0 + offset + at, "ab" * 16, "connect4", {},
        [{"pk": ANNA.public_key.hex(), "level": None}, {"pk": BOB.public_key.hex(), "level": None}],
        0, bytes(32),
    )
    return admin, admin.state.genesis


@pytest.mark.parametrize("offset", ROUND_OFFSETS)
def test_an_invitation_expires_by_the_admins_clock(offset: int) -> None:
    bob = Lobby(BOB, "bob", bytes([2]) * 16)
    anna = Lobby(ANNA, "anna", bytes(16))
    inbox = Topics().inbox(BOB.peer_id).topic
    bob.receive(presence(anna, T0 + offset), T0, anna.will_route().topic)
    _, genesis = _invite(offset, at=1_000)
    assert drops(bob.receive(genesis, T0 + 1_000, inbox)) == []
    bob.tick(T0 + 59_000)
    assert "ab" * 16 in bob.invitations
    assert notices(bob.tick(T0 + 61_000), "invitation_expired")  # 60 s on anna's clock
    _, old = _invite(offset, at=-61_000)  # expired on anna's clock a second ago
    fresh = Lobby(BOB, "bob", bytes([2]) * 16)
    fresh.receive(presence(anna, T0 + offset), T0, anna.will_route().topic)
    assert drops(fresh.receive(old, T0, inbox)) == ["the invitation has expired"]


# -- the round machine ------------------------------------------------------------------


def _guest(offset: int) -> tuple[RoundMachine, RoundMachine]:
    """Anna (admin, clock at ``offset``) invites Bob; Bob knows Anna's clock."""
    admin, genesis = _invite(offset)
    guest = RoundMachine(BOB, genesis, bytes([7]) * 32, now=T0)
    guest.clocks.observe(ANNA.public_key, T0 + offset, T0)
    return admin, guest


@pytest.mark.parametrize("offset", ROUND_OFFSETS)
def test_the_guest_judges_expiry_in_the_admins_frame(offset: int) -> None:
    _, guest = _guest(offset)
    assert guest.tick(T0 + 59_000) == [] and not guest.expired
    assert guest.accept(T0 + 59_000)
    assert notices(guest.tick(T0 + 60_000), "expired")


@pytest.mark.parametrize("offset", ROUND_OFFSETS)
def test_a_start_dated_by_the_admins_clock_is_not_held_as_dated_ahead(offset: int) -> None:
    admin, guest = _guest(offset)
    (accept,) = [e for e in guest.accept(T0 + 10) if isinstance(e, Publish)]
    out = admin.receive(accept.event, T0 + offset + 20)
    start = next(e.event for e in out if isinstance(e, Publish) and e.event.kind == "start")
    guest.clocks = ClockOffsets()  # even without an estimate: chain time since the genesis
    got = guest.receive(start, T0 + 30)
    assert any(isinstance(e, Applied) for e in got), got
    assert guest.phase is Phase.PLAY


def test_an_event_no_clock_explains_waits_and_past_the_tolerance_too() -> None:
    from p2p.protocol import events

    for offset, waits in ((2 * MIN, False), (14 * MIN, True)):
        _, guest = _guest(0)
        genesis = guest.state.genesis
        guest.clocks = ClockOffsets()
        guest.clocks.observe(ANNA.public_key, T0 + offset, T0)  # anna's clock, estimated
        cancel = events.make(ANNA, "cancel", T0 + offset + 20, {"reason": "x"},
                             round=genesis.round, seq=1, prev=genesis.id)
        got = guest.receive(cancel, T0 + 30)
        if waits:  # past the round tolerance: neither her clock nor chain time explains it
            assert notices(got, "event_ahead") and guest.phase is Phase.FORMING
        else:
            assert guest.phase is Phase.CANCELLED
        without = RoundMachine(BOB, genesis, bytes([7]) * 32, now=T0)  # her clock unknown
        assert notices(without.receive(cancel, T0 + 30), "event_ahead")
    assert MAX_AHEAD_MS < MIN


# -- what people are told ------------------------------------------------------------------


def test_the_docstring_examples_hold() -> None:
    import doctest

    from p2p.protocol import clocks

    assert doctest.testmod(clocks).failed == 0


@pytest.mark.parametrize("lang", ["en", "de"])
def test_the_shell_says_whose_clock_and_by_how_much(lang: str) -> None:
    from types import SimpleNamespace

    from p2p.shell.controller import Controller
    from p2p.shell.i18n import Translator
    from p2p.shell.online_notes import OnlineNotes
    from p2p.shell.state import ShellState

    t = Translator(lang)
    who = SimpleNamespace(t=t)
    assert Controller._clock_text(who, 1_500) == ""  # network delay, not a clock
    ahead = Controller._clock_text(who, 14 * MIN)
    assert ahead == (" · Uhr 14 min vor" if lang == "de" else " · clock 14 min ahead")
    assert "nach" in Controller._clock_text(who, -90_000) or lang == "en"
    state = ShellState()
    notes = OnlineNotes(SimpleNamespace(peer=None, ctl=None, t=t, state=state, round=None,  # type: ignore[arg-type]
                                        own_cancels=set()))
    anna = Lobby(ANNA, "anna", bytes(16))
    bob = Lobby(BOB, "bob", bytes([2]) * 16)
    said = []
    for i in range(2):
        said += anna.receive(bob._presence("online", T0 + 14 * MIN + i * HEARTBEAT_MS),
                             T0 + i * HEARTBEAT_MS, bob.will_route().topic)
    (notice,) = notices(said, "clock_off")
    note = SimpleNamespace(round=None, code=notice.code, params=notice.params, text=notice.text)
    notes.notice(note)
    text = state.lines[-1].text if hasattr(state.lines[-1], "text") else str(state.lines[-1])
    expected = "geht etwa 14 min vor" if lang == "de" else "clock is about 14 min ahead of yours"
    assert "bob" in text and expected in text
