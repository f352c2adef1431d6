"""Run one cell on a host: start the server, wait ready, warm up, load, sample, stop, write.

A cell's folder is written under a temporary name and renamed when complete, so a
crash never leaves a half cell that looks whole; a complete cell is never re-run.
A failed cell is data: it is written with status "failed" and the error.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psutil

from perflab.contract.bounds import BOUND_FRACTION
from perflab.contract.cell import CellRecord, CellSpec, is_complete, read_cell_json
from perflab.contract.parsers import (
    MalformedRawFile,
    ghz_error_messages,
    parse_ghz,
    read_raw_text,
    terminating_signal,
)
from perflab.contract.phases import PhaseClock, measured_window
from perflab.host.agent_client import AgentError, RemoteServer, read_token
from perflab.host.ghz import (
    ghz_argv,
    ghz_binary,
    open_loop_rate,
    schedule_shortfall,
    store_thinned,
    warmup_note,
    warmup_summary,
)
from perflab.host.impls import HostPaths, command_argv, discover
from perflab.host.launch import (
    LaunchError,
    Pinning,
    ServerProcess,
    launch_server,
    pinned,
    plan_pinning,
    server_env,
    start_dependencies,
    start_load_proxy,
    start_proxies,
    stop_load_proxy,
)
from perflab.host.procs import log_tail, process_alive
from perflab.host.proxy import LatencyProxy
from perflab.host.sampler import ResourceSampler


class CellFailed(Exception):
    """Raised inside a cell run; becomes status "failed" with this text."""


def say(line: str) -> None:
    """A line for Ansible on stdout; none when nobody reads it any more (the runner whose
    Ansible is gone must still stop in good order, not on a broken pipe)."""
    try:
        print(line, flush=True)
    except BrokenPipeError:
        # Later prints would fail again at exit's flush: point stdout at nothing.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def run_tool(
    argv: list[str],
    cwd: Path,
    log_name: str,
    timeout_s: float,
    sampler: ResourceSampler,
    env: dict[str, str] | None = None,
) -> None:
    """Runs a load tool or client to its end, sampled as role "client"."""
    StartedTool.start(argv, cwd, log_name, sampler, env).finish(timeout_s)


@dataclass
class StartedTool:
    """A load tool or client running, its output in cwd/log_name, sampled as role
    "client" until it ends (the child holds its own copy of the log)."""

    proc: subprocess.Popen[bytes]
    argv: list[str]
    cwd: Path
    log_name: str
    sampler: ResourceSampler

    @classmethod
    def start(
        cls,
        argv: list[str],
        cwd: Path,
        log_name: str,
        sampler: ResourceSampler,
        env: dict[str, str] | None = None,
        stdin: int | None = None,
    ) -> StartedTool:
        with (cwd / log_name).open("wb") as log:
            proc = subprocess.Popen(
                argv, cwd=cwd, stdout=log, stderr=subprocess.STDOUT, stdin=stdin, env=env
            )
        sampler.watch("client", proc.pid)
        return cls(proc, argv, cwd, log_name, sampler)

    def finish(self, timeout_s: float) -> None:
        """Waits up to timeout_s for it to end; CellFailed unless it exits 0."""
        try:
            code = self.proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.abandon()
            raise CellFailed(
                f"{Path(self.argv[0]).name} did not finish within {timeout_s:.0f} s"
            ) from None
        finally:
            self.sampler.unwatch("client")
        if code != 0:
            raise CellFailed(
                f"{' '.join(self.argv[:4])}... exited with code {code}"
                f"{killed_by(self.cwd / 'time.txt')}:\n{log_tail(self.cwd / self.log_name)}"
            )

    def abandon(self) -> None:
        """Kills it if it still runs (a cell that failed before it could be used)."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.sampler.unwatch("client")


@dataclass
class Finishing:
    """A cell's teardown running in a thread of its own beside the next cell's start
    (CellRunner.begin), with what the next cell needs to know of it."""

    # The cell's spec: its server's memory is freed, and a gathered payload's after it may
    # start, only once the teardown has stopped it.
    spec: CellSpec
    thread: threading.Thread
    failure: list[BaseException] = field(default_factory=list)

    @classmethod
    def start(cls, spec: CellSpec, finish: Callable[[], None]) -> Finishing:
        failure: list[BaseException] = []

        def guarded() -> None:
            try:
                finish()
            except BaseException as exc:  # noqa: BLE001 - raised again by wait()
                failure.append(exc)

        thread = threading.Thread(target=guarded, name=f"teardown {spec.cell_id}")
        finishing = cls(spec, thread, failure)
        thread.start()
        return finishing

    def wait(self) -> None:
        self.thread.join()
        if self.failure:
            raise TeardownFailed(f"the teardown of {self.spec.cell_id} failed") from self.failure[0]


