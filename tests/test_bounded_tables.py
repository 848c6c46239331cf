"""Bounded memory everywhere a stranger (or a hostile member) can write (issue 16,
item 8): each table has a named bound, and each test floods it with fresh keys or
validly signed events and asserts the bound.  (The peer's lobby, edge, inbox and
invitation memories are flooded in ``tests/test_memory_bounds.py``.)"""

from __future__ import annotations

import os
from types import SimpleNamespace

from test_protocol_round import PEOPLE, ROUND, human, nonce

from p2p.peer import ChatMessage
from p2p.protocol import events
from p2p.protocol.effects import Dropped
from p2p.protocol.identity import Identity
from p2p.protocol.loopback import Loopback
from p2p.protocol.round_machine import MAX_ORPHANS, RoundMachine
from p2p.protocol.round_side import MAX_JOINS, MAX_ROUND_CHAT_SEEN
from p2p.protocol.topics import join_proof
from p2p.shell.i18n import Translator
from p2p.shell.names import MAX_NAMES
from p2p.shell.online import OnlineSession
from p2p.shell.state import ShellState


def test_the_shells_nickname_map_is_bounded_and_keeps_the_shown_rounds_members() -> None:
    """Before: the shell kept a nickname for every key it ever saw (a chat line or a
    presence from each of 20,000 fresh keys: 20,000 entries, forever). Now at most
    ``MAX_NAMES``, and the members of the round on the board are never pushed out."""
    me, bob = Identity.from_seed(b"\x01" * 32), Identity.from_seed(b"\x02" * 32)
    state = ShellState()
    shell = SimpleNamespace(controller=None, t=Translator("en"), state=state)
    session = OnlineSession(shell, peer=SimpleNamespace(public_key=me.public_key, nick="me", brokers=list,
                                                    lobby=SimpleNamespace(peers={})))  # type: ignore[arg-type]
    seats = [SimpleNamespace(pk=me.public_key), SimpleNamespace(pk=bob.public_key)]
    session.round = SimpleNamespace(chain_state=SimpleNamespace(seats=seats))
    session.notes.handle(ChatMessage(bob.public_key, "bob", "hi", None, 0))
    for k in range(20_000):
        fresh = os.urandom(32)
        session.notes.handle(ChatMessage(fresh, f"s{k}", "spam", None, 0))
    assert len(session.names) <= MAX_NAMES, len(session.names)
    assert session.names.get(bob.public_key) == "bob"
    assert session.nick_of(bob.public_key) == "bob"


def _private_round() -> tuple[Loopback, RoundMachine, str]:
    code = "K7MQ2X"
    net = Loopback()
    seats = [human(0), {"pk": None, "level": None}]
    admin, effects = RoundMachine.open(PEOPLE[0], 0, ROUND, "connect4", {}, seats, 0, nonce(0), code=code)
    net.add("p0", admin, effects)
    return net, admin, code


def test_join_requests_in_the_admins_pool_are_bounded() -> None:
    """Whoever holds a private round's code can make keys: 500 joins, each validly signed
    by a fresh key with the right code proof. Before, the admin pooled every one (and
    re-published them all in each sync answer); now at most ``MAX_JOINS``."""
    net, admin, code = _private_round()
    genesis = admin.state.genesis
    for k in range(500):
        joiner = Identity.from_seed(os.urandom(32))
        proof = join_proof(code, ROUND, joiner.public_key, admin._secret)  # scrypt once
        join = events.make(joiner, "join", 10 + k, {"nick": f"j{k}", "proof": proof},
                           round=ROUND, prev=genesis.id)
        admin.receive(join, 10 + k)
    joins = [k for k, _ in admin.side if k == "join"]
    assert len(joins) <= MAX_JOINS, len(joins)


def test_ids_of_replaced_events_are_bounded() -> None:
    """A member that equivocated keeps signing events built on its losing version (each
    one new, validly signed): each was remembered as built on a replaced event, without
    bound. Now at most ``MAX_ORPHANS`` such ids are kept."""
    net = Loopback()
    admin, effects = RoundMachine.open(PEOPLE[0], 0, ROUND, "connect4", {}, [human(0), human(1)], 0, nonce(0))
    bob = RoundMachine(PEOPLE[1], admin.state.genesis, nonce(1))
    net.add("p0", admin, effects)
    net.add("p1", bob, bob.accept(1))
    net.run()
    head = admin.state.head

    def move(text: str) -> events.Event:
        trial = admin.state.game.copy()
        trial.push(text)
        body = {"ply": 0, "move": text, "state": trial.state_hash()}
        return events.make(PEOPLE[0], "move", head.ts + 10, body, round=ROUND, seq=head.seq + 1, prev=head.id)

    x, y = move("4"), move("3")
    bob.receive(x, head.ts + 20)
    proof = bob.receive(y, head.ts + 30)  # the proof: both are replaced (orphans)
    assert any(type(e).__name__ == "Equivocation" for e in proof)
    for k in range(MAX_ORPHANS + 500):
        later = events.make(PEOPLE[0], "move", head.ts + 40 + k, {"ply": 1, "move": "4", "state": "00" * 32},
                            round=ROUND, seq=head.seq + 2, prev=y.id)
        bob.receive(later, head.ts + 40 + k)
    assert len(bob._orphans) <= MAX_ORPHANS, len(bob._orphans)


def test_strangers_leave_no_memory_in_a_round_and_members_chat_is_bounded() -> None:
    """3,000 fresh keys send validly signed sync requests and chat lines to a round:
    nothing is remembered for them (sync floors and chat memory stay empty); a member's
    chat, over an hour, keeps at most ``MAX_ROUND_CHAT_SEEN`` ids."""
    net = Loopback()
    admin, effects = RoundMachine.open(PEOPLE[0], 0, ROUND, "connect4", {}, [human(0), human(1)], 0, nonce(0))
    bob = RoundMachine(PEOPLE[1], admin.state.genesis, nonce(1))
    net.add("p0", admin, effects)
    net.add("p1", bob, bob.accept(1))
    net.run()
    now = net.now + 1_000_000
    head = admin.state.head
    for k in range(3000):
        fresh = Identity.from_seed(os.urandom(32))
        ask = events.make(fresh, "sync_request", now, {"from_seq": 1}, round=ROUND, prev=head.id)
        line = events.make(fresh, "chat", now, {"text": f"spam {k}"}, round=ROUND)
        assert all(isinstance(e, Dropped) for e in admin.receive(ask, now) + admin.receive(line, now))
    assert set(admin._sync_floor) <= {PEOPLE[0].public_key, PEOPLE[1].public_key}
    assert len(admin._chat_seen) == 0
    for k in range(3000):  # one line per 2 s (the rate limit), for 100 minutes
        t = now + 2_000 * k
        admin.receive(events.make(PEOPLE[1], "chat", t, {"text": f"line {k}"}, round=ROUND), t)
    assert 0 < len(admin._chat_seen) <= MAX_ROUND_CHAT_SEEN
