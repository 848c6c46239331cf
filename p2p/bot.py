"""A computer player in the lobby: a ``Peer`` that accepts every invitation and plays.

Started by ``/local`` (the shell's and the browser face's) next to a local broker so
there is always someone to play against; the tests use it as the scripted opponent too.
A neutral module beside ``p2p.friends``: both faces use it and neither imports the other.  Its moves come from
``p2p.ai.choose_move`` at the weakest level (or ``level``), computed in a worker thread.
"""

from __future__ import annotations

import asyncio
import logging
import os

log = logging.getLogger("p2p.bot")


async def run_bot(url: str, nick: str = "computer", *, level: str | None = None,
                  ready: asyncio.Event | None = None, namespace: str = "public") -> None:
    """Serve invitations on ``url`` (in the lobby ``namespace``) until cancelled."""
    from p2p.ai import choose_move, levels
    from p2p.peer import ActionError, InvitationReceived, Peer, YourTurn

    async with Peer(url, nick=nick, namespace=namespace) as peer:
        events = peer.events()
        if ready is not None:
            ready.set()
        async for note in events:
            try:
                if isinstance(note, InvitationReceived):
                    await note.invitation.accept()
                elif isinstance(note, YourTurn):
                    game = note.round.game
                    if game is None or game.is_over():
                        continue
                    chosen = level if level in levels(game.name) else levels(game.name)[0]
                    move = await asyncio.to_thread(choose_move, game.copy(), chosen, os.urandom(8))
                    if note.round.is_my_turn:
                        await note.round.play(move)
            except ActionError as err:
                log.info("bot action refused: %s", err)
            except Exception:
                log.exception("bot failed on %r", note)


def main(argv: list[str] | None = None) -> int:
    """``python -m p2p.bot URL [NICK] [LEVEL]``: a computer player for a broker."""
    import sys

    args = sys.argv[1:] if argv is None else argv
    if not args:
        print("usage: python -m p2p.bot URL [NICK] [LEVEL]", file=sys.stderr)
        return 2
    nick = args[1] if len(args) > 1 else "computer"
    level = args[2] if len(args) > 2 else None
    try:
        asyncio.run(run_bot(args[0], nick, level=level))
    except KeyboardInterrupt:
        return 0
    except Exception as err:  # noqa: BLE001 - one line, no traceback
        print(f"bot: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
