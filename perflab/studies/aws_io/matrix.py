"""Seed 000, aws api unary / stream / save to MongoDB: the Python servers under ghz when each
call lists an S3 bucket (893 objects) and, in list_save, inserts the listing into MongoDB."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from perflab.contract.cell import CellSpec, ServerSpec
from perflab.contract.knobs import (
    Choice,
    Choices,
    Context,
    Int,
    Ints,
    KeysOf,
    Knob,
    MatrixError,
    Number,
    Text,
    aa_pair_knob,
    knob,
    validate,
)
from perflab.contract.latency import LATENCY_PROFILES as PROXY_PROFILES
from perflab.contract.matrix import (
    CURRENT_STACK,
    GhzCall,
    ServerTable,
    connections_knob,
    connections_suffix,
    stack_impl_of,
)
from perflab.contract.rounds import aa_cells

PREFIX = "perflab_matrix_aws_io"
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
# Keys a latency profile may set for its own cells (`latency_overrides`): a far S3 makes
# every call slow, so its cells want fewer shapes and concurrencies but more repeats.
OVERRIDABLE = (
    "scenarios",
    "shapes",
    "concurrency",
    "repeats",
    "steady_duration_s",
    "warmup_s",
    "warmup_calls_per_worker",
    "concurrency_by_implementation",
)
# Library stacks: "current" (servers/python/requirements.txt) and seed 000's grpcio 1.28.1
# (requirements-seed000.txt, roles/seed000_stack), run by the servers whose implementation
# names an impl for it (`stacks`), in the latency profiles of `stack_latency_profiles`.
STACKS = (CURRENT_STACK, "seed000")


# The endpoints reach the run's data (server options, cell.json): none may carry a secret.
@dataclass(frozen=True)
class S3Endpoint:
    """An http(s) URL without credentials, or '' for AWS S3."""

    def check(self, key: str, value: Any, context: Context) -> str:
        scheme = urlsplit(value).scheme if isinstance(value, str) else None
        if scheme is None or (value and scheme not in ("http", "https")):
            raise MatrixError(f"{key}: {value!r} is not an http(s) URL or '' (AWS S3)")
        if value and (urlsplit(value).username or urlsplit(value).password):
            raise MatrixError(f"{key}: must not hold credentials (use the environment)")
        return value


@dataclass(frozen=True)
class MongoUri:
    """A mongodb:// (or mongodb+srv://) URI without credentials."""

    def check(self, key: str, value: Any, context: Context) -> str:
        if not isinstance(value, str) or urlsplit(value).scheme not in ("mongodb", "mongodb+srv"):
            raise MatrixError(f"{key}: {value!r} is not a mongodb:// URI")
        if "@" in urlsplit(value).netloc:
            raise MatrixError(
                f"{key}: must not hold credentials (it is recorded in the run's data); "
                "export PERFLAB_MONGO_URI instead"
            )
        return value


@dataclass(frozen=True)
class ConcurrencyByImplementation:
    """{implementation: [concurrency, ...]}: the concurrencies a server runs, each one of
    `concurrency`; a server not named runs them all."""

    def check(self, key: str, value: Any, context: Context) -> dict[str, list[int]]:
        limits = value or {}
        if not isinstance(limits, dict):
            raise MatrixError(f"{key}: expected a mapping of implementation to concurrencies")
        allowed = set(context.checked["concurrency"])
        for name, values in limits.items():
            if name not in context.checked["implementations"]:
                raise MatrixError(f"{key}: {name!r} is not one of `implementations`")
            Ints().check(f"{key}.{name}", values, context)
            if not set(values) <= allowed:
                raise MatrixError(
                    f"{key}.{name}: {values} not all in concurrency {sorted(allowed)}"
                )
        return {name: list(values) for name, values in limits.items()}


@dataclass(frozen=True)
class SomeInts:
    """A list of positive integers, or [] (no restriction)."""

    def check(self, key: str, value: Any, context: Context) -> list[int]:
        return Ints().check(key, value, context) if value else []


@dataclass(frozen=True)
class LatencyOverrides:
    """{profile: {key of OVERRIDABLE: value}}: the sizes a latency profile's cells take.

    Checked last: each profile's cells get the whole matrix with its overrides laid over
    it, checked under `latency_overrides.<profile>` (the shared keys passed already, so an
    error there can only be the override's).
    """

    def check(self, key: str, value: Any, context: Context) -> dict[str, Matrix]:
        overrides = value or {}
        if not isinstance(overrides, dict):
            raise MatrixError(
                f"{key}: expected a mapping of latency profile to keys, got {value!r}"
            )
        regimes = {}
        for profile, changes in overrides.items():
            if profile not in LATENCY_PROFILES:
                raise MatrixError(
                    f"{key}: {profile!r} is not a latency profile {tuple(LATENCY_PROFILES)}"
                )
            if not isinstance(changes, dict):
                raise MatrixError(f"{key}.{profile}: expected a mapping, got {changes!r}")
            unknown = sorted(set(changes) - set(OVERRIDABLE))
            if unknown:
                raise MatrixError(
                    f"{key}.{profile}: {unknown} cannot be set per profile {OVERRIDABLE}"
                )
            regime = {**context.checked, **changes}
            regimes[profile] = validate(Matrix, f"{key}.{profile}", regime, context.known_impls)
        return regimes


