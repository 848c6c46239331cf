"""Every doctest in ``p2p/`` runs as part of the suite (the README's one test command):
the examples in docstrings are part of the documentation, so they must stay true."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import p2p


def _modules() -> list[str]:
    names = [p2p.__name__]
    for info in pkgutil.walk_packages(p2p.__path__, prefix="p2p."):
        if not info.name.endswith("__main__"):  # runs the CLI on import
            names.append(info.name)
    return sorted(names)


MODULES = _modules()


def test_the_package_has_doctests_to_run() -> None:
    """Guards the walk below: if it found no examples, the test would prove nothing."""
    finder = doctest.DocTestFinder()
    count = sum(
        len(t.examples)
        for name in MODULES
        for t in finder.find(importlib.import_module(name))
    )
    assert count >= 40, count


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, verbose=False)
    assert result.failed == 0, f"{result.failed} doctest(s) failed in {name}"
