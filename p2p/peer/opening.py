"""How a ``Peer`` comes to hold a round: invite, open a private one, join by code, accept
an invitation, resume from a log.  Plain functions of the peer (``Peer.invite`` and its
siblings call them); each ends in ``_adopt``, which creates the round's link once."""

from __future__ import annotations

import asyncio
import logging
import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from p2p.games import game_class
from p2p.games.base import Options
from p2p.peer.edge import Edge
from p2p.peer.files import (
    MAX_LOG_BYTES,
    read_round_key,
    write_round_key,
)
from p2p.peer.handles import Round
from p2p.peer.lobby_link import LobbyLink
from p2p.peer.round_link import RoundHost, RoundLink, RoundLinks
from p2p.protocol import events as ev
from p2p.protocol import sealing
from p2p.protocol.draw import own_nonce
from p2p.protocol.events import Event
from p2p.protocol.identity import Identity
from p2p.protocol.lobby import PeerInfo
from p2p.protocol.resume import machine_from_replay
from p2p.protocol.round import (
    MAX_TURN_S,
    MIN_TURN_S,
    Phase,
    TurnTimeouts,
    next_start,
)
from p2p.protocol.round_machine import ActionError, RoundMachine
from p2p.protocol.topics import (
    TopicError,
    code_secret,
    make_code,
    normalize_code,
    private_key,
)

log = logging.getLogger("p2p.peer")


class Opener(RoundHost, Protocol):
    """What opening a round asks of the peer (``p2p.peer.core.Peer`` implements it): its
    keys and settings, the rounds it holds, and its lobby and broker sides."""

    identity: Identity
    log_dir: Path | None
    turn_timeouts: TurnTimeouts
    links: RoundLinks
    lobby_link: LobbyLink
    edge: Edge

    @property
    def nick(self) -> str: ...

    @property
    def public_key(self) -> bytes: ...

    @property
    def busy(self) -> bool: ...


async def invite(
    peer: Opener,
    peers: Sequence[str | PeerInfo | bytes],
    game: str,
    options: Options | None = None,
    *,
    computers: Sequence[str] = (),
    start: int | None = None,
    seats: Sequence[str] | None = None,
    turn_limit: int | None = None,
) -> Round:
    """Open a round as its admin and invite ``peers`` to it.

    Seats are: us, the invited peers in the given order, then one computer seat per
    level in ``computers`` -- or ``seats``, a list naming each seat as ``"me"``, a
    peer (id, fingerprint or nickname) or ``"computer:LEVEL"``.  ``start`` names the
    starting seat; ``None`` draws it by commit-reveal.  For games with a ``players``
    option it defaults to the number of seats.  ``turn_limit``: a slow round, played
    over days: every turn may take this many seconds (60 s to 30 days), a chain rule in
    the genesis; its events wait for absent members on the broker (docs/protocol.md §6.7).
    """
    if seats is None:
        layout: list[dict[str, Any]] = [
            {"pk": peer.public_key.hex(), "level": None}
        ]
        layout += [{"pk": peer.lobby_link.resolve(p).hex(), "level": None} for p in peers]
        layout += [{"pk": None, "level": level} for level in computers]
    else:
        layout = []
        for spec in seats:
            if spec == "me":
                layout.append({"pk": peer.public_key.hex(), "level": None})
            elif isinstance(spec, str) and spec.startswith("computer:"):
                layout.append({"pk": None, "level": spec.split(":", 1)[1]})
            else:
                layout.append({"pk": peer.lobby_link.resolve(spec).hex(), "level": None})
    return await _open(peer, game, options, layout, start, code=None, turn_limit=turn_limit)

async def another_round(peer: Opener, previous: Round) -> Round:
    """As admin of a finished round: invite the same seats again, the next seat starts.

    The starting seat rotates (``p2p.protocol.round.next_start``); every member gets a
    fresh invitation to accept.
    """
    st = previous.chain_state
    if not previous.is_over:
        raise ActionError("the round is still running", "still_running")
    if not previous.is_admin:
        raise ActionError("only the round's admin can start another round")
    layout = [
        {
            "pk": None if seat.pk is None or seat.is_computer else seat.pk.hex(),
            "level": seat.level,
        }
        for seat in st.seats
    ]
    if any(s["pk"] is None and s["level"] is None for s in layout):
        raise ActionError("a seat of that round was never taken")
    options = {k: v for k, v in st.options.items() if k != "first"}
    return await _open(
        peer, st.game_name, options, layout, next_start(st), code=None,
        turn_limit=st.genesis.body.get("turn"),  # a slow round's next one is slow too
    )

