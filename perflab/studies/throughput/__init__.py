"""Seed 002, throughput: single-stream bytes/s of a huge server stream, and what TLS costs."""

from perflab.contract.study import Study
from perflab.studies.throughput.matrix import expand

STUDY = Study(
    id="throughput",
    expand=expand,
    uses_ghz=False,
    # iperf3 and openssl (the floor cells) come with host_packages.
    builds=("codegen_python", "tls_certs", "go_build", "cpp_build", "host_packages"),
)

__all__ = ["STUDY"]
