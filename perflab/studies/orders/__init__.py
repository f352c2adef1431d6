"""Seed 003, orders: minimum latency of stamped orders from many clients to a grpcio server."""

from perflab.contract.study import Study
from perflab.studies.lazy import LazyHook
from perflab.studies.orders.matrix import expand

# Its hooks import its analysis (pandas) when called, on the controller, never when a host
# imports the record.
STUDY = Study(
    id="orders",
    expand=expand,
    uses_ghz=False,
    builds=("codegen_python", "tls_certs", "toxiproxy"),
    seed_rows=LazyHook("perflab.studies.orders.analysis", "seed_rows"),
)

__all__ = ["STUDY"]