async def open_private(
    peer: Opener,
    game: str,
    options: Options | None = None,
    *,
    open_seats: int = 1,
    peers: Sequence[str | PeerInfo | bytes] = (),
    computers: Sequence[str] = (),
    start: int | None = None,
    turn_limit: int | None = None,
) -> Round:
    """Open a private round behind a join code (``round.code``, 6 characters).

    Seats: us, any ``peers`` invited directly, ``open_seats`` seats for whoever enters
    the code, then the ``computers``.  The code is hashed into the round's topics, so
    the round cannot be found by browsing the lobby.
    """
    if open_seats < 1:
        raise ActionError("a private round needs at least one open seat")
    layout: list[dict[str, Any]] = [{"pk": peer.public_key.hex(), "level": None}]
    layout += [{"pk": peer.lobby_link.resolve(p).hex(), "level": None} for p in peers]
    layout += [{"pk": None, "level": None} for _ in range(open_seats)]
    layout += [{"pk": None, "level": level} for level in computers]
    code = make_code(os.urandom(8))
    return await _open(peer, game, options, layout, start, code=code, turn_limit=turn_limit)

def _nonce(peer: Opener, round_id: str | None) -> bytes:
    """Our draw nonce in ``round_id``, derived from our key (``draw.own_nonce``): a
    restart between our commitment and our reveal finds it again (a genesis without a
    round id is refused by the machine before the nonce matters)."""
    return own_nonce(peer.identity.seed(), round_id or "")


async def join(peer: Opener, code: str, timeout: float = 10.0) -> Round:
    """Join the private round behind ``code``; ``ActionError`` if there is none."""
    try:
        code = normalize_code(code)
    except TopicError as err:
        raise ActionError(str(err)) from None
    peer.lobby.sessions.check()  # another session of our key acts: it joins
    secret = await asyncio.to_thread(
        code_secret, code
    )  # scrypt: keep the loop responsive
    key = private_key(code, secret)
    if key in peer.links.by_key:
        raise ActionError("you are already in this round")
    round_key = sealing.private_round_key(secret)
    waiting: asyncio.Future[Event] = asyncio.get_running_loop().create_future()
    peer.links.joining[key] = (waiting, round_key)
    try:
        await peer.edge.subscribe_round(key)
        try:
            genesis = await asyncio.wait_for(asyncio.shield(waiting), timeout)
        except TimeoutError:
            if peer.retained_to() == "none":  # the genesis waits retained for joiners
                raise ActionError(
                    "this broker keeps no retained messages: joining by code does not work "
                    "here (ask to be invited by name)", "broker_no_retained",
                ) from None
            raise ActionError(f"no open round behind code {code}", "code_unknown") from None
    finally:
        peer.links.joining.pop(key, None)
    try:
        machine = RoundMachine(
            peer.identity,
            genesis,
            _nonce(peer, genesis.round),  # found again on a resume
            peer.topics,
            code=code,
            now=peer.now_ms(),
            timeouts=peer.turn_timeouts,
            secret=secret,  # scrypt once per join, in a thread (not again on the loop)
        )
    except Exception as err:  # noqa: BLE001 - a planted or broken genesis
        await peer.edge.unsubscribe_round(key)
        peer.warn(
            f"dropped genesis behind code {code}: {err}", None, str(err), "genesis"
        )
        raise ActionError(
            f"the round behind code {code} is not usable: {err}"
        ) from None
    if (
        machine.key != key
        or not machine.state.private
        or machine.state.phase is not Phase.FORMING
    ):
        await peer.edge.unsubscribe_round(key)
        raise ActionError(f"the round behind code {code} cannot be joined", "code_closed")
    if peer.busy and machine.state.genesis.body.get("turn") is None:  # one live round
        await peer.edge.unsubscribe_round(key)
        raise ActionError("you are already in a round; leave it first", "busy")
    link = await _adopt(peer, machine, round_key, subscribed=True)  # since the code
    await link.act(lambda m, now: m.join(peer.nick, now))
    return link.handle

