"""The verdict tables a reader sees first, on constructed runs: counts, links, changed flags."""

from __future__ import annotations

import dataclasses
import json

import pytest
import yaml

from perflab.analysis.decisions import DECIDING_COVERAGE, percent
from perflab.analysis.replication import (
    COLOURS,
    OPPOSITE,
    SAME,
    UNDECIDED,
    UNMEASURED,
    Replication,
    change,
    comparison_table,
    forest_rows,
    index_html,
    markdown_table,
    reference_run,
    study_html,
    tally,
)
from perflab.analysis.run import read as read_folder
from perflab.analysis.verdicts import (
    AT_THRESHOLD,
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    NOT_MEASURED,
    Judging,
    judge,
    judging_from_noise_floor,
)
from tests.test_verdicts import cells, claim, three_repeats

AHEAD = cells(three_repeats([200, 210, 220], [100, 105, 110]))
BEHIND = cells(three_repeats([100, 105, 110], [200, 210, 220]))
# The groups' ranges overlap: the interval straddles the threshold.
TIED = cells(three_repeats([100, 120, 140], [110, 125, 135]))
# Every ratio a little above 1, inside the 10% margin: at its threshold.
CLOSE = cells(three_repeats([104, 105, 106], [100, 100.5, 101]))


def test_tally_counts_each_verdict_and_leaves_out_zeros():
    verdicts = [judge(claim(), AHEAD), judge(claim(), AHEAD), judge(claim(), BEHIND)]
    assert tally(verdicts) == "2 hold, 1 does not hold"
    assert tally([judge(claim(), BEHIND)] * 2 + [judge(claim(), AHEAD)]) == "1 holds, 2 do not hold"
    assert tally([judge(claim(), BEHIND)]) == "1 does not hold"
    assert tally([]) == "no claims"


def test_tally_counts_the_readings_this_design_cannot_decide_apart():
    band = claim(bound={"within": 0.1}, direction=None, threshold=None)
    same = cells(three_repeats([100, 101, 99], [100, 100.5, 99.5]))
    # A 30% margin is wider than the 10% band: undecidable by this design, said so.
    noisy = judge(band, same, judging=Judging(margin=0.3))
    assert noisy.verdict == INCONCLUSIVE and noisy.reason.startswith("undecidable")
    assert tally([noisy, judge(claim(), AHEAD)]) == (
        "1 holds, 1 inconclusive (undecidable by this design)"
    )
    # Turned around: an interval across the threshold is open for the data, not the design.
    across = judge(claim(), cells(three_repeats([90, 110, 100], [100, 100, 100])))
    assert across.verdict == INCONCLUSIVE and not across.reason.startswith("undecidable")
    assert tally([across]) == "1 inconclusive"
    assert tally([noisy, noisy, across]) == "3 inconclusive (2 of them undecidable by this design)"


def test_index_links_evidence_and_flags_a_changed_verdict():
    now = [judge(claim(), AHEAD)]
    alone = index_html(Replication("run-a", now), {"hello": "hello.html"})
    assert 'href="hello.html#claim-a-beats-b"' in alone
    assert "reference run" not in alone
    assert "1 holds; " in alone
    moved = index_html(
        Replication("run-a", now, "ref", [judge(claim(), BEHIND)]), {"hello": "hello.html"}
    )
    assert "1 of 1 verdicts differ (marked ≠)" in moved
    assert "<td>≠</td>" in moved
    same = index_html(Replication("run-a", now, "ref", [judge(claim(), AHEAD)]), {})
    assert "0 of 1 verdicts differ." in same
    assert "<td>≠</td>" not in same
    assert "href=" not in same


