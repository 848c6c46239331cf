"""What the page is sent: the games, who we are, the lobby, every held round, local play.

Plain functions of the peer (``p2p.peer.Peer``) and the signed round logs (the standing
of a group: ``p2p.ledger``), returning JSON-safe dicts; ``WebSession.snapshot`` puts them
together after every change.
"""

from __future__ import annotations

import logging
from typing import Any

from p2p.games import Game, create_game, game_names, spec
from p2p.web import boards

log = logging.getLogger("p2p.web")


def games_catalogue() -> list[dict[str, Any]]:
    """Every registered game for the page's forms: titles, computer levels, options."""
    from p2p.ai import levels

    games = []
    for name in game_names():
        entry = spec(name)
        probe = create_game(name)
        try:
            known = list(levels(name))
        except ImportError:
            known = []
        ranking = type(probe).eliminated is not Game.eliminated  # points, not winners
        games.append({"name": name, "title": list(entry.title), "levels": known, "ranking": ranking,
                      "options": dict(probe.options()), "players": probe.players})
    return games


def nick_of(peer: Any, pk: bytes) -> str:
    """The nickname of ``pk``: from the lobby, else as the peer last knew it."""
    if peer is None:
        return "?"
    info = peer.lobby.peers.get(pk)
    if info is not None:
        return str(info.nick)
    label = peer.label_of(pk)
    return str(label).split(" (")[0].split(" [")[0]


def peer_part(peer: Any, ledger: Any) -> dict[str, Any]:
    """Who we are, the lobby, friends, invitations and every held round, for the page."""
    out: dict[str, Any] = {}
    friends = peer.friends
    out["me"] = {"nick": peer.nick, "fp": fp(peer.public_key), "pk": peer.public_key.hex(),
                 "busy": peer.busy, "acting": peer.acting,
                 "brokers": [[url, ok] for url, ok in peer.brokers()]}
    from p2p.protocol.clocks import SHOWN_MS, about

    lobby = []
    for info in peer.online():
        impostor = friends.impostor_of(info.nick, info.pk)
        offset = peer.lobby.clocks.offset(info.pk) or 0
        clock = None
        if abs(offset) >= SHOWN_MS:  # a clock far off: said, as the shell's /who does
            amount, unit = about(offset)
            clock = {"amount": amount, "unit": unit, "ahead": offset > 0}
        lobby.append({"nick": info.nick, "fp": fp(info.pk), "pk": info.pk.hex(), "busy": info.busy,
                      "friend": friends.is_friend(info.pk), "clock": clock,
                      "impostor": (friends.nick_of(impostor) or "?") if impostor is not None else ""})
    out["lobby"] = lobby
    online = {info.pk for info in peer.online()}
    out["friends"] = [{"nick": nick, "fp": fp(pk), "pk": pk.hex(), "online": pk in online}
                      for pk, nick in friends.items()]
    out["invitations"] = [{
        "id": inv.round_id, "from": inv.admin_label, "game": inv.game, "options": inv.options,
        "turn": inv.turn_limit, "drawn": inv.drawn,
        "expires_in": max(0, (inv.expires - peer.now_ms()) // 1000)} for inv in peer.invitations]
    out["rounds"] = [round_entry(peer, r, ledger) for r in peer.rounds.values()]
    return out


def round_entry(peer: Any, rnd: Any, ledger: Any) -> dict[str, Any]:
    """One held round: phase, seats, whose turn, time left, standing and its board."""
    st = rnd.chain_state
    game = rnd.game
    seats = []
    names = game.seat_names() if game is not None else ()
    for i, seat in enumerate(st.seats):
        seats.append({
            "color": names[i] if i < len(names) else f"Player {i + 1}",
            "nick": "" if seat.pk is None else nick_of(peer, seat.pk) if seat.pk != peer.public_key
            else peer.nick,
            "fp": fp(seat.pk) if seat.pk is not None else "",
            "computer": seat.level if seat.is_computer else None,
            "open": seat.pk is None and not seat.is_computer,
            "me": seat.pk == peer.public_key,
            "out": i in st.resigned or i in st.left,
        })
    entry: dict[str, Any] = {
        "id": rnd.id, "game": rnd.game_name, "phase": rnd.phase.value, "code": rnd.code,
        "admin": rnd.is_admin, "my_seat": rnd.my_seat, "my_turn": rnd.is_my_turn,
        "seats": seats, "slow": rnd.turn_limit is not None, "turn": rnd.turn_limit,
        "takeback": rnd.takeback_asked, "over": rnd.is_over,
        "winners": list(rnd.winners) if rnd.is_over else [],
        "time_left": None, "round_no": 0, "wins": [], "board": None,
        "can_undo": False, "held": rnd.my_seat is not None and rnd.my_seat not in st.resigned
        and rnd.my_seat not in st.left,
    }
    if game is None:
        return entry
    entry["board"] = boards.board(game)
    head = st.head
    entry["can_undo"] = (head.kind == "move" and head.pk == peer.public_key and not rnd.is_my_turn
                         and not rnd.is_over and ("takeback", peer.public_key) not in rnd.machine.side)
    if not rnd.is_over and rnd.phase.value == "play":
        limit = rnd.machine.timeouts.silent_ms
        entry["time_left"] = max(0, (limit - (peer.now_ms() - head.ts)) // 1000)
    if ledger is not None:
        from p2p.ledger import summarize

        try:
            number, wins = ledger.standing(summarize(st))
            entry["round_no"] = number
            entry["wins"] = [[s["nick"], wins.get(seat.pk, 0)]
                             for s, seat in zip(seats, st.seats) if seat.pk is not None]
        except Exception:  # noqa: BLE001 - a display aid
            log.exception("standing")
    return entry

def local_entry(local: Any) -> dict[str, Any] | None:
    """The game on this device (``None``: none)."""
    if local is None:
        return None
    return {"game": local.game.name, "levels": list(local.levels), "round_no": local.round_no,
            "score": list(local.score()), "board": boards.board(local.game),
            "human_turn": local.human_to_move()}


def fp(pk: bytes) -> str:
    """The 64-bit fingerprint people compare (``p2p.protocol.identity``)."""
    from p2p.protocol.identity import fingerprint

    return str(fingerprint(pk))
