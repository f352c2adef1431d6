"""Host-side helpers of the aws_io study: seed the S3 bucket, check S3 and MongoDB answer.

Runs with the host venv (boto3, pymongo); the controller never imports it.

    python -m perflab.studies.aws_io.objstore seed \
        --endpoint http://127.0.0.1:17070 --bucket perflab-objects \
        --objects 893 --env-file ~/.perflab/aws_io/client.env

Credentials come from the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY) or an
env file the roles wrote with mode 0600; they are never printed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from perflab.host.services import probe, read_env_file, safe_endpoint

KEY_FORMAT = "objects/{:05d}.json"


def apply_env_file(path: str) -> None:
    """Secrets from a 0600 file the roles wrote; the environment wins when it sets them."""
    if path and Path(path).expanduser().is_file():
        for key, value in read_env_file(str(Path(path).expanduser())).items():
            os.environ.setdefault(key, value)


def s3_client(endpoint: str, region: str = "us-east-1") -> Any:
    import boto3

    # An empty endpoint means real AWS S3: boto3 then resolves the region's own endpoint.
    return boto3.client("s3", endpoint_url=endpoint or None, region_name=region)


def object_keys(count: int) -> list[str]:
    return [KEY_FORMAT.format(i) for i in range(count)]


def list_keys(client: Any, bucket: str, prefix: str = "") -> list[str]:
    keys: list[str] = []
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        keys += [obj["Key"] for obj in page.get("Contents", [])]
    return keys


def seed(client: Any, bucket: str, count: int) -> int:
    """Creates the bucket and the objects missing from it; returns how many were written."""
    from botocore.exceptions import ClientError

    try:
        client.head_bucket(Bucket=bucket)
    except ClientError:
        client.create_bucket(Bucket=bucket)
    present = set(list_keys(client, bucket, "objects/"))
    written = 0
    for index, key in enumerate(object_keys(count)):
        if key not in present:
            # Small JSON bodies of varying size: the listing, not the bytes, is what is measured.
            body = json.dumps({"index": index, "pad": "x" * (index % 97)}).encode()
            client.put_object(Bucket=bucket, Key=key, Body=body, ContentType="application/json")
            written += 1
    return written


def check(endpoint: str, region: str, bucket: str, objects: int, mongo_uri: str) -> list[str]:
    """Problems that must stop the study before any cell: each names the endpoint it is about."""
    s3_name = f"S3 {safe_endpoint(endpoint)}" if endpoint else f"AWS S3 (region {region})"
    mongo_name = f"MongoDB {safe_endpoint(mongo_uri)}"
    targets = {"MongoDB": mongo_uri}
    if endpoint:
        targets["S3"] = endpoint
    problems = probe(targets)
    if problems:
        return problems
    try:
        found = len(list_keys(s3_client(endpoint, region), bucket, "objects/"))
        if found < objects:
            problems.append(f"{s3_name}: bucket {bucket} holds {found} objects, not {objects}")
    except Exception as exc:  # noqa: BLE001 - any failure to list is the reason to refuse
        problems.append(f"{s3_name}: cannot list bucket {bucket}: {type(exc).__name__}: {exc}")
    try:
        import pymongo

        client = pymongo.MongoClient(mongo_uri, serverSelectionTimeoutMS=3000)
        client.admin.command("ping")
        client.close()
    except Exception as exc:  # noqa: BLE001
        # The message of a failed connection may repeat the URI: name the endpoint only.
        problems.append(f"{mongo_name}: does not answer ping ({type(exc).__name__})")
    return problems


def ready_args(args: argparse.Namespace, matrix: dict[str, Any]) -> argparse.Namespace:
    """The check's arguments from perflab_matrix_aws_io and the host prefix."""
    args.endpoint = matrix["s3_endpoint"]
    args.bucket = matrix["bucket"]
    args.objects = int(matrix["objects"])
    args.mongo_uri = matrix["mongo_uri"]
    args.env_file = str(Path(args.home).expanduser() / "aws_io" / "client.env")
    return args


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="perflab.studies.aws_io.objstore", description=__doc__)
    parser.add_argument("action", choices=["seed", "count", "check", "ready"])
    parser.add_argument("--endpoint", default="", help="S3 endpoint URL; empty: real AWS S3")
    parser.add_argument("--region", default="us-east-1")
    parser.add_argument("--bucket", help="required but by ready")
    parser.add_argument("--objects", type=int, default=893)
    parser.add_argument("--env-file", default="")
    parser.add_argument("--mongo-uri", default="", help="check: PERFLAB_MONGO_URI wins")
    parser.add_argument("--home", default="", help="ready: the host prefix (its env file)")
    args = parser.parse_args(argv)
    if args.action == "ready":
        # The study's servers_check (perflab.contract.study): its matrix on stdin says what
        # to check, the host prefix where the roles wrote the client's credentials.
        args = ready_args(args, json.load(sys.stdin))
        args.action = "check"
    elif not args.bucket:
        parser.error(f"{args.action} needs --bucket")
    apply_env_file(args.env_file)
    if args.action == "check":
        mongo_uri = os.environ.get("PERFLAB_MONGO_URI") or args.mongo_uri
        problems = check(args.endpoint, args.region, args.bucket, args.objects, mongo_uri)
        for line in problems:
            print(f"refused: {line}", file=sys.stderr)
        if not problems:
            print(f"ready: bucket {args.bucket} and MongoDB answer")
        return 1 if problems else 0
    client = s3_client(args.endpoint, args.region)
    if args.action == "seed":
        written = seed(client, args.bucket, args.objects)
        total = len(list_keys(client, args.bucket, "objects/"))
        print(f"seeded: wrote {written}, bucket {args.bucket} holds {total} objects")
        if total < args.objects:
            print(f"bucket holds {total} < {args.objects} objects", file=sys.stderr)
            return 1
    else:
        print(len(list_keys(client, args.bucket, "objects/")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
