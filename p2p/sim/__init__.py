"""Deterministic simulation of whole rounds over the pure round machines (issue 23).

A schedule is ``(family, seed)`` (``p2p.sim.scenario``): the world (``p2p.sim.world``)
runs every member's real ``RoundMachine`` through delivery in any order, delays, losses,
duplicates, partitions and heals, clocks off by up to ±10 min, restarts from the log and
members going away, with one adversarial member (``p2p.sim.adversary``) that signs
whatever it likes with its own key; afterwards ``p2p.sim.invariants`` checks that the
honest members agree, that timely moves stand, that final results stay final, that
``p2p replay`` judges every honest log as the live machine did, and that the adversary
gains nothing.  No broker, no asyncio, no wall clock: a failing seed replays exactly
(``python -m p2p.sim --family F --seed N -v``).

>>> result = simulate("honest", 0)
>>> result.violations
[]
"""

from __future__ import annotations

from dataclasses import dataclass

from p2p.protocol.conflicts import RULES_VERSION
from p2p.sim.scenario import FAMILIES, Scenario
from p2p.sim.world import Verdict

__all__ = ["FAMILIES", "Result", "Scenario", "simulate"]


@dataclass
class Result:
    """One schedule's outcome: its scenario, the violations found and the trace."""

    scenario: Scenario
    violations: list[tuple[str, str]]
    trace: list[str]
    verdicts: dict[int, Verdict]
    sim_ms: int
    rules: int = RULES_VERSION
    """The conflict table the members judged by (``RoundMachine.rules``)."""

    @property
    def ok(self) -> bool:
        return not self.violations

    def report(self) -> str:
        """The failure as people read it: seed, the replay command, the violations."""
        sc = self.scenario
        lines = [f"schedule {sc.family}/{sc.seed}: {len(self.violations)} violation(s);"
                 f" replay: {sc.command(None if self.rules == RULES_VERSION else self.rules)}"]
        lines += [f"  {code}: {text}" for code, text in self.violations]
        return "\n".join(lines)


def simulate(family: str, seed: int, rules: int = RULES_VERSION) -> Result:
    """Run one schedule and check every invariant on it (``rules``: the conflict table
    the members judge by, ``RoundMachine.rules``; 2 is the old table of issue 23)."""
    from p2p.sim.invariants import check
    from p2p.sim.world import World

    world = World(Scenario.draw(family, seed), rules).run()
    violations = check(world)
    verdicts = {m.index: world.verdict(m) for m in world.members if m.machine is not None}
    return Result(world.sc, violations, world.trace, verdicts, world.t, rules)
