"""The browser face: a local web page over ``p2p.peer``, beside the shell."""
