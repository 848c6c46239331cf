"""One module per ``p2p`` sub-command: ``add_arguments(parser)`` and ``run(args)``."""
