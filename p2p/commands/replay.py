"""``p2p replay FILE``: verify a saved round log offline and print the result.

Every signature, the hash chain, the draw and every move are checked (see
``p2p.protocol.replay``).  A log that does not verify is rejected naming the first bad
event, with exit status 2.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from p2p.cli import UsageError

MAX_FILE_SIZE = 64 * 1024 * 1024


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path, help="round log: one signed event per line")
    parser.add_argument(
        "--moves", action="store_true", help="also list every move with its seat"
    )


def _who(state, seat: int) -> str:  # type: ignore[no-untyped-def]
    from p2p.protocol.identity import short_id

    s = state.seats[seat]
    if s.is_computer:
        return f"computer ({s.level})"
    assert s.pk is not None
    return f"{s.nick or 'player'} ({short_id(s.pk)})"


def run(args: argparse.Namespace) -> int:
    from p2p.protocol.replay import LogError, replay_log
    from p2p.protocol.round import Phase

    path: Path = args.file
    try:
        if path.stat().st_size > MAX_FILE_SIZE:
            raise UsageError(
                f"{path}: larger than {MAX_FILE_SIZE // (1024 * 1024)} MiB"
            )
        lines = path.read_bytes().split(b"\n")
    except OSError as err:
        raise UsageError(f"cannot read {path}: {err.strerror or err}") from None
    try:
        result = replay_log(lines)
    except LogError as err:
        raise UsageError(f"{path}: {err}") from None
    state = result.state
    game = state.game
    print(f"round {state.round_id}  game {state.game_name}  options {state.options}")
    print(
        f"verified {len(result.chain)} chain events ({result.ignored} other events ignored)"
    )
    for seat in state.seats:
        names = game.seat_names() if game is not None else ()
        seat_name = (
            names[seat.index] if seat.index < len(names) else f"seat {seat.index}"
        )
        flags = " (admin at the start)" if seat.pk == state.genesis.pk else ""
        flags += " (resigned)" if seat.index in state.resigned else ""
        flags += " (left)" if seat.index in state.left else ""
        print(f"  seat {seat.index} {seat_name}: {_who(state, seat.index)}{flags}")
    if state.starter is not None:
        if state.start_seat is None:
            print(
                f"starting seat {state.starter}, drawn: seed {state.seed.hex() if state.seed else '?'}"
                f" from the reveals of seats {sorted(state.revealed)}"
            )
        else:
            print(f"starting seat {state.starter}, named by the admin")
    if args.moves:
        for event in state.chain:
            if event.kind == "move":
                print(
                    f"  ply {event.body['ply']}: {event.body['move']}  by {event.pk.hex()[:8]}"
                )
    if game is not None:
        print(game.render())
        print(f"scores {list(game.scores())}")
    if state.phase is Phase.OVER:
        print(f"over ({state.end_reason}); winners: {list(state.winners())}")
    elif state.phase is Phase.CANCELLED:
        print(f"{state.end_reason}")
    else:
        print(f"unfinished: {state.phase.value}, {state.ply} moves")
    print(f"state hash {state.state_hash()}")
    print(f"last event {state.head.id}")
    return 0
