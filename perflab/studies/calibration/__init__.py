"""The load generator's ceiling: every pinned ghz against the C++ reference server."""

from perflab.contract.study import Study
from perflab.studies.calibration.matrix import expand

STUDY = Study(
    id="calibration",
    expand=expand,
    uses_ghz=True,
    builds=("cpp_build", "ghz"),
    pseudo=True,
)

__all__ = ["STUDY"]
