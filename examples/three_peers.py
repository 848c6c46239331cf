"""Three peers play Viergewinnt 3D; every peer verifies the draw and every move.

    python examples/three_peers.py [--broker URL]

Each peer runs the same tiny loop (wait for its turn, play); at the end the script shows
that the three independently computed state hashes are identical.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from p2p.ai import choose_move
from p2p.config import check_broker_urls, refusal_text, refused_everywhere
from p2p.net.broker import BrokerError, LocalBroker
from p2p.net.transport import run
from p2p.peer import ActionError, Peer, Round


async def play_my_seat(rnd: Round, level: str) -> None:
    while await rnd.wait_turn(60):
        await rnd.play(
            choose_move(rnd.game, level, len(rnd.game.history()).to_bytes(4, "big"))
        )


async def main_async(url: str) -> None:
    namespace = "example-" + os.urandom(3).hex()
    async with (
        Peer(url, nick="ann", namespace=namespace) as ann,
        Peer(url, nick="ben", namespace=namespace) as ben,
        Peer(url, nick="cid", namespace=namespace) as cid,
    ):
        while len(ann.online()) < 2:
            await asyncio.sleep(0.05)
        rnd = await ann.invite([ben.peer_id, cid.peer_id], "cube", {"players": 3})
        rounds = [rnd]
        for guest in (ben, cid):
            while guest.invitation(rnd.id) is None:
                await asyncio.sleep(0.01)
            rounds.append(await guest.invitation(rnd.id).accept())
        await rnd.wait_started(30)
        print(
            f"seats: {rnd.seats}; seed {rnd.seed.hex()[:12]}... -> seat {rnd.starter} starts"
        )
        await asyncio.gather(
            *(
                play_my_seat(r, level)
                for r, level in zip(rounds, ("normal", "stark", "neuling"))
            )
        )
        for r in rounds:
            await r.wait_over(30)
        print(rnd.game.render())
        print(
            "scores:",
            rnd.game.scores(),
            "winners:",
            [rnd.seats[i] for i in rnd.winners],
        )
        for peer, r in zip((ann, ben, cid), rounds):
            print(
                f"{peer.label}: state hash {r.state_hash[:16]}... over {len(r.log())} events"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
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
            run(main_async(url))
            return
        with LocalBroker() as broker:
            url = broker.url
            run(main_async(url))
    except KeyboardInterrupt:
        pass
    except (ValueError, ConnectionError, OSError, ActionError, BrokerError, TimeoutError) as err:
        raise SystemExit(f"three_peers: {err}") from None


if __name__ == "__main__":
    main()