def test_index_leaves_out_the_claims_of_studies_the_run_did_not_include():
    hello = judge(claim(), AHEAD)
    orders = judge(claim(id="orders-claim", study="orders"), AHEAD.iloc[:0])
    both = [hello, orders]
    page = index_html(Replication("run-a", both, studies=frozenset({"hello"})), {})
    assert "The 1 claims of the studies this run did not include (orders) are not listed." in page
    assert "orders-claim" not in page and "a-beats-b" in page
    # Every claim still counts in the headline tally.
    assert "1 holds, 1 not measured" in page
    # A run with cells of both studies lists both, and says nothing of a left-out study.
    full = index_html(Replication("run-a", both, studies=frozenset({"hello", "orders"})), {})
    assert "orders-claim" in full and "did not include" not in full
    # Against a reference that measured both, only the studies this run measured compare.
    reference = [judge(claim(), AHEAD), dataclasses.replace(orders, verdict=HOLDS)]
    partial = Replication("run-a", both, "ref", reference, studies=frozenset({"hello"}))
    assert "0 of 1 verdicts differ in the studies this run measured." in index_html(partial, {})
    whole = Replication("run-a", both, "ref", reference, studies=frozenset({"hello", "orders"}))
    assert "1 of 2 verdicts differ (marked ≠)." in index_html(whole, {})


def test_study_page_opens_with_sentences_and_the_reference_beside_them():
    page = study_html(
        Replication("run-a", [judge(claim(), BEHIND)], "ref", [judge(claim(), AHEAD)])
    )
    assert 'id="claim-a-beats-b"' in page
    assert f">{FAILS}</span>" in page
    assert "<b>Verdict differs from</b> the reference run: holds, 2.00x" in page
    agreeing = study_html(
        Replication("run-a", [judge(claim(), AHEAD)], "ref", [judge(claim(), AHEAD)])
    )
    assert "Same verdict as the reference run" in agreeing
    absent = judge(claim(numerator={"implementation": "c"}), AHEAD)
    new = study_html(Replication("run-a", [judge(claim(), AHEAD)], "ref", [absent]))
    assert "<b>Verdict differs from</b> the reference run: not measured.</small>" in new
    assert study_html(Replication("run-a", [])).startswith("<p>The seeds state no claim")
    # Both kinds of page link back to the run's index beside them.
    assert '<a href="index.html">' in study_html(Replication("run-a", []))
    assert new.startswith('<p><a href="index.html">')
    # The cells a verdict rests on are named, folded under a count.
    verdict = judge(claim(), AHEAD)
    assert f"The {len(verdict.cell_ids)} cells it rests on" in page
    assert all(cell in page for cell in verdict.cell_ids)


def test_markdown_summary_has_a_row_per_claim():
    table = markdown_table(Replication("run-a", [judge(claim(), AHEAD), judge(claim(), BEHIND)]))
    rows = table.splitlines()
    assert len(rows) == 4
    assert rows[2] == f"| 000 | a-beats-b | 1.5x | 2.00x | {HOLDS} |"
    assert rows[3].endswith(f"| {FAILS} |")


def test_reference_is_named_by_topology_and_never_the_run_itself(tmp_path):
    reference_dir = tmp_path / "reference"
    reference_dir.mkdir()
    (reference_dir / "reference_runs.yml").write_text("localhost: ref-local\nnetns: ref-netns\n")
    for name, topology in (("ref-local", "localhost"), ("ref-netns", "netns"), ("mine", "netns")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "manifest.json").write_text(json.dumps({"topology": topology}))
    assert reference_run(read_folder(tmp_path / "mine"), reference_dir) == tmp_path / "ref-netns"
    assert reference_run(read_folder(tmp_path / "ref-local"), reference_dir) is None
    (reference_dir / "reference_runs.yml").write_text("localhost: ref-local\n")
    assert reference_run(read_folder(tmp_path / "mine"), reference_dir) is None


def test_a_row_shows_the_published_figure_the_interval_label_and_the_change():
    holds, fails = judge(claim(), AHEAD), judge(claim(), BEHIND)
    row = index_html(Replication("run-a", [holds]), {})
    assert "<td>1.5x</td>" in row
    # Labelled with the coverage it is computed at: the one the decision needs.
    assert f"{percent(DECIDING_COVERAGE)} paired t interval of 3 rounds" in row
    assert f">{HOLDS}</span>" in row
    assert not Replication("run-a", [holds], "ref", [holds]).differs(holds)
    moved = Replication("run-a", [holds], "ref", [fails])
    assert moved.differs(holds)
    assert moved.reference_of(holds.claim).verdict == FAILS


