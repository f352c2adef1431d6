"""What the index says beside each claim, and each seed's paragraph: every generated sentence
on a constructed case, and on the case where it must come out the other way."""

from __future__ import annotations

import html
import re
from dataclasses import replace
from pathlib import Path

from perflab.analysis.claims import on_stack
from perflab.analysis.findings import (
    Readers,
    regime_lines,
    seed_paragraph,
    stack_sentence,
    stated_test,
    versions_line,
)
from perflab.analysis.replication import Replication, index_html, readme_summary, study_html
from perflab.analysis.verdicts import format_effect, judge
from tests.test_replication import AHEAD, BEHIND, TIED
from tests.test_verdicts import claim

REFERENCE = Path(__file__).resolve().parent.parent / "data" / "reference"
READERS = Readers.read(REFERENCE)
SEED_000 = "000_b853735c5b3bff6d.txt"
SEED_001 = "001_f796d1530addd1df.txt"
MANIFEST = {
    "hosts": {
        "localhost": {
            "versions": {
                "python": "3.11.7",
                "python_packages": {"grpcio": "9.9.9", "grpclib": "0.4.9"},
            }
        }
    }
}
FAR_S3 = {"latency_profile": "seed_far_s3"}


def test_the_test_names_the_metric_and_which_side_is_the_numerator():
    said = stated_test(claim())
    assert said == "rps, a (numerator) over b (denominator), per concurrency: ratio > 1"
    swapped = claim(
        numerator={"implementation": "b", "scenario": "steady"},
        denominator={"implementation": "a", "scenario": "steady"},
    )
    assert stated_test(swapped).startswith("rps, b (numerator) over a (denominator)")
    single = claim(pair_by=None)
    assert "per " not in stated_test(single)


def test_regime_lines_say_far_s3_lan_by_topology_and_scaled_folders():
    far = claim(
        numerator={"implementation": "a", "params": FAR_S3},
        denominator={"implementation": "b", "params": FAR_S3},
    )
    assert any("250 ms" in line for line in regime_lines(far, READERS, "localhost"))
    lan = claim(
        numerator={"implementation": "a", "params": {"latency_profile": "lan"}},
        denominator={"implementation": "a", "params": {"latency_profile": "proxy_0ms"}},
    )
    (on_loopback,) = regime_lines(lan, READERS, "localhost")
    assert "loopback" in on_loopback and "namespaces" not in on_loopback
    (between,) = regime_lines(lan, READERS, "netns")
    assert "namespaces" in between and "loopback" not in between
    # Cells on no described regime: no line.
    assert regime_lines(claim(), READERS, "localhost") == []
    scaled = claim(scaled="quick: 0.15x the seed's folder")
    assert regime_lines(scaled, READERS, "localhost") == [
        "Scaled folder: quick: 0.15x the seed's folder"
    ]
    steady = claim(method="steady")
    assert regime_lines(steady, READERS, "localhost")[0].startswith("Method: steady")


def test_versions_name_the_run_and_the_seed_and_why_the_seeds_are_not_run():
    ours = claim(seed=SEED_000)
    line = versions_line(ours, READERS, MANIFEST)
    assert line.startswith(
        "Libraries: this run grpcio 9.9.9, grpclib 0.4.9; the seed grpcio 1.28.1"
    )
    why = "(not run here: grpcio 1.28.1 has wheels for Python 2.7, 3.5, 3.6, 3.7, 3.8 only;"
    assert why in line
    assert line.endswith("this run's Python is 3.11.7).")
    stacked = on_stack(claim(seed=SEED_001, study="pyclients"), "seed001")
    on_seed_stack = versions_line(stacked, READERS, MANIFEST)
    assert "this run grpcio 1.62.1" in on_seed_stack and "9.9.9" not in on_seed_stack
    current = on_stack(claim(seed=SEED_001, study="pyclients"), "current")
    assert "this run grpcio 9.9.9" in versions_line(current, READERS, MANIFEST)
    # The other way: a run on a Python the seed's pin has wheels for, and one not recorded.
    on_38 = {"hosts": {"h": {"versions": {"python": "3.8.18"}}}}
    assert versions_line(ours, READERS, on_38).endswith(
        "(grpcio 1.28.1 has wheels for this run's Python 3.8.18, but no cell of this run ran it)."
    )
    assert "records no Python version" in versions_line(ours, READERS, {})
    # A study with no Python libraries (e.g. watch) has no line.
    assert versions_line(claim(study="watch"), READERS, MANIFEST) == ""


def test_a_side_that_names_its_stack_keeps_it_on_the_seed_stack():
    unpinned = {"implementation": "b", "scenario": "steady", "params": {"stack": "current"}}
    seed = on_stack(claim(study="hello", denominator=unpinned), "seed000")
    assert seed.id.endswith("-seed-stack")
    assert seed.numerator.params["stack"] == "seed000"
    assert seed.denominator.params["stack"] == "current"
    # The other way: a side naming none takes the copy's stack.
    assert on_stack(claim(study="hello"), "seed000").denominator.params["stack"] == "seed000"


