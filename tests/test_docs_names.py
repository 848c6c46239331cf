"""Docs that cannot drift: every file path and dotted name that ``docs/`` and the
package's docstrings mention exists.

What counts as a mention:

- a **file path**: a word ending in a file extension (``.py``, ``.md``, ``.js`` ...)
  or a ``/``, with or without a folder (``p2p/peer/edge.py``, ``peer/edge.py``,
  ``round_link.py``); it must exist under the repository, ``p2p/`` or the web face's
  static folder (a bare file name of code or docs: anywhere in the repository; a bare
  configuration file name or one folder, ``brokers.json``, ``runs/``, is the user's); a
  ``*`` is a glob that must match something;
- a **module path** ``p2p.x.y[.Name[.attr]]``: it must import and have the attributes;
- a **class member** ``Name.attr`` or ``Name._attr`` in backticks, where ``Name`` is a
  class of the package: the class (or a base class of the package) defines ``attr``
  (a method, a class attribute or ``self.attr``);
- a **private name** ``_name`` in backticks: defined somewhere in the package.

Clearly marked examples are tolerated: a Markdown file may say
``<!-- example names: ttt -->`` and then any mention with such a word as one of its
parts (``p2p.games.ttt``) is an example, not a claim.
"""

from __future__ import annotations

import ast
import fnmatch
import functools
import importlib
import os
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXTENSIONS = "py|md|toml|js|css|html|json|txt|sh|png|cfg|ini|yml|yaml|conf"
PATH = re.compile(
    rf"(?<![\w/.:@-])((?:[\w.-]+/)+[\w.*-]*\.(?:{EXTENSIONS})|(?:[\w-]+/)+(?=[\s`'\"),;:]|$)|[\w-]+\.(?:{EXTENSIONS}))(?![\w/])"
)
MODULE = re.compile(r"(?<![\w./])(p2p(?:\.\w+)+)")
TICKED = re.compile(r"``([^`\s]+)``|(?<!`)`([^`\s]+)`(?!`)")
NOT_PATHS = {"Node.js", "setup.py"}
"""Words that look like a file name and are not one of ours."""
EXAMPLES = re.compile(r"<!--\s*example names:([^>]*)-->")


def _docstrings(path: Path) -> str:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            found.append(node.value.value)  # module, class, function and attribute docstrings
    return "\n".join(found)


def texts() -> Iterator[tuple[str, str]]:
    """(where, text) of every doc page and every module's docstrings."""
    for page in sorted((ROOT / "docs").glob("*.md")):
        yield str(page.relative_to(ROOT)), page.read_text(encoding="utf-8")
    for module in sorted((ROOT / "p2p").rglob("*.py")):
        yield str(module.relative_to(ROOT)), _docstrings(module)


CODE_FILES = re.compile(r"[\w-]+\.(?:py|md|js|css|html|toml)")
"""Bare file names that must be ours (a bare ``brokers.json`` or ``runs/`` is a user's
file or a folder of the configuration, not a claim about the repository)."""


NOT_OURS = {".git", ".venv", "node_modules", "__pycache__", ".mypy_cache", ".ruff_cache",
            ".pytest_cache", ".hypothesis"}
"""Folders under the repository whose files are not the repository's (installed packages,
caches): a bare file name found only there is not one of ours."""


@functools.cache
def repository_names() -> frozenset[str]:
    """The name of every file and folder in the repository, walked once (a recursive glob
    per bare file name walked the venv and node_modules again for each mention: most of
    this module's time)."""
    names: set[str] = set()
    for _folder, folders, files in os.walk(ROOT):
        folders[:] = [f for f in folders if f not in NOT_OURS]
        names.update(folders)
        names.update(files)
    return frozenset(names)


def path_exists(text: str) -> bool:
    text = text.rstrip(".")
    if "/" not in text.rstrip("/") and not CODE_FILES.fullmatch(text):
        return True
    for base in (ROOT, ROOT / "p2p", ROOT / "p2p" / "web" / "static"):
        if ("*" in text and any(base.glob(text))) or ("*" not in text and (base / text).exists()):
            return True
    if "/" in text:
        return False
    names = repository_names()
    return text in names or ("*" in text and any(fnmatch.fnmatchcase(n, text) for n in names))


