"""Seed 000, aws_io: the Python servers under ghz when each call lists S3 and saves to MongoDB."""

from perflab.contract.study import Study
from perflab.studies.aws_io.matrix import expand

STUDY = Study(
    id="aws_io",
    expand=expand,
    uses_ghz=True,
    services=("s3", "mongo"),
    builds=("codegen_python", "ghz", "s3_versitygw", "mongo_ferretdb", "toxiproxy"),
)

__all__ = ["STUDY"]
