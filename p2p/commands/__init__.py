"""One module per ``p2p`` sub-command: ``HELP``, ``add_arguments(parser)``, ``run(args)``."""
