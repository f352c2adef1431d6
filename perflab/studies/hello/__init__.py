"""Seed 000, hello server: req/s and latency of a compute-only unary RPC under ghz."""

from perflab.contract.study import Study
from perflab.studies.hello.matrix import expand

STUDY = Study(
    id="hello",
    expand=expand,
    uses_ghz=True,
    builds=("codegen_python", "seed000_stack", "go_build", "cpp_build", "ghz"),
)

__all__ = ["STUDY"]
