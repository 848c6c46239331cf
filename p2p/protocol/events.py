"""The signed event envelope: every message on the broker is one of these.

Wire format: the canonical encoding (``p2p.protocol.canonical``) of one object ::

    {"v": 2, "kind": "move", "pk": <64 hex>, "ts": <int ms>,
     "round": <32 hex> | null, "seq": <int> | null, "prev": <64 hex> | null,
     "body": {...}, "sig": <128 hex>}

``id = SHA-256(canonical bytes of the object without "sig")`` (64 hex characters) and
``sig`` is the Ed25519 signature of the 32 raw id bytes by ``pk``.  ``ts`` is whatever
the sender's clock said, in integer milliseconds; receivers never trust it for order.

Three shapes of event (``KINDS`` says which kind has which):

* lobby events (``presence``, ``hello``, lobby ``chat``): ``round``/``seq``/``prev`` null;
  ``hello`` and lobby ``chat`` sign ``ns``, the topic root of their lobby (e.g.
  ``p2p/v2/public``), so they cannot be replayed into another lobby;
* chain events (``genesis`` ... ``cancel``): ``round`` set, ``seq`` = position in the
  round's hash chain (genesis 0), ``prev`` = id of the event at ``seq - 1`` (null for
  genesis);
* side events (``accept``, ``commit``, ``reveal``, ``resign`` ...): ``round`` set,
  ``seq`` null, ``prev`` = id of the chain event they answer (``sync_request``: the
  sender's chain head).  They enter the chain only
  when the position owner seals them (embeds the whole signed event in ``body.sealed``).

Use ``make(identity, kind, ts, body, ...)`` to create and sign, ``parse(payload)`` to
check bytes from the broker.  Both raise ``EventError`` (one line) on anything invalid;
``parse`` checks, in order: size (``MAX_EVENT_SIZE``), canonical encoding, envelope
fields, protocol version, the body schema of the kind, sealed events recursively, and the
signature.  Whether the sender may send this kind *now* is the state machines' business.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

from p2p.protocol import canonical
from p2p.protocol.identity import Identity, sanitize_nickname, strip_controls, verify

PROTOCOL_VERSION = 5
"""The version every event we sign carries, and the only one accepted from the network
(v3: the conflict table of docs/protocol.md §8 decides what makes a log valid; v4: that
table as amended by the simulator's counterexamples, rules v4; v5: the draw starts with
the invitation -- the genesis, each ``accept`` and ``join`` carry their signer's
commitment and the ``start`` closes the set, rules v5, docs/protocol.md §3 and §7)."""
LEGACY_VERSIONS = (4, 3, 2, 1)
"""Older versions ``parse(..., legacy=True)`` still accepts, so that old round logs replay
(``p2p replay``); a round's events must all carry its genesis's version."""
ALL_VERSIONS = (PROTOCOL_VERSION, *LEGACY_VERSIONS)
MAX_EVENT_SIZE = 8192
"""Largest accepted payload in bytes (checked before anything else)."""
MAX_TS = 2**53
MAX_CHAT = 280
"""Longest chat line in characters."""
MAX_SEALED = 8
MAX_MOVE_TEXT = 16

_HEX = re.compile(r"[0-9a-f]*\Z")


class EventError(ValueError):
    """An event that must be dropped; ``str(err)`` is the one-line reason."""


# -- body schema ------------------------------------------------------------------------

Check = Callable[[Any], Any]
"""Checks one body field; raises ``EventError``.  ``_sealed`` and ``_evidence`` (``_Nested``)
return the embedded events they checked, kept in ``Event.inner`` (never checked again)."""


def _hex(nbytes: int) -> Check:
    def check(value: Any) -> None:
        if (
            not isinstance(value, str)
            or len(value) != 2 * nbytes
            or not _HEX.match(value)
        ):
            raise EventError(f"expected {2 * nbytes} lowercase hex characters")

    return check


def _int(lo: int, hi: int) -> Check:
    def check(value: Any) -> None:
        if (
            isinstance(value, bool)
            or not isinstance(value, int)
            or not lo <= value <= hi
        ):
            raise EventError(f"expected a whole number from {lo} to {hi}")

    return check


_HEX16, _HEX32, _HEX64 = _hex(16), _hex(32), _hex(64)
_TS, _SEQ = _int(0, MAX_TS), _int(0, 100_000)
"""The envelope's checks, made once (``_check_envelope`` runs for every event)."""