def test_change_between_two_runs_names_only_holds_against_fails_opposite():
    holds, fails, tied = judge(claim(), AHEAD), judge(claim(), BEHIND), judge(claim(), TIED)
    absent = judge(claim(numerator={"implementation": "c"}), AHEAD)
    assert tied.verdict == INCONCLUSIVE and absent.verdict == NOT_MEASURED
    assert change(holds, holds) == SAME
    assert change(holds, fails) == change(fails, holds) == OPPOSITE
    assert change(holds, tied) == change(tied, fails) == UNDECIDED
    assert change(holds, absent) == change(tied, None) == UNMEASURED


def test_comparison_table_shows_both_runs_and_counts_the_changes():
    claims = [claim(), claim(id="c-beats-b", numerator={"implementation": "c"})]
    mine = [judge(claims[0], AHEAD), judge(claims[1], AHEAD)]
    theirs = [judge(claims[0], BEHIND), judge(claims[1], AHEAD)]
    table = comparison_table(Replication("run-b", mine, "run-a", theirs))
    rows = table.splitlines()
    assert rows[0] == "| claim | run-b | run-a | change |"
    assert rows[2] == f"| a-beats-b | {HOLDS}, 2.00x | {FAILS}, 0.500x | {OPPOSITE} |"
    assert rows[3] == "| c-beats-b | not measured | not measured |  |"
    assert rows[-1] == (f"2 claims: 1 {SAME}, 0 {UNDECIDED}, 0 {UNMEASURED}, 1 {OPPOSITE}.")
    agreeing = comparison_table(Replication("run-b", mine[:1], "run-a", mine[:1]))
    assert agreeing.splitlines()[-1].endswith(f"0 {OPPOSITE}.")


def test_cli_compares_a_run_against_a_second_one_and_refuses_a_missing_folder(tmp_path, capsys):
    from perflab.cli import main
    from tests.test_readme_verdicts import REPO

    reference = REPO / "data" / "reference"
    run_id = yaml.safe_load((reference / "reference_runs.yml").read_text())["localhost"]
    run = str(REPO / "data" / run_id)
    assert main(["verdicts", "--run-dir", run, "--against", run]) == 0
    table = capsys.readouterr().out
    assert f"| claim | {run_id} | {run_id} | change |" in table
    assert f"0 {OPPOSITE}." in table and f"0 {UNDECIDED}" in table
    assert main(["verdicts", "--run-dir", run, "--against", str(tmp_path / "gone")]) == 2
    assert "perflab verdicts:" in capsys.readouterr().err


def test_only_methods_that_reach_95_percent_are_labelled_so():
    from tests.conftest import overclaimed_intervals

    fails = judge(
        claim(
            study="hello",
            kind="error_rate",
            metric="errors",
            denominator=None,
            pair_by=[],
            direction="less",
            threshold=0.05,
        ),
        AHEAD.assign(metric="count"),
    )
    page = index_html(Replication("run-a", [fails, judge(claim(), AHEAD)]), {})
    assert f"{percent(DECIDING_COVERAGE)} clustered Clopper-Pearson interval over" in page
    assert overclaimed_intervals(page) == []
    assert overclaimed_intervals("0.00% [0.00%, 0.15%] (95% exact Clopper-Pearson interval)") == []
    assert overclaimed_intervals("0.00% [0.00%, 2.95%] (90% clustered Clopper-Pearson") == []
    assert overclaimed_intervals("1.2x [1.1x, 1.3x] (95% percentile bootstrap)") == [
        "95%",
        "bootstrap",
    ]


def test_tally_and_index_name_the_new_verdict_and_the_margin_used():
    verdicts = [judge(claim(), CLOSE), judge(claim(), AHEAD)]
    assert verdicts[0].verdict == AT_THRESHOLD
    assert tally(verdicts) == "1 holds, 1 at its threshold"
    assert tally([judge(claim(), AHEAD)]) == "1 holds"
    page = index_html(Replication("run-a", verdicts), {})
    assert f">{AT_THRESHOLD}</span>" in page
    assert "Decision margin: 10%, from the floor: this run measures no noise floor" in page
    assert "Hodges-Lehmann factor" in page
    wide = judging_from_noise_floor(0.35, "A/A cells")
    measured = index_html(Replication("run-a", verdicts, judging=wide), {})
    expected = "Decision margin: 35%, from the run&#x27;s noise floor, measured on A/A cells"
    assert expected in measured


