"""Seed 000, aws api unary / stream / save to MongoDB: the Python servers under ghz when each
call lists an S3 bucket (893 objects) and, in list_save, inserts the listing into MongoDB."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from perflab.contract.cell import CellSpec, ServerSpec
from perflab.contract.latency import LATENCY_PROFILES as PROXY_PROFILES
from perflab.contract.matrix import (
    GhzCall,
    MatrixError,
    connections_suffix,
    ghz_connections,
    require_choice,
    require_positive_ints,
    require_positive_number,
    validate_implementations,
)

PROTO = "objects.proto"
# scenario -> the RPC ghz calls
CALLS = {
    "list_unary": "objects.Objects.ListObjects",
    "list_stream": "objects.Objects.ListObjectsStream",
    "list_save": "objects.Objects.ListAndSave",
}
SHAPES = ("seed_n200", "steady")
DEPENDENCIES = ("s3", "mongo")
# Latency added by Toxiproxy on the S3 and MongoDB paths (one-way ms per profile): the
# shared profiles, plus seed_far_s3, whose 250 ms each way makes a listing take about the
# 0.5-1 s the seed's remote AWS bucket took.
LATENCY_PROFILES: dict[str, float | None] = {**PROXY_PROFILES, "seed_far_s3": 250.0}
REQUEST = {"prefix": "objects/"}


def validate_endpoints(prefix: str, config: dict[str, Any]) -> dict[str, str]:
    """The S3 endpoint, bucket and MongoDB URI; none may carry a secret (they reach run data)."""
    s3 = config.get("s3_endpoint", "")
    if not isinstance(s3, str) or (s3 and urlsplit(s3).scheme not in ("http", "https")):
        raise MatrixError(f"{prefix}.s3_endpoint: {s3!r} is not an http(s) URL or '' (AWS S3)")
    if s3 and (urlsplit(s3).username or urlsplit(s3).password):
        raise MatrixError(f"{prefix}.s3_endpoint: must not hold credentials (use the environment)")
    bucket = config.get("bucket")
    if not isinstance(bucket, str) or not bucket:
        raise MatrixError(f"{prefix}.bucket: expected a bucket name, got {bucket!r}")
    mongo = config.get("mongo_uri")
    if not isinstance(mongo, str) or urlsplit(mongo).scheme not in ("mongodb", "mongodb+srv"):
        raise MatrixError(f"{prefix}.mongo_uri: {mongo!r} is not a mongodb:// URI")
    if "@" in urlsplit(mongo).netloc:
        raise MatrixError(
            f"{prefix}.mongo_uri: must not hold credentials (it is recorded in the run's data); "
            "export PERFLAB_MONGO_URI instead"
        )
    return {"s3_endpoint": s3, "bucket": bucket, "mongo_uri": mongo}


def latency_proxies(prefix: str, profile: str, endpoints: dict[str, str]) -> list[dict[str, Any]]:
    """Toxiproxy in front of S3 and MongoDB for one profile; none for "none"."""
    one_way_ms = LATENCY_PROFILES[profile]
    if one_way_ms is None:
        return []
    s3 = urlsplit(endpoints["s3_endpoint"])
    if s3.scheme != "http":
        raise MatrixError(
            f"{prefix}.latency_profiles: {profile!r} needs a plain http s3_endpoint to put a "
            f"proxy in front of, not {endpoints['s3_endpoint']!r}"
        )
    mongo = urlsplit(endpoints["mongo_uri"])
    if mongo.scheme != "mongodb":
        raise MatrixError(f"{prefix}.latency_profiles: {profile!r} needs a mongodb:// mongo_uri")
    return [
        {
            "option": "s3_endpoint",
            "upstream": f"{s3.hostname}:{s3.port or 80}",
            "one_way_ms": one_way_ms,
            "url": "http://{listen}",
        },
        {
            "option": "mongo_uri",
            "upstream": f"{mongo.hostname}:{mongo.port or 27017}",
            "one_way_ms": one_way_ms,
            "url": "mongodb://{listen}/" + (f"?{mongo.query}" if mongo.query else ""),
        },
    ]


def cell(
    run_id: str,
    name: str,
    impl: str,
    options: dict[str, Any],
    scenario: str,
    shape: str,
    concurrency: int,
    connections: int,
    latency: str,
    repeat: int,
    knobs: dict[str, Any],
    dependencies: list[str],
    proxies: list[dict[str, Any]],
) -> CellSpec:
    """One server, call, load shape, concurrency, connection count, latency profile, repeat."""
    load = GhzCall(PROTO, CALLS[scenario], REQUEST).load(
        concurrency, connections, timeout_s=knobs["timeout_s"]
    )
    params: dict[str, Any] = {
        "shape": shape,
        "concurrency": concurrency,
        "connections": connections,
        "objects": knobs["objects"],
        "latency_profile": latency,
    }
    if shape == "seed_n200":
        load.total, load.warmup_total = knobs["seed_total"], knobs["seed_warmup"]
        params["total"] = knobs["seed_total"]
    else:
        load.duration_s, load.warmup_s = knobs["duration_s"], knobs["warmup_s"]
        params["duration_s"] = knobs["duration_s"]
    suffix = "" if latency == "none" else f"-{latency}"
    return CellSpec(
        run_id=run_id,
        study="aws_io",
        cell_id=f"{name}-{scenario}-{shape}-c{concurrency}{connections_suffix(connections)}"
        f"{suffix}-r{repeat}",
        scenario=scenario,
        implementation=name,
        client="ghz",
        params=params,
        repeat=repeat,
        server=ServerSpec(impl=impl, options=dict(options)),
        load=load,
        dependencies=list(dependencies),
        latency_proxies=[dict(e) for e in proxies],
    )


# Keys a latency profile may set for its own cells (`latency_overrides`): a far S3 makes
# every call slow, so its cells want fewer shapes and concurrencies but more repeats.
OVERRIDABLE = (
    "scenarios",
    "shapes",
    "concurrency",
    "repeats",
    "steady_duration_s",
    "warmup_s",
)


def regime(prefix: str, config: dict[str, Any], knobs: dict[str, Any]) -> dict[str, Any]:
    """The sizes of one latency profile's cells, each key validated under its own name."""
    scenarios = require_choice(f"{prefix}.scenarios", config.get("scenarios"), CALLS)
    shapes = require_choice(f"{prefix}.shapes", config.get("shapes"), SHAPES)
    concurrencies = require_positive_ints(f"{prefix}.concurrency", config.get("concurrency"))
    connections = ghz_connections(prefix, config, concurrencies)
    repeats = require_positive_ints(f"{prefix}.repeats", [config.get("repeats")])[0]
    duration_s = require_positive_number(
        f"{prefix}.steady_duration_s", config.get("steady_duration_s")
    )
    warmup_s = require_positive_number(f"{prefix}.warmup_s", config.get("warmup_s"))
    return {
        "scenarios": scenarios,
        "shapes": shapes,
        "concurrencies": concurrencies,
        "connections": connections,
        "repeats": repeats,
        "knobs": {**knobs, "duration_s": duration_s, "warmup_s": warmup_s},
    }


