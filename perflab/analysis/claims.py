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

from perflab.contract.knobs import is_int
from perflab.contract.params import CURRENT_STACK

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
# Library stacks a claim may be judged on (a `stack` cell parameter: pyclients' seed001,
# hello's and aws_io's seed000), and the id suffix of each copy: the current stack's keeps
# the claim's own id. A claim names one seed, so one seed stack, and `-seed-stack` is it.
STACK_SUFFIXES = {CURRENT_STACK: "", "seed001": "-seed-stack", "seed000": "-seed-stack"}
# How a claim's clients ran (a `client_order` cell parameter, orders): the id suffix and the
# reading of the seed each copy judges. Seed 003's prose starts its clients together, its
# log shows them one after another (docs/orders-sequential-clients.md).
CLIENT_ORDER_COPIES = {"parallel": ("", "prose"), "sequential": ("-sequential", "log")}
PARALLEL = "parallel"
# What a copy of `client_orders` may change: each side's params (null drops one), its pairing
# and a sentence added to the note.
CLIENT_ORDER_KEYS = {"numerator", "denominator", "pair_by", "note"}
# The `reading` of a claim that judges a seed's expectation (a caveat, no result of its own).
EXPECTATION = "expectation"
PUBLISHED_FROM_KEYS = {"metric", "numerator", "denominator", "pair_by"}
REQUIRED_KEYS = {"id", "seed", "study", "says", "source", "metric", "numerator"}
# The optional free-text keys, read as stripped strings (parse_text_fields).
TEXT_KEYS = (
    "note",
    "metric_note",
    "reading",
    "method",
    "sibling",
    "conclusion",
    "needs",
    "scaled",
    "noise_metric",
)
OPTIONAL_KEYS = {
    "bound",
    "direction",
    "published",
    "denominator",
    "pair_by",
    "threshold",
    "kind",
    "topology",
    "seed_configurations",
    "published_from",
    *TEXT_KEYS,
    "drift_ratios",
    "stacks",
    "client_orders",
}


class ClaimsError(ValueError):
    """A claims file entry that cannot be decided as written; the message names it."""


# The tests a claim's `bound` may state (see Bound).
DIRECTION, NOT_WORSE, BAND = "direction", "not_worse", "band"
# `bound` in the file: one of these keys (and `tolerance` where the test takes one).
BOUND_FORMS = {
    "greater": (DIRECTION, "greater"),
    "less": (DIRECTION, "less"),
    "at_least": (NOT_WORSE, "greater"),
    "at_most": (NOT_WORSE, "less"),
    "within": (BAND, ""),
    "about": (BAND, ""),
}


@dataclass(frozen=True)
class Bound:
    """What "holds" and "does not hold" mean for a claim, stated before any data.

    - direction (`greater: T` / `less: T`): the effect lies beyond T, its smallest effect of
      interest ("faster": 1; "at least twice": 2);
    - not_worse (`at_least: T` / `at_most: T`, optional `tolerance`): the effect does not fall
      short of T by more than the tolerance ("at least as fast" tested as "not slower");
    - band (`within: t`, or `about: N` with `tolerance: t`): equivalence, the whole interval
      inside [centre / (1 + t), centre x (1 + t)] (centre 1 for `within`).

    The run's noise margin (perflab.analysis.decisions) may widen a tolerance narrower than
    it, never narrow one, and only for "does not hold": a "holds" needs the tolerance as
    stated."""

    test: str
    side: str = ""
    limit: float = 1.0
    tolerance: float = 0.0
    # A band written as "about N" (the seed states a size), not "within" (no difference).
    about: bool = False

    @property
    def direction(self) -> str:
        """The old schema's word for it: greater, less or within."""
        return "within" if self.test == BAND else self.side

    @property
    def threshold(self) -> float:
        """The old schema's number: the limit, or a band's tolerance."""
        return self.tolerance if self.test == BAND else self.limit

    def edges(self, margin: float = 0.0) -> tuple[float, ...]:
        """Where the claim's test changes: a direction's limit, a not_worse's edge, a
        band's two edges, each tolerance widened to `margin` where narrower."""
        width = 1 + max(self.tolerance, margin)
        if self.test == BAND:
            return (self.limit / width, self.limit * width)
        if self.test == NOT_WORSE:
            return (self.limit / width if self.side == "greater" else self.limit * width,)
        return (self.limit,)

    def expectation(self, rate: bool = False) -> str:
        subject = "error rate" if rate else "ratio"
        limit = f"{self.limit:.1%}" if rate else f"{self.limit:g}"
        if self.test == BAND and not self.about:
            return f"{subject} within {self.tolerance:.0%} of 1"
        if self.test == BAND:
            return f"{subject} about {limit} (within {self.tolerance:.0%})"
        if self.test == NOT_WORSE:
            word = "at least" if self.side == "greater" else "at most"
            slack = f", {self.tolerance:.0%} short allowed" if self.tolerance else ""
            past = "below" if self.side == "greater" else "above"
            return f"{subject} {word} {limit} (not {past} it beyond the noise{slack})"
        return f"{subject} {'>' if self.side == 'greater' else '<'} {limit}"