async def _open(
    peer: Opener,
    game: str,
    options: Options | None,
    layout: list[dict[str, Any]],
    start: int | None,
    code: str | None,
    turn_limit: int | None = None,
) -> Round:
    """Sign the genesis and hold the round.  ``turn_limit``: a slow round's limit per
    turn in seconds (``MIN_TURN_S`` .. ``MAX_TURN_S``, docs/protocol.md §6.7)."""
    if turn_limit is not None and (
        not isinstance(turn_limit, int)
        or isinstance(turn_limit, bool)
        or not MIN_TURN_S <= turn_limit <= MAX_TURN_S
    ):
        raise ActionError(
            f"a turn limit is {MIN_TURN_S} s to {MAX_TURN_S // 86_400} days", "bad_turn_limit"
        )
    peer.lobby.sessions.check()  # another session of our key acts: it invites
    try:
        engine = game_class(game)
    except KeyError as err:
        raise ActionError(str(err.args[0])) from None
    opts = dict(options or {})
    try:
        defaults = engine.create().options()
    except Exception as err:  # noqa: BLE001 - an engine that cannot even start
        raise ActionError(f"cannot create {game}: {err}") from None
    if "players" in defaults and "players" not in opts:
        opts["players"] = len(layout)
    for seat in layout:
        if seat["level"] is not None:
            from p2p import ai

            try:
                known = ai.levels(game)
            except Exception:  # noqa: BLE001 - no computer player for this game yet
                known = ()
            if seat["level"] not in known:
                raise ActionError(
                    f"unknown computer level {seat['level']!r} for {game} (known: {', '.join(known) or 'none'})"
                )
    if peer.busy and turn_limit is None:  # one live round at a time; slow ones besides
        raise ActionError("you are already in a round; leave it first", "busy")
    round_key = os.urandom(sealing.KEY_SIZE)  # a fresh key for each round
    secret: bytes | None = None
    if code is not None:  # a private round's traffic is keyed from its code
        secret = await asyncio.to_thread(code_secret, code)
        round_key = sealing.private_round_key(secret)
    round_id = os.urandom(16).hex()
    machine, effects = RoundMachine.open(
        peer.identity,
        peer.now_ms(),
        round_id,
        game,
        opts,
        layout,
        start,
        _nonce(peer, round_id),  # found again on a resume
        topics=peer.topics,
        code=code,
        timeouts=peer.turn_timeouts,
        turn_s=turn_limit,
        secret=secret,
    )
    link = await _adopt(peer, machine, round_key, acknowledged=False)
    await link.run_effects(effects)
    return link.handle

async def accept_invitation(peer: Opener, round_id: str) -> Round:
    peer.lobby.sessions.check()  # another session of our key acts: it answers
    waiting = peer.lobby.invitations.get(round_id)
    if peer.busy and (waiting is None or waiting.genesis.body.get("turn") is None):
        raise ActionError("you are already in a round; leave it first", "busy")
    try:
        pending = peer.lobby.take_invitation(round_id)
    except ValueError:
        raise ActionError(
            "no such invitation (it expired or was cancelled)", "no_invitation"
        ) from None
    if peer.lobby.local_time(pending.admin, pending.genesis.body["expires"]) <= peer.now_ms():
        raise ActionError("the invitation has expired", "invitation_expired")
    if not pending.round_key:
        raise ActionError("the invitation carried no round key")
    round_key, topic_key = pending.round_key, pending.route_key
    if topic_key in peer.links.by_key:  # another round of ours already uses those topics
        raise ActionError("the invitation names the topics of a round we hold")
    machine = RoundMachine(
        peer.identity,
        pending.genesis,
        _nonce(peer, pending.genesis.round),  # found again on a resume
        peer.topics,
        now=peer.now_ms(),
        timeouts=peer.turn_timeouts,
    )
    machine.key = topic_key  # a private round's: only the invitation tells it
    link = await _adopt(peer, machine, round_key)  # subscribed before our accept
    await link.act(lambda m, now: m.accept(now))
    return link.handle

