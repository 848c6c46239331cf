"""Canonical bytes for event bodies: one value, one encoding, on every machine.

The encoding is a strict subset of JSON (compare RFC 8785, simplified):

* values: ``None``, ``True``/``False``, integers in ``[-2**63, 2**63 - 1]``, strings,
  lists, and objects whose keys match ``[a-z][a-z0-9_]{0,31}`` (ASCII, so sorting by
  code point is the same everywhere);
* no floats, no NaN, no duplicate keys, nesting at most ``MAX_DEPTH`` deep;
* objects with keys sorted, separators ``,`` and ``:`` without spaces, UTF-8, strings
  escaped exactly as Python's ``json.dumps(..., ensure_ascii=False)`` does
  (``\\"``, ``\\\\``, ``\\b \\f \\n \\r \\t``, other characters below U+0020 as ``\\u00xx``,
  everything else literal); lone surrogates are not allowed.

``decode`` accepts only bytes that ``encode`` would produce for the same value, so two
peers can never disagree about the bytes (and hence the id) of an event.

>>> encode({"b": [1, "x"], "a": None})
b'{"a":null,"b":[1,"x"]}'
>>> decode(b'{"a": 1}')
Traceback (most recent call last):
...
p2p.protocol.canonical.CanonicalError: not canonical: re-encoding differs
"""

from __future__ import annotations

import json
import re
from typing import TypeAlias

Value: TypeAlias = "None | bool | int | str | list[Value] | dict[str, Value]"

MAX_DEPTH = 16
"""Deepest nesting of lists and objects (an event envelope with sealed events needs 6)."""

INT_MIN = -(2**63)
INT_MAX = 2**63 - 1
KEY_PATTERN = re.compile(r"[a-z][a-z0-9_]{0,31}\Z")


class CanonicalError(ValueError):
    """Bytes or a value outside the canonical subset; ``str(err)`` is a one-line reason."""


_KEYS_SEEN: set[str] = set()
"""Object keys that matched ``KEY_PATTERN`` already (the schema's few dozen): a set
lookup instead of a regular expression per key; bounded by ``_KEYS_SEEN_MAX``."""
_KEYS_SEEN_MAX = 1024


def _good_key(key: object) -> bool:
    if key in _KEYS_SEEN:  # (only strings that matched are ever in it)
        return True
    if not isinstance(key, str) or not KEY_PATTERN.match(key):
        return False
    if len(_KEYS_SEEN) < _KEYS_SEEN_MAX:
        _KEYS_SEEN.add(key)
    return True


def _check(value: object, depth: int) -> None:
    """Raise ``CanonicalError`` unless ``value`` is inside the canonical subset.

    Every event is checked so on both ends (``encode`` when it is signed, ``decode`` when
    it is read), so the common cases go first: plain ``str`` and ``int`` values inside a
    ``dict`` or ``list`` are checked in place, without a call each (issue 28); anything
    else takes the general path, with the same reasons."""
    if depth > MAX_DEPTH:
        raise CanonicalError(f"nested deeper than {MAX_DEPTH}")
    kind = type(value)
    if kind is dict or kind is list:
        inner = depth + 1
        items = value.items() if kind is dict else enumerate(value)  # type: ignore[attr-defined, arg-type]
        for key, item in items:
            if kind is dict and not _good_key(key):
                raise CanonicalError(f"bad object key {str(key)[:40]!r}")
            of = type(item)
            if inner <= MAX_DEPTH and (
                (of is str and item.isascii())
                or (of is int and INT_MIN <= item <= INT_MAX)
                or item is None
                or of is bool
            ):
                continue
            _check(item, inner)
        return
    if value is None or isinstance(value, bool):
        return
    if isinstance(value, int):
        if not INT_MIN <= value <= INT_MAX:
            raise CanonicalError("integer out of 64-bit range")
        return
    if isinstance(value, str):
        if not value.isascii():  # strict UTF-8 refuses exactly the surrogates, in C
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise CanonicalError("string holds a lone surrogate") from None
        return
    if isinstance(value, list):
        for item in value:
            _check(item, depth + 1)
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not _good_key(key):
                raise CanonicalError(f"bad object key {str(key)[:40]!r}")
            _check(item, depth + 1)
        return
    raise CanonicalError(f"type {type(value).__name__} is not allowed")


_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
"""``json.dumps`` with these arguments, built once: a lobby peer encodes a presence for
each one it receives (the canonical check), and ``json.dumps`` builds a new encoder
for every call that passes arguments."""


def encode(value: Value) -> bytes:
    """The canonical UTF-8 bytes of ``value``; raises ``CanonicalError`` outside the subset."""
    _check(value, 0)
    return _ENCODER.encode(value).encode("utf-8")


def _no_float(text: str) -> float:
    raise CanonicalError("floats are not allowed")


def _no_constant(text: str) -> float:
    raise CanonicalError(f"{text} is not allowed")


def _pairs(pairs: list[tuple[str, Value]]) -> dict[str, Value]:
    result: dict[str, Value] = {}
    for key, item in pairs:
        if key in result:
            raise CanonicalError(f"duplicate key {key[:40]!r}")
        result[key] = item
    return result


_DECODER = json.JSONDecoder(
    object_pairs_hook=_pairs, parse_float=_no_float, parse_constant=_no_constant
)
"""``json.loads`` with these hooks, built once (``json.loads`` builds one per call)."""


def decode(data: bytes, max_size: int | None = None) -> Value:
    """Parse canonical bytes back into a value; anything else raises ``CanonicalError``.

    ``max_size`` (bytes) is checked before parsing, so oversize input costs nothing.
    """
    if not isinstance(data, (bytes, bytearray)):
        raise CanonicalError("payload is not bytes")
    if max_size is not None and len(data) > max_size:
        raise CanonicalError(f"payload of {len(data)} bytes exceeds {max_size}")
    try:
        text = bytes(data).decode("utf-8")
    except UnicodeDecodeError:
        raise CanonicalError("payload is not valid UTF-8") from None
    try:
        value = _DECODER.decode(text)
    except CanonicalError:
        raise
    except RecursionError:
        raise CanonicalError(f"nested deeper than {MAX_DEPTH}") from None
    except ValueError as err:  # json.JSONDecodeError and over-long integer literals
        raise CanonicalError(f"not JSON: {str(err).splitlines()[0][:80]}") from None
    if encode(value) != bytes(data):
        raise CanonicalError("not canonical: re-encoding differs")
    checked: Value = value  # what json gives back for canonical input
    return checked
