"""Getting the user's attention when it is their turn or they are invited.

Policy (``docs/shell.md``, notifications): while the terminal is known
to be focused, nothing happens.  Otherwise ring the bell (BEL); when the terminal reported
that it lost focus (focus reporting ``CSI ?1004h``: ``CSI O`` out, ``CSI I`` in), also
send the OSC 777 and OSC 9 desktop-notification sequences (wrapped for tmux passthrough
under ``$TMUX``) and run ``notify-send`` where it exists and a desktop session is there.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Mapping

from prompt_toolkit.input import ansi_escape_sequences
from prompt_toolkit.keys import Keys

FOCUS_ON = "\x1b[?1004h"
FOCUS_OFF = "\x1b[?1004l"
FOCUS_IN_KEY = Keys.F23
FOCUS_OUT_KEY = Keys.F24


def install_focus_keys() -> None:
    """Teach prompt_toolkit's parser the focus reports (it has no keys for them).

    Without this ``ESC [ I`` ends up as ``[I`` in the input line.  The table is
    module-level in prompt_toolkit, so this is done once, here.
    """
    ansi_escape_sequences.ANSI_SEQUENCES["\x1b[I"] = FOCUS_IN_KEY
    ansi_escape_sequences.ANSI_SEQUENCES["\x1b[O"] = FOCUS_OUT_KEY


def _clean(text: str) -> str:
    """Strip control characters and ';' so the text cannot break the escape sequence."""
    return "".join(ch for ch in text if ch.isprintable() and ch != ";")


def desktop_sequences(title: str, body: str, environ: Mapping[str, str]) -> str:
    """OSC 777 and OSC 9 for ``title``/``body``, tmux-wrapped when inside tmux."""
    title, body = _clean(title), _clean(body)
    seqs = [f"\x1b]777;notify;{title};{body}\x07", f"\x1b]9;{title}: {body}\x07"]
    if environ.get("TMUX"):
        seqs = ["\x1bPtmux;" + seq.replace("\x1b", "\x1b\x1b") + "\x1b\\" for seq in seqs]
    return "".join(seqs)


class Notifier:
    """Tracks terminal focus and raises attention; ``write`` sends raw bytes to the terminal."""

    def __init__(
        self,
        write: Callable[[str], None],
        enabled: Callable[[], bool],
        environ: Mapping[str, str] | None = None,
        run: Callable[[list[str]], object] | None = None,
    ) -> None:
        self.write = write
        self.enabled = enabled
        self.environ = os.environ if environ is None else environ
        self.run = run or self._spawn
        self.focused: bool | None = None
        """``None`` until the terminal reports focus at least once."""
        self.sent: list[str] = []
        """What was sent, newest last (bell/desktop/notify-send); kept short, for tests."""

    def set_focus(self, focused: bool) -> None:
        self.focused = focused

    def attention(self, title: str, body: str) -> bool:
        """Notify if enabled and not focused; returns whether anything was sent."""
        if not self.enabled() or self.focused is True:
            return False
        self.write("\x07")
        self._note("bell")
        if self.focused is False:
            self.write(desktop_sequences(title, body, self.environ))
            self._note("desktop")
            if shutil.which("notify-send") and (
                self.environ.get("DISPLAY") or self.environ.get("WAYLAND_DISPLAY")
            ):
                self.run(["notify-send", "-a", "p2p", _clean(title), _clean(body)])
                self._note("notify-send")
        return True

    def _note(self, what: str) -> None:
        self.sent.append(what)
        del self.sent[:-20]

    @staticmethod
    def _spawn(argv: list[str]) -> object:
        try:
            return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except OSError:
            return None