class TeardownFailed(Exception):
    """A cell's teardown could not complete its folder: the runner stops, as it did when
    the teardown ran inline, rather than fail the next cell for it."""


def killed_by(time_file: Path) -> str:
    """GNU time's word on a signal (the OOM killer's SIGKILL shows only there)."""
    try:
        number = terminating_signal(time_file.read_text(errors="replace"))
    except OSError:
        return ""
    if number is None:
        return ""
    try:
        return f" (killed by signal {number}, {signal.Signals(number).name})"
    except ValueError:
        return f" (killed by signal {number})"


def ghz_error_summary(path: Path) -> str:
    errors = ghz_error_messages(path.read_text())
    return "; ".join(f"{count} x {message}" for message, count in errors.items()) or "no errors"


def client_warmup(path: Path) -> dict[str, Any]:
    """The warm-up a study client reports in its client.json (`warmup`: its counts, errors
    and times), {} when it wrote none or no readable file (the cell fails on that already)."""
    try:
        warmup = json.loads(path.read_text()).get("warmup")
    except (OSError, ValueError, AttributeError):
        return {}
    return warmup if isinstance(warmup, dict) else {}


def client_warmup_note(warmup: dict[str, Any]) -> str:
    """The cell's note on a client's warm-up with errors; '' when it had none."""
    errors = warmup.get("errors") or {}
    if not errors:
        return ""
    listed = "; ".join(f"{n} x {text}" for text, n in sorted(errors.items()))
    return f"warm-up: {sum(errors.values())} errors ({listed}); discarded with the warm-up"


def fail_first(record: CellRecord, reason: str, before_earlier: str = "") -> None:
    """Fails the cell with `reason` leading: it explains whatever error came before it,
    which follows, led by `before_earlier`."""
    record.status = "failed"
    if record.error:
        reason += f"\n\n{before_earlier}{record.error}"
    record.error = reason


def timed(argv: list[str], time_file: str) -> list[str]:
    return ["/usr/bin/time", "-v", "-o", time_file, *argv]


def keep_ghz_output(work: Path, record: CellRecord) -> None:
    """ghz.json thinned (with a note when it was) and gzipped, when the cell wrote one."""
    if (work / "ghz.json").is_file():
        note = store_thinned(work / "ghz.json")
        if note:
            record.notes.append(note)


def read_calibration(run_dir: Path) -> dict[str, object]:
    path = run_dir / "calibration.json"
    return json.loads(path.read_text()) if path.is_file() else {}


# Toxiproxy logs a line per connection: a 1 000-client orders cell through a proxy writes
# about 0.5 MB, 11.6 MiB of one quick run. No analysis reads these logs, and every raw-file
# reader takes a .gz beside a missing file (perflab.contract.parsers.read_raw_text).
PROXY_LOG_GZIP_BYTES = 64 * 1024


def compress_proxy_logs(work: Path) -> None:
    """Each proxy log over PROXY_LOG_GZIP_BYTES stored gzipped instead (lossless)."""
    for log in sorted(work.glob("proxy-*.log")):
        if log.stat().st_size > PROXY_LOG_GZIP_BYTES:
            gzip_file(log)


def gzip_file(path: Path) -> None:
    with path.open("rb") as src, gzip.open(path.with_name(path.name + ".gz"), "wb") as dst:
        shutil.copyfileobj(src, dst)
    path.unlink()


