"""Capacity (beyond the seeds): latency against offered load for every hello server, the
knee at a fixed SLO found by an open-loop search, and what a call costs the server in CPU."""

from perflab.contract.study import Study
from perflab.studies.capacity.matrix import expand

STUDY = Study(
    id="capacity",
    expand=expand,
    uses_ghz=False,
    builds=("codegen_python", "go_build", "cpp_build"),
)

__all__ = ["STUDY"]
