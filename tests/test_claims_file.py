"""data/reference/claims.yml against the published tables and the committed reference runs.

A claim whose selector names a server, scenario, client or parameter no run records would
never be decided (it would read "not measured" for ever), so every name is checked here
against what the project really records: the seeds' tables in data/reference/*.csv and the
cell.json files of the committed reference runs. No process is started.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterator
from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest
import yaml

from perflab.analysis.claims import (
    ANY_TOPOLOGY,
    DIRECTIONS,
    EXPECTATION,
    KINDS,
    Claim,
    ClaimsError,
    Selector,
    parse_claim,
    read_claims,
)
from perflab.contract.params import RECORDED_LATE

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "data" / "reference"
CLAIMS_FILE = REFERENCE / "claims.yml"
# The committed reference run that decides a claim, by the claim's topology.
RUNS = {
    topology: ROOT / "data" / run_id
    for topology, run_id in yaml.safe_load((REFERENCE / "reference_runs.yml").read_text()).items()
}
KEBAB = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
ERROR_METRIC = re.compile(r"^errors(_[A-Za-z]+)?$")
MIN_CLAIMS = 25


@cache
def claims() -> tuple[Claim, ...]:
    return tuple(read_claims(CLAIMS_FILE))


@cache
def reference_rows() -> tuple[dict[str, str], ...]:
    """Every row of the published tables, with the study named by its file."""
    rows = []
    for path in sorted(REFERENCE.glob("*.csv")):
        with path.open(newline="") as handle:
            rows += [{**row, "file": path.stem} for row in csv.DictReader(handle)]
    return tuple(rows)


@cache
def run_cells(topology: str) -> tuple[dict, ...]:
    """cell.json of every complete cell of the committed reference run of that topology."""
    run = RUNS[topology]
    return tuple(
        json.loads(path.read_text())
        for path in sorted(run.glob("*/*/cell.json"))
        if not path.parent.name.startswith(".")
    )


def topologies(claim: Claim) -> list[str]:
    """The topologies whose reference runs judge the claim: all of them for "any"."""
    return sorted(RUNS) if claim.topology == ANY_TOPOLOGY else [claim.topology]


def claim_cells(claim: Claim) -> list[dict]:
    return [cell for topology in topologies(claim) for cell in run_cells(topology)]


def study_ids() -> set[str]:
    return {row["file"] for row in reference_rows()}


def seeds() -> set[str]:
    return {row["source"] for row in reference_rows()}


def selectors(claim: Claim) -> Iterator[tuple[str, Selector]]:
    yield "numerator", claim.numerator
    if claim.denominator is not None:
        yield "denominator", claim.denominator


def recorded(claim: Claim, column: str) -> set[str]:
    """Values of implementation/scenario/client that the study's tables or its reference
    run's cells hold."""
    published = {row[column] for row in reference_rows() if row["study"] == claim.study}
    measured = {str(cell[column]) for cell in claim_cells(claim) if cell["study"] == claim.study}
    return published | measured


def param_names(claim: Claim) -> set[str]:
    # A parameter recorded late (perflab.contract.params) is one the reference run's cells
    # ran at its old value without naming it.
    names = set(RECORDED_LATE)
    for cell in claim_cells(claim):
        if cell["study"] == claim.study:
            names |= set(cell.get("params", {}))
    return names


@cache
def run_metrics(topology: str, study: str) -> frozenset[str]:
    """The metric names perflab.analysis.frames gives that study in the committed reference run."""
    from perflab.analysis.frames import read_run

    frame = read_run(RUNS[topology])
    return frozenset(frame.loc[frame["study"] == study, "metric"].unique())


def claim_run_metrics(claim: Claim) -> frozenset[str]:
    """The metric names its study has in the reference run of every topology it runs on."""
    return frozenset().union(*(run_metrics(t, claim.study) for t in topologies(claim)))