@dataclass(frozen=True)
class Matrix(ServerTable):
    """perflab_matrix_aws_io (group_vars/all/aws_io.yml): ServerTable's keys, then these."""

    scenarios: list[str] = knob(Choices(CALLS), "the RPCs: list_unary, list_stream, list_save")
    shapes: list[str] = knob(Choices(SHAPES), "seed_n200: ghz -n seed_total; steady: a duration")
    concurrency: list[int] = knob(Ints(), "ghz -c, one cell each")
    connections: list[int] = connections_knob()
    seed_total: int = knob(Int(), "ghz -n of a seed_n200 cell")
    seed_warmup_total: int = knob(Int(), "discarded calls before a seed_n200 cell")
    steady_duration_s: float = knob(Number(), "measured seconds per steady cell")
    warmup_s: float = knob(Number(), "discarded ghz run before every steady cell")
    warmup_calls_per_worker: int = knob(
        Int(minimum=0), "0: the warm-up runs warmup_s; n: n calls per warm-up worker instead", 0
    )
    repeats: int = knob(Int(), "cells per configuration")
    timeout_s: float = knob(Number(), "a cell's ghz run may take this long")
    s3_endpoint: str = knob(S3Endpoint(), "the S3 the servers list; '': AWS S3", "")
    bucket: str = knob(Text("a bucket name"), "the bucket the servers list")
    objects: int = knob(Int(), "objects the bucket must hold")
    mongo_uri: str = knob(MongoUri(), "the MongoDB list_save inserts into")
    dependencies: list[str] = knob(
        Choices(DEPENDENCIES, empty="none"), "services the runner keeps running and samples", []
    )
    # A 1-worker server serves one call at a time whatever the concurrency; at high latency
    # ghz then waits for every queued call after the warm-up and the measured window.
    concurrency_by_implementation: dict[str, list[int]] = knob(
        ConcurrencyByImplementation(), "per server, the concurrencies it runs (default all)", {}
    )
    latency_profiles: list[str] = knob(
        Choices(LATENCY_PROFILES), "delays on the S3 and MongoDB paths, one set of cells each"
    )
    stacks: list[str] = knob(Choices(STACKS), "library stacks to run", [CURRENT_STACK])
    # The seed's claims are judged in its own regime (far S3): other stacks run there only.
    stack_latency_profiles: list[str] = knob(
        Choices(LATENCY_PROFILES, empty="none"),
        "latency profiles a stack other than current runs",
        [],
    )
    stack_concurrency: list[int] = knob(
        SomeInts(), "concurrencies a stack other than current runs; []: all", []
    )
    aa_pair: list[dict[str, Any]] = aa_pair_knob(
        implementation=Knob(Choice(KeysOf("implementations")), "the server"),
        scenario=Knob(Choice(CALLS), "list_unary, list_stream or list_save"),
        shape=Knob(Choice(SHAPES), "seed_n200 or steady"),
        concurrency=Knob(Int(), "ghz -c"),
        connections=Knob(Int(), "ghz --connections", 1),
        latency_profile=Knob(Choice(LATENCY_PROFILES), "delays on S3 and MongoDB", "none"),
    )
    # Last: a profile's overrides are checked with every other key.
    latency_overrides: dict[str, Matrix] = knob(
        LatencyOverrides(), "per latency profile, the sizes its own cells take", {}
    )

    def endpoints(self) -> dict[str, str]:
        """What the servers are told to talk to (their options). A latency proxy replaces
        mongo_uri only: the server prepares and cleans up through admin_mongo_uri, direct."""
        return {
            "s3_endpoint": self.s3_endpoint,
            "bucket": self.bucket,
            "mongo_uri": self.mongo_uri,
            "admin_mongo_uri": self.mongo_uri,
        }


def latency_proxies(matrix: Matrix, profile: str) -> list[dict[str, Any]]:
    """Toxiproxy in front of S3 and MongoDB for one profile; none for "none"."""
    one_way_ms = LATENCY_PROFILES[profile]
    if one_way_ms is None:
        return []
    s3 = urlsplit(matrix.s3_endpoint)
    if s3.scheme != "http":
        raise MatrixError(
            f"{PREFIX}.latency_profiles: {profile!r} needs a plain http s3_endpoint to put a "
            f"proxy in front of, not {matrix.s3_endpoint!r}"
        )
    mongo = urlsplit(matrix.mongo_uri)
    if mongo.scheme != "mongodb":
        raise MatrixError(f"{PREFIX}.latency_profiles: {profile!r} needs a mongodb:// mongo_uri")
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


@dataclass(frozen=True)
class Coordinates:
    """Where a cell sits in the matrix."""

    name: str
    latency: str
    scenario: str
    shape: str
    concurrency: int
    connections: int
    repeat: int
    stack: str = CURRENT_STACK


