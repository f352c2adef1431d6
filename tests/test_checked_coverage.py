"""The index's sentence on the simulated coverage: generated from the suite's results file,
and tested where it must come out the other way (a design that misses its label, a file
that is absent)."""

from __future__ import annotations

import json

from perflab.analysis.checked_coverage import coverage_sentence, read_results


def record(name: str, corrections: bool, coverage: float, label: float, error: float) -> dict:
    passes = coverage >= label - 3 * max(error, 1e-3)
    return {
        "case": {"name": name},
        "corrections": corrections,
        "coverage": coverage,
        "coverage_error": error,
        "label": label,
        "passes": passes,
    }


def suite(*records: dict, trials: int = 10_000) -> dict:
    return {"trials": trials, "results": list(records)}


def test_every_design_kept_names_the_lowest_and_the_trials():
    text = coverage_sentence(
        suite(
            record("equal spreads", True, 0.953, 0.95, 0.002),
            record("SD ratio 10", True, 0.947, 0.95, 0.002),
            record("equal spreads", False, 0.90, 0.90, 0.003),
            record("SD ratio 10", False, 0.79, 0.90, 0.004),
        )
    )
    assert "10,000 trials a case" in text
    assert "2 of 2 designs keep their labelled coverage" in text
    assert "the lowest, \u201cSD ratio 10\u201d: 94.7% \u00b1 0.2% against 95%" in text
    assert "not kept" not in text
    assert "With the corrections removed, 1 of 2 designs fall short" in text


def test_a_design_that_misses_its_label_is_named():
    text = coverage_sentence(
        suite(
            record("equal spreads", True, 0.953, 0.95, 0.002),
            record("drift", True, 0.80, 0.95, 0.004),
            record("drift", False, 0.70, 0.90, 0.004),
        )
    )
    assert "1 of 2 designs keep" in text
    assert "not kept: drift" in text
    assert "the lowest, \u201cdrift\u201d" in text


def test_no_results_file_says_the_coverage_is_unchecked(tmp_path):
    assert read_results(tmp_path) is None
    assert "not checked by simulation" in coverage_sentence(None)
    (tmp_path / "simulation.json").write_text(
        json.dumps(suite(record("a", True, 0.95, 0.95, 0.002), record("a", False, 0.8, 0.9, 0.004)))
    )
    assert "1 of 1 designs keep" in coverage_sentence(read_results(tmp_path))


def test_the_committed_results_give_a_sentence_of_their_own_figures():
    from tests.conftest import REPO

    document = read_results(REPO / "data" / "reference")
    assert document is not None
    text = coverage_sentence(document)
    assert f"{document['trials']:,} trials a case" in text
    kept = sum(r["passes"] for r in document["results"] if r["corrections"])
    assert f"{kept} of " in text


def look(truth: float, aa_in_looks: bool, decided: float, holds: float, margin: float) -> dict:
    return {
        "case": {"name": f"{truth}x", "truth": truth},
        "aa_in_looks": aa_in_looks,
        "decided_share": decided,
        "holds_share": holds,
        "last_margin": margin,
        "family_error": 0.14,
        "keeps_family_error": decided <= 0.14 + 0.02,
    }


BASE = (record("a", True, 0.95, 0.95, 0.002), record("a", False, 0.8, 0.9, 0.004))


def test_the_looks_sentence_says_what_the_look_s_own_aa_rounds_did():
    looks = {
        "trials": 2000,
        "results": [
            look(1.0, True, 0.095, 0.06, 0.10),
            look(1.0, False, 0.09, 0.06, 0.11),
            look(1.25, True, 0.89, 0.89, 0.125),
            look(1.25, False, 0.55, 0.55, 0.19),
        ],
    }
    text = coverage_sentence({**suite(*BASE), "looks": looks})
    assert "simulated with their own A/A rounds (2,000 trials a case)" in text
    assert "decided at some look in at most 9.5% of the trials, within the 14%" in text
    assert "a margin of 12% against the base rounds' 19%)" in text
    assert "decided it more often: 89% against 55%" in text


