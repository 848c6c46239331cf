"""The static checks run as part of the suite (so ``.ci/run`` runs them): ruff and mypy with the
project's configuration (``[tool.ruff]`` in pyproject.toml) over code, tests, examples
and benches."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _tool(name: str) -> str:
    found = Path(sys.executable).parent / name
    path = str(found) if found.exists() else shutil.which(name)
    assert path, f"{name} is part of the test extra: pip install -e '.[test]'"
    return path


def test_ruff_finds_nothing() -> None:
    result = subprocess.run(
        [_tool("ruff"), "check", "--no-cache", "p2p", "tests", "examples", "bench"],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]


def test_mypy_finds_nothing() -> None:
    """mypy with ``[tool.mypy]`` of pyproject.toml: the pure layers and the network edge
    strictly; the modules still listed as not yet checked are named there."""
    result = subprocess.run(
        [_tool("mypy"), "--no-incremental", "--cache-dir", "/dev/null"],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
