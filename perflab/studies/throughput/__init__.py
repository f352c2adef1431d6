"""Seed 002, throughput: single-stream bytes/s of a huge server stream, and what TLS costs."""

from typing import Any

from perflab.contract.study import Study
from perflab.studies.throughput.matrix import expand


def claim_frame(frame: Any) -> Any:
    """The derived rows the verdicts judge, from the run's tidy frame (its
    analysis.claim_frame); pandas is imported when called, on the controller, never by a
    host importing the record."""
    from perflab.studies.throughput.analysis import claim_frame as derived

    return derived(frame)


def seed_rows(rows: Any) -> Any:
    """Its rows of the seeds' tables with its derived metrics (its analysis.seed_rows);
    pandas is imported when called, on the controller, never by a host importing the record."""
    from perflab.studies.throughput.analysis import seed_rows as derived

    return derived(rows)


STUDY = Study(
    id="throughput",
    expand=expand,
    uses_ghz=False,
    # iperf3 and openssl (the floor cells) come with host_packages.
    builds=("codegen_python", "tls_certs", "go_build", "cpp_build", "host_packages"),
    claim_frame=claim_frame,
    seed_rows=seed_rows,
)

__all__ = ["STUDY"]