def cell(run_id: str, regime: Matrix, at: Coordinates, proxies: list[dict[str, Any]]) -> CellSpec:
    """One server, call, load shape, concurrency, connection count, latency profile, repeat."""
    load = GhzCall(PROTO, CALLS[at.scenario], REQUEST).load(
        at.concurrency, at.connections, timeout_s=regime.timeout_s
    )
    params: dict[str, Any] = {
        "shape": at.shape,
        "concurrency": at.concurrency,
        "connections": at.connections,
        "objects": regime.objects,
        "latency_profile": at.latency,
    }
    if at.shape == "seed_n200":
        load.total, load.warmup_total = regime.seed_total, regime.seed_warmup_total
        params["total"] = regime.seed_total
    else:
        load.duration_s, load.warmup_s = regime.steady_duration_s, regime.warmup_s
        params["duration_s"] = regime.steady_duration_s
    workers = regime.implementations[at.name].get("options", {}).get("workers")
    if workers and workers < at.concurrency:
        # The warm-up warms the server's threads and S3 connections: calls past its workers
        # only queue, and the warm-up would wait for them (w1 at 10: 7 s for 1 s asked).
        load.warmup_concurrency = workers
    if at.shape != "seed_n200" and regime.warmup_calls_per_worker:
        # What a warm-up must do is open each worker's connections through the server to S3
        # and MongoDB; a timed one also waits for every call still queued at its end, which
        # a far S3 makes several seconds (data/experiments/20261128-aws-io-warmup-ab).
        load.warmup_s = None
        load.warmup_total = regime.warmup_calls_per_worker * (
            load.warmup_concurrency or at.concurrency
        )
    suffix = "" if at.latency == "none" else f"-{at.latency}"
    # The current stack's cells keep their ids and params (a missing `stack` reads as current).
    if at.stack != CURRENT_STACK:
        params["stack"] = at.stack
        suffix += f"-{at.stack}"
    entry = regime.implementations[at.name]
    return CellSpec(
        run_id=run_id,
        study="aws_io",
        cell_id=f"{at.name}-{at.scenario}-{at.shape}-c{at.concurrency}"
        f"{connections_suffix(at.connections)}{suffix}-r{at.repeat}",
        scenario=at.scenario,
        implementation=at.name,
        client="ghz",
        params=params,
        repeat=at.repeat,
        server=ServerSpec(
            impl=stack_impl(regime, at.name, at.stack, at.latency) or entry["impl"],
            options={**entry.get("options", {}), **regime.endpoints()},
        ),
        load=load,
        dependencies=list(regime.dependencies),
        latency_proxies=[dict(e) for e in proxies],
    )


def expand(run_id: str, config: dict[str, Any], known_impls: set[str]) -> list[CellSpec]:
    matrix = validate(Matrix, PREFIX, config, known_impls)
    proxies = {latency: latency_proxies(matrix, latency) for latency in matrix.latency_profiles}
    regimes = {latency: matrix.latency_overrides.get(latency, matrix) for latency in proxies}
    return aa_pair_cells(run_id, matrix) + [
        cell(run_id, regimes[latency], Coordinates(name, latency, *sizes, stack), proxies[latency])
        for name in matrix.run_implementations
        for stack in matrix.stacks
        for latency in matrix.latency_profiles
        if stack_impl(matrix, name, stack, latency)
        for sizes in itertools.product(
            regimes[latency].scenarios,
            regimes[latency].shapes,
            regimes[latency].concurrency,
            regimes[latency].connections,
            range(1, regimes[latency].repeats + 1),
        )
        if runs_at(regimes[latency], name, sizes[2])
        and (
            stack == CURRENT_STACK
            or not matrix.stack_concurrency
            or sizes[2] in matrix.stack_concurrency
        )
    ]


def stack_impl(matrix: Matrix, name: str, stack: str, latency: str) -> str | None:
    """The impl that runs server `name` on `stack` in latency profile `latency`; None: none
    there (grpclib, which seed 000 did not pin, has no seed000 impl)."""
    here = latency in matrix.stack_latency_profiles
    return stack_impl_of(matrix.implementations[name], stack, here)


def aa_pair_cells(run_id: str, matrix: Matrix) -> list[CellSpec]:
    """The A/A cells of `aa_pair`, each sized as its latency profile's cells are."""
    return [twin for aa in matrix.aa_pair for twin in aa_pair_of(run_id, matrix, aa)]


def aa_pair_of(run_id: str, matrix: Matrix, aa: dict[str, Any]) -> list[CellSpec]:
    latency = aa["latency_profile"]
    regime = matrix.latency_overrides.get(latency, matrix)
    proxies = latency_proxies(matrix, latency)
    sizes = (aa["scenario"], aa["shape"], aa["concurrency"], aa["connections"])
    return aa_cells(
        lambda repeat: cell(
            run_id,
            regime,
            Coordinates(aa["implementation"], latency, *sizes, repeat),
            proxies,
        ),
        regime.repeats,
    )


def runs_at(regime: Matrix, name: str, concurrency: int) -> bool:
    """Whether a server runs at a concurrency (`concurrency_by_implementation`)."""
    return concurrency in regime.concurrency_by_implementation.get(name, [concurrency])
