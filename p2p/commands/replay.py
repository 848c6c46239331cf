"""``p2p replay FILE``: verify a saved round log offline and print the result.

Every signature, the hash chain, the draw and every move are checked (see
``p2p.protocol.replay``).  A log that does not verify is rejected naming the first bad
event, with exit status 2.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from p2p.cli import UsageError
from p2p.protocol.round import RoundState

MAX_FILE_SIZE = 64 * 1024 * 1024


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path, help="round log: one signed event per line")
    parser.add_argument(
        "--moves", action="store_true", help="also list every move with its seat"
    )


def _names(path: Path) -> dict[str, str]:
    """Nicknames beside the log (``round-<id>.shell.json``, written by the shell from its
    lobby; the log itself only names code joiners): public key hex -> nickname."""
    import json

    side = path.with_name(path.name.removesuffix(".log") + ".shell.json")
    try:
        names = json.loads(side.read_text()).get("names", {})
    except (OSError, ValueError, AttributeError):
        return {}
    return {k: v for k, v in names.items() if isinstance(k, str) and isinstance(v, str)} if isinstance(names, dict) else {}


def _who(state: RoundState, seat: int, names: dict[str, str]) -> str:
    """``alice (fingerprint)``, ``computer (normal)``; ``?`` when no name is known."""
    from p2p.protocol.identity import label

    s = state.seats[seat]
    if s.is_computer:
        return f"computer ({s.level})"
    assert s.pk is not None
    return label(s.nick or names.get(s.pk.hex(), ""), s.pk)


def _moves(state: RoundState, names: dict[str, str]) -> list[str]:
    """One line per move (and per resignation/forfeit) with the seat that made it."""
    from p2p.games import create_game

    game = state.game
    if game is None:  # the round never started: no moves
        return []
    probe = create_game(state.game_name, game.options())
    seat_names = probe.seat_names()
    out = []
    ply = 0
    for turn in game.turns():
        if turn.seat is not None:  # a resignation (or a leave, a forfeit)
            out.append(f"  out: {seat_names[turn.seat]} {_who(state, turn.seat, names)}")
        else:
            mover = probe.to_move()
            ply += 1
            who = f"{seat_names[mover]} {_who(state, mover, names)}" if mover is not None else "?"
            out.append(f"  ply {ply}: {turn.text}  by {who}")
        probe.apply(turn.text)
    return out


def run(args: argparse.Namespace) -> int:
    from p2p.protocol.replay import LogError, replay_log

    path: Path = args.file
    try:
        if path.exists() and not path.is_file():  # a FIFO or device would block the read
            raise UsageError(f"{path}: not a regular file (give the round log itself)")
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
    nicks = _names(path)
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
        print(f"  seat {seat.index} {seat_name}: {_who(state, seat.index, nicks)}{flags}")
    if state.starter is not None:
        if state.start_seat is None:
            print(
                f"starting seat {state.starter}, drawn: seed {state.seed.hex() if state.seed else '?'}"
                f" from the reveals of seats {sorted(state.revealed)}"
            )
        else:
            print(f"starting seat {state.starter}, named by the admin")
    if args.moves and game is not None:
        for line in _moves(state, nicks):
            print(line)
    if game is not None:
        print(game.render())
        print(f"scores {list(game.scores())}")
    outcome = state.outcome()  # how the chain ended it, typed
    if outcome is not None and not outcome.is_cancelled:
        print(f"over ({outcome.reason}); winners: {list(outcome.winners)}")
    elif outcome is not None:
        print(outcome.reason)
    else:
        print(f"unfinished: {state.phase.value}, {state.ply} moves")
    print(f"state hash {state.state_hash()}")
    print(f"last event {state.head.id}")
    print(f"judged by {result.rules} (docs/protocol.md §8)")
    print(f"verdict: {result.verdict_text()}")
    return 0
