"""Seed 004, watch: CPU and RAM of a Node.js watch server, one big message vs one per key."""

from perflab.contract.study import Study
from perflab.studies.watch.matrix import expand

STUDY = Study(
    id="watch",
    expand=expand,
    uses_ghz=False,
    builds=("node_build", "go_build"),
)

__all__ = ["STUDY"]