def test_each_claim_shows_every_configuration_and_which_decides():
    rows = three_repeats([200, 210, 220], [100, 105, 110], 2) + three_repeats(
        [150, 155, 160], [100, 105, 110], 10
    )
    stated = claim(seed_configurations={"concurrency": [2, 10, 50]})
    verdict = judge(stated, cells(rows))
    page = index_html(Replication("run-a", [verdict]), {})
    assert "concurrency=2: 2.00x [" in page
    assert "concurrency=10: 1.48x [" in page and "holds (decides)" in page
    assert "The run covers concurrency 2, 10 of the seed&#x27;s 2, 10, 50." in page
    study = study_html(Replication("run-a", [verdict]))
    assert "holds (decides)" in study
    single = study_html(Replication("run-a", [judge(claim(), AHEAD)]))
    assert "(decides)" not in single


def test_forest_rows_carry_effect_interval_threshold_and_published():
    within = claim(id="about", direction="within", threshold=0.25)
    verdicts = [
        judge(claim(), AHEAD),
        judge(within, AHEAD),
        judge(claim(numerator={"implementation": "c"}), AHEAD),
    ]
    rows = forest_rows(Replication("run-a", verdicts))
    assert [row["label"] for row in rows] == ["a-beats-b", "about"]
    first = rows[0]
    assert first["low"] <= first["effect"] <= first["high"]
    assert first["thresholds"] == (1.0,) and first["published"] == 1.5
    assert first["colour"] == COLOURS[HOLDS] and first["seed"] == "000"
    assert rows[1]["thresholds"] == (0.8, 1.25)
    assert rows[1]["colour"] == COLOURS[FAILS]
    # "About 2" is drawn around 2, not 1: AHEAD's 2.0x holds it.
    about = claim(
        id="two",
        direction=None,
        threshold=None,
        bound={"about": 2, "tolerance": 0.1},
        published=2.1,
    )
    (row,) = forest_rows(Replication("run-a", [judge(about, AHEAD)]))
    assert row["thresholds"] == pytest.approx((2 / 1.1, 2.2))
    assert row["colour"] == COLOURS[HOLDS]


def test_forest_figure_draws_a_row_per_claim_and_a_rate_panel_when_needed():
    from perflab.analysis import plots

    ratios = forest_rows(Replication("run-a", [judge(claim(), AHEAD), judge(claim(), BEHIND)]))
    fig = plots.forest(ratios, "claims")
    assert len(fig.axes) == 1
    assert fig.axes[0].get_xscale() == "log"
    assert len(fig.axes[0].get_yticks()) == 2
    rate = {**ratios[0], "rate": True, "label": "errors", "effect": 0.0, "low": 0.0, "high": 0.46}
    both = plots.forest([*ratios, rate], "claims")
    assert [ax.get_xscale() for ax in both.axes] == ["log", "linear"]
    assert "no claim was measured" in plots.forest([], "claims").axes[0].get_title()


def test_forest_gives_each_seed_its_own_axis_so_one_seeds_tiny_ratios_squeeze_no_other():
    from perflab.analysis import plots

    (wide,) = forest_rows(Replication("run-a", [judge(claim(), AHEAD)]))
    tiny = {**wide, "seed": "001", "label": "switches", "effect": 1e-4, "low": 5e-5, "high": 2e-4}
    fig = plots.forest([wide, tiny], "claims")
    assert [ax.get_title(loc="left") for ax in fig.axes] == ["seed 000", "seed 001"]
    low, high = fig.axes[0].get_xlim()
    assert low > 0.1 and high < 10  # seed 000's panel is not stretched to 10^-4
    assert fig.axes[1].get_xlim()[0] < 1e-4
    # One seed to a panel: its rows are not each prefixed with it.
    assert [t.get_text() for t in fig.axes[1].get_yticklabels()] == ["switches"]