def positive(where: str, value: Any, zero: bool = False) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or value < 0
        or (value == 0 and not zero)
    ):
        raise ClaimsError(f"{where}: {value!r} is not a positive number")
    return float(value)


def parse_bound(where: str, raw: dict[str, Any], kind: str) -> Bound:
    """`bound`, or the old `direction` / `threshold` (read as a direction or a `within`
    band) where a claim has not stated one."""
    if "bound" not in raw:
        if "direction" not in raw:
            raise ClaimsError(f"{where}: missing ['bound']")
        direction = raw["direction"]
        if direction not in DIRECTIONS:
            raise ClaimsError(f"{where}.direction: {direction!r}; choose from {DIRECTIONS}")
        threshold = positive(
            f"{where}.threshold", raw.get("threshold", 0.1 if direction == "within" else 1.0)
        )
        bound = (
            Bound(BAND, tolerance=threshold)
            if direction == "within"
            else Bound(DIRECTION, direction, threshold)
        )
    else:
        if "direction" in raw or "threshold" in raw:
            raise ClaimsError(f"{where}: state either bound or direction/threshold, not both")
        bound = bound_of(f"{where}.bound", raw["bound"])
    if kind == "error_rate" and bound.test != DIRECTION:
        raise ClaimsError(f"{where}.bound: an error rate is greater or less than a rate")
    return bound


def bound_of(where: str, raw: Any) -> Bound:
    forms = set(raw) & set(BOUND_FORMS) if isinstance(raw, dict) else set()
    if len(forms) != 1 or set(raw) - forms - {"tolerance"}:
        raise ClaimsError(
            f"{where}: expected one of {sorted(BOUND_FORMS)} (and tolerance), got {raw!r}"
        )
    form = forms.pop()
    test, side = BOUND_FORMS[form]
    value = positive(f"{where}.{form}", raw[form])
    tolerance = positive(f"{where}.tolerance", raw.get("tolerance", 0.0), zero=True)
    if form == "within":
        if "tolerance" in raw:
            raise ClaimsError(f"{where}: `within` is the tolerance itself")
        return Bound(BAND, tolerance=value)
    if form == "about" and tolerance <= 0:
        raise ClaimsError(f"{where}: `about` needs a tolerance > 0 (e.g. 0.10)")
    if test == DIRECTION and "tolerance" in raw:
        raise ClaimsError(f"{where}: `{form}` takes no tolerance (use at_least / at_most)")
    return Bound(test, side, value, tolerance, about=form == "about")