def _bool(value: Any) -> None:
    if not isinstance(value, bool):
        raise EventError("expected true or false")


def _text(max_len: int, allow_empty: bool = False) -> Check:
    def check(value: Any) -> None:
        if not isinstance(value, str) or len(value) > max_len:
            raise EventError(f"expected text of at most {max_len} characters")
        if not allow_empty and not value:
            raise EventError("expected non-empty text")

    return check


def _line(max_len: int) -> Check:
    def check(value: Any) -> None:
        _text(max_len)(value)
        if strip_controls(value) != value:
            raise EventError("text holds control characters")

    return check


def _nick(value: Any) -> None:
    _text(24)(value)
    if sanitize_nickname(value) != value:
        raise EventError("nickname is not sanitized")


def _choice(*options: str) -> Check:
    def check(value: Any) -> None:
        if value not in options:
            raise EventError(f"expected one of {', '.join(options)}")

    return check


def _optional(inner: Check) -> Check:
    def check(value: Any) -> None:
        if value is not None:
            inner(value)

    return check


def _options(value: Any) -> None:
    if not isinstance(value, dict) or len(value) > 16:
        raise EventError("options must be an object of at most 16 entries")
    for item in value.values():
        if (
            not isinstance(item, (bool, int, str))
            or isinstance(item, str)
            and len(item) > 32
        ):
            raise EventError("option values must be numbers, booleans or short text")


def _seats(value: Any) -> None:
    if not isinstance(value, list) or not 2 <= len(value) <= 4:
        raise EventError("seats must be a list of 2 to 4 seats")
    for seat in value:
        if not isinstance(seat, dict) or set(seat) != {"pk", "level"}:
            raise EventError("a seat is {pk, level}")
        _optional(_hex(32))(seat["pk"])
        _optional(_text(16))(seat["level"])
        if seat["pk"] is not None and seat["level"] is not None:
            raise EventError("a seat is human (pk) or computer (level), not both")


Held = Callable[[Any], "Event | None"]
"""Looks up an already checked event that an embedded value may be a copy of (the
receiver's pool of side events): ``None`` if there is none."""


def _inner(item: Any, held: Held | None) -> Event:
    """A signed event embedded in another one's body, checked (signature included) --
    unless it is byte for byte an event we have checked already: an ``EventValue``
    taken from one, or the event ``held`` finds for it.  The same bytes need no second
    check of their signature."""
    known = item.event if isinstance(item, EventValue) else None
    if known is None and held is not None:
        known = held(item)
    if known is not None:
        try:
            if canonical.encode(item) == known.raw:
                return known
        except canonical.CanonicalError:
            pass  # reported by the full check below
    return from_value(item, nested=True, versions=ALL_VERSIONS)


class _Nested:
    """The check of a body field that embeds signed events (``sealed``, ``evidence``):
    returns them, checked, and takes the receiver's ``held`` lookup."""

    def __init__(self, check: Callable[[Any, Held | None], tuple[Event, ...]]) -> None:
        self.check = check

    def __call__(self, value: Any, held: Held | None = None) -> tuple[Event, ...]:
        return self.check(value, held)


