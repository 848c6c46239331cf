"""Word-wrapping of styled text for the chat pane, by display width.

prompt_toolkit wraps a window's lines at the last cell, in the middle of a word.  Here a
line of ``(style, text)`` fragments is broken between words instead; a word wider than
the pane (a long URL) is the only thing ever cut, and continuation rows are indented so
they read as part of the line above; a tab starts a continuation row (``/help``).  Widths are display cells (``get_cwidth``): an emoji
or a CJK character takes two.
"""

from __future__ import annotations

import re

from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.utils import get_cwidth

_TOKENS = re.compile(r"\S+|\s+")
_JOINERS = re.compile("[\ufe0e\ufe0f\u200b-\u200f\u2060\U0001f3fb-\U0001f3ff\U000e0020-\U000e007f]")
"""Variation selectors, zero-width joiners/marks, skin-tone modifiers and tag characters:
terminals disagree about how wide the sequences they build are, so they are dropped."""
_REGIONAL = re.compile("[\U0001f1e6-\U0001f1ff]")


def terminal_safe(text: str) -> str:
    """``text`` with every character's width agreed on by terminal and screen model.

    An emoji sequence (``❤️``, ``👍🏽``, a family joined with ZWJ, a flag) is drawn by
    many terminals wider or narrower than its code points add up to, which shifts
    everything right of it (the board pane).  Each emoji is kept as its base character;
    a flag's two regional letters become plain letters (``🇩🇪`` -> ``DE``).
    """
    text = _JOINERS.sub("", text)
    return _REGIONAL.sub(lambda m: chr(ord(m.group()) - 0x1F1E6 + ord("A")), text)


def wrap_fragments(fragments: StyleAndTextTuples, width: int, indent: int = 2) -> list[StyleAndTextTuples]:
    """Break one logical line into rows of at most ``width`` cells, between words."""
    width = max(width, indent + 4)
    rows: list[StyleAndTextTuples] = [[]]
    used = 0

    def new_row() -> None:
        nonlocal used
        rows.append([("", " " * indent)])
        used = indent

    for frag in fragments:
        style, text = frag[0], frag[1]
        for token in _TOKENS.findall(text):
            size = get_cwidth(token)
            if token.isspace():
                if "\t" in token:
                    new_row()  # a tab (``/help``): what follows starts a row of its own
                    continue
                if used + size > width:
                    new_row()  # a space at the end of a row is dropped
                    continue
                rows[-1].append((style, token))
                used += size
                continue
            if used + size > width and used > (indent if len(rows) > 1 else 0):
                # the word does not fit behind what is there: start a new row
                while rows[-1] and rows[-1][-1][1].isspace():
                    rows[-1].pop()
                new_row()
            while used + size > width:  # a word wider than the pane: cut it
                room = width - used
                head, cut = "", 0
                for char in token:
                    w = get_cwidth(char)
                    if cut + w > room:
                        break
                    head += char
                    cut += w
                if not head:  # not even one character fits (a wide char at the edge)
                    new_row()
                    continue
                rows[-1].append((style, head))
                token = token[len(head):]
                size = get_cwidth(token)
                new_row()
            if token:
                rows[-1].append((style, token))
                used += size
    return rows


def display_width(text: str) -> int:
    """Cells ``text`` takes on the screen."""
    return get_cwidth(text)


def fit(text: str, width: int) -> str:
    """``text`` cut to at most ``width`` cells (with ``…`` when cut)."""
    if get_cwidth(text) <= width:
        return text
    out, used = "", 0
    for char in text:
        w = get_cwidth(char)
        if used + w > width - 1:
            break
        out += char
        used += w
    return out + "…"


STATUS_ROWS = 2
"""The status line grows to at most this many rows before it is shortened."""


def fit_status(text: str, width: int, max_rows: int = STATUS_ROWS, keep: str = "") -> list[str]:
    """The status line (``text``, then ``keep``) in rows of at most ``width`` cells,
    broken between its " · "-separated parts (inside a part between words), never in a word.

    What does not fit into ``max_rows`` rows is dropped at a word boundary and the last
    row ends with "…".  A single word wider than the row is the only thing ever cut.
    ``keep`` (the score) is never dropped: ``text`` is shortened ("…") to make room.

    >>> fit_status("Round 1 · over: ranking 1. Blue 3 points · 2. Red 0 points", 30, keep="Score a 0 · b 0 · c 0")
    ['Round 1 · over: ranking 1. …', 'Score a 0 · b 0 · c 0']
    """
    whole = " · ".join(part for part in (text, keep) if part)
    rows = _fit_rows(whole, width, max_rows)
    if not keep or not rows[-1].endswith("…") or not text:
        return rows
    words = text.split(" ")
    while words:  # drop the head's last words until head … and the whole tail fit
        words.pop()
        head = " ".join(words).removesuffix(" ·").strip()
        rows = _fit_rows(f"{head} … · {keep}" if head else keep, width, max_rows)
        if not rows[-1].endswith("…") or not head:
            return rows
    return rows


def _fit_rows(text: str, width: int, max_rows: int) -> list[str]:
    width = max(width, 8)
    rows: list[str] = []
    row = ""
    for part in text.split(" · "):
        candidate = f"{row} · {part}" if row else part
        if get_cwidth(candidate) <= width:
            row = candidate
            continue
        if row:
            rows.append(row)
            row = ""
        for word in part.split(" "):  # a part wider than a row: between its words
            candidate = f"{row} {word}" if row else word
            if get_cwidth(candidate) <= width:
                row = candidate
            else:
                if row:
                    rows.append(row)
                row = word if get_cwidth(word) <= width else _cut(word, width)
    if row:
        rows.append(row)
    if len(rows) <= max_rows:
        return rows
    kept = rows[:max_rows]
    last = kept[-1]
    while last and get_cwidth(last + " …") > width:
        last = last.rsplit(" ", 1)[0] if " " in last else _cut(last, width - 2)
    kept[-1] = (last.removesuffix(" ·") + " …").strip()
    return kept


def _cut(word: str, width: int) -> str:
    """The leading part of ``word`` that fits ``width`` cells."""
    out = ""
    for ch in word:
        if get_cwidth(out + ch) > width:
            break
        out += ch
    return out