def test_the_committed_runs_are_there():
    for topology, run in RUNS.items():
        assert run_cells(topology), f"{run} holds no cell.json"


def test_enough_claims_with_unique_kebab_case_ids():
    ids = [claim.id for claim in claims()]
    assert len(ids) >= MIN_CLAIMS
    assert len(ids) == len(set(ids)), "duplicate claim ids"
    assert [i for i in ids if not KEBAB.match(i)] == []


def test_every_seed_is_claimed_and_every_claim_names_a_seed():
    named = {claim.seed for claim in claims()}
    assert named - seeds() == set(), "claims name seeds no published table comes from"
    assert seeds() - named == set(), "seeds with no claim"


def test_studies_topologies_directions_and_kinds_are_known():
    for claim in claims():
        assert claim.study in study_ids(), claim.id
        assert all(topology in RUNS for topology in topologies(claim)), claim.id
        assert claim.direction in DIRECTIONS, claim.id
        assert claim.kind in KINDS, claim.id
        # The study's cells of the seed must come from the seed the claim names.
        sources = {row["source"] for row in reference_rows() if row["study"] == claim.study}
        assert claim.seed in sources, f"{claim.id}: {claim.study} is not from {claim.seed}"


def test_claims_say_something_and_state_their_source():
    for claim in claims():
        assert claim.says, claim.id
        assert claim.source == "prose" or claim.source.startswith("table: "), claim.id
        if claim.kind == "error_rate":
            assert claim.threshold < 1, f"{claim.id}: a rate threshold is a fraction"
        if claim.direction == "within":
            assert claim.threshold < 1, f"{claim.id}: a tolerance, not a factor"


def test_says_is_plain_words_without_table_pipes():
    """`says` is shown as a sentence under each claim: a seed's markdown row ("Go | 3.0
    GiB/s | ...") reads as a broken table there; its numbers are quoted in words."""
    piped = [claim.id for claim in claims() if "|" in claim.says]
    assert piped == []


@pytest.mark.parametrize("column", ["implementation", "scenario", "client"])
def test_every_selector_names_what_is_recorded(column: str):
    unknown = []
    for claim in claims():
        known = recorded(claim, column)
        for side, selector in selectors(claim):
            value = getattr(selector, column)
            if value is not None and str(value) not in known:
                unknown.append(f"{claim.id}.{side}.{column} = {value!r}")
    assert unknown == []


def test_every_parameter_and_pair_by_is_a_parameter_of_the_study():
    unknown = []
    for claim in claims():
        names = param_names(claim)
        for side, selector in selectors(claim):
            unknown += [f"{claim.id}.{side}.params.{p}" for p in selector.params if p not in names]
        unknown += [f"{claim.id}.pair_by {p}" for p in claim.pair_by if p not in names]
    assert unknown == []


def test_every_metric_is_loaded_or_described():
    """A metric is one perflab.analysis.frames gives the study in its reference run, an error count
    (ghz writes errors_<code> only for codes it saw), or a derived one with a metric_note."""
    unknown = []
    for claim in claims():
        if claim.metric_note:
            continue
        metrics = claim_run_metrics(claim)
        if claim.kind == "error_rate":
            if not ERROR_METRIC.match(claim.metric) or "count" not in metrics:
                unknown.append(f"{claim.id}: {claim.metric}")
        elif claim.metric not in metrics:
            unknown.append(f"{claim.id}: {claim.metric}")
    assert unknown == []


def unmeasured_noise_metrics(listed: list[Claim]) -> list[str]:
    """The claims whose noise_metric (the metric whose A/A drift judges a derived one) is
    not one their study measures in its reference run: judged, such a claim would fall to
    the stated floor with a reason naming a metric that does not exist."""
    unknown = []
    for claim in listed:
        if not claim.noise_metric:
            continue
        metrics = claim_run_metrics(claim)
        if claim.noise_metric not in metrics:
            unknown.append(f"{claim.id}: {claim.noise_metric}")
    return unknown