def _sealed(kinds: tuple[str, ...]) -> _Nested:
    def check(value: Any, held: Held | None) -> tuple[Event, ...]:
        if not isinstance(value, list) or len(value) > MAX_SEALED:
            raise EventError(f"sealed must be a list of at most {MAX_SEALED} events")
        found = []
        for item in value:
            inner = _inner(item, held)
            if inner.kind not in kinds:
                raise EventError(f"a {inner.kind} event cannot be sealed here")
            found.append(inner)
        return tuple(found)

    return _Nested(check)


def _evidence_check(value: Any, held: Held | None) -> tuple[Event, ...]:
    """A forfeit's evidence: one signed ``offline`` presence (a Last Will or goodbye)."""
    inner = _inner(value, held)
    if inner.kind != "presence" or inner.body["status"] != "offline":
        raise EventError("evidence must be an offline presence")
    return (inner,)


_evidence = _Nested(_evidence_check)


def _ns(value: Any) -> None:
    if not isinstance(value, str) or not _NS.match(value):
        raise EventError("expected a lobby namespace such as p2p/v2/public")


_NS = re.compile(r"[a-z0-9][a-z0-9-]{0,31}/v[0-9]{1,4}/[a-z0-9][a-z0-9-]{0,31}\Z")


@dataclass(frozen=True)
class Kind:
    """What an event kind looks like: its shape and its body fields."""

    shape: str  # "lobby", "chain", "side" or "any" (chat: lobby or round)
    body: dict[str, Check] = field(default_factory=dict)
    lobby_body: dict[str, Check] = field(default_factory=dict)
    """Extra body fields of an ``any`` kind when it is sent in the lobby (no round)."""
    optional: dict[str, Check] = field(default_factory=dict)
    """Body fields that may be absent (a ``forfeit``'s ``evidence``)."""

    @functools.cached_property
    def in_round(self) -> _Body:
        """The body an event of this kind has in a round (worked out once per kind)."""
        return _Body.of(self.body, self.optional)

    @functools.cached_property
    def in_lobby(self) -> _Body:
        """The body an event of this kind has in the lobby (no round)."""
        return _Body.of({**self.body, **self.lobby_body}, self.optional)


class _Body(NamedTuple):
    """A body's fields as ``_check_envelope`` asks about them, for every event."""

    names: frozenset[str]
    allowed: frozenset[str]
    checks: tuple[tuple[str, Check], ...]
    """Every field's check, the required ones first (as they were listed)."""
    listed: str
    """The required fields as the refusal names them."""

    @classmethod
    def of(cls, fields: dict[str, Check], optional: dict[str, Check]) -> _Body:
        return cls(
            frozenset(fields),
            frozenset(fields) | frozenset(optional),
            tuple({**fields, **optional}.items()),
            ", ".join(sorted(fields)) or "nothing",
        )


MIN_TURN_S = 60
"""The shortest turn limit a genesis may name (``turn``, seconds): one minute."""
MAX_TURN_S = 30 * 86_400
"""The longest: thirty days (correspondence play, docs/protocol.md §6.7)."""

