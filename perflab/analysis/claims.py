"""The seeds' published conclusions as data (data/reference/claims.yml), validated on load.

A claim compares two groups of cells of one study by the ratio of a metric
(numerator / denominator), or states an error rate of one group. Which cells form a
group is data (implementation, scenario, client, params); the verdict engine
(perflab.analysis.verdicts) knows no study by name.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

DIRECTIONS = ("greater", "less", "within")
KINDS = ("ratio", "error_rate")
# "any": the claim's cells exist on every topology (selected by parameters, not by the
# topology-named scenario), so every run judges it.
ANY_TOPOLOGY = "any"
TOPOLOGIES = ("localhost", "netns", "aws", ANY_TOPOLOGY)
SELECTOR_KEYS = {"implementation", "scenario", "client", "params"}
# The method a claim's cells ran: the seed's own ("seed": hello seed_n200, pyclients
# method=seed) or a steadier one ("steady"); "" where a study has one method only.
METHODS = ("", "seed", "steady")
# Library stacks a claim may be judged on (a `stack` cell parameter, pyclients), and the id
# suffix of each copy: the current stack's keeps the claim's own id.
STACK_SUFFIXES = {"current": "", "seed001": "-seed-stack"}
CURRENT_STACK = "current"
# The `reading` of a claim that judges a seed's expectation (a caveat, no result of its own).
EXPECTATION = "expectation"
PUBLISHED_FROM_KEYS = {"metric", "numerator", "denominator", "pair_by"}
REQUIRED_KEYS = {"id", "seed", "study", "says", "source", "metric", "numerator", "direction"}
OPTIONAL_KEYS = {
    "published",
    "denominator",
    "pair_by",
    "threshold",
    "kind",
    "topology",
    "note",
    "metric_note",
    "seed_configurations",
    "published_from",
    "reading",
    "method",
    "sibling",
    "scaled",
    "stacks",
}


class ClaimsError(ValueError):
    """A claims file entry that cannot be decided as written; the message names it."""


@dataclass(frozen=True)
class Selector:
    """Which cells form one side of a comparison; None matches any value."""

    implementation: str | None = None
    scenario: str | None = None
    client: str | None = None
    params: dict[str, Any] = field(default_factory=dict)

    def terms(self) -> list[str]:
        """e.g. ['grpcio_sync_w1', 'steady', 'concurrency=50']: the values it names."""
        # An implementation that is its own client (orders) is named once.
        named = dict.fromkeys(v for v in (self.implementation, self.scenario, self.client) if v)
        return list(named) + [f"{key}={value}" for key, value in self.params.items()]

    def describe(self) -> str:
        return ", ".join(self.terms()) or "every cell"


@dataclass(frozen=True)
class PublishedFrom:
    """Where in data/reference/*.csv a claim's `published` figure comes from, in the tables'
    own spelling (perflab.analysis.published computes it): a reference metric or a derived
    one on the run's metric, one group (a value or an error rate) or two (a ratio), and the
    columns its figure is a median over (None: the claim's pair_by)."""

    metric: str
    numerator: Selector
    denominator: Selector | None = None
    pair_by: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Claim:
    id: str
    seed: str
    study: str
    says: str
    source: str
    metric: str
    numerator: Selector
    direction: str
    threshold: float
    kind: str = "ratio"
    denominator: Selector | None = None
    pair_by: tuple[str, ...] = ()
    published: float | None = None
    topology: str = "localhost"
    note: str = ""
    metric_note: str = ""
    # The values the seed measured, per parameter (e.g. concurrency: [2, 10, 25, 50]), so a
    # verdict can say which of them the run's cells cover. Optional: {} says nothing.
    seed_configurations: dict[str, tuple[str, ...]] = field(default_factory=dict)
    published_from: PublishedFrom | None = None
    # Which reading of the seed this claim judges, where the seed's prose and table
    # disagree or the seed contradicts itself (one claim per reading), e.g. "prose".
    reading: str = ""
    method: str = ""
    # The id of the same claim judged on the study's other method (method-dependent verdicts).
    sibling: str = ""
    # What the quick profile scaled down from the seed's configuration, and by how much.
    scaled: str = ""
    # The library stack its cells ran (`stacks` in the file), and on another stack than
    # the current one, the id of the same claim on the current stack.
    stack: str = ""
    stack_of: str = ""

    def expectation(self) -> str:
        """The claim's test in words, e.g. 'ratio > 1.0' or 'ratio within 10% of 1'."""
        subject = "error rate" if self.kind == "error_rate" else "ratio"
        if self.direction == "within":
            return f"{subject} within {self.threshold:.0%} of 1"
        sign = ">" if self.direction == "greater" else "<"
        # An error rate reads as the verdicts show rates: a percentage.
        limit = f"{self.threshold:.1%}" if self.kind == "error_rate" else f"{self.threshold:g}"
        return f"{subject} {sign} {limit}"


def parse_selector(where: str, raw: Any) -> Selector:
    if not isinstance(raw, dict):
        raise ClaimsError(f"{where}: expected a mapping of {sorted(SELECTOR_KEYS)}")
    unknown = set(raw) - SELECTOR_KEYS
    if unknown:
        raise ClaimsError(f"{where}: unknown key(s) {sorted(unknown)}")
    params = raw.get("params") or {}
    if not isinstance(params, dict):
        raise ClaimsError(f"{where}.params: expected a mapping")
    return Selector(
        implementation=raw.get("implementation"),
        scenario=raw.get("scenario"),
        client=raw.get("client"),
        params=dict(params),
    )


def optional_selector(where: str, raw: Any) -> Selector | None:
    return None if raw is None else parse_selector(where, raw)


def parse_published_from(where: str, raw: Any) -> PublishedFrom | None:
    if raw is None:
        return None
    if not isinstance(raw, dict) or "metric" not in raw or "numerator" not in raw:
        raise ClaimsError(f"{where}: expected a mapping with metric and numerator")
    unknown = set(raw) - PUBLISHED_FROM_KEYS
    if unknown:
        raise ClaimsError(f"{where}: unknown key(s) {sorted(unknown)}")
    pair_by = raw.get("pair_by")
    if pair_by is not None and not isinstance(pair_by, list):
        raise ClaimsError(f"{where}.pair_by: expected a list of column names")
    return PublishedFrom(
        metric=str(raw["metric"]),
        numerator=parse_selector(f"{where}.numerator", raw["numerator"]),
        denominator=optional_selector(f"{where}.denominator", raw.get("denominator")),
        pair_by=None if pair_by is None else tuple(str(p) for p in pair_by),
    )


def parse_text_fields(where: str, raw: dict[str, Any]) -> dict[str, str]:
    """The optional free-text fields, stripped; `method` must be a known one."""
    texts = {
        key: str(raw.get(key, "")).strip()
        for key in ("note", "metric_note", "reading", "method", "sibling", "scaled")
    }
    if texts["method"] not in METHODS:
        raise ClaimsError(f"{where}.method: {texts['method']!r}; choose from {METHODS[1:]}")
    return texts


def parse_claim(index: int, raw: Any) -> Claim:
    where = f"claims[{index}]"
    if not isinstance(raw, dict):
        raise ClaimsError(f"{where}: expected a mapping")
    where = f"claims[{index}] ({raw.get('id', '?')})"
    missing = REQUIRED_KEYS - set(raw)
    if missing:
        raise ClaimsError(f"{where}: missing {sorted(missing)}")
    unknown = set(raw) - REQUIRED_KEYS - OPTIONAL_KEYS
    if unknown:
        raise ClaimsError(f"{where}: unknown key(s) {sorted(unknown)}")
    kind = raw.get("kind", "ratio")
    if kind not in KINDS:
        raise ClaimsError(f"{where}.kind: {kind!r}; choose from {KINDS}")
    direction = raw["direction"]
    if direction not in DIRECTIONS:
        raise ClaimsError(f"{where}.direction: {direction!r}; choose from {DIRECTIONS}")
    threshold = raw.get("threshold", 0.1 if direction == "within" else 1.0)
    if isinstance(threshold, bool) or not isinstance(threshold, int | float) or threshold <= 0:
        # An error-rate threshold of 0 could never be refuted by a finite number of calls.
        raise ClaimsError(f"{where}.threshold: {threshold!r} is not a positive number")
    if kind == "ratio" and "denominator" not in raw:
        raise ClaimsError(f"{where}: a ratio claim needs a denominator")
    if kind == "error_rate" and "denominator" in raw:
        raise ClaimsError(f"{where}: an error_rate claim has one group (numerator) only")
    if kind == "error_rate" and direction == "within":
        raise ClaimsError(f"{where}.direction: an error rate is greater or less than a rate")
    topology = raw.get("topology", "localhost")
    if topology not in TOPOLOGIES:
        raise ClaimsError(f"{where}.topology: {topology!r}; choose from {TOPOLOGIES}")
    published = raw.get("published")
    if published is not None and not isinstance(published, int | float):
        raise ClaimsError(f"{where}.published: {published!r} is not a number")
    pair_by = raw.get("pair_by") or []
    if not isinstance(pair_by, list) or not all(isinstance(p, str) for p in pair_by):
        raise ClaimsError(f"{where}.pair_by: expected a list of parameter names")
    seed_configurations = parse_seed_configurations(where, raw.get("seed_configurations"))
    return Claim(
        id=str(raw["id"]),
        seed=str(raw["seed"]),
        study=str(raw["study"]),
        says=str(raw["says"]).strip(),
        source=str(raw["source"]),
        metric=str(raw["metric"]),
        numerator=parse_selector(f"{where}.numerator", raw["numerator"]),
        denominator=optional_selector(f"{where}.denominator", raw.get("denominator")),
        direction=direction,
        threshold=float(threshold),
        kind=kind,
        pair_by=tuple(pair_by),
        published=None if published is None else float(published),
        topology=topology,
        seed_configurations=seed_configurations,
        published_from=parse_published_from(f"{where}.published_from", raw.get("published_from")),
        **parse_text_fields(where, raw),
    )


def parse_seed_configurations(where: str, raw: Any) -> dict[str, tuple[str, ...]]:
    """`seed_configurations`: parameter -> the values the seed ran, compared as text."""
    if raw is None:
        return {}
    if not isinstance(raw, dict) or not all(
        isinstance(values, list) and values for values in raw.values()
    ):
        raise ClaimsError(f"{where}.seed_configurations: expected parameter: [values]")
    return {str(name): tuple(str(value) for value in values) for name, values in raw.items()}


def read_claims(path: str | Path) -> list[Claim]:
    """Every claim of a claims file, in file order; a malformed entry raises ClaimsError."""
    import yaml

    path = Path(path)
    try:
        document = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise ClaimsError(f"{path}: unreadable claims file ({exc})") from exc
    if not isinstance(document, dict) or not isinstance(document.get("claims"), list):
        raise ClaimsError(f"{path}: expected a top-level 'claims:' list")
    claims = [
        copy
        for i, raw in enumerate(document["claims"])
        for copy in on_stacks(f"claims[{i}]", parse_claim(i, raw), raw.get("stacks"))
    ]
    seen: set[str] = set()
    for claim in claims:
        if claim.id in seen:
            raise ClaimsError(f"{path}: claim id {claim.id!r} appears twice")
        seen.add(claim.id)
    check_siblings(path, claims)
    return claims


def on_stacks(where: str, claim: Claim, stacks: Any) -> list[Claim]:
    """The claim once per library stack it names (`stacks`), each selecting that stack's cells
    (`params.stack`); without `stacks`, the claim as written."""
    if stacks is None:
        return [claim]
    if not isinstance(stacks, list) or not stacks or stacks[0] != CURRENT_STACK:
        raise ClaimsError(f"{where}.stacks: expected a list starting with {CURRENT_STACK!r}")
    unknown = sorted(set(stacks) - set(STACK_SUFFIXES))
    if unknown:
        raise ClaimsError(
            f"{where}.stacks: unknown stack(s) {unknown}; choose from {list(STACK_SUFFIXES)}"
        )
    return [on_stack(claim, stack) for stack in stacks]


def on_stack(claim: Claim, stack: str) -> Claim:
    suffix = STACK_SUFFIXES[stack]

    def side(selector: Selector) -> Selector:
        return replace(selector, params={**selector.params, "stack": stack})

    return replace(
        claim,
        id=claim.id + suffix,
        sibling=claim.sibling + suffix if claim.sibling else "",
        numerator=side(claim.numerator),
        denominator=None if claim.denominator is None else side(claim.denominator),
        stack=stack,
        stack_of="" if stack == CURRENT_STACK else claim.id,
    )


def check_siblings(path: Path, claims: list[Claim]) -> None:
    """A sibling names an existing claim that names it back, on the other method."""
    by_id = {claim.id: claim for claim in claims}
    for claim in claims:
        if not claim.sibling:
            continue
        other = by_id.get(claim.sibling)
        if other is None or other.sibling != claim.id:
            raise ClaimsError(f"{path}: {claim.id}.sibling {claim.sibling!r} does not name it back")
        if not claim.method or claim.method == other.method:
            raise ClaimsError(f"{path}: {claim.id} and its sibling need different methods")
