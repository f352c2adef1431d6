"""Seed 004, watch: CPU and RAM of a Node.js watch server, one big message vs one per key."""

from typing import Any

from perflab.contract.study import Study
from perflab.studies.watch.matrix import expand


def seed_rows(rows: Any) -> Any:
    """Its rows of the seeds' tables with its derived metrics (its analysis.seed_rows);
    pandas is imported when called, on the controller, never by a host importing the record."""
    from perflab.studies.watch.analysis import seed_rows as derived

    return derived(rows)


STUDY = Study(
    id="watch",
    expand=expand,
    uses_ghz=False,
    builds=("node_build", "go_build"),
    seed_rows=seed_rows,
)

__all__ = ["STUDY"]
