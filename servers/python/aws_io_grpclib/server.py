"""aws_io study: grpclib server (asyncio or uvloop) with aioboto3 and pymongo's async client.

As seed 000's async_server.py: grpclib stubs over protobuf messages (`--python_grpc_out`).
The S3 client and the AsyncMongoClient are opened once, before READY, and shared by every
call. On exit it prints one line `STATS {...}`: calls, messages sent and errors per method.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import aioboto3
import objects_grpc
import objects_pb2
from aiobotocore.config import AioConfig
from botocore.exceptions import BotoCoreError, ClientError
from grpclib.const import Status
from grpclib.exceptions import GRPCError
from grpclib.server import Server, Stream
from grpclib.utils import graceful_exit
from pymongo import AsyncMongoClient
from pymongo.errors import PyMongoError

# The helpers both aws_io servers share live beside them (like the pyclients' harness).
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "aws_io_common"))
from objects_common import (  # noqa: E402
    COLLECTION_PREFIX,
    apply_env_file,
    mongo_uris,
    stale,
    to_info,
)

DEPENDENCY_ERRORS: tuple[type[BaseException], ...] = (BotoCoreError, ClientError, PyMongoError)


class Stats:
    """One event loop: no lock needed."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self.messages: Counter[str] = Counter()
        self.errors: Counter[str] = Counter()

    def add(self, method: str, messages: int = 0, error: str = "") -> None:
        self.calls[method] += 1
        self.messages[method] += messages
        if error:
            self.errors[f"{method}: {error}"] += 1

    def line(self) -> str:
        return "STATS " + json.dumps(
            {"calls": self.calls, "messages_sent": self.messages, "errors": self.errors}
        )


class Objects(objects_grpc.ObjectsBase):
    def __init__(self, s3: Any, bucket: str, collection: Any, stats: Stats) -> None:
        self.s3 = s3
        self.bucket = bucket
        self.collection = collection
        self.stats = stats

    async def _list(self, prefix: str) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        paginator = self.s3.get_paginator("list_objects_v2")
        async for page in paginator.paginate(Bucket=self.bucket, Prefix=prefix):
            found += page.get("Contents", [])
        return found

    def _fail(self, method: str, exc: BaseException) -> GRPCError:
        what = "MongoDB" if isinstance(exc, PyMongoError) else "S3"
        message = f"{what}: {type(exc).__name__}: {exc}"
        self.stats.add(method, error=message.splitlines()[0][:200])
        return GRPCError(Status.UNAVAILABLE, message)

    async def ListObjects(self, stream: Stream) -> None:  # noqa: N802 - generated name
        request = await stream.recv_message()
        assert request is not None
        try:
            listing = await self._list(request.prefix)
        except DEPENDENCY_ERRORS as exc:
            raise self._fail("ListObjects", exc) from exc
        await stream.send_message(objects_pb2.ObjectList(objects=[to_info(o) for o in listing]))
        self.stats.add("ListObjects", 1)

    async def ListObjectsStream(self, stream: Stream) -> None:  # noqa: N802 - generated name
        request = await stream.recv_message()
        assert request is not None
        try:
            listing = await self._list(request.prefix)
        except DEPENDENCY_ERRORS as exc:
            raise self._fail("ListObjectsStream", exc) from exc
        sent = 0
        for obj in listing:
            await stream.send_message(to_info(obj))
            sent += 1
        self.stats.add("ListObjectsStream", sent)

    async def ListAndSave(self, stream: Stream) -> None:  # noqa: N802 - generated name
        request = await stream.recv_message()
        assert request is not None
        try:
            listing = await self._list(request.prefix)
            docs = [
                {"key": o["Key"], "size": o["Size"], "etag": o.get("ETag", "").strip('"')}
                for o in listing
            ]
            if docs:
                await self.collection.insert_many(docs, ordered=False)
        except DEPENDENCY_ERRORS as exc:
            raise self._fail("ListAndSave", exc) from exc
        await stream.send_message(objects_pb2.SaveReply(count=len(docs)))
        self.stats.add("ListAndSave", 1)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--loop", choices=["asyncio", "uvloop"], default="asyncio")
    parser.add_argument("--s3_endpoint", default="", help="empty: real AWS S3")
    parser.add_argument("--region", default="us-east-1")
    parser.add_argument("--bucket", required=True)
    parser.add_argument("--mongo_uri", default="mongodb://127.0.0.1:27017/")
    parser.add_argument(
        "--admin_mongo_uri", default="", help="for preparing and cleaning up; empty: mongo_uri"
    )
    parser.add_argument("--mongo_db", default="perflab")
    parser.add_argument("--env_file", default="", help="0600 KEY=VALUE file with credentials")
    parser.add_argument(
        "--s3_pool", type=int, default=64, help="S3 connections kept open (aiohttp pool size)"
    )
    return parser.parse_args()


async def serve(args: argparse.Namespace) -> None:
    stats = Stats()
    config = AioConfig(
        max_pool_connections=args.s3_pool,
        connect_timeout=5,
        read_timeout=30,
        retries={"max_attempts": 2, "mode": "standard"},
    )
    async with contextlib.AsyncExitStack() as stack:
        s3 = await stack.enter_async_context(
            aioboto3.Session().client(
                "s3",
                endpoint_url=args.s3_endpoint or None,
                region_name=args.region,
                config=config,
            )
        )
        calls_uri, admin_uri = mongo_uris(args.mongo_uri, args.admin_mongo_uri)
        mongo: AsyncMongoClient = AsyncMongoClient(calls_uri, serverSelectionTimeoutMS=5000)
        admin: AsyncMongoClient = AsyncMongoClient(admin_uri, serverSelectionTimeoutMS=5000)
        try:
            for name in stale(await admin[args.mongo_db].list_collection_names()):
                await admin[args.mongo_db].drop_collection(name)
        except PyMongoError as exc:
            # Not fatal: calls that need MongoDB will say it is unavailable.
            print(f"could not look for stale collections: {exc}", flush=True)
        collection_name = f"{COLLECTION_PREFIX}{os.getpid()}"
        collection = mongo[args.mongo_db][collection_name]
        server = Server([Objects(s3, args.bucket, collection, stats)])
        with graceful_exit([server]):
            await server.start(args.host, args.port)
            print("READY", flush=True)
            await server.wait_closed()
        print(stats.line(), flush=True)
        # Each process saves into its own collection; drop it so repeated cells do not grow it.
        try:
            await admin[args.mongo_db].drop_collection(collection_name)
        except PyMongoError as exc:
            print(f"could not drop {collection_name}: {exc}", flush=True)
        await mongo.close()
        await admin.close()


def main() -> None:
    args = parse_args()
    apply_env_file(args.env_file)
    if args.loop == "uvloop":
        # Imported only here so the asyncio variant never loads uvloop.
        import uvloop

        uvloop.run(serve(args))
    else:
        asyncio.run(serve(args))


if __name__ == "__main__":
    main()
