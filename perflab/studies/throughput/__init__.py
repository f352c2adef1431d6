"""Seed 002, throughput: single-stream bytes/s of a huge server stream, and what TLS costs."""

from perflab.contract.study import Study
from perflab.studies.lazy import LazyHook
from perflab.studies.throughput.matrix import expand

# Its hooks import its analysis (pandas) when called, on the controller, never when a host
# imports the record.
STUDY = Study(
    id="throughput",
    expand=expand,
    uses_ghz=False,
    # iperf3 and openssl (the floor cells) come with host_packages.
    builds=("codegen_python", "tls_certs", "go_build", "cpp_build", "host_packages"),
    claim_frame=LazyHook("perflab.studies.throughput.analysis", "claim_frame"),
    seed_rows=LazyHook("perflab.studies.throughput.analysis", "seed_rows"),
    seed_metrics=(("throughput", "throughput"),),
)

__all__ = ["STUDY"]
