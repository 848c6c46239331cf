"""``python -m p2p`` runs the command-line interface."""

import os
import sys

if getattr(sys.modules.get("p2p"), "__file__", None) is None:
    # Run from the folder above a clone named ``p2p``: that folder (no __init__.py) made
    # ``p2p`` a namespace package and hides the real one.  Import the package this file
    # belongs to instead.
    sys.modules.pop("p2p", None)
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from p2p.cli import main  # noqa: E402

raise SystemExit(main())
