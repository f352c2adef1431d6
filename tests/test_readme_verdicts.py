"""The README's verdict summary is the committed reference run's, regenerated, not typed:
a paragraph per seed and a link to the index."""

from __future__ import annotations

from pathlib import Path

import yaml

from perflab.analysis.replication import REFERENCE_RUNS_FILE, readme_summary, replicate
from perflab.analysis.run import read as read_folder
from perflab.cli import claim_frame_hooks

REPO = Path(__file__).resolve().parent.parent


def test_readme_summary_is_the_reference_runs_verdicts():
    readme = (REPO / "README.md").read_text()
    begin, end = "<!-- verdicts:begin -->\n", "\n<!-- verdicts:end -->"
    shown = readme[readme.index(begin) + len(begin) : readme.index(end)]
    reference = REPO / "data" / "reference"
    run_id = yaml.safe_load((reference / REFERENCE_RUNS_FILE).read_text())["localhost"]
    generated = readme_summary(
        replicate(read_folder(REPO / "data" / run_id, claim_frame_hooks()), reference)
    )
    assert shown == generated, "regenerate: .venv/bin/perflab verdicts --run-dir data/<reference>"
