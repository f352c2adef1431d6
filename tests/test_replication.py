"""The verdict tables a reader sees first, on constructed runs: counts, links, changed flags."""

from __future__ import annotations

import json

from perflab.replication import (
    Replication,
    index_html,
    markdown_table,
    reference_run,
    study_html,
    tally,
)
from perflab.verdicts import FAILS, HOLDS, judge
from tests.test_verdicts import cells, claim, three_repeats

AHEAD = cells(three_repeats([200, 210, 220], [100, 105, 110]))
BEHIND = cells(three_repeats([100, 105, 110], [200, 210, 220]))


def test_tally_counts_each_verdict_and_leaves_out_zeros():
    verdicts = [judge(claim(), AHEAD), judge(claim(), AHEAD), judge(claim(), BEHIND)]
    assert tally(verdicts) == "2 hold, 1 do not hold"
    assert tally([judge(claim(), BEHIND)]) == "1 do not hold"
    assert tally([]) == "no claims"


def test_index_links_evidence_and_flags_a_changed_verdict():
    now = [judge(claim(), AHEAD)]
    alone = index_html(Replication("run-a", now), {"hello": "hello.html"})
    assert 'href="hello.html#claim-a-beats-b"' in alone
    assert "reference run" not in alone
    assert "1 hold." in alone
    moved = index_html(
        Replication("run-a", now, "ref", [judge(claim(), BEHIND)]), {"hello": "hello.html"}
    )
    assert "1 of 1 verdicts differ (marked ≠)" in moved
    assert "<td>≠</td>" in moved
    same = index_html(Replication("run-a", now, "ref", [judge(claim(), AHEAD)]), {})
    assert "0 of 1 verdicts differ." in same
    assert "<td>≠</td>" not in same
    assert "href=" not in same


def test_study_page_opens_with_sentences_and_the_reference_beside_them():
    page = study_html(
        Replication("run-a", [judge(claim(), BEHIND)], "ref", [judge(claim(), AHEAD)])
    )
    assert 'id="claim-a-beats-b"' in page
    assert f">{FAILS}</span>" in page
    assert "<b>Differs from</b> the reference run: holds, 2.00x" in page
    agreeing = study_html(
        Replication("run-a", [judge(claim(), AHEAD)], "ref", [judge(claim(), AHEAD)])
    )
    assert "Same as the reference run" in agreeing
    assert study_html(Replication("run-a", [])).startswith("<p>The seeds state no claim")


def test_markdown_summary_has_a_row_per_claim():
    table = markdown_table(Replication("run-a", [judge(claim(), AHEAD), judge(claim(), BEHIND)]))
    rows = table.splitlines()
    assert len(rows) == 4
    assert rows[2] == f"| 000 | a-beats-b | 1.50x | 2.00x | {HOLDS} |"
    assert rows[3].endswith(f"| {FAILS} |")


def test_reference_is_named_by_topology_and_never_the_run_itself(tmp_path):
    reference_dir = tmp_path / "reference"
    reference_dir.mkdir()
    (reference_dir / "reference_runs.yml").write_text("localhost: ref-local\nnetns: ref-netns\n")
    for name, topology in (("ref-local", "localhost"), ("ref-netns", "netns"), ("mine", "netns")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "manifest.json").write_text(json.dumps({"topology": topology}))
    assert reference_run(tmp_path / "mine", reference_dir) == tmp_path / "ref-netns"
    assert reference_run(tmp_path / "ref-local", reference_dir) is None
    (reference_dir / "reference_runs.yml").write_text("localhost: ref-local\n")
    assert reference_run(tmp_path / "mine", reference_dir) is None


def test_a_row_shows_the_published_figure_the_interval_label_and_the_change():
    holds, fails = judge(claim(), AHEAD), judge(claim(), BEHIND)
    row = index_html(Replication("run-a", [holds]), {})
    assert "<td>1.50x</td>" in row
    assert "90% exact Mann-Whitney interval" in row
    assert f">{HOLDS}</span>" in row
    assert not Replication("run-a", [holds], "ref", [holds]).differs(holds)
    moved = Replication("run-a", [holds], "ref", [fails])
    assert moved.differs(holds)
    assert moved.reference_of(holds.claim).verdict == FAILS
