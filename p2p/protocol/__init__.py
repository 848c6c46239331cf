"""The pure protocol layer: signed events, topics, lobby and round state machines.

Nothing here does I/O, reads a clock or draws random numbers: time (``now``, integer
milliseconds) and random bytes (keys, draw nonces, session ids, round ids, join codes)
come in as arguments, and the machines answer with effects (``effects``) for the driver
(``p2p.peer``) to carry out.  The wire format is specified in ``docs/protocol.md``.

Modules, bottom up:

* ``canonical`` — the one byte encoding of a value (strict JSON subset, no floats);
* ``identity`` — Ed25519 key pair, peer id and fingerprint, nickname sanitizing;
* ``events`` — the signed envelope: ``make`` to sign, ``parse`` to check bytes;
* ``topics`` — topic names with QoS/retain, private-round join codes;
* ``sealing`` — end-to-end sealing of round payloads and invitations (round keys);
* ``draw`` — commit-reveal formulas and the per-ply seeds of computer players;
* ``round`` — ``RoundState``: the rules of a round's hash chain, ``verify_chain``;
* ``round_machine`` — ``RoundMachine``: one member's sans-I/O round (it calls the
  plain functions of ``round_conflicts``, ``round_notices``, ``round_side``, each taking
  the machine as its first argument);
* ``lobby`` — ``Lobby``: presence, Last Will, lobby chat, invitations;
* ``chat`` — chat line cleaning and per-sender token buckets;
* ``replay`` — verify a saved round log offline (``p2p replay``);
* ``loopback`` — an in-process stand-in for the broker (tests, examples).

The key file on disk is handled by ``p2p.keystore`` (an edge module).
"""
