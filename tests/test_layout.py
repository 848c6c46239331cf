"""The layout's own rules, checked on the source (issue 27, "smaller rooms"): no module in
``p2p/protocol`` or ``p2p/peer`` grows past ``MAX_LINES`` lines."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_LINES = 800
SMALL_ROOMS = ("p2p/protocol", "p2p/peer")


def _long_files(folder: Path, limit: int) -> list[str]:
    found = []
    for path in sorted(folder.rglob("*.py")):
        count = len(path.read_text(encoding="utf-8").splitlines())
        if count > limit:
            found.append(f"{path.relative_to(ROOT if folder.is_relative_to(ROOT) else folder)}: {count}")
    return found


def test_no_module_in_protocol_or_peer_is_over_800_lines() -> None:
    for folder in SMALL_ROOMS:
        assert _long_files(ROOT / folder, MAX_LINES) == [], f"split it by job ({folder})"


def test_the_length_check_sees_a_long_file(tmp_path: Path) -> None:
    (tmp_path / "short.py").write_text("x = 1\n" * MAX_LINES)
    (tmp_path / "long.py").write_text("x = 1\n" * (MAX_LINES + 1))
    assert _long_files(tmp_path, MAX_LINES) == [f"long.py: {MAX_LINES + 1}"]
