"""The layout's own rules, checked on the source (issue 27): no module in ``p2p/protocol``
or ``p2p/peer`` grows past ``MAX_LINES`` lines; a round's phase is written only by the
transition table's one function; no import circle, type-only imports included."""

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


def _imports_at_module_level(path: Path, name: str, known: set[str]) -> set[str]:
    """The ``p2p`` modules ``path`` imports outside function bodies: at the top, and in
    ``if TYPE_CHECKING:`` (or any other ``if``/``try``) blocks -- type-only imports count.
    An import inside a function runs when it is called, not at import time, so it is not
    a circle of the module graph (and is left to the reviewer)."""
    import ast

    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            if isinstance(child, ast.Import):
                found.update(a.name for a in child.names if a.name in known)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    parts = package.split(".")[: len(package.split(".")) - (child.level - 1)]
                    base = ".".join(parts + ([base] if base else []))
                for alias in child.names:
                    full = f"{base}.{alias.name}"
                    if full in known:
                        found.add(full)
                    elif base in known:
                        found.add(base)
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    found.discard(name)
    return found


def _import_circles(root: Path, top: str) -> list[list[str]]:
    """Every set of modules under ``root`` (package ``top``) that import each other in a
    circle (strongly connected components of more than one module)."""
    modules: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        name = ".".join((top, *path.relative_to(root).with_suffix("").parts))
        modules[name.removesuffix(".__init__")] = path
    known = set(modules)
    graph = {m: sorted(_imports_at_module_level(p, m, known)) for m, p in modules.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def strong(v: str) -> None:  # Tarjan
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for v in graph:
        if v not in index:
            strong(v)
    return circles


def _circles_in(package: str) -> list[list[str]]:
    return [c for c in _import_circles(ROOT / "p2p", "p2p") if c[0].startswith(f"p2p.{package}.")
            or c[0] == f"p2p.{package}"]


def test_no_import_circle_anywhere() -> None:
    """No circle in the whole package, type-only imports included."""
    assert _import_circles(ROOT / "p2p", "p2p") == []


def test_no_import_circle_in_the_round_machine_and_its_helpers() -> None:
    assert _circles_in("protocol") == []


def test_no_import_circle_in_the_peer() -> None:
    """The peer's parts take narrow hosts (``handles.RoundSide``, ``handles.InvitationHost``,
    ``store_link.StoreSide``, ``opening.Opener``, ``round_link.RoundHost``) instead of
    importing ``core.Peer`` or ``round_link.RoundLink`` back."""
    assert _circles_in("peer") == []


def test_no_import_circle_in_the_shell() -> None:
    """The online session's parts see it through the hosts they declare
    (``online_commands.CommandsHost``, ``online_notes.NotesHost``, ``online_resume.FilesHost``,
    ``online_rounds.RoundsHost``); a view's data types live in ``game_view``."""
    assert _circles_in("shell") == []


def test_the_circle_check_sees_a_type_only_circle(tmp_path: Path) -> None:
    (tmp_path / "__init__.py").write_text("")
    (tmp_path / "a.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                   "    from pkg.b import B\n")
    (tmp_path / "b.py").write_text("from pkg import a\n")
    (tmp_path / "c.py").write_text("def f():\n    from pkg import a\n")  # lazy: no circle
    (tmp_path / "d.py").write_text("from pkg import c\n")
    assert _import_circles(tmp_path, "pkg") == [["pkg.a", "pkg.b"]]