def with_stack(record: dict) -> dict:
    """MANIFEST with roles/seed000_stack's record (perflab.host.manifest.stack_facts)."""
    versions = {**MANIFEST["hosts"]["localhost"]["versions"], "stacks": {"seed000": record}}
    return {"hosts": {"localhost": {"versions": versions}}}


def test_not_run_says_the_host_had_no_python_for_the_pin_or_that_it_ran():
    ours = claim(seed=SEED_000)
    absent = {"stack": "seed000", "installed": False, "python": "", "looked_for": ["python3.8"]}
    line = versions_line(ours, READERS, with_stack(absent))
    assert "not run here: grpcio 1.28.1 has wheels for Python 2.7, 3.5, 3.6, 3.7, 3.8 only" in line
    assert line.endswith(
        "this run's Python is 3.11.7, and the host has none of them (looked for python3.8))."
    )
    # The other way: the role found a Python 3.8 and installed the pin.
    present = {**absent, "installed": True, "python": "3.8.18"}
    line = versions_line(ours, READERS, with_stack(present))
    assert "not run here" not in line
    assert line.endswith(
        "(grpcio 1.28.1 installed here in a venv of its own on Python 3.8.18: "
        "the -seed-stack readings)."
    )
    # Its own reading names the versions the stack's venv held, not the run's.
    held = {**present, "python_packages": {"grpcio": "1.28.1"}}
    stacked = versions_line(on_stack(ours, "seed000"), READERS, with_stack(held))
    assert stacked.startswith("Libraries: this run grpcio 1.28.1, the seed's stack;")
    # One host without it is enough for the reading to be absent.
    both = with_stack(present)
    both["hosts"]["client"] = with_stack(absent)["hosts"]["localhost"]
    assert "not run here" in versions_line(ours, READERS, both)


def test_depends_on_the_stack_only_where_the_stacks_disagree():
    base = claim(study="pyclients")
    current, seed = on_stack(base, "current"), on_stack(base, "seed001")
    today, theirs = (
        AHEAD.assign(study="pyclients", stack="current"),
        BEHIND.assign(study="pyclients", stack="seed001"),
    )
    differ = [judge(current, today), judge(seed, theirs)]
    assert stack_sentence(differ[0], differ) == (
        "Depends on the stack: holds on today's libraries, does not hold on the seed's libraries."
    )
    assert stack_sentence(differ[1], differ) == stack_sentence(differ[0], differ)
    agree = [judge(current, today), judge(seed, AHEAD.assign(study="pyclients", stack="seed001"))]
    assert stack_sentence(agree[0], agree) == ""
    assert stack_sentence(judge(claim(), AHEAD), differ) == ""


def test_a_seed_paragraph_sorts_its_claims_by_verdict_each_with_its_figures():
    holds = [judge(claim(seed=SEED_000), AHEAD)]
    text = seed_paragraph(SEED_000, holds)
    assert text.startswith("Seed 000 (hello; 1 claims).")
    # Measured without spread at 2.00x: the seed's 1.5x lies outside the interval, and the
    # paragraph says the size does not replicate where the direction does.
    assert (
        "Replicate on this machine (1): a-beats-b 2.00x (published 1.5x, outside its interval)."
        in text
    )
    assert text.endswith(
        "where the published figure lies outside the run's interval, the size does not."
    )
    assert "Do not replicate (0): none." in text
    # The other way: published at the measured figure, the size replicates too.
    at_figure = [judge(replace(claim(seed=SEED_000), published=2.0), AHEAD)]
    said = seed_paragraph(SEED_000, at_figure)
    assert "a-beats-b 2.00x (published 2x)." in said and "the size does not" not in said
    # The other way: the same claim refuted moves to the second sentence.
    fails = [judge(claim(seed=SEED_000), BEHIND)]
    other = seed_paragraph(SEED_000, fails)
    assert "Replicate on this machine (0): none." in other
    assert "Do not replicate (1): a-beats-b 0.500x (published 1.5x, outside its interval)." in other
    undecided = seed_paragraph(SEED_000, [judge(claim(seed=SEED_000), TIED)])
    assert (
        "This design cannot decide (inconclusive or at the threshold) (1): a-beats-b" in undecided
    )
    unmeasured = seed_paragraph(SEED_000, [judge(claim(seed=SEED_000), AHEAD.iloc[:0])])
    assert "Not measured by this run (1): a-beats-b (published 1.5x)." in unmeasured
    # Another seed's claims are not counted.
    assert "(0 claims)" not in seed_paragraph(
        SEED_000, holds + [judge(claim(seed=SEED_001), AHEAD)]
    )
    assert "; 1 claims)" in seed_paragraph(SEED_000, holds + [judge(claim(seed=SEED_001), AHEAD)])


def test_ratios_keep_three_significant_digits():
    ratio = claim()
    assert format_effect(ratio, 12 / 12142) == "0.000988x"
    assert format_effect(ratio, 2.134) == "2.13x"
    assert format_effect(ratio, 43.6) == "43.6x"
    assert format_effect(ratio, 0.5) == "0.500x"


