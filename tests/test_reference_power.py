"""Every claim states its bounds and shows its power on the reference run's index (issue 26,
"Done when"): built from the committed reference run and data/reference/claims.yml, without
tests/test_claims_file.py's heavy reference tables."""

from __future__ import annotations

import html
import re
from pathlib import Path

import yaml

from perflab.analysis.claims import BOUND_FORMS
from perflab.analysis.findings import stated_test
from perflab.analysis.replication import index_html

REPO = Path(__file__).resolve().parent.parent
REFERENCE = REPO / "data" / "reference"
# Why a claim may show no power: each is a design_power reason, said in its cell.
NO_POWER = {
    "no cell counted its calls",
    "the seed publishes no figure to test",
    "not measured",
    "its groups were not paired within rounds",
}
# A ratio claim's power over rounds, or an error rate's over cells (its figures rates).
COMPUTED = re.compile(
    r"^\d+ rounds; at (the seed's [\d.]+x|no difference \(1x\)): \d+% holds; at the null "
    r"[\d.]+x: \d+% does not hold"
    r"|^\d+ cells; at the seed's [\d.]+%: \d+% holds; at the null [\d.]+%: \d+% does not hold"
)
ROW = re.compile(r"<tr><td>.*?</tr>", re.S)
POWER_CELL = re.compile(r'<span title="[^"]*">([^<]*)</span>')


def claims_table(page: str) -> str:
    """The index's table of claims (the noise table after it has the same class)."""
    start = page.index('<table class="verdicts"><thead><tr>\n<th>seed</th>')
    return page[start : page.index("</table>", start)]


def test_every_claim_in_the_file_states_its_bound():
    raw = yaml.safe_load((REFERENCE / "claims.yml").read_text())
    entries = raw["claims"] if isinstance(raw, dict) else raw
    unstated = [
        entry["id"]
        for entry in entries
        if not isinstance(entry.get("bound"), dict) or not set(entry["bound"]) & set(BOUND_FORMS)
    ]
    assert unstated == []


def test_every_claim_on_the_reference_index_shows_its_bound_and_its_power(localhost_reference):
    _, replication = localhost_reference
    page = index_html(replication, {})
    rows = ROW.findall(claims_table(page))
    listed = replication.listed()
    assert len(rows) == len(listed)
    computed, unexplained = 0, []
    for verdict, row in zip(listed, rows, strict=True):
        assert f"<b>{html.escape(verdict.claim.id)}</b>" in row
        assert html.escape(stated_test(verdict.claim)) in row, verdict.claim.id
        (cell,) = POWER_CELL.findall(row)
        cell = html.unescape(cell)
        claim = verdict.claim
        if claim.kind == "error_rate" and claim.published is not None and verdict.deciding:
            # An error rate the seed gives a rate for has its power over cells.
            assert cell.split(";")[0].endswith(" cells"), f"{claim.id}: {cell}"
        if COMPUTED.match(cell):
            computed += 1
        elif cell.removeprefix("not computed: ").split(";")[0] not in NO_POWER:
            unexplained.append(f"{verdict.claim.id}: {cell}")
    assert unexplained == []
    # Turned around: a page whose cells all said "not computed" would pass the loop above.
    assert computed > len(listed) // 2


def test_the_index_headline_and_its_power_column_count_the_same_undecidable_readings(
    localhost_reference,
):
    # Both price more rounds at the margin the claims' A/A copies would set over them: the
    # headline once said 37 no design decides while 47 rows said no number of rounds did.
    _, replication = localhost_reference
    page = html.unescape(index_html(replication, {}))
    said = re.search(r"(\d+) of them sit where no design up to 30 rounds would decide", page)
    assert said is not None
    cells = POWER_CELL.findall(claims_table(page))
    never = sum("no number of rounds up to 30 decides it" in cell for cell in cells)
    assert never == int(said.group(1)) > 0
    more = re.search(r"more rounds would decide the other (\d+)", page)
    assert more is not None
    assert sum(re.search(r"\d+ rounds would decide it", cell) is not None for cell in cells) == int(
        more.group(1)
    )


def test_a_claim_the_seed_gives_no_figure_says_so_in_the_published_column(localhost_reference):
    _, replication = localhost_reference
    page = index_html(replication, {})
    rows = ROW.findall(claims_table(page))
    listed = replication.listed()
    unpublished = [
        row for verdict, row in zip(listed, rows, strict=True) if verdict.claim.published is None
    ]
    published = [
        row
        for verdict, row in zip(listed, rows, strict=True)
        if verdict.claim.published is not None
    ]
    assert unpublished and published
    assert all("<td>no figure</td>" in row for row in unpublished)
    assert not any("<td>no figure</td>" in row for row in published)
