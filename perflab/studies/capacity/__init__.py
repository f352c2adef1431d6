"""Capacity (beyond the seeds): latency against offered load for every hello server, the
knee at an SLO, and what a call costs the server in CPU."""

from perflab.contract.study import Study
from perflab.studies.capacity.matrix import expand

STUDY = Study(
    id="capacity",
    expand=expand,
    uses_ghz=True,
    builds=("codegen_python", "go_build", "cpp_build", "ghz"),
)

__all__ = ["STUDY"]
