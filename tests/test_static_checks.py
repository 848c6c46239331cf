"""The static checks run as part of the suite (so ``.ci/run`` runs them): ruff and mypy with the
project's configuration (``[tool.ruff]`` in pyproject.toml) over code, tests, examples
and benches."""

from __future__ import annotations

import inspect
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

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


def _ignores_without_reason(folder: Path) -> list[str]:
    """``# type: ignore[...]`` lines under ``folder`` with no reason: neither a comment
    after the ignore on its line nor a comment line just above it."""
    found = []
    for path in sorted(folder.rglob("*.py")):
        lines = path.read_text().splitlines()
        for i, line in enumerate(lines):
            if "type: ignore" not in line:
                continue
            after = re.sub(r"^\[[^\]]*\]", "", line.split("type: ignore", 1)[1])
            above = lines[i - 1].strip() if i else ""
            if not re.search(r"#\s*\S", after) and not above.startswith("#"):
                found.append(f"{path.relative_to(folder)}:{i + 1}: {line.strip()}")
    return found


@pytest.mark.parametrize("package", ["net", "peer", "commands"])
def test_every_type_ignore_says_why(package: str) -> None:
    assert _ignores_without_reason(ROOT / "p2p" / package) == []


def test_the_reason_check_sees_a_bare_ignore(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(
        "x = f()  # type: ignore[misc]\n"
        "# the library has no stubs\n"
        "y = f()  # type: ignore[misc]\n"
        "z = f()  # type: ignore[misc]  # the library has no stubs\n"
    )
    assert [s.split(":")[1] for s in _ignores_without_reason(tmp_path)] == ["1"]


def _public_annotations() -> list[tuple[str, str]]:
    """Every annotation (as written) of the public classes' public methods and properties
    that ``p2p.peer`` exports: the face the shell and the examples program against."""
    import p2p.peer

    out = []
    for name in p2p.peer.__all__:
        cls = getattr(p2p.peer, name)
        if not inspect.isclass(cls):
            continue
        for attr, member in vars(cls).items():
            if attr.startswith("_") and attr != "__init__":
                continue
            func = member.fget if isinstance(member, property) else member
            if inspect.isfunction(func):
                hints = [str(a) for a in func.__annotations__.values()]
                out += [(f"{name}.{attr}", h) for h in hints]
        out += [(f"{name}.{field}", str(a)) for field, a in vars(cls).get(
            "__annotations__", {}).items()]
    return out


def test_no_any_in_the_public_face_of_p2p_peer() -> None:
    annotations = _public_annotations()
    assert any(where == "Peer.invite" for where, _ in annotations)  # opening's, bound
    assert [(w, a) for w, a in annotations if re.search(r"\bAny\b", a)] == []
