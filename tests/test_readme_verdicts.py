"""The README's verdict summary is the committed reference run's, regenerated, not typed:
a paragraph per seed and a link to the index."""

from __future__ import annotations

from pathlib import Path

from perflab.analysis.replication import readme_summary

REPO = Path(__file__).resolve().parent.parent


def test_readme_summary_is_the_reference_runs_verdicts(localhost_reference):
    readme = (REPO / "README.md").read_text()
    begin, end = "<!-- verdicts:begin -->\n", "\n<!-- verdicts:end -->"
    shown = readme[readme.index(begin) + len(begin) : readme.index(end)]
    _, replication = localhost_reference
    generated = readme_summary(replication)
    assert shown == generated, "regenerate: .venv/bin/perflab verdicts --run-dir data/<reference>"
