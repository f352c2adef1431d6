"""Capacity (beyond the seeds): latency against offered load for every hello server, the
knee at an SLO, and what a call costs the server in CPU."""

from perflab.studies.capacity.matrix import expand
from perflab.study import Study

STUDY = Study(
    id="capacity",
    expand=expand,
    uses_ghz=True,
    builds=("codegen_python", "go_build", "cpp_build", "ghz"),
)

__all__ = ["STUDY"]