KINDS: dict[str, Kind] = {
    # lobby
    "presence": Kind(
        "lobby",
        {
            "nick": _nick,
            "status": _choice("online", "offline"),
            "busy": _bool,
            "session": _hex(16),
            "ttl": _int(1, 3600),
        },
        # several sessions of one key (p2p.protocol.sessions): when this session
        # started (its signer's clock) and its takeover counter
        optional={"since": _int(0, MAX_TS), "lead": _int(0, 1_000_000)},
    ),
    # ``all``: "everyone present, answer": a newcomer whose broker hands retained
    # presences to no wildcard filter asks (docs/protocol.md §5)
    "hello": Kind("lobby", {"nick": _nick, "ns": _ns}, optional={"all": _bool}),
    "chat": Kind("any", {"text": _line(MAX_CHAT)}, lobby_body={"ns": _ns}),
    # round chain
    "genesis": Kind(
        "chain",
        {
            "game": _text(16),
            "options": _options,
            "seats": _seats,
            "start": _optional(_int(0, 3)),  # null = drawn by commit-reveal
            "expires": _int(0, MAX_TS),
            "private": _bool,
        },
        # a slow round: the turn limit in seconds, one minute to 30 days (§6.7); v5: the
        # admin's commitment to the draw when the round draws (§7)
        optional={"turn": _int(MIN_TURN_S, MAX_TURN_S), "commit": _hex(32)},
    ),
    "start": Kind("chain", {"sealed": _sealed(("accept", "join"))}),
    "commit_close": Kind("chain", {"sealed": _sealed(("commit",))}),
    "draw": Kind(
        "chain",
        {"sealed": _sealed(("reveal",)), "seed": _hex(32), "starter": _int(0, 3)},
    ),
    "move": Kind(
        "chain",
        {"ply": _int(0, 100_000), "move": _text(MAX_MOVE_TEXT), "state": _hex(32)},
    ),
    "seal": Kind("chain", {"sealed": _sealed(("resign", "leave", "takeback"))}),
    "cancel": Kind("chain", {"reason": _line(80)}),
    "forfeit": Kind(
        "chain",
        {"seat": _int(0, 3), "reason": _choice("silent", "offline")},
        optional={"evidence": _evidence},
    ),
    # round side events
    # v5: the signer's commitment to the draw when the round draws (§7)
    "accept": Kind("side", {"seat": _int(0, 3)}, optional={"commit": _hex(32)}),
    "decline": Kind("side", {"seat": _int(0, 3)}),
    "join": Kind("side", {"nick": _nick, "proof": _hex(32)}, optional={"commit": _hex(32)}),
    "commit": Kind("side", {"commit": _hex(32)}),
    "reveal": Kind("side", {"nonce": _hex(32)}),
    "resign": Kind("side", {}),
    "leave": Kind("side", {}),
    "ack": Kind("side", {"state": _hex(32)}),  # prev = the final chain event
    "takeback": Kind("side", {"ply": _int(0, 100_000)}),  # prev: the move to take back
    # the player to move says no to that request at once (changes no state, never sealed)
    "takeback_decline": Kind("side", {"ply": _int(0, 100_000)}),  # prev: the same move
    "sync_request": Kind("side", {"from_seq": _int(0, 100_000)}),
}

SINCE = "since"
"""Every round event (chain or side) may name ``since``: the signer's session, as its
presences name it (when that session started, its clock).  An ``offline`` forfeit's
evidence must be a Will of the session of the seat's newest event in the chain
(``p2p.protocol.round.evidence_error``, docs/protocol.md §6.6)."""
KINDS = {
    kind: replace(spec, optional={**spec.optional, SINCE: _int(0, MAX_TS)})
    if spec.shape in ("chain", "side") else spec
    for kind, spec in KINDS.items()
}

CHAIN_KINDS = frozenset(k for k, spec in KINDS.items() if spec.shape == "chain")
SIDE_KINDS = frozenset(k for k, spec in KINDS.items() if spec.shape == "side")


# -- the event -------------------------------------------------------------------------


