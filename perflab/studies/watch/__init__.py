"""Seed 004, watch: CPU and RAM of a Node.js watch server, one big message vs one per key."""

from perflab.contract.study import Study
from perflab.studies.lazy import LazyHook
from perflab.studies.watch.matrix import expand

# Its hooks import its analysis (pandas) when called, on the controller, never when a host
# imports the record.
STUDY = Study(
    id="watch",
    expand=expand,
    uses_ghz=False,
    builds=("node_build", "go_build"),
    seed_rows=LazyHook("perflab.studies.watch.analysis", "seed_rows"),
)

__all__ = ["STUDY"]