def test_a_verdict_that_depends_on_the_method_says_so_beside_it():
    steady = claim(id="a-beats-b", method="steady", sibling="a-beats-b-seed-method")
    seed = claim(id="a-beats-b-seed-method", method="seed", sibling="a-beats-b")
    split = Replication("run-a", [judge(steady, AHEAD), judge(seed, TIED)])
    page = index_html(split, {})
    assert "Depends on the method: holds on steady, inconclusive on the seed&#x27;s method." in page
    assert "Depends on the method: inconclusive on the seed&#x27;s method, holds on steady." in page
    agreed = index_html(Replication("run-a", [judge(steady, AHEAD), judge(seed, AHEAD)]), {})
    assert "Depends on the method" not in agreed
    # A claim with no sibling measured in the run says nothing either.
    assert "Depends on the method" not in index_html(
        Replication("run-a", [judge(steady, AHEAD)]), {}
    )


def test_the_headline_counts_conclusions_and_states_its_multiplicity():
    from perflab.analysis.replication import conclusion_of, conclusions_sentence

    steady = claim(id="x-beats-y", method="steady", sibling="x-beats-y-seed-method")
    seed = claim(id="x-beats-y-seed-method", method="seed", sibling="x-beats-y")
    other = claim(id="z-beats-w")
    assert conclusion_of(seed) == conclusion_of(steady) == "x-beats-y"
    alike = [judge(steady, AHEAD), judge(seed, AHEAD), judge(other, BEHIND)]
    sentence = conclusions_sentence(alike, Judging())
    assert "These 3 readings are 2 seed conclusions" in sentence
    assert "1 holds in every reading, 1 does not hold in every reading, 0 differ" in sentence
    assert "at most 5% per side (90% coverage). " in sentence
    # A run with looks spends 14% over them (10% + 4%): the sentence says so.
    looked = conclusions_sentence(alike, Judging(), family_alpha=0.14)
    assert "at most 5% per side (90% coverage), 7% per side over the run's looks. " in looked
    assert "false-discovery rate" in sentence and "of the 3 decided readings" in sentence
    # Turned around: the two readings of one conclusion disagree.
    apart = [judge(steady, AHEAD), judge(seed, BEHIND), judge(other, BEHIND)]
    assert "0 hold in every reading, 1 does not hold in every reading, 1 differs" in (
        conclusions_sentence(apart, Judging())
    )


def test_a_tables_reading_counts_under_the_prose_conclusion_it_names():
    from perflab.analysis.replication import conclusion_of, conclusions_sentence

    prose = claim(id="x-1-5x-faster-prose")
    table = claim(id="x-1-27x-faster-table", conclusion="x-1-5x-faster-prose")
    assert conclusion_of(table) == conclusion_of(prose) == "x-1-5x-faster-prose"
    sentence = conclusions_sentence([judge(prose, AHEAD), judge(table, BEHIND)], Judging())
    assert "These 2 readings are 1 seed conclusions" in sentence and "1 differ" in sentence
    # Without the key they are two conclusions, each decided in its one reading.
    alone = claim(id="x-1-27x-faster-table")
    sentence = conclusions_sentence([judge(prose, AHEAD), judge(alone, BEHIND)], Judging())
    assert "These 2 readings are 2 seed conclusions" in sentence and "0 differ" in sentence


def test_the_index_groups_a_conclusions_readings_under_one_row():
    # The table's figure is listed last, after another conclusion: grouped, it follows the
    # prose reading it re-reads, under a row that names the conclusion and counts both.
    prose = claim(id="x-1-5x-faster-prose")
    other = claim(id="z-beats-w")
    table = claim(id="x-1-27x-faster-table", conclusion="x-1-5x-faster-prose")
    verdicts = [judge(prose, AHEAD), judge(other, BEHIND), judge(table, BEHIND)]
    page = index_html(Replication("run-a", verdicts), {})
    heading = page.index('<tr class="conclusion"><td colspan="10"><b>x-1-5x-faster-prose</b>')
    assert "2 readings of one seed conclusion (holds 1, does not hold 1)" in page
    rows = [page.index(f"<td><b>{name}") for name in ("x-1-5x-faster-prose", "x-1-27x")]
    assert heading < rows[0] < rows[1] < page.index("<td><b>z-beats-w</b>")
    # A conclusion read once gets no heading row; without the key, neither reading has one.
    assert page.count('class="conclusion"') == 1
    alone = claim(id="x-1-27x-faster-table")
    apart = index_html(Replication("run-a", [judge(prose, AHEAD), judge(alone, BEHIND)]), {})
    assert 'class="conclusion"' not in apart.replace("tr.conclusion", "")


