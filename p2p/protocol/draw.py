"""The commit-reveal draw of the starting seat, and the round's only randomness.

1. every human member picks a 32-byte nonce (random bytes from the edge) and commits to
   it, ``commitment(round_id, own public key, nonce)``: since protocol v5 the admin in its
   genesis, each guest in its ``accept``, each code joiner in its ``join``;
2. the admin's ``start``, which must seal every seat's accept (or join), closes the commit
   set (v2-v4: members sent ``commit`` after the start, and a ``commit_close`` sealing
   every human seat's commitment closed it);
3. members reveal their nonces, answering the start; each reveal is checked against its
   commitment;
4. the admin's signed ``draw`` seals every reveal; every peer recomputes
   ``seed = SHA-256(SEED_TAG || round id || nonces in seat order)`` and
   ``starter = eligible[int(seed) mod len(eligible)]`` with ``eligible`` every seat.
   A reveal still missing at the timeout cancels the round (the rules in
   ``p2p.protocol.round``): withholding never makes anyone start.  (v1 logs: the revealed
   seats plus the computer seats were eligible, the others excluded.)

A round with a named starter draws only the seed when it has computer seats (so no single
member can choose their luck), else its seed is ``fixed_seed(round_id)`` and unused.
Computer moves use ``ply_seed(seed, ply)`` so every peer can recompute them.

>>> rid = "00" * 16
>>> c = commitment(rid, bytes(32), bytes(32))
>>> len(c)
64
>>> starter(draw_seed(rid, [bytes(32)]), [0, 1]) in (0, 1)
True
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping, Sequence
from typing import Any

COMMIT_TAG = b"p2p/v1/draw-commit\x00"
SEED_TAG = b"p2p/v1/draw-seed\x00"
FIXED_TAG = b"p2p/v1/fixed-seed\x00"
PLY_TAG = b"p2p/v1/ai-ply\x00"
NONCE_TAG = b"p2p/v5/draw-nonce\x00"
NONCE_SIZE = 32


def commitment(round_id: str, public_key: bytes, nonce: bytes) -> str:
    """The hex commitment of ``nonce`` by ``public_key`` in round ``round_id``."""
    if len(nonce) != NONCE_SIZE:
        raise ValueError(f"a draw nonce has {NONCE_SIZE} bytes")
    return hashlib.sha256(
        COMMIT_TAG + bytes.fromhex(round_id) + public_key + nonce
    ).hexdigest()


def own_nonce(seed: bytes, round_id: str) -> bytes:
    """A member's draw nonce in round ``round_id``: HMAC-SHA-256 keyed with its private
    key's 32 ``seed`` bytes, so a member restarted between its commitment (since v5 in
    its accept, join or genesis) and its reveal finds the same nonce again; nobody
    without the key can compute or predict it, and revealing it shows nothing of the key.

    >>> a, b = own_nonce(bytes(32), "00" * 16), own_nonce(bytes(32), "01" * 16)
    >>> len(a), a == own_nonce(bytes(32), "00" * 16), a == b
    (32, True, False)
    """
    return hmac.new(seed, NONCE_TAG + bytes.fromhex(round_id), hashlib.sha256).digest()


def draw_seed(round_id: str, nonces_in_seat_order: list[bytes]) -> bytes:
    """The 32-byte seed from the revealed nonces, listed in seat order."""
    digest = hashlib.sha256(SEED_TAG + bytes.fromhex(round_id))
    for nonce in nonces_in_seat_order:
        digest.update(nonce)
    return digest.digest()


def fixed_seed(round_id: str) -> bytes:
    """The seed of a round whose starting seat the admin named (no draw)."""
    return hashlib.sha256(FIXED_TAG + bytes.fromhex(round_id)).digest()


def starter(seed: bytes, eligible: list[int]) -> int:
    """The starting seat: ``eligible[int(seed) mod len(eligible)]`` (``eligible`` ascending)."""
    if not eligible:
        raise ValueError("nobody is eligible to start")
    return sorted(eligible)[int.from_bytes(seed, "big") % len(eligible)]


def ply_seed(seed: bytes, ply: int) -> bytes:
    """The seed a computer player uses for the move at ``ply`` (0-based)."""
    return hashlib.sha256(PLY_TAG + seed + ply.to_bytes(4, "big")).digest()


EARLY_COMMIT_VERSION = 5
"""Rounds from this protocol version on start the draw with the invitation (docs/protocol.md
§7): the genesis carries the admin's commitment, each ``accept`` and ``join`` its signer's,
and the ``start`` that seals them closes the commit set (no ``commit``, no
``commit_close``: the reveals follow the start).  Older logs keep their commit round."""


def draws(start: int | None, levels: Sequence[str | None]) -> bool:
    """Whether a round of the fair-draw rules (v2 on) with this named ``start`` (or
    ``None``) and these seats' computer ``levels`` draws: it does unless it names its
    starter and has no computer seat (``RoundState.draws_seed``; the admin's genesis
    carries its commitment exactly then, from v5).

    >>> draws(None, [None, None]), draws(0, [None, None]), draws(0, [None, "normal"])
    (True, False, True)
    """
    return start is None or any(level is not None for level in levels)


def commitment_error(kind: str, body: Mapping[str, Any], wants: bool, version: int) -> str:
    """Why a genesis, ``accept`` or ``join`` (``kind``, ``body``) does not fit its round by
    the commitment it carries (``''`` if it fits): ``wants`` says the round commits with
    the invitation and draws (v5), and then each needs one (its signer's commitment to
    the draw); no other round has any (``version``: the round's).

    >>> commitment_error("accept", {"seat": 1}, True, 5)
    'the accept carries no commitment to the draw'
    >>> commitment_error("accept", {"seat": 1, "commit": "ab" * 32}, False, 4)
    'the accept carries a commitment, but the round is a v4 round'
    """
    has = "commit" in body
    if wants and not has:
        return f"the {kind} carries no commitment to the draw"
    if has and not wants:
        why = "draws nothing" if version >= EARLY_COMMIT_VERSION else f"is a v{version} round"
        return f"the {kind} carries a commitment, but the round {why}"
    return ""