def test_every_noise_metric_is_one_the_study_measures():
    listed = claims()
    assert any(claim.noise_metric for claim in listed)
    assert unmeasured_noise_metrics(listed) == []
    # A misspelt one is caught.
    named = next(claim for claim in listed if claim.noise_metric)
    misspelt = replace(named, noise_metric=named.noise_metric + "_per_s")
    assert unmeasured_noise_metrics([misspelt]) == [f"{named.id}: {misspelt.noise_metric}"]


def test_a_claim_on_another_metrics_drift_states_the_ratios_its_effect_multiplies():
    # TLS cost over TLS cost: four cells' drift, its margin widened for two ratios. Which
    # claims those are is stated in the file, not guessed from noise_metric.
    listed = claims()
    assert {c.id for c in listed if c.drift_ratios == 2} == {
        c.id for c in listed if c.metric == "tls_over_none"
    }
    assert all(c.drift_ratios == 1 for c in listed if not c.noise_metric)
    document = yaml.safe_load(CLAIMS_FILE.read_text())["claims"]
    raw = next(c for c in document if c["id"] == "throughput-tls-costs-cpp-more-than-go")
    assert parse_claim(0, raw).drift_ratios == 2
    unstated = {key: value for key, value in raw.items() if key != "drift_ratios"}
    with pytest.raises(ClaimsError, match="noise_metric.*states drift_ratios"):
        parse_claim(0, unstated)
    for bad in (0, True, 1.5, "2"):
        with pytest.raises(ClaimsError, match="drift_ratios.*whole number from 1"):
            parse_claim(0, {**raw, "drift_ratios": bad})


def test_ratio_claims_compare_two_different_groups():
    for claim in claims():
        if claim.kind == "ratio":
            assert claim.denominator is not None, claim.id
            assert claim.numerator != claim.denominator, f"{claim.id} compares a group with itself"


SEEDS = ROOT.parent / "shared" / "seeds"
needs_seeds = pytest.mark.skipif(not SEEDS.is_dir(), reason=f"seed folder {SEEDS} not present")


@cache
def reference_tables():
    from perflab.analysis.published import read_reference_tables
    from perflab.cli import claim_frame_hooks

    hooks = claim_frame_hooks()
    return read_reference_tables(
        REFERENCE, {study: each.seed_rows for study, each in hooks.items() if each.seed_rows}
    )


def test_every_published_figure_is_computed_from_the_reference_tables():
    """`published` is what perflab.analysis.published computes from data/reference/*.csv, on
    the metric the run measures; a claim with no such figure says null."""
    from perflab.analysis.published import published_problems
    from perflab.studies import registry

    own = {study_id: study.seed_metrics for study_id, study in registry().items()}
    assert published_problems(list(claims()), reference_tables(), own) == []


def plain_words(text: str) -> str:
    """Markdown links, brackets and bold dropped, whitespace collapsed: as `says` quotes."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return " ".join(re.sub(r"[\[\]*]", "", text).split())


@needs_seeds
def test_prose_claims_quote_the_seed_word_for_word():
    misquoted = [
        claim.id
        for claim in claims()
        if claim.source == "prose"
        and plain_words(claim.says) not in plain_words((SEEDS / claim.seed).read_text())
    ]
    assert misquoted == []


def test_error_rate_claims_are_decided_by_the_seeds_own_counts():
    """The seed's own calls must decide its claim (issue 18, item 2), judged exactly as the
    engine judges a run's cells: the seed's cells through perflab.analysis.decisions, with
    the clustered interval the engine uses (issue 26, item 4)."""
    from perflab.analysis.decisions import HOLDS, decide
    from perflab.analysis.intervals import CellCount, clustered_error_interval
    from perflab.analysis.published import error_counts

    undecided = []
    for claim in claims():
        for key, (errors, calls) in error_counts(claim, reference_tables()).items():
            interval = clustered_error_interval([CellCount(errors, calls)])
            verdict, _ = decide(interval, claim.bound, 0.0)
            if verdict != HOLDS:
                undecided.append(f"{claim.id} {key}: {errors}/{calls}: {verdict}")
    assert undecided == []


def test_every_claim_states_its_bound_and_an_about_n_admits_the_seeds_figure():
    """Issue 26: each claim says before the data what holds means (claims.yml `bound`), and
    an "about N" band contains the seed's own figure."""
    from perflab.analysis.claims import BAND, bound_of

    raw = yaml.safe_load(CLAIMS_FILE.read_text())["claims"]
    assert [entry["id"] for entry in raw if "bound" not in entry] == []
    for claim in claims():
        if claim.bound.about and claim.published is not None:
            low, high = claim.bound.edges()
            assert low <= claim.published <= high, claim.id
    assert bound_of("x", {"within": 0.1}).test == BAND