def fixture_claims() -> list:
    """A small run's claims: far S3 on today's stack, lan, a scaled folder, a seed stack."""
    far = claim(
        id="far-claim",
        seed=SEED_000,
        study="aws_io",
        numerator={"implementation": "a", "params": FAR_S3},
        denominator={"implementation": "b", "params": FAR_S3},
    )
    lan = claim(
        id="lan-claim",
        seed="003_x.txt",
        study="orders",
        metric="elapsed_per_1000_orders",
        numerator={"implementation": "a", "params": {"latency_profile": "lan"}},
        denominator={"implementation": "a", "params": {"latency_profile": "proxy_0ms"}},
    )
    folder = claim(id="folder-claim", seed="004_x.txt", study="watch", scaled="0.15x folder")
    stacked = on_stack(claim(id="stack-claim", seed=SEED_001, study="pyclients"), "seed001")
    return [far, lan, folder, stacked]


def test_the_index_of_a_small_run_shows_each_claims_metric_numerator_regime_and_versions():
    verdicts = [judge(one, AHEAD) for one in fixture_claims()]
    replication = Replication(
        "run-a", verdicts, readers=READERS, manifest=MANIFEST, topology="localhost"
    )
    page = index_html(replication, {})
    rows = {v.claim.id: page[page.index(f"<b>{v.claim.id}</b>") :] for v in verdicts}
    rows = {claim_id: row[: row.index("</tr>")] for claim_id, row in rows.items()}
    for claim_id, row in rows.items():
        assert "rps, " in row or "elapsed_per_1000_orders, " in row, claim_id
        assert "(numerator) over" in row, claim_id
    # Each row names its context lines by number; each line is said once, above the table.
    notes = dict(re.findall(r'<li id="context-(\d+)">([^<]*)</li>', page))
    assert notes and all(page.count(f">{note}</li>") == 1 for note in notes.values())

    def context(claim_id: str) -> str:
        linked = re.findall(r'href="#context-(\d+)"', rows[claim_id])
        return html.unescape(" | ".join(notes[number] for number in linked))

    assert "250 ms" in context("far-claim")
    assert "grpcio 9.9.9" in context("far-claim") and "grpcio 1.28.1" in context("far-claim")
    assert "loopback" in context("lan-claim")
    assert "Scaled folder: 0.15x folder" in context("folder-claim")
    stack = context("stack-claim-seed-stack")
    assert "this run grpcio 1.62.1" in stack and "the seed grpcio 1.62.1" in stack
    # Turned around: a claim with no regime and no library stack links no line.
    plain = Replication("run-b", [judge(claim(study="watch"), AHEAD)], readers=READERS)
    bare = index_html(replace(plain, manifest=MANIFEST), {})
    assert "context-" not in bare and "Context the rows refer to" not in bare
    # One paragraph per seed above the table, and the study page says the regime too.
    assert page.index("Seed 000 (aws_io; 1 claims)") < page.index('<table class="verdicts">')
    assert "250 ms" in study_html(replace(replication, verdicts=verdicts[:1]))


def test_readme_summary_is_the_paragraphs_and_a_link_to_the_index():
    verdicts = [judge(one, AHEAD) for one in fixture_claims()]
    summary = readme_summary(Replication("run-a", verdicts))
    assert summary.count("Seed ") == 4
    assert summary.endswith("[reports/run-a/index.html](reports/run-a/index.html).")


def test_files_written_before_the_one_id_convention_read_with_current_ids(tmp_path):
    """Old hello steady and pyclients seed-method ids (unsuffixed) map to the suffixed ones,
    once for all readers: a committed ledger and a readings file written before the change."""
    from perflab.analysis.claim_ids import current_id, renamed
    from perflab.analysis.claims import read_claims
    from perflab.analysis.ledger import Ledger
    from perflab.analysis.sites import load_readings

    ids = {claim.id for claim in read_claims(REFERENCE / "claims.yml")}
    # Every renamed id is a claim's (stack copies aside: hello has none) and no old id is.
    assert {new for new in renamed().values() if not new.endswith("-seed-stack")} <= ids
    assert not set(renamed()) & ids
    old = "pyclients-grpclib-faster-request-reply"
    assert current_id(old) == old + "-seed-method"
    assert current_id(old + "-seed-stack") == old + "-seed-method-seed-stack"
    assert current_id("hello-sync-w1-beats-grpclib-asyncio") == (
        "hello-sync-w1-beats-grpclib-asyncio-steady"
    )
    # A current id passes unchanged (the map applies to a file of any age).
    assert current_id(old + "-steady") == old + "-steady"
    ledger = Ledger.read(REFERENCE.parent / "20261125-quick")
    assert ledger is not None
    for look in ledger.taken:
        # (It may name a claim since split or dropped; only the renamed ones are mapped.)
        assert not set(look.open_claims + look.chosen_claims) & set(renamed())
        assert "pyclients-grpclib-faster-request-reply-seed-method" in look.open_claims
    readings = load_readings(REFERENCE.parent / "readings" / "20261125-quick.json")
    named = {r.claim for r in readings.readings} | set(readings.verdicts)
    assert "hello-sync-w1-beats-grpclib-asyncio-steady" in named
    assert not named & set(renamed())
