"""What one schedule is: every knob of a simulated round, drawn from its seed.

A ``Scenario`` is a pure function of ``(family, seed)``: the game and its seats, the slow
or live turn limit, the members' clock offsets, the faults (partitions, restarts, members
away), and which member is the adversary and what it does.  The world (``p2p.sim.world``)
draws everything else (delays, losses, think times, moves) from streams seeded by the same
seed, so ``(family, seed)`` replays a schedule exactly.

>>> a, b = Scenario.draw("mixed", 7), Scenario.draw("mixed", 7)
>>> a == b
True
>>> Scenario.draw("silent_loser", 3).seats
2
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from p2p.protocol.round import TurnTimeouts

LIVE = TurnTimeouts(silent_ms=60_000, offline_ms=30_000)
"""The turn limits of a simulated live round (shortened as the tests do; the conflict
constants, 10 s ahead, 30 s race and settle, 40 s held final, are the protocol's own)."""
SLOW_TURN_S = 90
"""A simulated slow round's ``turn`` (seconds, in the genesis: a chain rule, §6.7)."""

RACE_WINDOW_MS = 30_000
"""The race window of issue 23's invariants: a move that reached the others this soon
after it was signed "reached them in time" (the protocol's ``RACE_MS`` of today).  Fixed
here, like ``AHEAD_MS``, so the invariants do not move with the rules they check."""
AHEAD_MS = 10_000
"""How far ahead of a receiver's clock an event may be dated (the protocol's
``MAX_AHEAD_MS``): the allowance the invariants leave a "timely" move."""

FAMILIES = ("honest", "mixed", "silent_loser")
"""``honest``: faults only, every member honest; ``mixed``: faults plus one adversary
that picks its attacks at random; ``silent_loser``: the attack of issue 23 (the loser
receives a timely move, stays silent, forfeits it dated exactly ``prev + limit`` and names
the forfeit as its head 40 s later), in two seats, or three with the third member away
or lagging."""

GAMES = {2: ("connect4", {}), 3: ("cube", {"players": 3}), 4: ("chess4", {})}


@dataclass(frozen=True)
class Fault:
    """A member cut off (``kind`` ``cut``: its link drops everything both ways; ``held``:
    what it publishes meanwhile arrives at the heal, as a client's send queue does),
    restarted from its log (``restart``), away (``away``: offline in the lobby too), or on
    a lagging inbound link (``slow``: what reaches it arrives 1 to 3 min late, in any
    order), from ``start`` for ``length`` ms of true time."""

    kind: str
    member: int
    start: int
    length: int


@dataclass(frozen=True)
class Scenario:
    family: str
    seed: int
    seats: int
    game: str
    options: dict[str, int] = field(hash=False)
    slow: bool
    offsets: tuple[int, ...]
    """Each member's clock minus the true time (ms), within ±10 min."""
    faults: tuple[Fault, ...]
    adversary: int | None
    """The member that signs whatever the rules let it sign (``None``: all honest)."""
    attacks: tuple[str, ...]
    """What the adversary may do (``p2p.sim.adversary``)."""
    loss: float
    """Chance that one delivery is lost (the machines' own resync must repair it)."""
    duplicate: float
    max_delay: int

    @property
    def limit(self) -> int:
        """The turn limit of a ``silent`` forfeit in this round (ms)."""
        return SLOW_TURN_S * 1000 if self.slow else LIVE.silent_ms

    def command(self, rules: int | None = None) -> str:
        """The one line that replays this schedule exactly (``rules``: another conflict
        table than the current one, ``--rules``)."""
        extra = f" --rules {rules}" if rules is not None else ""
        return f"python -m p2p.sim --family {self.family} --seed {self.seed}{extra} -v"

    @classmethod
    def draw(cls, family: str, seed: int) -> Scenario:
        if family not in FAMILIES:
            raise ValueError(f"unknown family {family!r} (known: {', '.join(FAMILIES)})")
        rng = random.Random(f"scenario/{family}/{seed}")
        if family == "silent_loser":
            return cls._silent_loser(seed, rng)
        seats = rng.choice((2, 2, 2, 3, 3, 4))
        game, options = GAMES[seats]
        # each clock within ±10 min of the true time, and within 10 min of each other
        # (the most the protocol is built to absorb, ``clocks.ROUND_TOLERANCE_MS``)
        low = rng.randint(-600_000, 0) if rng.random() < 0.4 else -2_000
        spread = 600_000 if low < -2_000 else 4_000
        offsets = tuple(rng.randint(low, low + spread) for _ in range(seats))
        faults = []
        for _ in range(rng.choice((0, 0, 1, 1, 2, 3))):
            kind = rng.choice(("cut", "held", "restart", "away", "slow"))
            length = rng.choice((2_000, 10_000, 35_000, 70_000, 150_000))
            faults.append(Fault(kind, rng.randrange(seats), rng.randint(5_000, 200_000), length))
        adversary = None if family == "honest" else rng.randrange(seats)
        attacks: tuple[str, ...] = ()
        if adversary is not None:
            menu = ("silence", "forfeit", "name_head", "ack", "equivocate", "selective",
                    "withhold_acks", "silent_loser")
            # the scripted silent loser in a quarter of them: the rest must find holes by
            # their random forfeits, head namings, acks, silences and selective sends
            attacks = tuple(a for a in menu if rng.random() < (0.25 if a == "silent_loser"
                                                                else 0.45))
            attacks = attacks or (rng.choice(menu),)
            # the draw attack (protocol v5) from a stream of its own, so every other knob
            # of a seed's schedule stays what it was before it
            if random.Random(f"scenario/{family}/{seed}/draw").random() < 0.3:
                attacks += ("draw",)
        return cls(
            family, seed, seats, game, options, rng.random() < 0.3, offsets,
            tuple(sorted(faults, key=lambda f: f.start)), adversary, attacks,
            rng.choice((0.0, 0.0, 0.02, 0.1)), rng.choice((0.0, 0.0, 0.05)),
            rng.choice((50, 500, 3_000)),
        )

    @classmethod
    def _silent_loser(cls, seed: int, rng: random.Random) -> Scenario:
        seats = rng.choice((2, 2, 2, 3))
        game, options = GAMES[seats]
        if seats == 2 and rng.random() < 0.3:
            game, options = "cube", {"players": 2}
        adversary = rng.randrange(2)  # the admin or its successor
        # in three seats the adversary sits right after its victim in move order, and
        # the third member goes away when the attacked turn begins (``p2p.sim.adversary``)
        faults: list[Fault] = []
        offsets = tuple(rng.randint(-3_000, 3_000) for _ in range(seats))
        return cls(
            "silent_loser", seed, seats, game, options, rng.random() < 0.5, offsets,
            tuple(faults), adversary, ("silent_loser",), 0.0, 0.0, rng.choice((50, 500)),
        )
