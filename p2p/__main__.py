"""``python -m p2p`` runs the command-line interface."""

from p2p.cli import main

raise SystemExit(main())