@dataclass(frozen=True)
class Event:
    """A checked, signed event.  Build with ``make``; get from bytes with ``parse``."""

    kind: str
    pk: bytes
    ts: int
    round: str | None
    seq: int | None
    prev: str | None
    body: dict[str, Any]
    sig: bytes
    id: str
    raw: bytes
    """The canonical wire bytes (what is published and what logs store)."""
    v: int = PROTOCOL_VERSION
    """The protocol version the event was signed under."""
    inner: tuple[Event, ...] = field(default=(), compare=False, repr=False)
    """The signed events embedded in the body (``sealed`` or ``evidence``), checked
    with this event: ``sealed()`` and ``evidence()`` hand them out without a new check."""

    @property
    def pk_hex(self) -> str:
        return self.pk.hex()

    def value(self) -> dict[str, Any]:
        """The envelope as a canonical value (for sealing inside another event): an
        ``EventValue`` that remembers this event, so sealing it needs no second check of
        its signature while its bytes stay the same."""
        return EventValue(canonical.decode(self.raw), self)  # type: ignore[arg-type]

    def sealed(self) -> list[Event]:
        """The side events embedded in this chain event's body (already verified)."""
        return list(self.inner) if "sealed" in self.body else []

    def evidence(self) -> Event:
        """A forfeit's evidence, already verified; ``EventError`` if there is none or
        it was signed under another protocol version than this event."""
        if "evidence" not in self.body or not self.inner:
            raise EventError("no evidence")
        will = self.inner[0]
        if will.v != self.v:
            raise EventError(f"sealed event: unsupported protocol version {str(will.v)!r}")
        return will

    def describe(self) -> str:
        """A short human-readable line: kind, sender fingerprint, id prefix."""
        where = "" if self.seq is None else f" #{self.seq}"
        return f"{self.kind}{where} by {self.pk.hex()[:8]} ({self.id[:12]})"


class EventValue(dict[str, Any]):
    """An event's envelope as a value, with the checked ``Event`` it was decoded from."""

    def __init__(self, value: dict[str, Any], event: Event) -> None:
        super().__init__(value)
        self.event = event


@dataclass(frozen=True)
class Signed:
    """A signature already checked by the caller: ``sig`` by ``pk`` over the id ``id``.

    ``parse(payload, signed=...)`` skips its own check when the event it parses has
    exactly this key, signature and id (the same inputs give the same answer), and
    checks as usual otherwise.  ``payload``: the bytes the id was cut and hashed from
    (``p2p.peer.checks._unverified``); ``parse`` of these very bytes takes the id
    instead of cutting and hashing them a second time (issue 28).
    """

    pk: bytes
    sig: bytes
    id: str
    payload: bytes | None = field(default=None, repr=False, compare=False)


def _unsigned(value: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in value.items() if k != "sig"}


def event_id(unsigned: dict[str, Any]) -> str:
    """The id of an envelope without ``sig``: SHA-256 hex of its canonical bytes."""
    return hashlib.sha256(canonical.encode(unsigned)).hexdigest()


_SIG_FIELD = b',"sig":"'


def _unsigned_bytes(raw: bytes, sig: str) -> bytes | None:
    """The canonical bytes of an envelope without ``sig``, cut from ``raw``, the
    canonical bytes of the whole envelope (``sig``: its 128 hex characters); ``None`` if
    they are not where the canonical encoding puts them.

    Keys are sorted, so ``sig`` follows ``seq`` (hence its comma) and only the integers
    ``ts`` and ``v`` follow it: the last ``,"sig":"`` is the envelope's own (a ``sig``
    inside the body comes earlier, and a quote inside a string is escaped).  The same
    bytes ``canonical.encode`` gives for the envelope without ``sig``, without
    encoding it again (``make`` splices ``sig`` in the same way).

    >>> _unsigned_bytes(b'{"body":{},"seq":null,"sig":"ab","ts":1,"v":4}', "ab")
    b'{"body":{},"seq":null,"ts":1,"v":4}'
    """
    at = raw.rfind(_SIG_FIELD)
    end = at + len(_SIG_FIELD) + len(sig)
    if at < 0 or raw[at + len(_SIG_FIELD) : end] != sig.encode() or raw[end : end + 2] != b'",':
        return None
    return raw[:at] + raw[end + 1 :]


_ENVELOPE_KEYS = {"v", "kind", "pk", "ts", "round", "seq", "prev", "body", "sig"}


