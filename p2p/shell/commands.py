"""The input line's grammar: chat, a bare move, or a slash command.

``parse_line`` is pure: given the text and a predicate that says whether a text is a move
of the current game, it returns ``Chat``, ``Move``, ``Command`` or ``None`` (empty line).
Command names have English canonical forms and a few German aliases; unknown commands
come back as ``Command`` with ``known=False`` so the caller can say so in one line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

COMMANDS: dict[str, str] = {
    "help": "/help",
    "quit": "/quit",
    "play": "/play {games} [ai|2p] [LEVEL] [key=value ...]",
    "again": "/again",
    "undo": "/undo",
    "replay": "/replay [start|prev|next|end|stop]",
    "analyze": "/analyze",
    "hint": "/hint",
    "resign": "/resign",
    "leave": "/leave",
    "rules": "/rules [{games}]",
    "level": "/level [LEVEL]",
    "stats": "/stats",
    "select": "/select SQUARE",
    "invite": "/invite NICK [NICK ...] {games} [key=value ...]",
    "accept": "/accept",
    "decline": "/decline",
    "cancel": "/cancel",
    "start": "/start [now]",
    "starter": "/starter NICK|draw",
    "private": "/private {games} [NICK ...] [open=N] [key=value ...]",
    "join": "/join CODE",
    "rounds": "/rounds [N]",
    "local": "/local",
    "connect": "/connect",
    "nick": "/nick NAME",
    "broker": "/broker URL [URL ...]",
    "namespace": "/namespace [NAME|public]",
    "lang": "/lang de|en",
    "notify": "/notify on|off",
    "who": "/who",
    "friend": "/friend NICK",
    "unfriend": "/unfriend NICK",
    "friends": "/friends",
    "takeover": "/takeover",
}



def usage(name: str) -> str:
    """The usage line of command ``name``; ``{games}`` is the registered games' names.

    >>> usage("rules").startswith("/rules [connect4|cube|chess4")
    True
    """
    from p2p.games import game_names

    return COMMANDS[name].replace("{games}", "|".join(game_names()))


ALIASES: dict[str, str] = {
    "h": "help", "?": "help", "hilfe": "help",
    "q": "quit", "exit": "quit", "ende": "quit", "beenden": "quit",
    "spiel": "play", "spielen": "play", "nochmal": "again", "rematch": "again",
    "zurück": "undo", "zurueck": "undo", "aufgeben": "resign", "regeln": "rules",
    "analyse": "analyze", "analyse_": "analyze", "tipp": "hint", "stufe": "level",
    "einladen": "invite", "annehmen": "accept", "ablehnen": "decline",
    "abbrechen": "cancel", "beitreten": "join", "privat": "private", "verlassen": "leave",
    "sprache": "lang", "name": "nick", "wer": "who", "ns": "namespace", "lobby": "namespace",
    "freund": "friend", "entfreunden": "unfriend", "freunde": "friends",
    "übernehmen": "takeover", "uebernehmen": "takeover",
    "round": "rounds", "runden": "rounds", "runde": "rounds",
}


@dataclass(frozen=True)
class Chat:
    """Plain text for the chat (the round's when in one, else the lobby's; offline only
    echoed)."""

    text: str
    """As typed, trailing blanks cut (a leading ``//`` becomes ``/``)."""


@dataclass(frozen=True)
class Move:
    """A bare move of the current game (not yet checked for legality)."""

    text: str


@dataclass(frozen=True)
class Command:
    """A slash command with its whitespace-separated arguments."""

    name: str
    args: tuple[str, ...] = ()
    known: bool = True


Parsed = Chat | Move | Command


def canonical(name: str) -> str | None:
    """The canonical command name for ``name`` (alias-aware), or ``None``."""
    low = name.lower()
    if low in COMMANDS:
        return low
    return ALIASES.get(low)


def parse_line(text: str, is_move: Callable[[str], bool] = lambda _t: False) -> Parsed | None:
    """Classify one input line; ``None`` for a blank line.

    >>> parse_line("/invite bob connect4")
    Command(name='invite', args=('bob', 'connect4'), known=True)
    >>> parse_line("4", is_move=lambda t: t == "4")
    Move(text='4')
    >>> parse_line("hello")
    Chat(text='hello')
    """
    stripped = text.strip()
    if not stripped:
        return None
    if stripped.startswith("/") and len(stripped) > 1 and not stripped.startswith("//"):
        head, *rest = stripped[1:].split()
        name = canonical(head)
        if name is None:
            return Command(head, tuple(rest), known=False)
        return Command(name, tuple(rest))
    if stripped.startswith("//"):
        return Chat(stripped[1:])  # "//" escapes a chat line that starts with a slash
    if " " not in stripped and is_move(stripped):
        return Move(stripped)
    return Chat(text.rstrip())


def parse_options(items: tuple[str, ...]) -> tuple[dict[str, int | bool | str], list[str]]:
    """Split ``key=value`` items into typed options and the remaining words.

    ``true``/``false``/``on``/``off`` become booleans, digits integers.
    """
    options: dict[str, int | bool | str] = {}
    words: list[str] = []
    for item in items:
        if "=" not in item:
            words.append(item)
            continue
        key, _, raw = item.partition("=")
        low = raw.lower()
        value: int | bool | str
        if low in ("true", "on", "yes", "ja"):
            value = True
        elif low in ("false", "off", "no", "nein"):
            value = False
        elif low.lstrip("-").isdigit():
            value = int(low)
        else:
            value = raw
        options[key.lower()] = value
    return options, words
