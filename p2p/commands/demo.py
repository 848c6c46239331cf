"""``p2p demo``: scripted peers play a whole online round and print what happened.

Runs without internet: it starts a local Mosquitto (``p2p.net.broker``) unless
``--broker URL`` names one.  Two or three peers meet in the lobby, chat, the first one
invites the others, the starting seat is drawn by commit-reveal, the round is played to
its end with computer-chosen moves (``p2p.ai``), and every peer's independently verified
final state hash is printed -- they must be identical (exit status 0), otherwise 1.
Each peer's round log is written to the data directory (``rounds/demo/<peer>/`` in the
config directory, ``p2p.config``) and its path printed, so ``p2p replay`` can be tried
on it at once.
Everything goes through the public ``p2p.peer`` API, exactly as a bot would use it.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import os
import sys
import time
from typing import Any

from p2p.cli import UsageError
from p2p.games import game_names, spec

_NAMES = ("ann", "ben", "cid")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--game",
        choices=sorted(game_names()),
        default="cube",
        help="which game (default: cube)",
    )
    parser.add_argument(
        "--broker",
        metavar="URL",
        help="use this broker instead of starting a local mosquitto",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=1,
        help=(
            "seed for the peers' keys and their move choices (default: 1); the draw uses "
            "fresh random nonces, so who starts -- and with it the game -- varies between runs"
        ),
    )
    parser.add_argument(
        "--peers",
        type=int,
        choices=(2, 3),
        help="number of peers (games whose demo sets the players option: cube; default 3)",
    )
    parser.add_argument(
        "--quiet", action="store_true", help="print only the result lines"
    )


def run(args: argparse.Namespace) -> int:
    from p2p.net.broker import BrokerError, LocalBroker
    from p2p.net.transport import run as run_async

    demo = spec(args.game).demo  # options, human and computer seats, the humans' level
    options, humans, computers, level = dict(demo.options), demo.humans, demo.computers, demo.level
    if args.peers is not None:
        if "players" not in options:
            some = [name for name in game_names() if "players" in spec(name).demo.options]
            raise UsageError(f"--peers applies to the {', '.join(some)} only")
        humans = args.peers
        options["players"] = humans
    broker: LocalBroker | None = None
    url = args.broker
    if url is None:
        broker = LocalBroker()
        try:
            broker.start()
        except BrokerError as err:
            raise UsageError(str(err)) from None
        url = broker.url
    else:
        from p2p.config import check_broker_urls, refusal_text, refused_everywhere

        try:
            urls = check_broker_urls(url)
        except ValueError as err:
            raise UsageError(str(err)) from None
        url = " ".join(urls)
        refused = run_async(refused_everywhere(urls))
        if refused is not None:  # said at once, not after the connect timeout
            raise UsageError(f"cannot connect to {url}: {refusal_text(refused)}")
    try:
        return run_async(
            _demo(
                url,
                args.game,
                options,
                humans,
                computers,
                level,
                args.seed,
                args.quiet,
                broker,
            )
        )
    except ConnectionError as err:
        raise UsageError(str(err)) from None
    except (DemoFailed, TimeoutError) as err:
        print(f"p2p demo: {err or 'timed out'}", file=sys.stderr)
        return 1
    finally:
        if broker is not None:
            broker.close()


class DemoFailed(Exception):
    """The demo could not go on (a broker that loses messages, a peer that hangs)."""


async def _until(check: Any, what: str, timeout: float = 30.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not check():
        if loop.time() > deadline:
            raise DemoFailed(f"timed out after {timeout:g} s waiting for {what}")
        await asyncio.sleep(0.01)


class _Transcript:
    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.start = time.monotonic()

    def __call__(self, tag: str, text: str, *, always: bool = False) -> None:
        if self.quiet and not always:
            return
        print(f"{time.monotonic() - self.start:6.2f}s  [{tag}] {text}", flush=True)


async def _demo(
    url: str,
    game: str,
    options: dict[str, Any],
    humans: int,
    computers: int,
    level: str,
    seed: int,
    quiet: bool,
    broker: Any,
) -> int:
    from p2p.ai import choose_move
    from p2p.peer import ChatMessage, Peer, Rejected, RoundUpdate
    from p2p.protocol.identity import Identity
    from p2p.protocol.round import Phase, verify_chain

    say = _Transcript(quiet)
    from p2p.shell.i18n import Translator

    title = Translator("en").game(game)  # the CLI speaks English; the product names are German
    # a lobby of its own, even on a shared broker
    namespace = "demo-" + os.urandom(4).hex()
    where = f"local mosquitto at {url}" if broker is not None else url
    say(
        "demo",
        f"{title} online: {humans} scripted peers on {where} (namespace {namespace})",
        always=True,
    )

    def identity(name: str) -> Identity:
        return Identity.from_seed(
            hashlib.sha256(f"p2p-demo/{seed}/{name}".encode()).digest()
        )

    from p2p.config import config_dir

    logs = config_dir() / "rounds" / "demo"
    peers = [
        Peer(url, nick=name, identity=identity(name), namespace=namespace, log_dir=logs / name)
        for name in _NAMES[:humans]
    ]
    host = peers[0]
    notes = host.events()

    async def narrate() -> None:
        async for note in notes:
            if isinstance(note, RoundUpdate) and note.kind == "move":
                event = note.round.log()[note.seq]
                seat, game = note.seat, note.round.game
                who = (
                    f"{game.seat_names()[seat]} ({note.round.seats[seat]})"
                    if seat is not None and game is not None
                    else "?"
                )
                say("move", f"{event.body['move']:>7}  by {who}")
            elif isinstance(note, ChatMessage):
                say("chat", f"{note.label}: {note.text}")
            elif isinstance(note, Rejected):
                say("warn", note.text, always=True)

    narrator = asyncio.create_task(narrate())
    try:
        for peer in peers:
            await peer.start()
            say(peer.nick, f"connected as {peer.label}")
        await _until(
            lambda: all(len(p.lobby.peers) >= humans - 1 for p in peers),
            "the peers to see each other in the lobby",
        )
        say(
            "lobby",
            f"{host.nick} sees online: {', '.join(i.label for i in host.online())}",
        )
        await host.say(f"Hi all! Anyone for a round of {title}?")
        for peer in peers[1:]:
            await peer.say("Count me in.")
        await asyncio.sleep(0.1)

        levels = ["einfach"] * computers
        rnd = await host.invite(
            [p.peer_id for p in peers[1:]], game, options, computers=levels
        )
        say(
            "invite",
            f"{host.nick} opens round {rnd.id[:8]}: {', '.join(rnd.seats)}; starting seat: drawn",
        )
        rounds = [rnd]
        for peer in peers[1:]:
            await _until(
                lambda p=peer: p.invitation(rnd.id) is not None,
                f"{peer.nick} to receive the invitation",
            )
            invitation = peer.invitation(rnd.id)
            assert invitation is not None  # _until waited for it
            rounds.append(await invitation.accept())
            say(peer.nick, f"accepts the invitation from {host.label}")
        for r in rounds:
            await r.wait_started(60)
        st = rnd.chain_state
        if st.phase is not Phase.PLAY:
            say("demo", f"the round did not start: {st.end_reason}", always=True)
            return 1
        for seat, commit in sorted(st.commits.items()):
            say("draw", f"seat {seat} committed {commit[:16]}...")
        for seat, nonce in sorted(st.revealed.items()):
            say(
                "draw",
                f"seat {seat} revealed {nonce.hex()[:16]}... (checked against its commitment by every peer)",
            )
        drawn, starter = st.seed, st.starter
        if drawn is not None and starter is not None:  # the demo draws the starting seat
            say(
                "draw",
                f"seed {drawn.hex()[:16]}... -> seat {starter} ({rnd.seats[starter]}) starts",
                always=True,
            )
        same = {(r.seed, r.starter) for r in rounds}
        say(
            "draw",
            f"every peer recomputed the same draw: {'yes' if len(same) == 1 else 'NO'}",
        )

        async def play(r: Any) -> None:
            while await r.wait_turn(120):
                ply = len(r.game.history())
                await r.play(
                    choose_move(
                        r.game, level, seed.to_bytes(8, "big") + ply.to_bytes(4, "big")
                    )
                )

        await asyncio.gather(*(play(r) for r in rounds))
        for r in rounds:
            await r.wait_over(30)
        await rnd.say("Good game!")
        await asyncio.sleep(0.2)

        game_state = rnd.game
        assert game_state is not None
        if not quiet:
            print(game_state.render())
        names = game_state.seat_names()
        scores = ", ".join(f"{names[i]} {s}" for i, s in enumerate(game_state.scores()))
        winners = (
            ", ".join(f"{names[i]} ({rnd.seats[i]})" for i in rnd.winners)
            or "nobody (a draw)"
        )
        say(
            "end",
            f"{len(game_state.history())} moves; scores: {scores}; winner: {winners}",
            always=True,
        )
        hashes = set()
        for peer, r in zip(peers, rounds):
            replayed = verify_chain(r.log())
            hashes.add(replayed.state_hash())
            say(
                "verify",
                f"{peer.label}: {len(r.log())} signed events verified and replayed, "
                f"state hash {replayed.state_hash()[:16]}...",
                always=True,
            )
        nicks = {p.public_key.hex(): p.nick for p in peers}
        for peer, r in zip(peers, rounds):
            if r.log_path is not None:
                _write_names(r.log_path, nicks)
                say("log", f"{peer.nick}'s round log: {r.log_path}", always=True)
        if rounds[0].log_path is not None:
            say("log", f"try: p2p replay --moves {rounds[0].log_path}", always=True)
        ok = len(hashes) == 1 and all(r.state_hash in hashes for r in rounds)
        say(
            "result", "identical on every peer" if ok else "PEERS DISAGREE", always=True
        )
        return 0 if ok else 1
    finally:
        narrator.cancel()
        for peer in peers:
            await peer.close()


def _write_names(log_path: Any, nicks: dict[str, str]) -> None:
    """The peers' nicknames beside a round log (as the shell keeps them), for ``p2p replay``."""
    import json

    side = log_path.with_name(log_path.name.removesuffix(".log") + ".shell.json")
    try:
        side.write_text(json.dumps({"names": nicks}))
    except OSError:
        pass  # the log itself is what counts; names are a convenience