def test_every_reading_has_its_rival_and_every_sibling_its_method():
    """A claim that judges one reading of a seed (prose vs table, a self-contradiction)
    shares its seed and study with a claim of another reading; a method sibling selects the
    other method's cells."""
    lonely = []
    for claim in claims():
        # An expectation (a seed's caveat, no result) is a kind of statement, not one of
        # two readings of a result: it has no rival.
        if claim.reading and claim.reading != EXPECTATION:
            rivals = [
                other
                for other in claims()
                if (other.seed, other.study) == (claim.seed, claim.study)
                and other.reading
                and other.reading != claim.reading
            ]
            if not rivals:
                lonely.append(claim.id)
    assert lonely == []
    by_id = {claim.id: claim for claim in claims()}
    for claim in claims():
        if claim.sibling:
            assert claim.numerator != by_id[claim.sibling].numerator, claim.id


def test_claims_on_a_scaled_folder_say_what_was_scaled():
    """watch's quick profile shrinks the large folder: a claim judged on it says so."""
    unsaid = []
    for claim in claims():
        folders = [s.params.get("folder") for _, s in selectors(claim)]
        named = {
            str(value)
            for folder in folders
            for value in (folder if isinstance(folder, list) else [folder])
        }
        # A claim pairing every folder (no folder selected) includes the large one.
        on_large = "large" in named or ("folder" in claim.pair_by and None in folders)
        if claim.study == "watch" and on_large and not claim.scaled:
            unsaid.append(claim.id)
    assert unsaid == []


def test_every_claim_on_a_seed_grid_gets_the_seeds_configurations():
    """Computed from the reference tables (issue 18): every claim whose seed published more
    than one configuration names them; a claim on one configuration names none."""
    from perflab.analysis.published import seed_configurations, with_seed_configurations

    filled = {c.id: c for c in with_seed_configurations(list(claims()), reference_tables())}
    assert filled["aws-unary-grpclib-beats-sync-w1"].seed_configurations == {
        "concurrency": ("2", "10", "25", "50")
    }
    assert filled["aws-unary-grpclib-beats-sync-w10"].seed_configurations == {
        "concurrency": ("10", "25", "50")
    }
    assert filled["aws-unary-grpclib-matches-sync-w10"].seed_configurations == {}
    for claim in claims():
        grid = seed_configurations(claim, reference_tables())
        names = filled[claim.id].seed_configurations
        assert bool(names) == (len(grid) > 1 or bool(claim.seed_configurations)), claim.id
        for configuration in grid:
            assert all(value in names[key] for key, value in configuration.items()), claim.id


def test_a_selector_names_a_list_of_values_as_words_not_python():
    from perflab.analysis.claims import Selector

    listed = Selector("frame_cache", params={"folder": ["small", "medium"], "message": "mono"})
    assert listed.describe() == "frame_cache, folder=small or medium, message=mono"
    assert Selector(params={"folder": "large"}).describe() == "folder=large"
