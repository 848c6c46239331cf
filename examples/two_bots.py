"""Two bots play a round of Viergewinnt 3D on a local Mosquitto (or ``--broker URL``).

    python examples/two_bots.py [--game cube|connect4] [--broker URL]

One peer invites, the bot from ``examples/bot.py`` accepts; both play with ``p2p.ai``;
the final state hashes, computed independently by each peer, are printed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bot import bot

from p2p.ai import choose_move
from p2p.config import check_broker_urls, refusal_text, refused_everywhere
from p2p.net.broker import BrokerError, LocalBroker
from p2p.net.transport import run
from p2p.peer import ActionError, Peer


async def play(url: str, game: str) -> None:
    namespace = "example-" + os.urandom(3).hex()
    robo = asyncio.create_task(bot(url, "robo", "normal", namespace, rounds=1))
    try:
        async with Peer(url, nick="alice", namespace=namespace) as alice:
            while not alice.online():
                await asyncio.sleep(0.05)
            guest = alice.online()[0]
            print(f"alice invites {guest.label} to {game}")
            rnd = await alice.invite([guest.pk], game)
            await rnd.wait_started(30)
            print(
                f"seat {rnd.starter} starts ({rnd.seats[rnd.starter]}), drawn by commit-reveal"
            )
            while await rnd.wait_turn(60):
                history = rnd.game.history()
                await rnd.play(
                    choose_move(rnd.game, "normal", len(history).to_bytes(4, "big"))
                )
            await robo
            print(rnd.game.render())
            print(f"seats: {', '.join(rnd.seats)}")
            print(
                f"winners: {[rnd.seats[i] for i in rnd.winners]}; state hash {rnd.state_hash[:16]}..."
            )
    finally:  # robo never outlives the game, and its error is not left unread
        if not robo.done():
            robo.cancel()
        await asyncio.gather(robo, return_exceptions=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--game", default="cube", choices=("cube", "connect4"))
    parser.add_argument(
        "--broker", help="broker URL (default: start a local mosquitto)"
    )
    args = parser.parse_args()
    try:  # bad input or no broker: one line, no traceback
        if args.broker:
            urls = check_broker_urls(args.broker)
            url = " ".join(urls)
            refused = run(refused_everywhere(urls))  # at once, not after the connect timeout
            if refused is not None:
                raise ConnectionError(f"cannot connect to {url}: {refusal_text(refused)}")
            run(play(url, args.game))
            return
        with LocalBroker() as broker:
            url = broker.url
            run(play(url, args.game))
    except KeyboardInterrupt:
        pass
    except (ValueError, ConnectionError, OSError, ActionError, BrokerError, TimeoutError) as err:
        raise SystemExit(f"two_bots: {err}") from None


if __name__ == "__main__":
    main()
