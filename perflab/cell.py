"""The records a cell is made of: what to run (CellSpec) and what happened (CellRecord)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

STATUSES = ("ok", "failed", "bound")


@dataclass
class ServerSpec:
    impl: str  # "<language>/<folder>" under servers/
    options: dict[str, Any] = field(default_factory=dict)
    host: str = "127.0.0.1"
    port: int = 0  # 0: the runner picks a free port
    env: dict[str, str] = field(default_factory=dict)
    ready_timeout_s: float = 60.0
    # Memory the server will hold (e.g. a pre-allocated payload); the cell is refused
    # before the server starts when the host has less available.
    memory_bytes: int = 0


@dataclass
class LoadSpec:
    """How load is made. kind "ghz": ghz against proto/call; kind "client": a study client."""

    kind: str
    proto: str = ""
    call: str = ""
    data: dict[str, Any] = field(default_factory=dict)
    concurrency: int = 1
    # HTTP/2 connections ghz spreads `concurrency` over (ghz --connections); 1, ghz's
    # default, is what the seeds ran. Cells recorded before this field read as 1.
    connections: int = 1
    total: int | None = None  # ghz -n (the seed shape); None when duration-based
    duration_s: float | None = None
    warmup_total: int | None = None
    warmup_s: float | None = None
    ghz_version: str = ""  # empty: take it from the run's calibration.json
    timeout_s: float = 600.0
    client_impl: str = ""  # kind "client": "<language>/<folder>" of the client
    client_options: dict[str, Any] = field(default_factory=dict)
    # Open loop: ghz sends `rps` calls a second on schedule (--rps with --async) whatever the
    # server does, so a slow server cannot slow the sender and hide its queue (coordinated
    # omission). 0: closed loop, as every cell recorded before this field ran.
    rps: int = 0
    # An open-loop rate only known at run time: {"cell": <cell_id of the same study and run>,
    # "fraction": f, "min_calls": n}. The runner sets `rps` to f x that cell's req/s and
    # stretches duration_s to n / rps when shorter, and records both in the cell's params.
    rate_of: dict[str, Any] = field(default_factory=dict)


@dataclass
class CellSpec:
    run_id: str
    study: str
    cell_id: str
    scenario: str
    implementation: str
    client: str
    params: dict[str, Any]
    repeat: int
    server: ServerSpec
    load: LoadSpec
    # Some cells (calibration) must not be judged against the ceiling they establish.
    bound_check: bool = True
    # Services (perflab.services names, e.g. "s3", "mongo") the server calls: the runner
    # starts any that is down before the cell and samples them as role "dependency_<name>".
    dependencies: list[str] = field(default_factory=list)
    # Toxiproxy latency in front of what the server calls: each entry {option, upstream,
    # one_way_ms, url} makes the runner start a proxy to upstream and set the server's
    # option to url with {listen} filled in (e.g. "http://{listen}"). See perflab.proxy.
    latency_proxies: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> CellSpec:
        raw = dict(raw)
        raw["server"] = ServerSpec(**raw["server"])
        raw["load"] = LoadSpec(**raw["load"])
        return cls(**raw)

    @classmethod
    def from_file(cls, path: Path) -> CellSpec:
        return cls.from_dict(json.loads(path.read_text()))


@dataclass
class CellRecord:
    """cell.json: everything about one cell except the raw tool output beside it."""

    study: str
    cell_id: str
    scenario: str
    implementation: str
    client: str
    params: dict[str, Any]
    repeat: int
    status: str
    error: str
    start: str
    end: str
    pinning: dict[str, Any]
    hosts: dict[str, str]
    run_id: str
    spec: dict[str, Any]
    tool_versions: dict[str, str] = field(default_factory=dict)
    # The host's 1-minute load average as the cell started: other work on the host shows here.
    loadavg_start: float = 0.0
    # The commit the host's code copy came from ('<sha>-dirty' with uncommitted changes):
    # the manifest names the code the cells ran, not the checkout that collected them.
    code_revision: str = ""
    notes: list[str] = field(default_factory=list)

    @staticmethod
    def revision_of(src: Path) -> str:
        """The revision perflab_code recorded beside the host's copy (REVISION.json)."""
        try:
            revision = json.loads((src / "REVISION.json").read_text())
        except (OSError, ValueError):
            return ""  # a copy made by hand, or a checkout run in place: no claim made
        sha = str(revision.get("git_sha") or "unknown")
        dirty = revision.get("dirty") in (True, "True", "true")
        return f"{sha}-dirty" if dirty else sha

    def write(self, folder: Path) -> None:
        (folder / "cell.json").write_text(json.dumps(asdict(self), indent=2, sort_keys=True))