def module_name_exists(name: str) -> bool:
    parts = name.rstrip(".").split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for part in parts[cut:]:
            if hasattr(found, part):
                found = getattr(found, part)
            elif part in getattr(found, "__annotations__", {}):  # a dataclass field
                return part == parts[-1]
            else:
                return False
        return True
    return False


def _class_index() -> tuple[dict[str, set[str]], dict[str, set[str]], set[str]]:
    """Per class name of the package: its attributes and its base names; all names defined."""
    members: dict[str, set[str]] = {}
    bases: dict[str, set[str]] = {}
    defined: set[str] = set()
    for module in (ROOT / "p2p").rglob("*.py"):
        tree = ast.parse(module.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                defined.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                defined.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                defined.add(node.attr)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                defined.add(node.target.id)
            if not isinstance(node, ast.ClassDef):
                continue
            own = members.setdefault(node.name, set())
            bases.setdefault(node.name, set()).update(
                b.id if isinstance(b, ast.Name) else b.attr for b in node.bases if isinstance(b, (ast.Name, ast.Attribute))
            )
            for inner in ast.walk(node):
                if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and inner is not node:
                    own.add(inner.name)
                elif isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Store):
                    own.add(inner.id)
                elif isinstance(inner, ast.AnnAssign) and isinstance(inner.target, ast.Name):
                    own.add(inner.target.id)
                elif isinstance(inner, ast.Attribute) and isinstance(inner.ctx, ast.Store):
                    own.add(inner.attr)
    return members, bases, defined


@functools.cache
def class_index() -> tuple[dict[str, set[str]], dict[str, set[str]], set[str]]:
    """``_class_index`` once, when a test first needs it (at import it cost every pytest
    worker seconds of collection)."""
    return _class_index()


def class_has(name: str, attr: str, seen: frozenset[str] = frozenset()) -> bool:
    members, bases, _ = class_index()
    if attr in members.get(name, set()):
        return True
    return any(class_has(base, attr, seen | {name}) for base in bases.get(name, ()) if base not in seen)


def problems(where: str, text: str) -> list[str]:
    examples = {word for found in EXAMPLES.findall(text) for word in found.split()}

    def example(mention: str) -> bool:
        return bool(examples & set(re.split(r"[./:]", mention)))

    found = []
    for m in PATH.finditer(text):
        mention = m.group(1)
        if mention not in NOT_PATHS and not example(mention) and not path_exists(mention):
            found.append(f"{where}: no file {mention}")
    for m in MODULE.finditer(text):
        if not example(m.group(1)) and not module_name_exists(m.group(1)):
            found.append(f"{where}: no name {m.group(1)}")
    for m in TICKED.finditer(text):
        token = (m.group(1) or m.group(2)).removesuffix("()")
        if not re.fullmatch(r"[A-Za-z_]\w*(?:\.\w+)?", token) or example(token):
            continue
        head, _, attr = token.partition(".")
        if attr and head in class_index()[0]:
            if not class_has(head, attr):
                found.append(f"{where}: {head} has no {attr}")
        elif not attr and head.startswith("_") and not head.startswith("__") and head not in class_index()[2]:
            found.append(f"{where}: nothing named {head}")
    return found


def test_every_path_and_name_the_docs_mention_exists() -> None:
    found = [problem for where, text in texts() for problem in problems(where, text)]
    assert found == []


def test_the_check_sees_a_stale_mention() -> None:
    """The check can fail: names of the kinds issue 27 found stale are reported."""
    stale = (
        "See `p2p/peer/publishing.py`, `Publishing._seal`, ``Peer._call``, ``_no_such_helper``, "
        "``p2p.peer.config.NO_SUCH_KNOB`` and ``RoundLink.no_such_method``."
    )
    assert problems("x", stale) == [
        "x: no file p2p/peer/publishing.py",
        "x: no name p2p.peer.config.NO_SUCH_KNOB",
        "x: Peer has no _call",
        "x: nothing named _no_such_helper",
        "x: RoundLink has no no_such_method",
    ]
    assert problems("x", "<!-- example names: ttt -->\n`p2p/games/ttt.py` ``p2p.games.ttt``") == []
    assert problems("x", "`p2p/peer/edge.py`, ``Edge.seal``, ``p2p.peer.config.TICK_S``") == []