def spelled(value: Any) -> str:
    """A selector's value as a page says it: a list (any of) as 'small or medium', not as
    Python's ['small', 'medium']."""
    if isinstance(value, list):
        return " or ".join(str(v) for v in value)
    return str(value)


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
        return list(named) + [f"{key}={spelled(value)}" for key, value in self.params.items()]

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
    bound: Bound
    kind: str = "ratio"
    denominator: Selector | None = None
    pair_by: tuple[str, ...] = ()
    published: float | None = None
    topology: str = "localhost"
    note: str = ""
    metric_note: str = ""
    # The metric whose A/A drift stands for this claim's, where its own metric is derived
    # from cells no A/A pair runs (TLS over no-TLS throughput: the A/A cells run no TLS, so
    # their throughput's drift is the noise each side of the ratio carries). "": its metric.
    noise_metric: str = ""
    # How many ratios of two cells the claim's effect multiplies: 1 for a plain ratio (the
    # drift an A/A ratio measures), 2 for a ratio of two ratios (TLS cost over TLS cost: four
    # cells' drift, perflab.analysis.noise.derived_margin). A claim naming a noise_metric
    # states it: its metric is derived, and how is not something the engine can infer.
    drift_ratios: int = 1
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
    # The id of the claim whose seed conclusion this one reads another way (a table's figure
    # beside the prose's, a summary against its own paragraph): counted as one conclusion.
    conclusion: str = ""
    # What its cells need that a host may lack (e.g. memory): said where a run has none.
    needs: str = ""
    # What the quick profile scaled down from the seed's configuration, and by how much.
    scaled: str = ""
    # The library stack its cells ran (`stacks` in the file), and on another stack than
    # the current one, the id of the same claim on the current stack.
    stack: str = ""
    stack_of: str = ""
    # How its cells' clients ran (`client_orders` in the file), and on the sequential copy
    # the id of the same claim on parallel clients.
    client_order: str = ""
    client_order_of: str = ""
    # The seed's own figure per configuration (pair_by values as text -> figure), from the
    # reference tables (perflab.analysis.published.with_seed_configurations): a configuration
    # whose figure sits inside the run's noise is expected to be at its threshold.
    seed_figures: dict[tuple[str, ...], float] = field(default_factory=dict)

    @property
    def aa_metric(self) -> str:
        """The metric its A/A cells' drift is read on (perflab.analysis.noise)."""
        return self.noise_metric or self.metric

    @property
    def seed_number(self) -> str:
        """The seed's number ("000"), as pages name it, not its file name."""
        return self.seed.split("_")[0]

    @property
    def direction(self) -> str:
        return self.bound.direction

    @property
    def threshold(self) -> float:
        return self.bound.threshold

    def expectation(self) -> str:
        """The claim's test in words, e.g. 'ratio > 1' or 'ratio within 10% of 1'."""
        return self.bound.expectation(rate=self.kind == "error_rate")


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
    texts = {key: str(raw.get(key, "")).strip() for key in TEXT_KEYS}
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
    # An error-rate limit of 0 could never be refuted by a finite number of calls.
    bound = parse_bound(where, raw, kind)
    if kind == "ratio" and "denominator" not in raw:
        raise ClaimsError(f"{where}: a ratio claim needs a denominator")
    if kind == "error_rate" and "denominator" in raw:
        raise ClaimsError(f"{where}: an error_rate claim has one group (numerator) only")
    topology = raw.get("topology", "localhost")
    if topology not in TOPOLOGIES:
        raise ClaimsError(f"{where}.topology: {topology!r}; choose from {TOPOLOGIES}")
    published = raw.get("published")
    if published is not None and not isinstance(published, int | float):
        raise ClaimsError(f"{where}.published: {published!r} is not a number")
    if bound.about and published is not None and not within_band(published, bound):
        raise ClaimsError(
            f"{where}.bound: the seed's own figure {published} is not about {bound.limit:g} "
            f"within {bound.tolerance:.0%}"
        )
    pair_by = raw.get("pair_by") or []
    if not isinstance(pair_by, list) or not all(isinstance(p, str) for p in pair_by):
        raise ClaimsError(f"{where}.pair_by: expected a list of parameter names")
    seed_configurations = parse_seed_configurations(where, raw.get("seed_configurations"))
    drift_ratios = parse_drift_ratios(where, raw)
    return Claim(
        id=str(raw["id"]),
        seed=str(raw["seed"]),
        study=str(raw["study"]),
        says=str(raw["says"]).strip(),
        source=str(raw["source"]),
        metric=str(raw["metric"]),
        numerator=parse_selector(f"{where}.numerator", raw["numerator"]),
        denominator=optional_selector(f"{where}.denominator", raw.get("denominator")),
        bound=bound,
        kind=kind,
        pair_by=tuple(pair_by),
        published=None if published is None else float(published),
        topology=topology,
        seed_configurations=seed_configurations,
        published_from=parse_published_from(f"{where}.published_from", raw.get("published_from")),
        drift_ratios=drift_ratios,
        **parse_text_fields(where, raw),
    )


def parse_drift_ratios(where: str, raw: dict[str, Any]) -> int:
    """`drift_ratios`: a whole number from 1; stated wherever `noise_metric` is, since a
    derived metric may be a ratio of ratios (2) or not (1), and guessing sets its margin."""
    if "drift_ratios" not in raw:
        if raw.get("noise_metric"):
            raise ClaimsError(
                f"{where}: a claim judged on another metric's A/A drift (noise_metric) "
                "states drift_ratios: how many ratios of two cells its effect multiplies"
            )
        return 1
    value = raw["drift_ratios"]
    if not is_int(value) or value < 1:
        raise ClaimsError(f"{where}.drift_ratios: {value!r}; expected a whole number from 1")
    return value


