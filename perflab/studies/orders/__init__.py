"""Seed 003, orders: minimum latency of stamped orders from many clients to a grpcio server."""

from typing import Any

from perflab.contract.study import Study
from perflab.studies.orders.matrix import expand


def seed_rows(rows: Any) -> Any:
    """Its rows of the seeds' tables with its derived metrics (its analysis.seed_rows);
    pandas is imported when called, on the controller, never by a host importing the record."""
    from perflab.studies.orders.analysis import seed_rows as derived

    return derived(rows)


STUDY = Study(
    id="orders",
    expand=expand,
    uses_ghz=False,
    builds=("codegen_python", "tls_certs", "toxiproxy"),
    seed_rows=seed_rows,
)

__all__ = ["STUDY"]
