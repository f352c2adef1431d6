"""Seed 003, orders: minimum latency of stamped orders from many clients to a grpcio server."""

from perflab.studies.orders.matrix import expand
from perflab.study import Study

STUDY = Study(
    id="orders",
    expand=expand,
    uses_ghz=False,
    builds=("codegen_python", "tls_certs", "toxiproxy"),
)

__all__ = ["STUDY"]
