"""The online session's many rounds: several slow rounds and one live round held at once.

``/rounds`` lists every held round with its game, the others, whose turn it is and how
long is left; ``/rounds N`` shows round N on the board.  After a start the shell shows
the round where it is our turn; a catch-up that brought in the others' moves
(``p2p.peer.MovedWhileAway``) and our turn in a round not on the board are said in one
line each.  A part owned by ``OnlineSession`` (``p2p.shell.online``), which it reads and
updates as ``s``.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

from p2p.shell.session_part import PartHost, SessionPart
from p2p.shell.turn_limit import say_time_left, say_turn_limit

log = logging.getLogger("p2p.shell")


class RoundsHost(PartHost, Protocol):
    """What the held rounds read and change of the online session (``p2p.shell.online.OnlineSession``
    implements it)."""

    away: set[bytes]
    covered: list[Any]

    def board_round(self) -> Any: ...

    def enter_group(self, rnd: Any) -> None: ...

    last_group: tuple[str, dict[str, Any], list[bytes]] | None

    def nick_of(self, pk: bytes, fallback: str = "") -> str: ...

    def refresh_standing(self) -> None: ...

    replay_ply: int | None
    round: Any

    def seconds_left(self, rnd: Any, silent: bool = False) -> int: ...

    takeback_for: tuple[str, str] | None


class HeldRounds(SessionPart[RoundsHost]):
    """The rounds we hold at once: listing them, switching the shown one, saying where
    the others moved and where it is our turn."""

    def __init__(self, session: RoundsHost) -> None:
        super().__init__(session)
        self.picked = False
        """The user chose the shown round (``/rounds N``): it is not switched for them."""
        self._told: dict[str, str] = {}
        """Per round id: the chain head whose "your turn" was said (said once)."""

    def listed(self) -> list[Any]:
        """The rounds ``/rounds`` numbers from 1: every held round that is not over and
        that we have not left, and the shown one whatever its state (oldest first)."""
        shown = self.s.round
        return [r for r in self.peer.rounds.values()
                if r is shown or (not r.is_over and self._in_it(r))]

    def _in_it(self, rnd: Any) -> bool:
        """We hold a seat in ``rnd`` that we have not given up."""
        seat = rnd.my_seat
        st = rnd.chain_state
        return (seat is not None and seat not in st.resigned and seat not in st.left
                and ("leave", self.peer.public_key) not in rnd.machine.side)

    def number_of(self, rnd: Any) -> int:
        """``rnd``'s number in ``/rounds`` (0 if it is not listed)."""
        listed = self.listed()
        return listed.index(rnd) + 1 if rnd in listed else 0

    def others(self, rnd: Any) -> str:
        """The other members of ``rnd`` by nickname (computer seats by level)."""
        names = []
        for seat in rnd.chain_state.seats:
            if seat.is_computer:
                names.append(f"{self.t.t('msg.computer')} {self.t.level(seat.level or '')}")
            elif seat.pk is None:
                names.append("?")
            elif seat.pk != self.peer.public_key:
                names.append(self.s.nick_of(seat.pk, seat.nick))
        return ", ".join(names) or "-"

    def turn_text(self, rnd: Any) -> str:
        """Whose turn it is in ``rnd``: "your turn", "bob to move", "waiting for players"."""
        st = rnd.chain_state
        if rnd.is_over:
            return self.t.t("rounds.over")
        if rnd.game is None or st.phase.value != "play":
            return self.t.t("rounds.forming")
        if rnd.is_my_turn:
            return self.t.t("rounds.you")
        seat = rnd.game.to_move()
        if seat is None or seat >= len(st.seats):
            return "?"
        s = st.seats[seat]
        if s.is_computer:
            nick = f"{self.t.t('msg.computer')} {self.t.level(s.level or '')}"
        else:
            nick = self.s.nick_of(s.pk, s.nick) if s.pk is not None else "?"
        return self.t.t("rounds.other", nick=nick)

    def line(self, n: int, rnd: Any) -> str:
        """One ``/rounds`` line: number, game, the others, whose turn, time left, kind."""
        mark = "▶" if rnd is self.s.round else " "
        text = f"{mark} {n}  " + self.t.t("rounds.line", game=self.t.game(rnd.game_name),
                                          others=self.others(rnd), turn=self.turn_text(rnd))
        if not rnd.is_over and rnd.game is not None and rnd.phase.value == "play":
            text += " · " + self.t.t("rounds.left", time=say_time_left(
                self.t, self.s.seconds_left(rnd, silent=True), slow=rnd.turn_limit is not None))
        if rnd.turn_limit is not None:
            text += " · " + self.t.t("rounds.slow", limit=say_turn_limit(self.t, rnd.turn_limit))
        else:
            text += " · " + self.t.t("rounds.live")
        return text

    # -- the command -------------------------------------------------------------------

    def command(self, args: list[str]) -> None:
        """``/rounds``: list the held rounds; ``/rounds N``: show round N on the board."""
        listed = self.listed()
        if not args:
            if not listed:
                self.ctl.say("rounds.none")
                return
            self.ctl.say("rounds.title")
            for n, rnd in enumerate(listed, 1):
                self.state.add(self.line(n, rnd), "round")
            return
        word = args[0]
        if len(args) != 1 or not word.isdigit() or not 1 <= int(word) <= len(listed):
            self.ctl.say("rounds.bad", "warn", n=" ".join(args)[:20])
            return
        rnd = listed[int(word) - 1]
        self.picked = True
        self.show(rnd)
        self.ctl.say("rounds.shown", n=word, game=self.t.game(rnd.game_name), others=self.others(rnd),
                     turn=self.turn_text(rnd))

    def show(self, rnd: Any) -> None:
        """Put ``rnd`` on the board: its group's round number and score, its moves so far."""
        if rnd is self.s.round:
            return
        others = [s.pk for s in rnd.chain_state.seats
                  if s.pk is not None and not s.is_computer and s.pk != self.peer.public_key]
        self.s.round = rnd
        self.s.covered = []
        self.s.replay_ply = None
        self.s.away.clear()
        self.s.last_group = (rnd.game_name, dict(rnd.chain_state.options), others)
        self.s.takeback_for = None
        self.ctl.match = None
        self.s.enter_group(rnd)
        self.s.refresh_standing()

    def say_shown(self, rnd: Any) -> None:
        """One line: ``rnd`` is on the board now, with its number, game, the others and
        whose turn it is."""
        self.ctl.say("rounds.shown", n=self.number_of(rnd), game=self.t.game(rnd.game_name),
                     others=self.others(rnd), turn=self.turn_text(rnd))

    def show_your_turn(self) -> None:
        """After a start: show a round where it is our turn (the live one first), and say
        how many rounds we hold when there are several."""
        listed = self.listed()
        mine = [r for r in listed if r.is_my_turn]
        if mine:
            live = [r for r in mine if r.turn_limit is None]
            self.show((live or mine)[0])
        if len(listed) > 1:
            self.ctl.say("rounds.summary", count=len(listed), mine=len(mine))

    def take_to(self, rnd: Any) -> bool:
        """Show ``rnd`` (now our turn) unless the board is busy with something that
        matters more: our turn there, a running live round of ours, a replay, or a round
        the user picked.  ``True`` if the board now shows ``rnd``."""
        shown = self.s.round
        if rnd is shown:
            return True
        if self.picked or self.s.replay_ply is not None or rnd.is_over:
            return False
        if shown is not None and not shown.is_over and (
            shown.is_my_turn or (shown.turn_limit is None and self._in_it(shown))
        ):
            return False
        self.show(rnd)
        self.say_shown(rnd)
        return True

    # -- what the peer tells ---------------------------------------------------------------

    def moved_while_away(self, note: Any) -> None:
        """"bob moved in Connect Four while you were away — your turn" (and, for a round
        not on the board, how to show it); the bell when it is our turn."""
        rnd = note.round
        if rnd.is_over:
            return  # its end is said (or, for a round not shown, listed) by itself
        nicks = ", ".join(self.s.nick_of(pk) for pk in note.movers) or "?"
        mine = note.your_turn and rnd.is_my_turn
        key = "rounds.moved_away" + (".turn" if mine else "") + (".many" if len(note.movers) > 1 else "")
        self.state.add(self.t.t(key, nicks=nicks, game=self.t.game(rnd.game_name), moves=note.moves),
                       "invite" if mine else "round")
        if mine:
            self._told[rnd.id] = rnd.chain_state.head.id
            self.ctl.notify(self.t.t("notify.turn"), self.t.game(rnd.game_name))
        if rnd is not self.s.round and not (mine and self.take_to(rnd)):
            self.state.add(self.t.t("rounds.show_hint", n=self.number_of(rnd)), "round")

    def your_turn(self, rnd: Any) -> None:
        """Our turn in a round not on the board (another slow round, moved live): after
        a moment (a catch-up says it with who moved) one line, or the board shows it."""
        if rnd is self.s.round or rnd.is_over:
            return
        import asyncio

        head = rnd.chain_state.head.id
        asyncio.get_running_loop().call_later(0.5, self._say_turn, rnd, head)

    def _say_last_move(self, rnd: Any) -> None:
        """The move line ("Yellow (bob): 4") of the head of ``rnd``, a move made while
        another round was on the board (its update was not shown then)."""
        self.say_move(rnd, len(rnd.chain_state.chain) - 1)

    def say_move(self, rnd: Any, seq: int, seat: int | None = None) -> None:
        """The move line ("Yellow (bob): 4") of the chain event at ``seq`` of ``rnd``
        (``seat``: the mover, when the note names it -- a computer's move is signed by
        its host)."""
        st = rnd.chain_state
        if not 0 < seq < len(st.chain):
            return
        event = st.chain[seq]
        seat = st.seat_of(event.pk) if seat is None else seat
        if event.kind != "move" or rnd.game is None or seat is None or seat >= len(st.seats):
            return
        if rnd is self.s.round:
            label = self.ctl.seat_label(rnd.game, seat)
        else:  # not the shown round: its own seats name the mover
            names = rnd.game.seat_names()
            name = self.t.seat(names[seat]) if seat < len(names) else str(seat + 1)
            s = st.seats[seat]
            who = (self.t.t("msg.you") if seat == rnd.my_seat else
                   f"{self.t.t('msg.computer')} {self.t.level(s.level or '')}" if s.is_computer else
                   self.s.nick_of(s.pk, s.nick) if s.pk is not None else "?")
            label = f"{name} ({who})"
        self.state.add(self.t.t("net.moved", nick=label, move=event.body["move"]), "round")

    def _say_turn(self, rnd: Any, head: str) -> None:
        if (rnd is self.s.round or rnd.is_over or not rnd.is_my_turn
                or rnd.chain_state.head.id != head or self._told.get(rnd.id) == head):
            return
        self._told[rnd.id] = head
        if rnd is self.s.board_round():  # on the board while a round of ours forms: its move was listed
            pass
        elif self.take_to(rnd):
            self._say_last_move(rnd)  # the move that switched the board, listed like any other
        else:
            self.state.add(self.t.t("rounds.your_turn", game=self.t.game(rnd.game_name), others=self.others(rnd),
                                    n=self.number_of(rnd)), "invite")
        self.ctl.notify(self.t.t("notify.turn"), self.t.game(rnd.game_name))
        self.ctl.refresh()
