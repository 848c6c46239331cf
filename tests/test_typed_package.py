"""A bot author's type checker sees the package's types: ``p2p`` ships ``py.typed`` (PEP
561) as package data, and ``examples/bot.py`` passes ``mypy --strict`` against the
package found as an installed one (not as source next to the bot)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_py_typed_is_shipped_as_package_data() -> None:
    assert (ROOT / "p2p" / "py.typed").is_file()
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "py.typed" in config["tool"]["setuptools"]["package-data"]["p2p"]


def test_the_bot_example_type_checks_against_the_installed_package(tmp_path: Path) -> None:
    """The package is put on the interpreter's path as an installed package would be
    (a folder on ``sys.path`` outside the bot's own), so mypy reads it only because of
    ``py.typed``; without the marker it reports "missing library stubs or py.typed"."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "p2p").symlink_to(ROOT / "p2p", target_is_directory=True)
    work = tmp_path / "bot"
    work.mkdir()
    shutil.copy(ROOT / "examples" / "bot.py", work / "bot.py")
    mypy = Path(sys.executable).parent / "mypy"
    result = subprocess.run(
        [str(mypy if mypy.exists() else "mypy"), "--strict", "--no-incremental", "--cache-dir", "/dev/null",
         "--python-executable", sys.executable, "bot.py"],
        cwd=work, capture_output=True, text=True, timeout=300, check=False,
        env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-1000:]
    assert "Success" in result.stdout
