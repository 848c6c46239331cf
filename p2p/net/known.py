"""What this machine learned about brokers, per broker URL: the MQTT version it speaks,
to whom it hands retained messages and the largest packet it takes (when learned).

``Transport`` reads it before connecting (a broker known to speak 3.1.1 only is not
tried with v5 again; a broker whose retained delivery is known is not probed again) and
writes what it finds.  Kept in memory for the process; ``attach(path)`` also keeps it in
a small JSON file (the shell and ``p2p doctor`` use ``brokers.json`` in the config
directory), so the next start knows it too.  A missing, unreadable or malformed file is
simply ignored: these are hints, never trusted for anything but saving a probe.

>>> forget()
>>> note("mqtt://127.0.0.1:1883", protocol="3.1.1")
>>> facts("mqtt://127.0.0.1:1883")
{'protocol': '3.1.1'}
>>> forget()
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from pathlib import Path

__all__ = ["PROTOCOLS", "RETAINED", "attach", "drop", "facts", "forget", "note", "note_all"]

PROTOCOLS = ("5", "3.1.1")
RETAINED = ("wildcard", "exact", "none")
"""Retained delivery: to wildcard filters too (MQTT as written), to exact topic
subscriptions only (RabbitMQ 3.x), or not at all (retained messages switched off)."""

MIN_PACKET = 128
"""A smaller ``max_packet`` in the file is ignored (no broker is that strict)."""

_MAX_FILE = 64 * 1024
_MAX_BROKERS = 64

_facts: dict[str, dict[str, str]] = {}
_path: Path | None = None

log = logging.getLogger("p2p.net")


def _clean(raw: object) -> dict[str, dict[str, str]]:
    if not isinstance(raw, dict):
        return {}
    kept: dict[str, dict[str, str]] = {}
    for url, entry in list(raw.items())[-_MAX_BROKERS:]:
        if not isinstance(url, str) or not isinstance(entry, dict) or len(url) > 300:
            continue
        item = {}
        if entry.get("protocol") in PROTOCOLS:
            item["protocol"] = entry["protocol"]
        if entry.get("retained") in RETAINED:
            item["retained"] = entry["retained"]
        size = entry.get("max_packet")
        if isinstance(size, str) and size.isdigit() and MIN_PACKET <= int(size) < 2**28:
            item["max_packet"] = size
        if item:
            kept[url] = item
    return kept


def attach(path: Path | str) -> None:
    """Keep the facts in ``path`` too: read what is there now, write every change."""
    global _path
    _path = Path(path)
    with contextlib.suppress(OSError, ValueError):
        if _path.is_file() and _path.stat().st_size <= _MAX_FILE:
            for url, item in _clean(json.loads(_path.read_text("utf-8"))).items():
                _facts.setdefault(url, {}).update(item)


def facts(url: str) -> dict[str, str]:
    """What is known about the broker at ``url`` (a copy; empty if nothing)."""
    return dict(_facts.get(url, {}))


def note(url: str, **found: str) -> None:
    """Remember facts about a broker (``protocol=``, ``retained=``, ``max_packet=``:
    the largest MQTT packet in bytes, as digits)."""
    entry = _facts.setdefault(url, {})
    if all(entry.get(k) == v for k, v in found.items()):
        return
    entry.update(found)
    _facts[url] = _facts.pop(url)  # newest last; the oldest go first
    while len(_facts) > _MAX_BROKERS:
        del _facts[next(iter(_facts))]
    note_all()


def drop(url: str) -> None:
    """Forget what is known about one broker (``p2p doctor`` looks again)."""
    if _facts.pop(url, None) is not None and _path is not None:
        note_all()


def note_all() -> None:
    """Write every fact to the attached file now."""
    if _path is None:
        return
    try:
        tmp = _path.with_suffix(".tmp")
        tmp.write_text(json.dumps(_facts, indent=1, sort_keys=True), "utf-8")
        os.replace(tmp, _path)
    except OSError as err:
        log.info("cannot keep broker facts in %s: %s", _path, err)


def forget() -> None:
    """Forget everything (and stop writing a file): tests and benches start clean."""
    global _path
    _facts.clear()
    _path = None
