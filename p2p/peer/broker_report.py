"""What a broker supports, and which of the product's features that allows, in words for
the user (German and English): ``p2p doctor`` prints it, the shell shows one line of it.

Pure: it only reads what the transport learned (``p2p.net.known``: MQTT version, to whom
the broker hands retained messages).

>>> one_line("3.1.1", "exact", "en")
'MQTT 3.1.1 · retained messages to exact subscriptions only · lobby (newcomers ask), live, slow and private rounds work'
>>> one_line("5", "none", "en")
'MQTT 5 · no retained messages · lobby (newcomers ask) and live rounds by invitation work; slow rounds only while online together; joining by code does not'
"""

from __future__ import annotations

_TEXT: dict[str, tuple[str, str]] = {
    "retained.wildcard": ("gespeicherte Nachrichten (retained) an alle Abos",
                          "retained messages to wildcard and exact subscriptions"),
    "retained.exact": ("gespeicherte Nachrichten (retained) nur an exakte Abos",
                       "retained messages to exact subscriptions only"),
    "retained.none": ("keine gespeicherten Nachrichten (retained)", "no retained messages"),
    "retained.None": ("gespeicherte Nachrichten: unbekannt", "retained messages: unknown"),
    "all": ("Lobby, Live-, langsame und private Runden gehen",
            "lobby, live, slow and private rounds work"),
    "ask": ("Lobby (Neue fragen nach), Live-, langsame und private Runden gehen",
            "lobby (newcomers ask), live, slow and private rounds work"),
    "none": ("Lobby (Neue fragen nach) und Live-Runden auf Einladung gehen; langsame Runden nur, solange ihr gleichzeitig online seid; Beitreten mit Code geht nicht",
             "lobby (newcomers ask) and live rounds by invitation work; slow rounds only while online together; joining by code does not"),
}


def text(key: str, lang: str) -> str:
    """One entry of the table in ``lang`` (``de`` or ``en``)."""
    de, en = _TEXT[key]
    return de if lang == "de" else en


def features(retained: str | None) -> str:
    """The key of what works with this retained delivery: ``all``, ``ask`` or ``none``."""
    if retained == "none":
        return "none"
    return "all" if retained == "wildcard" else "ask"


def one_line(protocol: str, retained: str | None, lang: str = "en") -> str:
    """``MQTT <version> · <retained delivery> · <what works>``: the shell's line."""
    return (
        f"MQTT {protocol} · {text(f'retained.{retained}', lang)} · "
        f"{text(features(retained), lang)}"
    )