def resolve_rate(study_dir: Path, spec: CellSpec) -> str:
    """An open-loop cell's rate from the cell its `load.rate_of` names, measured earlier in
    the same run: sets load.rps (and stretches duration_s to min_calls / rps), records both in
    the cell's params, and returns a note when that cell's own rate was a lower bound."""
    source = spec.load.rate_of
    folder = study_dir / str(source["cell"])
    if not is_complete(folder):
        raise CellFailed(f"rate_of: cell {source['cell']!r} has not run in this run")
    status = read_cell_json(folder / "cell.json")["status"]
    if status == "failed":
        raise CellFailed(f"rate_of: cell {source['cell']!r} failed, so there is no rate to use")
    raw = folder / "ghz.json"
    measured = {m.metric: m.value for m in parse_ghz(read_raw_text(raw), raw)}
    spec.load.rps = open_loop_rate(measured["rps"], float(source["fraction"]))
    min_calls = int(source.get("min_calls", 0))
    if spec.load.duration_s and min_calls:
        spec.load.duration_s = max(spec.load.duration_s, min_calls / spec.load.rps)
    # The resolved numbers are the cell's parameters: analysis reads them, never re-derives.
    spec.params.update(
        offered_rps=spec.load.rps,
        reference_rps=round(measured["rps"], 1),
        duration_s=round(spec.load.duration_s or 0.0, 3),
    )
    if status == "bound":
        return f"rate from {source['cell']}, itself a lower bound (bound): offered rates are too"
    return ""


def send_target(started: StartedTool, target: str) -> None:
    """Gives a started client its target (one line on stdin). A client that already died
    is left to finish(), which reports its exit and its log."""
    assert started.proc.stdin is not None
    try:
        started.proc.stdin.write(f"{target}\n".encode())
        started.proc.stdin.close()
    except BrokenPipeError:
        pass


