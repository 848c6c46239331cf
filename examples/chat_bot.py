"""A chat bot: greets everyone who comes online and answers ``!who`` and ``!ping``.

    python examples/chat_bot.py --broker mqtt://127.0.0.1:1883

Shows the lobby side of the API: presence changes, chat lines, the online list.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from p2p.config import check_broker_urls, check_namespace, refusal_text, refused_everywhere
from p2p.net.transport import run
from p2p.peer import ChatMessage, Peer, PresenceChanged


async def chat_bot(url: str, namespace: str = "public") -> None:
    async with Peer(url, nick="chatbot", namespace=namespace) as peer:
        async for note in peer.events():
            if isinstance(note, PresenceChanged) and note.online and not note.peer.busy:
                await peer.say(f"Welcome, {note.peer.label}!")
            elif (
                isinstance(note, ChatMessage)
                and note.sender != peer.public_key
                and note.round_id is None
            ):
                if note.text.strip() == "!who":
                    names = ", ".join(
                        p.label + (" (busy)" if p.busy else "") for p in peer.online()
                    )
                    await peer.say(f"{len(peer.online()) + 1} online: {names}, and me")
                elif note.text.strip() == "!ping":
                    await peer.say(f"pong, {note.label}")


def main() -> None:
    parser = argparse.ArgumentParser(description="A p2p lobby chat bot.")
    parser.add_argument("--broker", default="mqtt://127.0.0.1:1883")
    parser.add_argument("--namespace", default="public")
    args = parser.parse_args()
    try:
        urls = check_broker_urls(args.broker)
        namespace = check_namespace(args.namespace)
        refused = run(refused_everywhere(urls))  # at once, not after the connect timeout
        if refused is not None:
            raise ConnectionError(f"cannot connect to {' '.join(urls)}: {refusal_text(refused)}")
        run(chat_bot(" ".join(urls), namespace))
    except KeyboardInterrupt:
        pass
    except (ValueError, ConnectionError, OSError) as err:
        raise SystemExit(f"chat_bot: {err}") from None


if __name__ == "__main__":
    main()
