"""``p2p solve`` starts light (issue 28): its plain arguments are read without ``argparse``
exactly as ``argparse`` reads them, and it imports neither ``argparse`` nor the registry
of games (whose solver entries it knows, held equal here)."""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from p2p.commands import solve as solve_command
from p2p.games import game_names, spec

ROOT = Path(__file__).resolve().parents[1]


def _argparse(argv: list[str]) -> dict[str, object] | None:
    """What ``p2p solve`` read with ``argparse`` alone (before issue 28); ``None`` where
    it stops with usage or help."""
    parser = argparse.ArgumentParser(prog="p2p solve", exit_on_error=False)
    solve_command.add_arguments(parser)
    devnull = open(os.devnull, "w")  # noqa: SIM115 - closed below
    stdout, stderr = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = devnull
    try:
        return vars(parser.parse_intermixed_args(argv))
    except (SystemExit, argparse.ArgumentError):
        return None
    finally:
        sys.stdout, sys.stderr = stdout, stderr
        devnull.close()


WORDS = ["connect4", "cube", "4455", "", "7", "-a", "--analyze", "-w", "--weak", "--width", "--height",
         "--width=5", "--height=7", "--width=", "--wid", "--an", "-aw", "-h", "--help", "--", "-5",
         "5", "x", "--width=-4", "٣", "+6", "-", "--weak=1", "--jobs", "-j", "--jobs=2", "-j=2", "-j2", "0"]


def test_quick_arguments_read_what_argparse_reads() -> None:
    """Random command lines: the quick reading is ``argparse``'s, or it leaves the line
    to ``argparse`` (``None``): never a different reading, never an accepted error."""
    rng = random.Random("p2p solve arguments")
    lines = [["connect4"], ["connect4", "4455"], ["connect4", "--width", "5", "-a", "2233"], []]
    lines += [[rng.choice(WORDS) for _ in range(rng.randint(0, 6))] for _ in range(4000)]
    quick_read = 0
    for argv in lines:
        quick = solve_command.quick_arguments(argv)
        if quick is not None:
            quick_read += 1
            assert vars(quick) == _argparse(argv), argv
    assert quick_read > 300  # the plain forms do come up


def test_the_built_in_solvers_are_the_registry_entries() -> None:
    registered = {name: spec(name).solver for name in game_names() if spec(name).solver}
    assert registered == solve_command.BUILT_IN_SOLVERS


def _modules_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys\nprint(' '.join(sorted(sys.modules)))"],
        capture_output=True, text=True, timeout=120, cwd=ROOT, check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)}, input="4455\n",
    )
    return set(out.stdout.split())


@pytest.mark.parametrize("argv", [["solve", "connect4"], ["solve", "connect4", "--weak", "44455554221"]])
def test_solve_imports_neither_argparse_nor_the_games(argv: list[str]) -> None:
    """What ``p2p solve connect4`` imports beyond the bare interpreter: the solver, no
    ``argparse``, no registry or rules engine, none of the modules they pull in."""
    bare = _modules_after("pass")
    solving = _modules_after(f"from p2p.cli import main\nassert main({argv!r}) == 0") - bare
    assert "p2p.ai.connect4_solver" in solving
    heavy = {"argparse", "p2p.games", "p2p.games.base", "dataclasses", "inspect", "typing", "hashlib",
             "enum", "shutil", "gettext", "locale"}
    assert solving & heavy == set()