class CellRunner:
    def __init__(
        self,
        paths: HostPaths,
        runs_root: Path,
        server_agent: str = "",
        server_host: str = "",
        agent_token_file: Path | None = None,
    ) -> None:
        # Tools run with the cell folder as their working directory: every path is absolute.
        self.paths = HostPaths(home=paths.home.resolve(), src=paths.src.resolve())
        self.runs_root = runs_root.resolve()
        self.impls = discover(paths.src / "servers")
        # Multi-host topologies: the server runs on its own host, started by the agent
        # there (perflab.host.agent), and listens on server_host, this host's way to reach it.
        self.server_agent = server_agent
        self.server_host = server_host
        # The run's agent token: read when a cell asks the agent, never written to a record.
        self.agent_token_file = agent_token_file
        # The running cell's phase marks (one cell at a time per runner).
        self.clock = PhaseClock()
        # A server kept for the next cell of its key (CellSpec.reuse_server): the server,
        # its key, and the cell that started it.
        self.kept: ServerProcess | None = None
        self.kept_key = ""
        self.kept_from = ""
        # The running cell's client when it takes its target on stdin (_prestart_client).
        self.prestarted: StartedTool | None = None
        # The last cell's teardown while it runs beside the next cell's start (begin).
        self.finishing: Finishing | None = None

    def env(self) -> dict[str, str]:
        return server_env(self.paths)

    def cell_dir(self, spec: CellSpec) -> Path:
        return self.runs_root / spec.run_id / spec.study / spec.cell_id

    def run(self, spec: CellSpec, keep_server: bool = False) -> CellRecord | None:
        """Runs the cell unless complete; returns its record (None when skipped). With
        keep_server (the next cell shares this one's server) a server that served the cell
        well is kept running for it; `release` stops a kept server."""
        ended: list[CellRecord] = []
        if not self.begin(spec, keep_server, ended.append):
            return None
        self.settle()
        return ended[0]

    def begin(self, spec: CellSpec, keep_server: bool, ended: Callable[[CellRecord], None]) -> bool:
        """Runs the cell up to the end of its load (False, and nothing run, when it is
        complete already). Its teardown (the server, proxies and sampler stopped, the raw
        files kept, the folder written and renamed) goes on in a thread beside the next
        cell's start, and the next cell waits for it before its own load (`settle`): a
        teardown never overlaps a measurement, and the 0.1-0.3 s it takes per cell no
        longer stands between two of them. `ended` gets the record once its folder is
        complete; `settle` (or `release`) waits for that."""
        final = self.cell_dir(spec)
        if is_complete(final):
            return False
        if not self._may_start_beside(spec):
            self.settle()
        final.parent.mkdir(parents=True, exist_ok=True)
        work = final.parent / f".partial-{spec.cell_id}"
        for stale in (work, final):
            if stale.exists():
                shutil.rmtree(stale)
        work.mkdir()
        teardown = self._execute(spec, work, keep_server)

        def finish() -> None:
            record = teardown()
            record.write(work)
            compress_proxy_logs(work)
            os.rename(work, final)
            ended(record)

        self.settle()  # a cell that failed before its load has not waited yet
        self.finishing = Finishing.start(spec, finish)
        return True

    def settle(self) -> None:
        """Waits for the cell before to be complete on disk; its teardown's own error (a
        record that cannot be written) is raised here, as it would have been at once."""
        finishing, self.finishing = self.finishing, None
        if finishing is not None:
            finishing.wait()

    def _may_start_beside(self, spec: CellSpec) -> bool:
        """Whether this cell may start while the one before it still tears down. Not when
        the server runs on another host (its agent is asked one thing at a time), not for
        payloads gathered to run one after another (the next fills the memory the one
        before freed: perflab.contract.rounds), and not unless both servers' memory fits
        in what is available now (launch's check_memory would refuse the next)."""
        finishing = self.finishing
        if finishing is None:
            return True
        if self.server_agent or spec.gather or finishing.spec.gather:
            return False
        needed = spec.server.memory_bytes + finishing.spec.server.memory_bytes
        return needed <= psutil.virtual_memory().available

    def release(self) -> None:
        """Waits for the last cell's teardown and stops a kept server (the runner's last
        cell, or the next needs another)."""
        self.settle()
        self._stop_kept()

    def _stop_kept(self) -> None:
        kept, self.kept, self.kept_key = self.kept, None, ""
        if kept is not None:
            note = kept.stop()
            if note:
                say(f"kept server of {self.kept_from}: {note}")

    def _take_kept(self, spec: CellSpec, record: CellRecord) -> ServerProcess | None:
        """The kept server when it is still up and this cell may measure it; else none,
        and a kept server is stopped first (never two servers on the server's core). One
        that died between cells is said in this cell's notes: its last words went to the
        log of the cell before."""
        kept = self.kept
        if kept is None:
            return None
        if spec.shares_server() and spec.server_key() == self.kept_key:
            code = kept.exit_code()
            if code is None:
                self.kept, self.kept_key = None, ""
                return kept
            record.notes.append(
                f"the server kept from {self.kept_from} exited with code {code} between "
                "cells (its log: that cell's server.log); this cell started its own"
            )
        self._stop_kept()
        return None

    def _execute(
        self, spec: CellSpec, work: Path, keep_server: bool = False
    ) -> Callable[[], CellRecord]:
        """Runs the cell to the end of its load; returns its teardown, which stops what the
        cell started (a server kept for the next cell is handed over here, before it) and
        returns the finished record. Interrupted (KeyboardInterrupt), it tears down at once."""
        clock = self.clock = PhaseClock()
        pinning = plan_pinning()
        record = self._open_record(spec, pinning)
        sampler = ResourceSampler(work / "resources.csv")
        sampler.start()
        kept = None if self.server_agent else self._take_kept(spec, record)
        # A kept server is this cell's from here: whatever fails below stops it in teardown.
        server: ServerProcess | RemoteServer | None = kept
        dependencies: dict[str, int] = {}
        proxies: list[LatencyProxy] = []
        load_proxy: LatencyProxy | None = None
        handed_over = False

        def teardown() -> CellRecord:
            if not handed_over:
                self._stop_server_noting_deaths(server, dependencies, work, record)
            self._collect(server, proxies, load_proxy, sampler, work, record)
            # What actually ran: the port and host the server listened on (filled in by the
            # start, after the record was opened) and the options the proxies set.
            record.spec = json.loads(spec.to_json())
            record.phases = self._phase_times(spec, work, clock)
            record.end = now_iso()
            return record

        try:
            dependencies = self._start_dependencies(spec, sampler, record)
            proxies = self._start_proxies(spec, work)
            clock.mark("server")
            self._prestart_client(spec, pinning, work, sampler)
            if kept is not None:
                self._measure_kept(kept, spec, work, sampler, record)
            else:
                server = self._start_server(spec, pinning, work, sampler)
            load_proxy = start_load_proxy(self.paths.bin / "toxiproxy-server", spec, work, sampler)
            clock.mark("ready")
            target = load_proxy.listen if load_proxy else f"{spec.server.host}:{spec.server.port}"
            self.settle()  # the cell before is complete before this one loads
            self._load(spec, target, pinning, work, sampler, record)
        except (CellFailed, LaunchError, AgentError) as exc:
            record.status, record.error = "failed", str(exc)
        except TeardownFailed:  # the cell before's, not this one's: stop the runner
            self._abandon_prestarted()
            teardown()
            raise
        except Exception:  # noqa: BLE001 - a cell's crash is data; the run goes on
            record.status, record.error = "failed", traceback.format_exc()
        except BaseException:
            self._abandon_prestarted()
            teardown()
            raise
        self._abandon_prestarted()
        if keep_server and spec.shares_server() and isinstance(server, ServerProcess):
            handed_over = self._hand_over(server, spec, dependencies, work, record)
        return teardown

    def _abandon_prestarted(self) -> None:
        if self.prestarted is not None:  # never sent its target: the cell failed first
            self.prestarted.abandon()
            self.prestarted = None

    def _hand_over(
        self,
        server: ServerProcess,
        spec: CellSpec,
        dependencies: dict[str, int],
        work: Path,
        record: CellRecord,
    ) -> bool:
        """Keeps a server that served its cell well for the next cell of its key; whether
        it was kept (a failed cell, or a dependency that died, stops it instead)."""
        if record.status == "failed":
            return False
        self._stop_server_noting_deaths(server, dependencies, work, record, keep=True)
        if record.status == "failed":  # it or a dependency died: the next cell starts afresh
            self._stop_server(server, record)
            return True  # stopped here already: the teardown must not stop it again
        self.kept, self.kept_key = server, spec.server_key()
        self.kept_from = record.server_from or spec.cell_id
        return True

    def _phase_times(self, spec: CellSpec, work: Path, clock: PhaseClock) -> dict[str, float]:
        """Where the cell's time went (perflab.contract.phases); a tool that failed mid-run
        ended when its error came."""
        if "load" in clock.marks and "load_end" not in clock.marks:
            clock.mark("load_end")
        try:
            window = measured_window(work, spec.load.kind)
        except MalformedRawFile:
            window = 0.0  # the cell failed on that file already: no window it can vouch for
        return clock.times(window).as_dict()

    def _open_record(self, spec: CellSpec, pinning: Pinning) -> CellRecord:
        """The cell's record as it starts: status "ok" until something says otherwise."""
        host = socket.gethostname()
        return CellRecord(
            study=spec.study,
            cell_id=spec.cell_id,
            scenario=spec.scenario,
            implementation=spec.implementation,
            client=spec.client,
            params=spec.params,
            repeat=spec.repeat,
            status="ok",
            error="",
            start=now_iso(),
            end="",
            pinning=pinning.as_dict(),
            hosts={"server": self.server_host or host, "client": host},
            run_id=spec.run_id,
            spec=json.loads(spec.to_json()),
            loadavg_start=os.getloadavg()[0],
            code_revision=CellRecord.revision_of(self.paths.src),
        )

    def _stop_server_noting_deaths(
        self,
        server: ServerProcess | RemoteServer | None,
        dependencies: dict[str, int],
        work: Path,
        record: CellRecord,
        keep: bool = False,
    ) -> None:
        """Stops the server (unless kept for the next cell); a server or dependency that
        died during the cell fails it."""
        exit_code = server.exit_code() if server is not None else None
        stop_note = "" if keep and exit_code is None else self._stop_server(server, record)
        if exit_code is not None:
            # The server's death explains whatever the load tool saw; say it first.
            log = server.drained() if isinstance(server, ServerProcess) else work / "server.log"
            died = f"server exited with code {exit_code} during the cell:\n{log_tail(log)}"
            fail_first(record, died, "the load tool: ")
        gone = [name for name, pid in dependencies.items() if not process_alive(pid)]
        if isinstance(server, RemoteServer):
            gone += server.dependencies_died()
            record.notes.extend(server.notes())
        if gone:
            # The calls' errors are the dependency's doing: the cell is not a measurement.
            fail_first(record, f"dependency {', '.join(gone)} exited during the cell")
        if stop_note:
            record.notes.append(stop_note)

    def _collect(
        self,
        server: ServerProcess | RemoteServer | None,
        proxies: list[LatencyProxy],
        load_proxy: LatencyProxy | None,
        sampler: ResourceSampler,
        work: Path,
        record: CellRecord,
    ) -> None:
        """Stops the proxies and the sampler; leaves the raw files as the contract has them."""
        for proxy in proxies:
            proxy.stop()
        if load_proxy is not None:
            stop_load_proxy(load_proxy, work)
        sampler.stop()
        if isinstance(server, RemoteServer):
            server.merge_samples(work / "resources.csv", sampler.phases, sampler.wall_t0)
        keep_ghz_output(work, record)

    def _stop_server(self, server: ServerProcess | RemoteServer | None, record: CellRecord) -> str:
        """Stops the server; a remote one's log and samples come back with it."""
        if server is None:
            return ""
        try:
            return server.stop()
        except AgentError as exc:
            fail_first(record, str(exc))
            return ""

    def _start_dependencies(
        self, spec: CellSpec, sampler: ResourceSampler, record: CellRecord
    ) -> dict[str, int]:
        """Each dependency's pid; a remote server's dependencies are its agent's to start."""
        if self.server_agent:
            return {}
        pids, notes = start_dependencies(self.paths.home, spec.dependencies, sampler)
        record.notes.extend(notes)
        return pids

    def _start_proxies(self, spec: CellSpec, work: Path) -> list[LatencyProxy]:
        """A remote server's proxies sit on its own host: its agent starts them."""
        if self.server_agent:
            return []
        return start_proxies(self.paths.bin / "toxiproxy-server", spec, work)

    def _start_server(
        self, spec: CellSpec, pinning: Pinning, work: Path, sampler: ResourceSampler
    ) -> ServerProcess | RemoteServer:
        if self.server_agent:
            return self._start_remote_server(spec, pinning, work)
        if spec.server.impl not in self.impls:
            raise CellFailed(f"unknown implementation {spec.server.impl!r}")
        server = launch_server(
            self.impls[spec.server.impl],
            self.paths,
            work / "server.log",
            options=spec.server.options,
            host=spec.server.host,
            port=spec.server.port,
            env=spec.server.env,
            pinning=pinning,
            sampler=sampler,
            ready_timeout_s=spec.server.ready_timeout_s,
            memory_bytes=spec.server.memory_bytes,
            argv_file=work / "server.argv.json",
        )
        spec.server.port = server.port
        return server

    def _measure_kept(
        self,
        server: ServerProcess,
        spec: CellSpec,
        work: Path,
        sampler: ResourceSampler,
        record: CellRecord,
    ) -> None:
        """The kept server for this cell: its output from now on in this cell's server.log,
        its process sampled in this cell's resources.csv, the cell that started it named."""
        server.relog(work / "server.log")
        (work / "server.argv.json").write_text(json.dumps(server.argv))
        sampler.watch("server", server.pid)
        spec.server.port = server.port
        record.server_from = self.kept_from

    def _start_remote_server(self, spec: CellSpec, pinning: Pinning, work: Path) -> RemoteServer:
        if self.agent_token_file is None:
            raise CellFailed("no agent token file: a remote server needs the run's agent token")
        spec.server.host = self.server_host
        server = RemoteServer(
            self.server_agent, work / "server.log", read_token(self.agent_token_file)
        )
        spec.server.port = server.start(spec, pinning.server_cpus, pinning.applied)
        return server

    def _load(
        self,
        spec: CellSpec,
        target: str,
        pinning: Pinning,
        work: Path,
        sampler: ResourceSampler,
        record: CellRecord,
    ) -> None:
        """Loads target: the server, or the proxy in front of it that delays the load's calls."""
        if spec.load.kind == "ghz":
            self._load_ghz(spec, target, pinning, work, sampler, record)
        elif spec.load.kind == "client":
            self._load_client(spec, target, pinning, work, sampler, record)
        else:
            raise CellFailed(f"load kind {spec.load.kind!r} is not known to this runner")

    def _load_client(
        self,
        spec: CellSpec,
        target: str,
        pinning: Pinning,
        work: Path,
        sampler: ResourceSampler,
        record: CellRecord,
    ) -> None:
        """A study's own client; it warms up by itself and writes client.json, where a
        client that reports its warm-up (`warmup`) has it copied into the cell's record."""
        started, self.prestarted = self.prestarted, None
        if started is None:
            argv = self._client_argv(spec, target, pinning, work)
        sampler.phase("measure")
        self.clock.mark("load")
        try:
            if started is None:
                started = StartedTool.start(argv, work, "client.log", sampler, env=self.env())
            else:
                send_target(started, target)
            started.finish(spec.load.timeout_s)
        finally:
            self.clock.mark("load_end")
            sampler.phase("stop")
            record.warmup = client_warmup(work / "client.json")
            note = client_warmup_note(record.warmup)
            record.notes.extend([note] if note else [])

    def _client_argv(self, spec: CellSpec, target: str, pinning: Pinning, work: Path) -> list[str]:
        """The study client's argv, pinned and timed; the unpinned one in client.argv.json."""
        if spec.load.client_impl not in self.impls:
            raise CellFailed(f"unknown client {spec.load.client_impl!r}")
        argv = command_argv(
            self.impls[spec.load.client_impl],
            self.paths,
            spec.load.client_options,
            target=target,
            out=str(work / "client.json"),
        )
        (work / "client.argv.json").write_text(json.dumps(argv))
        return timed(pinned(argv, pinning.client_cpus, pinning), "time.txt")

    def _prestart_client(
        self, spec: CellSpec, pinning: Pinning, work: Path, sampler: ResourceSampler
    ) -> None:
        """Starts now, beside the server, a study client that takes its target on stdin: its
        interpreter and imports (0.17 s for the orders client, 0.18 s its server's start)
        run on the client's core while the server starts on its own, and the clock's `load`
        starts when the client is sent its target. Every other client starts at `load`."""
        impl = self.impls.get(spec.load.client_impl)
        if spec.load.kind != "client" or impl is None or not impl.target_on_stdin:
            return
        argv = self._client_argv(spec, "-", pinning, work)
        self.prestarted = StartedTool.start(
            argv, work, "client.log", sampler, env=self.env(), stdin=subprocess.PIPE
        )

    def _warm_up(
        self,
        argv: list[str],
        spec: CellSpec,
        work: Path,
        sampler: ResourceSampler,
        record: CellRecord,
    ) -> None:
        """The discarded warm-up run (argv writes warmup.json); its counts go into the cell's
        record (`warmup`), a note when some of its calls failed; its report is not kept."""
        sampler.phase("warmup")
        run_tool(argv, work, "warmup.log", spec.load.timeout_s, sampler)
        out = work / "warmup.json"
        try:
            report = json.loads(out.read_text())
        except (OSError, ValueError) as exc:
            raise CellFailed(f"warm-up: ghz wrote no readable {out.name}: {exc}") from None
        out.unlink()  # discarded by the rules
        record.warmup = warmup_summary(report, spec.load)
        note = warmup_note(record.warmup)
        record.notes.extend([note] if note else [])

    def _load_ghz(
        self,
        spec: CellSpec,
        target: str,
        pinning: Pinning,
        work: Path,
        sampler: ResourceSampler,
        record: CellRecord,
    ) -> None:
        calibration = read_calibration(self.runs_root / spec.run_id)
        version = spec.load.ghz_version or str(calibration.get("ghz_version", ""))
        if not version:
            raise CellFailed("no ghz version: neither the cell nor the run's calibration names one")
        record.tool_versions["ghz"] = version
        if spec.load.rate_of:
            note = resolve_rate(self.runs_root / spec.run_id / spec.study, spec)
            record.notes.extend([note] if note else [])
        binary = ghz_binary(self.paths.bin, version)
        proto_dir = self.paths.src / "proto"
        cpus = len(pinning.client_cpus)

        def argv(out: str, warmup: bool) -> list[str]:
            ghz = ghz_argv(binary, spec.load, proto_dir, target, cpus, work / out, warmup)
            return pinned(ghz, pinning.client_cpus, pinning)

        if spec.load.warmup_total or spec.load.warmup_s:
            self._warm_up(argv("warmup.json", True), spec, work, sampler, record)
        sampler.phase("measure")
        self.clock.mark("load")
        run_tool(
            timed(argv("ghz.json", False), "time.txt"),
            work,
            "ghz.log",
            spec.load.timeout_s,
            sampler,
        )
        self.clock.mark("load_end")
        sampler.phase("stop")
        measured = {m.metric: m.value for m in parse_ghz((work / "ghz.json").read_text())}
        if not measured["ok"]:
            raise CellFailed(f"no call succeeded: {ghz_error_summary(work / 'ghz.json')}")
        if spec.load.rps and spec.load.duration_s:
            shortfall = schedule_shortfall(spec.load.rps, spec.load.duration_s, measured)
            if shortfall:
                record.status = "bound"
                record.notes.append(shortfall)
        rps = measured["rps"]
        ceiling = calibration.get("ceiling_rps")
        if spec.bound_check and ceiling and rps > BOUND_FRACTION * float(ceiling):
            record.status = "bound"
            record.notes.append(
                f"{rps:.0f} req/s is above {BOUND_FRACTION:.0%} of the load generator's "
                f"ceiling {float(ceiling):.0f} req/s: a lower bound"
            )