def _check_envelope(
    value: Any, versions: tuple[int, ...], held: Held | None = None
) -> tuple[Event, ...]:
    """Check everything but the signature; return the embedded events (checked)."""
    if not isinstance(value, dict) or set(value) != _ENVELOPE_KEYS:
        raise EventError("not an event envelope")
    version = value["v"]
    if type(version) is not int or version not in versions:  # true is not 1
        raise EventError(f"unsupported protocol version {str(version)[:20]!r}")
    kind = value["kind"]
    if not isinstance(kind, str) or kind not in KINDS:
        raise EventError(f"unknown kind {str(kind)[:20]!r}")
    _HEX32(value["pk"])
    try:
        _TS(value["ts"])
    except EventError:
        raise EventError("bad timestamp") from None
    _HEX64(value["sig"])
    spec = KINDS[kind]
    rnd, seq, prev = value["round"], value["seq"], value["prev"]
    if spec.shape == "lobby" or spec.shape == "any" and rnd is None:
        if rnd is not None or seq is not None or prev is not None:
            raise EventError(f"{kind} carries no round, seq or prev")
    elif spec.shape == "any":  # round chat
        _HEX16(rnd)
        if seq is not None or prev is not None:
            raise EventError("round chat carries no seq or prev")
    elif spec.shape == "chain":
        _HEX16(rnd)
        _SEQ(seq)
        if (seq == 0) != (kind == "genesis"):
            raise EventError("only genesis has seq 0")
        if seq == 0:
            if prev is not None:
                raise EventError("genesis has no prev")
        else:
            _HEX32(prev)
    else:  # side
        _HEX16(rnd)
        if seq is not None:
            raise EventError(f"{kind} carries no seq")
        if kind == "sync_request":
            if value["v"] >= 2:  # the requester's chain head (members compare heads)
                _HEX32(prev)
            elif prev is not None:
                raise EventError("sync_request carries no prev")
        else:
            _HEX32(prev)
    body = value["body"]
    shape = spec.in_round if rnd is not None else spec.in_lobby
    if not isinstance(body, dict) or not shape.names <= body.keys() <= shape.allowed:
        raise EventError(f"{kind} body must have exactly: {shape.listed}")
    inner: tuple[Event, ...] = ()
    for name, check in shape.checks:
        if name not in body:
            continue
        try:
            if isinstance(check, _Nested):
                inner += check(body[name], held)
            else:
                check(body[name])
        except EventError as err:
            raise EventError(f"{kind}.{name}: {err}") from None
    for item in body.get("sealed", ()):
        if item["v"] != version:  # checked strictly by the sealed schema above
            raise EventError("a sealed event of another protocol version")
    return inner


def from_value(
    value: Any,
    nested: bool = False,
    versions: tuple[int, ...] = (PROTOCOL_VERSION,),
    signed: Signed | None = None,
    raw: bytes | None = None,
    held: Held | None = None,
) -> Event:
    """Check a decoded envelope (schema, id, signature) and wrap it as an ``Event``.

    ``versions``: the protocol versions accepted (only the current one, unless replaying
    an old log).  ``signed``: a signature the caller has checked already (used only if
    key, signature and id all match).  ``raw``: the canonical bytes of ``value``, if the
    caller has them (``parse`` has checked they are).  ``held``: the receiver's lookup
    of events it has checked already, so a sealed copy of one is not checked again.
    """
    try:
        inner = _check_envelope(value, versions, held)
        if signed is not None and raw is not None and signed.payload == raw:
            # the id the caller cut and hashed from these very bytes (``Signed``): the
            # same cut as ``_unsigned_bytes`` (the last ``"sig":"``), not made again
            eid = signed.id
        else:
            cut = None if raw is None else _unsigned_bytes(raw, value["sig"])
            # the bytes we were given, less their ``sig``: the envelope is not encoded again
            eid = (
                hashlib.sha256(cut).hexdigest() if cut is not None else event_id(_unsigned(value))
            )
        pk = bytes.fromhex(value["pk"])
        sig = bytes.fromhex(value["sig"])
        if not (
            signed is not None and signed.pk == pk and signed.sig == sig and signed.id == eid
        ) and not verify(pk, sig, bytes.fromhex(eid)):
            raise EventError("bad signature")
        if raw is None:
            raw = canonical.encode(value)
    except canonical.CanonicalError as err:
        raise EventError(str(err)) from None
    except EventError as err:
        if nested:
            raise EventError(f"sealed event: {err}") from None
        raise
    return _event(value, pk, sig, eid, raw, inner)


