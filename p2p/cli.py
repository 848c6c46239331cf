"""The ``p2p`` command line: one sub-command per module in ``p2p.commands``.

Every sub-command module exposes ``add_arguments(parser)`` and ``run(args) -> int``;
its one-line help lives in ``COMMANDS`` here.  Modules are imported only when their command runs, so
``p2p position`` never pays for prompt_toolkit or aiomqtt.  A module may also offer
``quick_arguments(argv)``: its arguments read without ``argparse`` when they are plain (or
``None``, and ``argparse`` reads them: help, errors and every other form), so a command
run in a loop (``p2p solve``) starts without importing ``argparse`` at all.  No traceback ever reaches
the user: errors become one line on stderr and exit status 2 (1 for an internal error).
"""

from __future__ import annotations

import importlib
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

COMMANDS: dict[str, str] = {
    "shell": "Open the chat-and-play shell (the default)",
    "web": "Open the browser face: the same peer, a board you can see",
    "demo": "Run a complete online round between scripted peers on a local broker",
    "position": "Apply moves from the start and print the position",
    "solve": "Exact Connect Four scores (Pascal Pons' convention)",
    "perft": "Count legal move sequences (four-player chess and the others)",
    "replay": "Verify and replay a saved round log",
    "doctor": "Check a broker: MQTT version, retained messages, round trip, what works there",
}


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit status 2."""


def _parser() -> argparse.ArgumentParser:
    import argparse

    parser = argparse.ArgumentParser(
        prog="p2p", description="Serverless peer-to-peer board games over MQTT.",
        epilog="Without a command p2p opens the shell, and the shell's options work at the top level:\n"
        "  p2p [--broker URL]... [--nick NAME] [--lang de|en] [--namespace NAME] [--local] [--no-color]\n"
        "(see 'p2p shell --help').",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", "-V", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, help_text in COMMANDS.items():
        sub_parser = sub.add_parser(name, help=help_text, description=help_text)
        sub_parser.set_defaults(command=name)
        # The sub-command's own options are added lazily in main().
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the process exit status."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list and args_list[0] in ("--version", "-V"):
        from p2p import __version__

        print(f"p2p {__version__}")
        return 0
    if not args_list or args_list[0].startswith("-") and args_list[0] not in ("-h", "--help"):
        args_list = ["shell", *args_list]
    if args_list[0] in ("-h", "--help"):
        _parser().print_help()
        return 0
    name = args_list[0]
    if name not in COMMANDS:
        print(f"p2p: unknown command {name!r} (try: {', '.join(COMMANDS)})", file=sys.stderr)
        return 2
    module = importlib.import_module(f"p2p.commands.{name}")
    quick = getattr(module, "quick_arguments", None)
    args = quick(args_list[1:]) if quick is not None else None
    if args is None:
        import argparse

        parser = argparse.ArgumentParser(prog=f"p2p {name}", description=COMMANDS[name])
        module.add_arguments(parser)
        args = parser.parse_intermixed_args(args_list[1:])
    try:
        return int(module.run(args))
    except UsageError as err:
        print(f"p2p {name}: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader went away (``p2p position ... | head``): not an error
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except Exception as err:  # noqa: BLE001 - the last line of defence: no traceback to users
        print(f"p2p {name}: internal error: {type(err).__name__}: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