def test_the_looks_sentence_comes_out_the_other_way():
    looks = {
        "trials": 200,
        "results": [
            look(1.0, True, 0.30, 0.20, 0.10),
            look(1.25, True, 0.50, 0.50, 0.19),
            look(1.25, False, 0.55, 0.55, 0.19),
        ],
    }
    text = coverage_sentence({**suite(*BASE), "looks": looks})
    assert "in at most 30.0% of the trials, above the 14%" in text
    assert "decided it no more often: 50% against 55%" in text
    # Not simulated: no sentence about looks at all.
    assert "adaptive looks" not in coverage_sentence(suite(*BASE))


def test_the_looks_sentence_prints_each_shares_monte_carlo_error_where_recorded():
    with_errors = [
        {**look(1.0, True, 0.095, 0.06, 0.10), "decided_error": 0.0066},
        {**look(1.25, True, 0.89, 0.89, 0.125), "holds_error": 0.007},
        {**look(1.25, False, 0.55, 0.55, 0.19), "holds_error": 0.011},
    ]
    text = coverage_sentence({**suite(*BASE), "looks": {"trials": 2000, "results": with_errors}})
    assert "in at most 9.5% +/- 0.7% of the trials" in text
    assert "89% +/- 1% against 55% +/- 1%" in text
    # Results written before the errors were recorded print none.
    older = {"trials": 2000, "results": [look(1.0, True, 0.095, 0.06, 0.10)]}
    assert "+/-" not in coverage_sentence({**suite(*BASE), "looks": older}).split("adaptive")[1]


def test_the_looks_sentence_names_a_claim_judged_again_on_its_base_cells():
    def same_cells(record: dict) -> dict:
        case = {**record["case"], "name": "same", "claim_in_look": False}
        return {**record, "case": case}

    looks = {
        "trials": 2000,
        "results": [
            look(1.25, True, 0.89, 0.89, 0.125),
            look(1.25, False, 0.55, 0.55, 0.19),
            same_cells(look(1.25, True, 0.70, 0.70, 0.125)),
            same_cells(look(1.25, False, 0.45, 0.45, 0.19)),
        ],
    }
    text = coverage_sentence({**suite(*BASE), "looks": looks})
    assert "at a true 1.25x the look's own A/A rounds" in text
    assert "at a true 1.25x on its base cells alone the look's own A/A rounds" in text
    assert "70% against 45%" in text


def test_the_looks_sentence_gives_the_range_of_trials_where_cases_ran_different_counts():
    looks = {
        "trials": 2000,
        "results": [
            {**look(1.0, True, 0.095, 0.06, 0.10), "trials": 10_000},
            {**look(1.25, True, 0.89, 0.89, 0.125), "trials": 2000},
        ],
    }
    text = coverage_sentence({**suite(*BASE), "looks": looks})
    assert "(2,000-10,000 trials a case)" in text


def test_a_monte_carlo_error_is_never_shown_as_zero():
    from perflab.analysis.checked_coverage import monte_carlo

    assert monte_carlo({"e": 0.0029}, "e", 0) == " +/- 0.3%"
    assert monte_carlo({"e": 0.007}, "e", 0) == " +/- 1%"
    assert monte_carlo({"e": 0.0}, "e", 0) == " +/- 0%"
    assert monte_carlo({}, "e") == ""


def test_a_boot_drift_case_is_said_by_its_drift_cover_not_its_intervals():
    boots = record("boot drift", True, 0.55, 0.90, 0.005)
    boots["case"]["history_runs"] = 10
    text = coverage_sentence(
        suite(
            record("equal spreads", True, 0.901, 0.90, 0.003),
            {**boots, "passes": True, "drift_covered": 9380, "trials": 10_000},
        )
    )
    # Its intervals sit off the truth by the boot's drift on purpose: not "the lowest".
    assert "the lowest, \u201cequal spreads\u201d" in text
    assert "covered a drift that changes from boot to boot in 93.8%-93.8% of trials" in text
    without = coverage_sentence(suite(record("equal spreads", True, 0.901, 0.90, 0.003)))
    assert "boot to boot" not in without
