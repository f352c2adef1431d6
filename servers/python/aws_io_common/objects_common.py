"""aws_io study: what the grpcio and the grpclib servers share, beside their own RPC code.

Credentials from the roles' env file, the listing-to-message conversion, and finding the
MongoDB collections of server processes that were killed before they could drop theirs.
Imports only protobuf messages, so both servers (and their different loops) can use it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import objects_pb2

# Each server process saves into its own collection, named after its pid.
COLLECTION_PREFIX = "objects_"


def apply_env_file(path: str) -> None:
    """Credentials from a 0600 file the roles wrote; variables already set win (real AWS)."""
    if path and Path(path).is_file():
        for line in Path(path).read_text().splitlines():
            key, sep, value = line.partition("=")
            if sep and not key.startswith("#"):
                os.environ.setdefault(key.strip(), value.strip())


def mongo_uris(mongo_uri: str, admin_mongo_uri: str) -> tuple[str, str]:
    """The URI the calls use, and the one the server prepares and cleans up through.

    A cell's latency proxy stands in front of mongo_uri only: listing and dropping old
    collections through admin_mongo_uri (empty: mongo_uri) costs no proxied round trips
    before READY or after the load. PERFLAB_MONGO_URI (a real MongoDB) wins for both.
    """
    secret = os.environ.get("PERFLAB_MONGO_URI")
    if secret:
        return secret, secret
    return mongo_uri, admin_mongo_uri or mongo_uri


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stale(names: list[str]) -> list[str]:
    """Collections of server processes that are gone (killed before they could drop theirs)."""
    return [
        name
        for name in names
        if name.startswith(COLLECTION_PREFIX)
        and name.removeprefix(COLLECTION_PREFIX).isdigit()
        and not pid_alive(int(name.removeprefix(COLLECTION_PREFIX)))
    ]


def to_info(obj: dict[str, Any]) -> objects_pb2.ObjectInfo:
    return objects_pb2.ObjectInfo(
        key=obj["Key"],
        size=obj["Size"],
        etag=obj.get("ETag", "").strip('"'),
        last_modified=obj["LastModified"].isoformat(),
    )
