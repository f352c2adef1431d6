"""The records a cell is made of: what to run (CellSpec) and what happened (CellRecord),
and the one reader of a run's cells (`iter_cells`) that the host and the analyses share."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from perflab.contract.parsers import MalformedRawFile

STATUSES = ("ok", "failed", "bound")
# The param that marks an A/A cell: one configuration run twice in a round ("a", "b") to
# measure the run's own noise floor (perflab.contract.rounds). Analyses never see these cells
# unless they ask (`iter_cells(..., include_aa=True)`), so nothing is counted twice.
AA_PARAM = "aa"
# Keys every cell.json has had since the first run; the others are read with a default.
RECORD_KEYS = frozenset({"study", "cell_id", "scenario", "implementation", "status", "params"})
# Whose calls a latency_proxies entry delays; an entry without "caller" is the server's.
PROXY_CALLERS = ("server", "load")


def proxy_caller(entry: dict[str, Any]) -> str:
    """Whose calls a latency_proxies entry delays: "server" or "load"."""
    return str(entry.get("caller", "server"))


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
    # Concurrency of the discarded warm-up; 0: the window's. A server with fewer workers than
    # the window's concurrency queues the rest, and the warm-up then ends only when that
    # queue has drained (far S3: 50 calls at 0.6 s on 10 workers, 3 s for 1 s asked), yet the
    # queued calls warm nothing the first `workers` calls did not.
    warmup_concurrency: int = 0
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
    # Services (perflab.host.services names, e.g. "s3", "mongo") the server calls: the runner
    # starts any that is down before the cell and samples them as role "dependency_<name>".
    dependencies: list[str] = field(default_factory=list)
    # Toxiproxy latency, see perflab.host.proxy. An entry {option, upstream, one_way_ms, url}
    # delays what the server calls: a proxy to upstream beside the server, whose option is set
    # to url with {listen} filled in (e.g. "http://{listen}"). An entry {caller: "load",
    # one_way_ms} delays the load generator's calls to the server: a proxy on the load
    # generator's host, in front of the server, which the load generator calls instead.
    latency_proxies: list[dict[str, Any]] = field(default_factory=list)
    # Order inside a round before its shuffle (perflab.contract.rounds): a cell that another
    # cell of the same round needs first (a probe that sets a step's rate) has a lower phase.
    phase: int = 0
    # May measure a server a cell before it of the same round started (same server_key),
    # instead of starting its own: the round's order gathers such cells, and the runner keeps
    # the server between them. False, as every cell recorded before this field ran: its own.
    reuse_server: bool = False
    # Cells of one round with the same non-empty `gather` run one after another, their
    # block where the first of them fell in the shuffle (perflab.contract.rounds): the
    # throughput study's 10 GiB servers, each filling its payload in memory the one before
    # it just freed. "": where the shuffle puts it, as every cell recorded before this field.
    gather: str = ""

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    def server_key(self) -> str:
        """What a server must be for this cell to measure it: the same implementation,
        options, environment and host, the same dependencies, and no proxy of its own (one
        in front of what the server calls is started with it: such cells never share)."""
        server = {**asdict(self.server), "port": 0}
        return json.dumps([self.study, server, self.dependencies], sort_keys=True)

    def shares_server(self) -> bool:
        """Whether the runner may keep this cell's server for the next cell of its key."""
        return self.reuse_server and not self.proxies_for("server")

    def hands_server_to(self, after: CellSpec) -> bool:
        """Whether the runner keeps this cell's server for `after`, the next cell it runs:
        the same key, both sharing, in the same round (each round starts every server,
        the unit of replication). The estimate prices cells by the same rule."""
        return (
            self.shares_server()
            and after.shares_server()
            and self.repeat == after.repeat
            and self.server_key() == after.server_key()
        )

    def proxies_for(self, caller: str) -> list[dict[str, Any]]:
        """The latency_proxies entries delaying this caller's calls ("server" or "load")."""
        return [entry for entry in self.latency_proxies if proxy_caller(entry) == caller]

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> CellSpec:
        raw = dict(raw)
        raw["server"] = ServerSpec(**raw["server"])
        raw["load"] = LoadSpec(**raw["load"])
        return cls(**raw)


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
    # Seconds of each phase (perflab.contract.phases); cells recorded before it have none,
    # and their times are read back from their raw files.
    phases: dict[str, float] = field(default_factory=dict)
    # The cell whose run started the server this cell measured, when the runner kept it
    # from an earlier cell of the round (CellSpec.reuse_server); "": the cell's own server.
    server_from: str = ""
    # The discarded warm-up's counts (perflab.host.ghz.warmup_summary): asked and taken
    # seconds, calls sent, answered, failed by status code; or what a study client reports
    # of its own warm-up (client.json `warmup`); {} without either.
    warmup: dict[str, Any] = field(default_factory=dict)

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
        write_cell_json(folder, asdict(self))


def write_cell_json(folder: Path, record: dict[str, Any]) -> None:
    """A cell's record into its folder: the runner's, and synthetic runs' (simulation)."""
    (folder / "cell.json").write_text(json.dumps(record, indent=2, sort_keys=True))


def is_complete(cell_dir: Path) -> bool:
    """Whether a cell folder holds its record: the runner renames a cell into place only
    once it is written, so a folder with one is a cell a rerun skips."""
    return (cell_dir / "cell.json").is_file()


def cell_record(folder: Path) -> dict[str, Any]:
    """The checked cell.json of one cell folder."""
    return read_cell_json(folder / "cell.json")


def read_cell_json(path: Path) -> dict[str, Any]:
    """A cell.json as written, checked for the keys every reader relies on."""
    try:
        cell = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise MalformedRawFile(path, f"unreadable cell record ({exc})") from exc
    if not isinstance(cell, dict):
        raise MalformedRawFile(path, "cell record is not a JSON object")
    missing = RECORD_KEYS - set(cell)
    if missing:
        raise MalformedRawFile(path, f"cell record lacks {sorted(missing)}")
    return cell


def cell_dirs(run_dir: Path, study: str | None = None) -> list[Path]:
    """The folders of complete cells (of one study when named), sorted: a folder still
    named .partial-* was never finished."""
    return sorted(
        path.parent
        for path in run_dir.glob(f"{study or '*'}/*/cell.json")
        if not path.parent.name.startswith(".")
    )


class RunCell(NamedTuple):
    """One complete cell of a run: its folder (the raw files) and its checked cell.json."""

    folder: Path
    record: dict[str, Any]

    @property
    def is_aa(self) -> bool:
        return AA_PARAM in self.record["params"]


def iter_cells(
    run_dir: str | Path, study: str | None = None, include_aa: bool = False
) -> Iterator[RunCell]:
    """Every complete cell of a run (of one study when named), in folder order; the A/A
    cells (params `aa`) only with `include_aa`: they copy a configuration the matrix may
    also run, and a table or claim that took them in would count it twice.

    A study's cells live in the folder named for it; a record there that names another
    study is a run folder put together by hand, and is refused rather than skipped.
    """
    for folder in cell_dirs(Path(run_dir), study):
        record = read_cell_json(folder / "cell.json")
        if study is not None and record["study"] != study:
            raise MalformedRawFile(
                folder / "cell.json", f"a cell of study {record['study']!r} under {study}/"
            )
        cell = RunCell(folder, record)
        if include_aa or not cell.is_aa:
            yield cell
