"""A computer-player bot: accepts every invitation and plays its seat with ``p2p.ai``.

Run it, then invite it from the shell (or from ``examples/two_bots.py``)::

    python examples/bot.py --broker mqtt://127.0.0.1:1883 --nick robo --level normal

The whole bot is the ``async for`` loop in ``bot()``: the public ``p2p.peer`` API tells it
when it is invited and when it is its turn.  The package ships ``py.typed``, so a type
checker sees its types: the suite checks this file with ``mypy --strict`` as a bot author
would (``tests/test_typed_package.py``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout

from p2p.ai import choose_move, levels
from p2p.config import check_broker_urls, check_namespace, refusal_text, refused_everywhere
from p2p.games import game_names
from p2p.net.transport import run
from p2p.peer import ActionError, InvitationReceived, Peer, RoundOver, YourTurn


def known_levels() -> list[str]:
    """Every computer level of some game, in order of first appearance."""
    return list(dict.fromkeys(lv for name in game_names() for lv in levels(name)))


async def bot(
    url: str, nick: str, level: str, namespace: str = "public", rounds: int = 0
) -> None:
    """Accept invitations and play until ``rounds`` rounds are over (0: forever)."""
    async with Peer(url, nick=nick, namespace=namespace) as peer:
        print(f"{peer.label} is online, waiting for invitations", flush=True)
        async for note in peer.events():
            if isinstance(note, InvitationReceived) and not peer.busy:
                if level not in levels(note.invitation.game):
                    print(f"{peer.nick}: no level {level!r} for {note.invitation.game}: declined", flush=True)
                    await note.invitation.decline()
                    continue
                await note.invitation.accept()
            elif isinstance(note, YourTurn) and note.round.is_my_turn:
                game = note.round.game  # a copy of the round's engine
                if game is None:
                    continue
                try:
                    await note.round.play(
                        choose_move(game, level, len(game.history()).to_bytes(4, "big"))
                    )
                except ActionError as err:  # e.g. the round ended meanwhile
                    print(f"{peer.nick}: {err}", flush=True)
            elif isinstance(note, RoundOver):
                print(
                    f"{peer.nick}: round over, winners {list(note.winners)} ({note.reason})",
                    flush=True,
                )
                rounds -= 1
                if rounds == 0:
                    return


def main() -> None:
    parser = argparse.ArgumentParser(description="A p2p computer-player bot.")
    parser.add_argument("--broker", default="mqtt://127.0.0.1:1883", help="broker URL")
    parser.add_argument("--nick", default="robo")
    parser.add_argument(
        "--level", default="normal", help=f"computer level: {', '.join(known_levels())} (every game has 'normal')"
    )
    parser.add_argument("--namespace", default="public", help="lobby namespace")
    args = parser.parse_args()
    try:  # bad input: one line, no traceback
        urls = check_broker_urls(args.broker)
        url = " ".join(urls)
        check_namespace(args.namespace)
        if args.level not in known_levels():
            raise ValueError(f"unknown level {args.level!r} (known: {', '.join(known_levels())})")
    except ValueError as err:
        raise SystemExit(f"bot: {err}") from None
    refused = run(refused_everywhere(urls))  # at once, not after the connect timeout
    if refused is not None:
        raise SystemExit(f"bot: cannot connect to {url}: {refusal_text(refused)}")
    try:
        run(bot(url, args.nick, args.level, args.namespace))
    except KeyboardInterrupt:
        pass
    except (ConnectionError, OSError, ActionError, ValueError) as err:
        raise SystemExit(f"bot: {err}") from None


if __name__ == "__main__":
    main()
