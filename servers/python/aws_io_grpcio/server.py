"""aws_io study: sync grpcio server listing an S3 bucket (boto3) and saving to MongoDB (pymongo).

As seed 000's sync_server.py, with 1 or 10 worker threads. The boto3 client and the
MongoClient are made once per process and shared by the workers (both are thread-safe).
On exit it prints one line `STATS {...}`: calls, messages sent and errors per method,
which is how streaming cells count their messages. It also runs on seed 000's grpcio 1.28.1
(python/aws_io_grpcio_seed000, Python 3.8): no syntax or API newer than both.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from collections import Counter
from concurrent import futures
from pathlib import Path
from typing import Any

# A server on another library stack (impl.toml *_seed000) names that stack's generated code
# with --gen-path; it goes first on sys.path, before PYTHONPATH's, which an older protobuf
# cannot import. Taken out of argv before the parser sees it.
if "--gen-path" in sys.argv:
    _at = sys.argv.index("--gen-path")
    sys.path.insert(0, sys.argv[_at + 1])
    del sys.argv[_at : _at + 2]

import boto3  # noqa: E402
import grpc  # noqa: E402
import objects_pb2  # noqa: E402
import objects_pb2_grpc  # noqa: E402
import pymongo  # noqa: E402
from botocore.config import Config  # noqa: E402
from botocore.exceptions import BotoCoreError, ClientError  # noqa: E402
from pymongo.errors import PyMongoError  # noqa: E402

# The helpers both aws_io servers share live beside them (like the pyclients' harness).
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "aws_io_common"))
from objects_common import (  # noqa: E402
    COLLECTION_PREFIX,
    apply_env_file,
    mongo_uris,
    stale,
    to_info,
)

# Failures of a dependency are the dependency's, not the server's: say which one, as UNAVAILABLE.
DEPENDENCY_ERRORS: tuple[type[BaseException], ...] = (BotoCoreError, ClientError, PyMongoError)


class Stats:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.calls: Counter[str] = Counter()
        self.messages: Counter[str] = Counter()
        self.errors: Counter[str] = Counter()

    def add(self, method: str, messages: int = 0, error: str = "") -> None:
        with self.lock:
            self.calls[method] += 1
            self.messages[method] += messages
            if error:
                self.errors[f"{method}: {error}"] += 1

    def line(self) -> str:
        with self.lock:
            return "STATS " + json.dumps(
                {"calls": self.calls, "messages_sent": self.messages, "errors": self.errors}
            )


class Objects(objects_pb2_grpc.ObjectsServicer):
    def __init__(self, s3: Any, bucket: str, collection: Any, stats: Stats) -> None:
        self.s3 = s3
        self.bucket = bucket
        self.collection = collection
        self.stats = stats

    def _list(self, prefix: str) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        for page in self.s3.get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket, Prefix=prefix
        ):
            found += page.get("Contents", [])
        return found

    def _fail(self, method: str, context: grpc.ServicerContext, exc: BaseException) -> None:
        what = "MongoDB" if isinstance(exc, PyMongoError) else "S3"
        message = f"{what}: {type(exc).__name__}: {exc}"
        self.stats.add(method, error=message.splitlines()[0][:200])
        context.abort(grpc.StatusCode.UNAVAILABLE, message)

    def ListObjects(self, request, context):  # noqa: N802 - generated name
        try:
            listing = self._list(request.prefix)
        except DEPENDENCY_ERRORS as exc:
            self._fail("ListObjects", context, exc)
        self.stats.add("ListObjects", 1)
        return objects_pb2.ObjectList(objects=[to_info(obj) for obj in listing])

    def ListObjectsStream(self, request, context):  # noqa: N802 - generated name
        try:
            listing = self._list(request.prefix)
        except DEPENDENCY_ERRORS as exc:
            self._fail("ListObjectsStream", context, exc)
        sent = 0
        for obj in listing:
            yield to_info(obj)
            sent += 1
        self.stats.add("ListObjectsStream", sent)

    def ListAndSave(self, request, context):  # noqa: N802 - generated name
        try:
            listing = self._list(request.prefix)
            docs = [
                {"key": o["Key"], "size": o["Size"], "etag": o.get("ETag", "").strip('"')}
                for o in listing
            ]
            if docs:
                self.collection.insert_many(docs, ordered=False)
        except DEPENDENCY_ERRORS as exc:
            self._fail("ListAndSave", context, exc)
        self.stats.add("ListAndSave", 1)
        return objects_pb2.SaveReply(count=len(docs))


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--workers", type=int, default=10)
    parser.add_argument("--s3_endpoint", default="", help="empty: real AWS S3")
    parser.add_argument("--region", default="us-east-1")
    parser.add_argument("--bucket", required=True)
    parser.add_argument("--mongo_uri", default="mongodb://127.0.0.1:27017/")
    parser.add_argument(
        "--admin_mongo_uri", default="", help="for preparing and cleaning up; empty: mongo_uri"
    )
    parser.add_argument("--mongo_db", default="perflab")
    parser.add_argument("--env_file", default="", help="0600 KEY=VALUE file with credentials")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    apply_env_file(args.env_file)
    # A client per process, a connection pool big enough for every worker.
    config = Config(
        max_pool_connections=max(10, args.workers),
        connect_timeout=5,
        read_timeout=30,
        retries={"max_attempts": 2, "mode": "standard"},
    )
    s3 = boto3.client(
        "s3", endpoint_url=args.s3_endpoint or None, region_name=args.region, config=config
    )
    # PERFLAB_MONGO_URI (e.g. a real MongoDB with a password) wins over the options, so a
    # secret never has to appear in argv or in the run's data.
    calls_uri, admin_uri = mongo_uris(args.mongo_uri, args.admin_mongo_uri)
    mongo = pymongo.MongoClient(calls_uri, serverSelectionTimeoutMS=5000)
    admin = pymongo.MongoClient(admin_uri, serverSelectionTimeoutMS=5000)
    try:
        for name in stale(admin[args.mongo_db].list_collection_names()):
            admin[args.mongo_db].drop_collection(name)
    except PyMongoError as exc:
        # Not fatal: calls that need MongoDB will say it is unavailable.
        print(f"could not look for stale collections: {exc}", file=sys.stderr)
    collection_name = f"{COLLECTION_PREFIX}{os.getpid()}"
    collection = mongo[args.mongo_db][collection_name]
    stats = Stats()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=args.workers))
    objects_pb2_grpc.add_ObjectsServicer_to_server(
        Objects(s3, args.bucket, collection, stats), server
    )
    server.add_insecure_port(f"{args.host}:{args.port}")
    server.start()
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    signal.signal(signal.SIGINT, lambda *_: done.set())
    # Which grpcio serves is on record in the server's log (two stacks run this file).
    print(f"grpcio {grpc.__version__}", flush=True)
    print("READY", flush=True)
    done.wait()
    # The load is over when the runner stops the server: a call still running was given up
    # by its client, and waiting for it measures nothing.
    server.stop(grace=None).wait()
    print(stats.line(), flush=True)
    # Each process saves into its own collection; drop it so repeated cells do not grow the store.
    try:
        admin[args.mongo_db].drop_collection(collection_name)
    except PyMongoError as exc:
        print(f"could not drop {collection_name}: {exc}", file=sys.stderr)
    mongo.close()
    admin.close()


if __name__ == "__main__":
    main()
