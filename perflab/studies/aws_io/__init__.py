"""Seed 000, aws_io: the Python servers under ghz when each call lists S3 and saves to MongoDB."""

from perflab.contract.study import Study
from perflab.studies.aws_io.matrix import expand

STUDY = Study(
    id="aws_io",
    expand=expand,
    uses_ghz=True,
    # Toxiproxy: latency profiles other than "none" delay S3 and MongoDB through it.
    builds=("codegen_python", "seed000_stack", "ghz", "toxiproxy"),
    server_builds=("s3_versitygw", "mongo_ferretdb"),
    # The bucket holds its objects and MongoDB answers, or the run is refused before any cell.
    servers_check=("perflab.studies.aws_io.objstore", "ready"),
)

__all__ = ["STUDY"]
