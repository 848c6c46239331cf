"""Docstrings and docs name what the code does (issue 19: topics/events showed p2p/v1/public)."""

from __future__ import annotations

from p2p.protocol import events, topics


def test_the_default_lobby_root_in_the_docstrings_is_the_real_one() -> None:
    root = topics.Topics().root
    assert f"``{root}``" in (topics.__doc__ or "")
    assert f"``{root}``" in (events.__doc__ or "")
