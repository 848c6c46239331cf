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


def _phase_writes(folder: Path) -> list[str]:
    """Every statement under ``folder`` that assigns an attribute named ``phase`` (``x.phase
    = ...``, also inside a tuple or as ``setattr(x, "phase", ...)``), except in the one
    function of the transition table, ``p2p.protocol.phases.advance``."""
    import ast

    found = []
    for path in sorted(folder.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        allowed: set[int] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name == "advance" and path.name == "phases.py":
                allowed |= {n.lineno for n in ast.walk(node) if hasattr(n, "lineno")}
        for node in ast.walk(tree):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = list(node.targets)
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and node.value is not None:
                targets = [node.target]
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                  and node.func.id == "setattr" and len(node.args) > 1
                  and isinstance(node.args[1], ast.Constant) and node.args[1].value == "phase"):
                found.append(f"{path.name}:{node.lineno}")
            flat = []
            for t in targets:
                flat += list(t.elts) if isinstance(t, (ast.Tuple, ast.List)) else [t]
            for t in flat:
                if isinstance(t, ast.Attribute) and t.attr == "phase" and node.lineno not in allowed:
                    found.append(f"{path.name}:{node.lineno}")
    return found


def test_a_phase_is_set_only_by_the_transition_table() -> None:
    assert _phase_writes(ROOT / "p2p") == []


def test_the_phase_check_sees_every_way_of_writing_a_phase(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(
        "st.phase = 1\n"
        "st.phase, st.end_reason = 1, ''\n"
        "setattr(st, 'phase', 1)\n"
        "phase = 1\n"  # a local name: no round's phase
        "def advance(s): s.phase = 2\n"  # not the table's module
    )
    assert _phase_writes(tmp_path) == ["m.py:1", "m.py:2", "m.py:3", "m.py:5"]
