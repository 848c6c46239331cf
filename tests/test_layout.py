"""The layout's own rules, checked on the source (issue 27): no module in ``p2p/protocol``
or ``p2p/peer`` grows past ``MAX_LINES`` lines; a round's phase is written only by the
transition table's one function; no import circle, type-only imports included."""

from __future__ import annotations

import ast
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


def _own_names(tree: ast.Module) -> set[str]:
    """The names a module defines for itself: its functions, classes and module names,
    and the attributes its code sets on ``self``/``cls``."""
    own: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            own.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            own.add(node.id)
        elif (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
              and isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
            own.add(node.attr)
    return own


def _foreign_private_reads(folder: Path, doors: frozenset[str] = frozenset(),
                           door_modules: str = "round_") -> list[str]:
    """Every ``x._name`` under ``folder`` (read or written, ``x`` not ``self``/``cls``) whose
    ``_name`` the module does not define itself: a reach into another module's object.
    ``doors``: private names the modules named ``door_modules*`` (the round machine's
    helpers) may use because their host ``Protocol`` declares them."""
    found: list[tuple[str, int, str]] = []
    for path in sorted(folder.rglob("*.py")):
        allowed = doors if path.name.startswith(door_modules) else frozenset()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        own = _own_names(tree)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and node.attr.startswith("_")
                    and not node.attr.startswith("__")
                    and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
                    and node.attr not in own and node.attr not in allowed):
                found.append((path.name, node.lineno, ast.unparse(node)))
    return [f"{name}:{line} {text}" for name, line, text in sorted(found)]


def _declared_private_doors() -> set[str]:
    """The private names the round machine's host Protocols (``round_hosts.py``) declare:
    the machine's own state and steps that its helper modules share."""
    tree = ast.parse((ROOT / "p2p/protocol/round_hosts.py").read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    names.add(item.target.id)
                elif isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    names.add(item.name)
    return {n for n in names if n.startswith("_") and not n.startswith("__")}


ROUND_MACHINE_DOORS = frozenset({
    "_advanced", "_append", "_append_move", "_applied", "_applied_at", "_ask_sync",
    "_asked_len", "_catch_up_until", "_chain_ts", "_chat_limit", "_chat_seen", "_clock",
    "_clock_wait", "_close_commits", "_draw", "_last_asked", "_last_head_sent",
    "_observed_at", "_orphan", "_orphans", "_pairs", "_park", "_proof", "_react",
    "_receive_chain", "_remember", "_resumed_head", "_secret", "_side_event", "_signed_body",
    "_signs", "_snapshots", "_sync_answered", "_sync_floor", "_sync_sent", "_told_disputes",
    "_told_own",
    "_vouched", "_was_acting", "_verdict",
})
"""The round machine's private state and steps its helper modules still share, each
declared by the helper's host in ``round_hosts.py``.  Open (issue 27 item 5): the machine's
steps (``_append``, ``_react`` ...) stay private because ``Round.machine`` hands the machine
to bots, and most of the state is the conflict rules' (``round_conflicts.py``, changed by
the issue 23 work in parallel).  This set may only shrink."""


def test_no_module_reaches_into_another_modules_private_attributes() -> None:
    """In ``p2p/peer`` none at all; in ``p2p/protocol`` only the round machine's declared
    doors (``ROUND_MACHINE_DOORS``, each named by a host ``Protocol``)."""
    assert _foreign_private_reads(ROOT / "p2p/peer") == []
    declared = _declared_private_doors()
    assert declared <= ROUND_MACHINE_DOORS, f"a new private door: {sorted(declared - ROUND_MACHINE_DOORS)}"
    assert declared >= ROUND_MACHINE_DOORS, (
        f"closed doors: drop {sorted(ROUND_MACHINE_DOORS - declared)} from ROUND_MACHINE_DOORS")
    assert _foreign_private_reads(ROOT / "p2p/protocol", frozenset(declared)) == []


def test_the_private_reach_check_sees_a_reach(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(
        "class A:\n    def __init__(self):\n        self._mine = 1\n"
        "    def same(self, other):\n        return other._mine\n"  # its own class: fine
        "def reach(m):\n    m._theirs = 2\n    return m._other()\n"
        "def door(m):\n    return m._door\n"
    )
    (tmp_path / "round_b.py").write_text("def door(m):\n    return m._door\n")
    assert _foreign_private_reads(tmp_path, frozenset({"_door"})) == [
        "a.py:7 m._theirs", "a.py:8 m._other", "a.py:10 m._door"]
