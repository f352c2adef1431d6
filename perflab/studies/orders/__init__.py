"""Seed 003, orders: minimum latency of stamped orders from many clients to a grpcio server."""

from perflab.contract.study import Study
from perflab.studies.orders.matrix import expand

STUDY = Study(
    id="orders",
    expand=expand,
    uses_ghz=False,
    builds=("codegen_python", "tls_certs", "toxiproxy"),
)

__all__ = ["STUDY"]
