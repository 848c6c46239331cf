"""The network edge: a resilient aiomqtt transport and a throwaway local Mosquitto.

This is the only package of ``p2p`` that does network I/O.  Import the submodules
directly (``p2p.net.transport``, ``p2p.net.broker``) so that commands which never touch
the network do not pay for importing aiomqtt.
"""