def latency_overrides(
    prefix: str, config: dict[str, Any], latencies: list[str]
) -> dict[str, dict[str, Any]]:
    """`latency_overrides`: per latency profile, the keys of OVERRIDABLE its cells set."""
    key = f"{prefix}.latency_overrides"
    overrides = config.get("latency_overrides") or {}
    if not isinstance(overrides, dict):
        raise MatrixError(
            f"{key}: expected a mapping of latency profile to keys, got {overrides!r}"
        )
    for profile, changes in overrides.items():
        if profile not in LATENCY_PROFILES:
            raise MatrixError(
                f"{key}: {profile!r} is not a latency profile {tuple(LATENCY_PROFILES)}"
            )
        if not isinstance(changes, dict):
            raise MatrixError(f"{key}.{profile}: expected a mapping, got {changes!r}")
        unknown = sorted(set(changes) - set(OVERRIDABLE))
        if unknown:
            raise MatrixError(f"{key}.{profile}: {unknown} cannot be set per profile {OVERRIDABLE}")
    return {profile: dict(overrides.get(profile, {})) for profile in latencies}


def expand(run_id: str, config: dict[str, Any], known_impls: set[str]) -> list[CellSpec]:
    prefix = "perflab_matrix_aws_io"
    impls = validate_implementations(
        f"{prefix}.implementations", config.get("implementations"), known_impls
    )
    selected = config.get("run_implementations") or list(impls)
    require_choice(f"{prefix}.run_implementations", selected, impls)
    seed_total = require_positive_ints(f"{prefix}.seed_total", [config.get("seed_total")])[0]
    seed_warmup = require_positive_ints(
        f"{prefix}.seed_warmup_total", [config.get("seed_warmup_total")]
    )[0]
    objects = require_positive_ints(f"{prefix}.objects", [config.get("objects")])[0]
    timeout_s = require_positive_number(f"{prefix}.timeout_s", config.get("timeout_s"))
    endpoints = validate_endpoints(prefix, config)
    dependencies = config.get("dependencies")
    if dependencies is None or dependencies == []:
        dependencies = []
    else:
        require_choice(f"{prefix}.dependencies", dependencies, DEPENDENCIES)
    latencies = require_choice(
        f"{prefix}.latency_profiles", config.get("latency_profiles"), LATENCY_PROFILES
    )
    proxies = {p: latency_proxies(prefix, p, endpoints) for p in latencies}
    knobs = {
        "objects": objects,
        "seed_total": seed_total,
        "seed_warmup": seed_warmup,
        "timeout_s": timeout_s,
    }
    overrides = latency_overrides(prefix, config, latencies)
    # The shared keys are checked first, so a profile's error can only be its own key's.
    base = regime(prefix, config, knobs)
    regimes = {
        latency: regime(
            f"{prefix}.latency_overrides.{latency}", {**config, **overrides[latency]}, knobs
        )
        if overrides[latency]
        else base
        for latency in latencies
    }

    cells = []
    for name in selected:
        entry = impls[name]
        options = {**dict(entry.get("options", {})), **endpoints}
        for latency in latencies:
            sizes = regimes[latency]
            for scenario in sizes["scenarios"]:
                for shape in sizes["shapes"]:
                    for concurrency in sizes["concurrencies"]:
                        for conns in sizes["connections"]:
                            for repeat in range(1, sizes["repeats"] + 1):
                                cells.append(
                                    cell(
                                        run_id,
                                        name,
                                        entry["impl"],
                                        options,
                                        scenario,
                                        shape,
                                        concurrency,
                                        conns,
                                        latency,
                                        repeat,
                                        sizes["knobs"],
                                        dependencies,
                                        proxies[latency],
                                    )
                                )
    return cells
