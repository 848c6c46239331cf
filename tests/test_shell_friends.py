"""Identity a stranger cannot fake at a glance: 64-bit fingerprints and friends in the shell.

A stranger can take any nickname but not a friend's key.  The shell shows 64 bits of the
fingerprint next to every nickname in the lobby, lets the user mark a key as a friend
(``/friend NICK``, German ``/freund``; stored in the config dir), marks friends in the
lobby, and warns at once when another key shows up under a friend's nickname.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from p2p import friends as friends_mod
from p2p.friends import Friends
from p2p.protocol.identity import Identity, fingerprint
from p2p.shell.connect import attach
from p2p.shell.testing import HeadlessShell

peer_mod = pytest.importorskip("p2p.peer")

ALICE = Identity.from_seed(bytes([0xA1]) * 32)
MALLORY = Identity.from_seed(bytes([0x66]) * 32)


def run(coro):  # type: ignore[no-untyped-def]
    return asyncio.run(asyncio.wait_for(coro, 90))


async def _seen_by(peer, pk: bytes) -> None:  # type: ignore[no-untyped-def]
    while pk not in peer.lobby.peers:
        await asyncio.sleep(0.02)


def test_friends_book_is_pure_and_round_trips_its_file(tmp_path: Path) -> None:
    book = Friends()
    book.add(ALICE.public_key, "alice")
    assert book.is_friend(ALICE.public_key) and not book.is_friend(MALLORY.public_key)
    # the same nickname (any case, any spacing) with another key is an impostor
    for nick in ("alice", "ALICE", " a lice "):
        assert book.impostor_of(nick, MALLORY.public_key) == ALICE.public_key
    assert book.impostor_of("alice", ALICE.public_key) is None
    assert book.impostor_of("bob", MALLORY.public_key) is None
    path = tmp_path / friends_mod.FILE_NAME
    friends_mod.save(book, path)
    path.write_text(path.read_text() + "not-hex junk\n\n# a comment\n")
    again = friends_mod.load(path)
    assert again.items() == [(ALICE.public_key, "alice")]
    assert friends_mod.load(tmp_path / "missing.txt").items() == []
    assert again.remove(ALICE.public_key) and not again.remove(ALICE.public_key)
    assert again.impostor_of("alice", MALLORY.public_key) is None


def test_friend_marked_in_the_lobby_and_an_impostor_stands_out(
    tmp_path: Path, broker_url: str
) -> None:
    async def scenario() -> None:
        async with HeadlessShell(
            config_dir=tmp_path, lang="en", broker=broker_url, startup=attach(broker_url),
            columns=140, rows=40,
        ) as h:
            await h.wait_screen("Connected to", 10)
            async with peer_mod.Peer(broker_url, nick="alice", identity=ALICE):
                fp = fingerprint(ALICE.public_key)
                await h.wait_screen(f"alice [{fp}]", 10)  # 64 bits in the lobby
                await h.type_line("/friend alice")
                await h.wait_screen(f"alice ({fp}) is now marked as a friend", 5)
                await h.wait_screen(f"★ alice [{fp}]", 20)
                stored = friends_mod.load(tmp_path / friends_mod.FILE_NAME)
                assert stored.is_friend(ALICE.public_key)
                async with peer_mod.Peer(broker_url, nick="alice", identity=MALLORY) as fake:
                    bad = fingerprint(MALLORY.public_key)
                    await h.wait_screen(f"alice [{bad}] free ⚠ NOT your friend alice!", 10)
                    warning = f"Warning: alice ({bad}) uses the name of your friend alice"

                    def warnings() -> list[str]:
                        lines = h.controller.state.text_lines()
                        return [x for x in lines if warning in x and fp in x]

                    assert len(warnings()) == 1
                    # an invitation from the impostor carries the same warning
                    me = h.controller.online.peer
                    await asyncio.wait_for(_seen_by(fake, me.public_key), 10)
                    await fake.invite([me.public_key], "connect4")
                    await h.wait_screen(f"alice ({bad}) invites you to", 10)
                    await h.wait_for(lambda: len(warnings()) == 2, 5)
                    await h.type_line("/friends")
                    await h.wait_screen(f"★ alice ({fp}) online", 5)

    run(scenario())


def test_friends_in_german_and_kept_across_a_restart(tmp_path: Path, broker_url: str) -> None:
    async def scenario() -> None:
        async with peer_mod.Peer(broker_url, nick="alice", identity=ALICE):
            fp = fingerprint(ALICE.public_key)
            async with HeadlessShell(
                config_dir=tmp_path, lang="de", broker=broker_url, startup=attach(broker_url),
                columns=140, rows=40,
            ) as h:
                await h.wait_screen(f"alice [{fp}]", 10)
                await h.type_line("/freund alice")
                await h.wait_screen(f"alice ({fp}) ist jetzt als Freund gemerkt", 5)
            # a new shell with the same config dir knows the friend at once
            async with HeadlessShell(
                config_dir=tmp_path, lang="de", broker=broker_url, startup=attach(broker_url),
                columns=140, rows=40,
            ) as h:
                await h.wait_screen(f"★ alice [{fp}]", 10)
                async with peer_mod.Peer(broker_url, nick="Alice", identity=MALLORY):
                    await h.wait_screen("⚠ NICHT dein Freund alice!", 10)
                    await h.wait_screen("trägt den Namen deines Freundes alice", 20)
                await h.type_line("/entfreunden alice")
                await h.wait_screen(f"alice ({fp}) ist kein Freund mehr", 5)
                assert not friends_mod.load(tmp_path / friends_mod.FILE_NAME).items()

    run(scenario())