def within_band(value: float, bound: Bound) -> bool:
    low, high = bound.edges()
    return low * (1 - 1e-9) <= value <= high * (1 + 1e-9)


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
        for stacked in on_stacks(f"claims[{i}]", parse_claim(i, raw), raw.get("stacks"))
        for copy in on_client_orders(f"claims[{i}]", stacked, raw.get("client_orders"))
    ]
    claims = unpaired_on_other_stacks(claims)
    seen: set[str] = set()
    for claim in claims:
        if claim.id in seen:
            raise ClaimsError(f"{path}: claim id {claim.id!r} appears twice")
        seen.add(claim.id)
    check_siblings(path, claims)
    check_conclusions(path, claims)
    return claims


def check_conclusions(path: Path, claims: list[Claim]) -> None:
    """A `conclusion` names another claim of the same seed that names none itself (one
    level: the conclusion's own id), or the count of conclusions would chain."""
    by_id = {claim.id: claim for claim in claims}
    for claim in claims:
        if not claim.conclusion:
            continue
        named = by_id.get(claim.conclusion)
        if named is None or named.seed != claim.seed or named.conclusion:
            raise ClaimsError(
                f"{path}: claim {claim.id!r}: conclusion {claim.conclusion!r} is not a claim "
                "of the same seed that names no conclusion itself"
            )


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
        # A side that names its stack keeps it on every copy: a library the seed did not
        # pin (seed 000's grpclib) is the current one on the seed's stack too.
        if "stack" in selector.params:
            return selector
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


def on_client_orders(where: str, claim: Claim, orders: Any) -> list[Claim]:
    """The claim once per client order it names (`client_orders`: order -> changes), each
    selecting cells of that order (`params.client_order`) and judging that order's reading;
    without `client_orders`, the claim as written."""
    if orders is None:
        return [claim]
    if not isinstance(orders, dict) or next(iter(orders), None) != PARALLEL:
        raise ClaimsError(f"{where}.client_orders: expected a mapping starting with {PARALLEL!r}")
    for order, changes in orders.items():
        if order not in CLIENT_ORDER_COPIES:
            raise ClaimsError(
                f"{where}.client_orders: unknown order {order!r}; "
                f"choose from {list(CLIENT_ORDER_COPIES)}"
            )
        if not isinstance(changes, dict) or set(changes) - CLIENT_ORDER_KEYS:
            raise ClaimsError(
                f"{where}.client_orders.{order}: expected a mapping of {sorted(CLIENT_ORDER_KEYS)}"
            )
    return [on_client_order(claim, order, changes) for order, changes in orders.items()]


def changed_params(selector: Selector, order: str, changes: Any) -> Selector:
    """The selector on cells of `order`, with `changes` (a mapping; None drops a key)."""
    merged = {**selector.params, **(changes or {}), "client_order": order}
    return replace(selector, params={k: v for k, v in merged.items() if v is not None})


def on_client_order(claim: Claim, order: str, changes: dict[str, Any]) -> Claim:
    suffix, reading = CLIENT_ORDER_COPIES[order]
    pair_by = changes.get("pair_by", claim.pair_by)
    note = " ".join(part for part in (claim.note, str(changes.get("note", "")).strip()) if part)
    return replace(
        claim,
        id=claim.id + suffix,
        sibling=claim.sibling + suffix if claim.sibling else "",
        numerator=changed_params(claim.numerator, order, changes.get("numerator")),
        denominator=None
        if claim.denominator is None
        else changed_params(claim.denominator, order, changes.get("denominator")),
        pair_by=tuple(pair_by),
        note=note,
        # A seed's expectation stays one; otherwise each copy judges its order's reading.
        reading=claim.reading or reading,
        client_order=order,
        client_order_of="" if order == PARALLEL else claim.id,
    )


def unpaired_on_other_stacks(claims: list[Claim]) -> list[Claim]:
    """A copy on another stack whose sibling is not judged there (hello runs seed 000's
    grpcio in the seed's method only) has no sibling; on the current stack it keeps it."""
    ids = {claim.id for claim in claims}
    return [
        replace(claim, sibling="")
        if claim.stack_of and claim.sibling and claim.sibling not in ids
        else claim
        for claim in claims
    ]


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
