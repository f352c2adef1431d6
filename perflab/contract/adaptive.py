"""Adaptive rounds: after every study's base rounds, more rounds of just the cells the
still-undecided claims rest on, looked at after each step, within a cap of looks and minutes.

The schedule of looks is fixed before any data: look 0 is the base rounds, judged at the
base coverage (90%: the most 3 vs 3 repeats can give); look k >= 1 comes after
`first_look_rounds` more rounds (k = 1) or `rounds_per_look` more (k > 1) and demands
`look_coverage` of every interval. A claim decided at a look keeps that verdict; a claim still
inconclusive or at its threshold is looked at again (perflab.analysis.adaptive.judge_looks).

Why the later looks demand more: looking again gives a claim whose true effect sits on its
threshold another chance to be decided by luck. The chance of a wrong decision at some look
is at most the sum of each look's (Bonferroni over looks), so with the cap of `max_looks`
fixed in advance the whole procedure errs with at most `family_error`, whatever the data
and however many looks a run really takes. tests/test_adaptive.py simulates it. The bound
holds whatever margin a look judges with: a claim whose true effect is on its threshold is
decided at a look only if that look's interval excludes the threshold, which a margin can
make harder, never easier. The margin guards against drift the intervals cannot see, and
a look's, from more A/A rounds, estimates that drift better than the base look's did.
A claim the look gives no rounds is judged again on its base cells at the look's coverage
(perflab.analysis.adaptive.keeps_later); perflab.analysis.simulate_looks checks the bound
for that path too.

Standard library only: the benchmark host and the controller both read it.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any

from perflab.contract.cell import CellSpec
from perflab.contract.knobs import Int, MatrixError, Number, knob, validate

PREFIX = "perflab_adaptive"
# A cell id ends in its round: "-r<repeat>" (every study's expand() writes it so).
ROUND_SUFFIX = re.compile(r"-r(\d+)\Z")


@dataclass(frozen=True)
class Coverage:
    """A coverage: a number strictly between 0.5 and 1."""

    def check(self, key: str, value: Any, context: Any) -> float:
        value = Number().check(key, value, context)
        if not 0.5 < value < 1:
            raise MatrixError(f"{key}: {value!r} is not a coverage between 0.5 and 1")
        return value


@dataclass(frozen=True)
class Adaptive:
    """perflab_adaptive (inventory/group_vars/all/adaptive.yml), a profile's overrides laid
    over it (perflab_profiles_adaptive)."""

    max_looks: int = knob(Int(minimum=0), "looks after the base rounds at most; 0: none", 0)
    first_look_rounds: int = knob(Int(), "rounds added before the first look", 5)
    rounds_per_look: int = knob(Int(), "rounds added before each later look", 5)
    look_coverage: float = knob(Coverage(), "coverage a later look's intervals need", 0.96)
    max_minutes: float = knob(Number(), "measuring minutes the adaptive rounds may take", 10.0)

    def rounds_before(self, look: int) -> int:
        """Rounds added to the base ones by the time of look `look` (0: the base look)."""
        if look <= 0:
            return 0
        return self.first_look_rounds + (look - 1) * self.rounds_per_look

    def family_error(self, base_coverage: float) -> float:
        """The most a claim on its threshold is decided with, over the base look and every
        look the cap allows (Bonferroni over looks)."""
        return (1 - base_coverage) + self.max_looks * (1 - self.look_coverage)


@dataclass(frozen=True)
class Look:
    """One look: the rounds added by then and the coverage its intervals need."""

    index: int
    extra_rounds: int
    coverage: float


def read(config: dict[str, Any], profiles: dict[str, Any], profile: str) -> Adaptive:
    """The knobs for `profile`: a bad value is refused by name before anything runs."""
    overrides = (profiles or {}).get(profile) or {}
    if not isinstance(overrides, dict):
        raise MatrixError(f"perflab_profiles_adaptive.{profile}: expected a mapping")
    return validate(Adaptive, PREFIX, {**(config or {}), **overrides}, set())


def looks(adaptive: Adaptive, base_coverage: float) -> list[Look]:
    """Every look the cap allows, the base look first."""
    return [Look(0, 0, base_coverage)] + [
        Look(k, adaptive.rounds_before(k), adaptive.look_coverage)
        for k in range(1, adaptive.max_looks + 1)
    ]


def round_of(cell_id: str) -> int | None:
    """The round a cell id names, or None for a cell outside the rounds (capacity's probe)."""
    found = ROUND_SUFFIX.search(cell_id)
    return int(found.group(1)) if found else None


def configuration_of(cell_id: str) -> str:
    """A cell id without its round: every round of one configuration shares it."""
    return ROUND_SUFFIX.sub("", cell_id)


def in_round(template: CellSpec, repeat: int) -> CellSpec:
    """`template`'s configuration in round `repeat`: the same cell but for its round."""
    if round_of(template.cell_id) is None:
        raise ValueError(f"cell {template.cell_id!r} names no round (-r<n>): it cannot repeat")
    cell = copy.deepcopy(template)
    cell.cell_id = f"{configuration_of(template.cell_id)}-r{repeat}"
    cell.repeat = repeat
    return cell
