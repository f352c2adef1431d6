"""Seed 001, pyclients: what a Python gRPC client costs, against a C++ server."""

from perflab.studies.pyclients.matrix import expand
from perflab.study import Study

STUDY = Study(
    id="pyclients",
    expand=expand,
    uses_ghz=False,
    builds=("codegen_python", "pyclients_build"),
)

__all__ = ["STUDY"]