async def _adopt(
    peer: Opener,
    machine: RoundMachine,
    key: bytes,
    subscribed: bool = False,
    acknowledged: bool = True,
) -> RoundLink:
    """Hold a round: its link, created once with its routing fixed (topic key and round
    key, docs/protocol.md §15.3), subscribed before we send anything in it
    (``subscribed``: a code joiner is, since it looked for the genesis).  The admin of a
    round it opens does not wait for the broker's acknowledgement (``acknowledged``,
    ``Edge.subscribe_round`` says why); everyone else does.

    ``key``: the round key its payloads are sealed with; it is kept next to the round log
    (mode 0600) so a restarted peer can resume.
    """
    machine.clocks = peer.lobby.clocks  # members' clocks, judged in their frames
    machine.sessions = peer.lobby.sessions  # signs only while this session acts
    link = RoundLink(peer, machine, key, peer.log_dir)
    peer.remember_members(machine.state)
    peer.links.add(link)
    peer.lobby.keep(seat.pk for seat in machine.state.seats if seat.pk is not None)
    link.start_log(lambda path: write_round_key(path, key, machine.key))
    if not subscribed:
        await peer.edge.subscribe_round(machine.key, acknowledged=acknowledged)
    return link


async def resume(peer: Opener, path: Path | str, code: str | None = None) -> Round:
    """Take up a round again from its log file (after a restart) and catch up.

    The chain in the file is verified and replayed, then the other members are asked
    for what happened since (``Resynced`` reports it).  ``code``: the join code of a
    private round.  A draw still open when we stopped cannot complete without our
    reveal (our nonce is gone): the admin cancels it (docs/protocol.md §7).
    """
    from p2p.protocol.replay import LogError, replay_log

    try:
        info = Path(path).stat()  # a missing file: "cannot read" below
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_LOG_BYTES:
            raise ActionError(f"{path}: not a round log (no regular file, or too large)")
        lines = Path(path).read_bytes().split(b"\n")
    except OSError as err:
        raise ActionError(f"cannot read {path}: {err.strerror or err}") from None
    try:
        replay = replay_log(lines, peer.turn_timeouts)  # the round's chain rules
    except LogError as err:
        raise ActionError(f"{path}: {err}") from None
    state = replay.state
    if state.genesis.v != ev.PROTOCOL_VERSION:
        raise ActionError(
            f"{path}: a round of protocol v{state.genesis.v} cannot be resumed"
            " (p2p replay still checks it)"
        )
    if state.seat_of(peer.public_key) is None:
        raise ActionError("you hold no seat in that round")
    if state.round_id in peer.links.by_id:
        return peer.links.by_id[state.round_id].handle
    try:
        code = normalize_code(code) if code is not None else None
    except TopicError as err:
        raise ActionError(str(err)) from None
    # scrypt once, in a thread: the machine keys its topics from it, and so may we below
    secret = await asyncio.to_thread(code_secret, code) if code is not None else None
    machine = machine_from_replay(  # as the simulator resumes a member (p2p.sim)
        peer.identity, replay, _nonce(peer, state.round_id),
        peer.topics, code, peer.now_ms(),
        peer.turn_timeouts, secret=secret,
    )
    key_path = Path(path).with_suffix(".key")
    try:
        round_key, machine.key = read_round_key(key_path)
    except (OSError, ValueError) as err:
        if code is None:
            why = getattr(err, "strerror", None) or err
            hint = " (or give the join code)" if state.private else ""
            raise ActionError(
                f"cannot read the round key {key_path}: {why}{hint}"
            ) from None
        assert secret is not None  # computed above for this code
        round_key = sealing.private_round_key(secret)
    if not state.private and machine.key != state.round_id:
        raise ActionError(  # a public round's topics are its id: never follow a file elsewhere
            f"{key_path} names the topics of another round"
        )
    link = await _adopt(peer, machine, round_key)
    link.store.remember_acks(replay.acks.values())  # a slow round's store carries them on
    if not link.is_over:
        await link.request_sync()
    return link.handle