def _event(
    value: dict[str, Any], pk: bytes, sig: bytes, eid: str, raw: bytes, inner: tuple[Event, ...]
) -> Event:
    return Event(
        kind=value["kind"],
        pk=pk,
        ts=value["ts"],
        round=value["round"],
        seq=value["seq"],
        prev=value["prev"],
        body=value["body"],
        sig=sig,
        id=eid,
        raw=raw,
        v=value["v"],
        inner=inner,
    )


def parse(
    payload: bytes,
    legacy: bool = False,
    signed: Signed | None = None,
    held: Held | None = None,
) -> Event:
    """Check bytes received from the broker and return the event; ``EventError`` if invalid.

    ``legacy``: also accept the older protocol versions (``LEGACY_VERSIONS``), for
    replaying old round logs; live traffic is always the current version only.
    ``signed``: the signature the network edge has just checked on these very bytes
    (``p2p.peer.checks._signed``), so that it is not checked twice; ``held``: the
    receiver's lookup of side events it holds (``RoundMachine.held``), so that a sealed
    copy of one is not checked again.
    """
    if not isinstance(payload, (bytes, bytearray)):
        raise EventError("payload is not bytes")
    if len(payload) > MAX_EVENT_SIZE:
        raise EventError(f"payload of {len(payload)} bytes exceeds {MAX_EVENT_SIZE}")
    if not payload:
        raise EventError("empty payload")
    try:
        value = canonical.decode(bytes(payload))
    except canonical.CanonicalError as err:
        raise EventError(str(err)) from None
    return from_value(
        value,
        versions=ALL_VERSIONS if legacy else (PROTOCOL_VERSION,),
        signed=signed,
        raw=bytes(payload),
        held=held,
    )


def make(
    identity: Identity,
    kind: str,
    ts: int,
    body: dict[str, Any],
    round: str | None = None,
    seq: int | None = None,
    prev: str | None = None,
) -> Event:
    """Create and sign an event; raises ``EventError`` if it would not pass ``parse``.

    Everything ``parse`` checks is checked, except our own fresh signature: signed here
    once, it is not verified again.
    """
    unsigned: dict[str, Any] = {
        "v": PROTOCOL_VERSION,
        "kind": kind,
        "pk": identity.pk_hex,
        "ts": ts,
        "round": round,
        "seq": seq,
        "prev": prev,
        "body": body,
    }
    try:
        signed_bytes = canonical.encode(unsigned)
    except canonical.CanonicalError as err:
        raise EventError(str(err)) from None
    digest = hashlib.sha256(signed_bytes).digest()
    sig = identity.sign(digest)
    value: dict[str, Any] = dict(unsigned, sig=sig.hex())
    try:
        inner = _check_envelope(value, (PROTOCOL_VERSION,))
    except canonical.CanonicalError as err:
        raise EventError(str(err)) from None
    # the wire bytes: the signed bytes with ``sig`` in its sorted place, before the
    # envelope's ``ts`` (the last ``"ts":`` -- only ``v`` follows it)
    at = signed_bytes.rfind(b',"ts":')
    raw = signed_bytes[:at] + b',"sig":"' + sig.hex().encode() + b'"' + signed_bytes[at:]
    event = _event(value, identity.public_key, sig, digest.hex(), raw, inner)
    if len(event.raw) > MAX_EVENT_SIZE:
        raise EventError(f"event of {len(event.raw)} bytes exceeds {MAX_EVENT_SIZE}")
    return event
