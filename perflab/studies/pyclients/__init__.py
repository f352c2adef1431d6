"""Seed 001, pyclients: what a Python gRPC client costs, against a C++ server."""

from perflab.contract.study import Study
from perflab.studies.pyclients.matrix import expand

STUDY = Study(
    id="pyclients",
    expand=expand,
    uses_ghz=False,
    builds=("codegen_python", "pyclients_build"),
)

__all__ = ["STUDY"]