def test_a_stack_reading_of_the_seeds_method_counts_under_the_steady_conclusion():
    import dataclasses

    from perflab.analysis.replication import conclusions, conclusions_sentence

    steady = claim(id="x-beats-y", method="steady", sibling="x-beats-y-seed-method")
    seed = claim(id="x-beats-y-seed-method", method="seed", sibling="x-beats-y")
    # stack_of is what the claims file's stack expansion sets on the seed-stack copy.
    stack = dataclasses.replace(
        claim(id="x-beats-y-seed-method-seed-stack", method="seed"), stack_of=seed.id
    )
    assert set(conclusions([steady, seed, stack]).values()) == {"x-beats-y"}
    readings = [judge(steady, AHEAD), judge(seed, AHEAD), judge(stack, BEHIND)]
    assert "These 3 readings are 1 seed conclusions" in conclusions_sentence(readings, Judging())
    page = index_html(Replication("run-a", readings), {})
    assert "3 readings of one seed conclusion (holds 2, does not hold 1)" in page
    # Without the seed-method claim among the readings, the stack reading stands alone.
    assert conclusions([steady, stack])[stack.id] == seed.id


def test_a_conclusion_must_name_a_claim_of_its_seed(tmp_path):
    from perflab.analysis.claims import ClaimsError, read_claims

    def entry(claim_id: str, **extra) -> dict:
        return {
            "id": claim_id,
            "seed": "000_x.txt",
            "study": "hello",
            "says": "a is faster than b",
            "source": "prose",
            "metric": "rps",
            "numerator": {"implementation": "a"},
            "denominator": {"implementation": "b"},
            "bound": {"greater": 1},
            **extra,
        }

    path = tmp_path / "claims.yml"
    path.write_text(yaml.safe_dump({"claims": [entry("p"), entry("t", conclusion="p")]}))
    assert read_claims(path)[1].conclusion == "p"
    path.write_text(yaml.safe_dump({"claims": [entry("p"), entry("t", conclusion="q")]}))
    with pytest.raises(ClaimsError, match="conclusion 'q' is not a claim"):
        read_claims(path)


def test_a_claim_whose_cells_a_host_cannot_run_says_what_they_need():
    from perflab.analysis.findings import figure

    rows = cells(three_repeats([200, 210, 220], [100, 105, 110]))
    big = claim(
        numerator={"implementation": "huge", "scenario": "steady"},
        needs="about 50 GB of memory",
    )
    missing = judge(big, rows)
    assert missing.verdict == NOT_MEASURED
    assert missing.reason.endswith("its cells need about 50 GB of memory")
    assert figure(missing).endswith("(its cells need about 50 GB of memory)")
    # Turned around: measured, the need is not said; unsaid, no need is shown.
    assert "need" not in figure(judge(claim(needs="about 50 GB of memory"), rows))
    plain = judge(claim(numerator={"implementation": "huge", "scenario": "steady"}), rows)
    assert plain.verdict == NOT_MEASURED and "need" not in plain.reason


def test_the_index_says_which_undecided_readings_more_rounds_could_decide():
    from perflab.analysis.replication import reach_sentence

    # CLOSE: 1.05x, inside the 10% zone around 1 at any number of rounds. NOISY: 1.6x over
    # three rounds too spread to decide, past the zone: more rounds would decide it.
    noisy = cells(three_repeats([120, 240, 160], [100, 100, 100]))
    close, far = judge(claim(), CLOSE), judge(claim(), noisy)
    assert close.verdict == AT_THRESHOLD and far.verdict == INCONCLUSIVE
    both = reach_sentence(Replication("run-a", [close, far, judge(claim(), AHEAD)]))
    assert both.startswith("Of the 2 undecided readings, 2 have a paired interval: 1 of them")
    assert "more rounds would decide the other 1" in both
    # Turned around: with the far reading alone, none sits out of reach.
    alone = reach_sentence(Replication("run-a", [far]))
    assert "0 of them sit where no design up to 30 rounds" in alone
    assert "more rounds would decide the other 1" in alone
    # Nothing undecided: nothing said.
    assert reach_sentence(Replication("run-a", [judge(claim(), AHEAD)])) == ""
