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
import threading
import time
import traceback
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import psutil

from perflab.agent import AgentError, RemoteServer
from perflab.cell import CellRecord, CellSpec
from perflab.ghz import ghz_argv, ghz_binary, thin_details
from perflab.impls import HostPaths, command_argv, discover
from perflab.parsers import ghz_error_messages, parse_ghz
from perflab.proxy import LatencyProxy, ProxyError
from perflab.sampler import ResourceSampler

BOUND_FRACTION = 0.7  # a cell above this share of the load generator's ceiling is a lower bound
STOP_GRACE_S = 10.0


class CellFailed(Exception):
    """Raised inside a cell run; becomes status "failed" with this text."""


@dataclass
class Pinning:
    server_cpus: list[int]
    client_cpus: list[int]
    applied: bool

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def plan_pinning(cpus: list[int] | None = None) -> Pinning:
    """Disjoint CPU sets for server and load generator on hosts with >= 2 CPUs."""
    cpus = sorted(cpus if cpus is not None else os.sched_getaffinity(0))
    if len(cpus) < 2 or shutil.which("taskset") is None:
        return Pinning(cpus, cpus, applied=False)
    half = len(cpus) // 2
    return Pinning(cpus[:half], cpus[half:], applied=True)


def pinned(argv: list[str], cpus: list[int], pinning: Pinning) -> list[str]:
    if not pinning.applied:
        return argv
    return ["taskset", "-c", ",".join(map(str, cpus)), *argv]


def free_port(host: str) -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def process_alive(pid: int) -> bool:
    """A zombie (killed, not yet reaped by its parent) counts as dead."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def is_complete(cell_dir: Path) -> bool:
    return (cell_dir / "cell.json").is_file()


def log_tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


@dataclass
class ServerProcess:
    """A started server, its log, and whether it said READY."""

    proc: subprocess.Popen[bytes]
    log_path: Path
    ready: threading.Event = field(default_factory=threading.Event)

    @classmethod
    def start(cls, argv: list[str], env: dict[str, str], log_path: Path) -> ServerProcess:
        log = log_path.open("wb")
        proc = subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=log, env=env, start_new_session=True
        )
        server = cls(proc, log_path)
        threading.Thread(target=server._pump, args=(log,), daemon=True).start()
        return server

    def _pump(self, log) -> None:  # type: ignore[no-untyped-def]
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            log.write(line)
            log.flush()
            if line.strip() == b"READY":
                self.ready.set()
        log.close()

    def exit_code(self) -> int | None:
        return self.proc.poll()

    def wait_ready(self, host: str, port: int, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise CellFailed(
                    f"server exited with code {self.proc.returncode} before READY:\n"
                    f"{log_tail(self.log_path)}"
                )
            if self.ready.wait(0.05) and port_open(host, port):
                return
        raise CellFailed(f"server not ready within {timeout_s:.0f} s:\n{log_tail(self.log_path)}")

    def stop(self) -> str:
        """Stops the server; returns a note if it had to be killed."""
        if self.proc.poll() is not None:
            return ""
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(STOP_GRACE_S)
            return ""
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
            return f"server ignored SIGTERM for {STOP_GRACE_S:.0f} s and was killed"


def port_open(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def run_tool(
    argv: list[str],
    cwd: Path,
    log_name: str,
    timeout_s: float,
    sampler: ResourceSampler,
    env: dict[str, str] | None = None,
) -> None:
    """Runs a load tool or client to its end, sampled as role "client"."""
    with (cwd / log_name).open("wb") as log:
        proc = subprocess.Popen(argv, cwd=cwd, stdout=log, stderr=subprocess.STDOUT, env=env)
        sampler.watch("client", proc.pid)
        try:
            code = proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise CellFailed(
                f"{Path(argv[0]).name} did not finish within {timeout_s:.0f} s"
            ) from None
        finally:
            sampler.unwatch("client")
    if code != 0:
        raise CellFailed(
            f"{' '.join(argv[:4])}... exited with code {code}{killed_by(cwd / 'time.txt')}:\n"
            f"{log_tail(cwd / log_name)}"
        )


def killed_by(time_file: Path) -> str:
    """GNU time's word on a signal (the OOM killer's SIGKILL shows only there)."""
    try:
        text = time_file.read_text(errors="replace")
    except OSError:
        return ""
    for line in text.splitlines():
        if line.startswith("Command terminated by signal"):
            number = int(line.rsplit(" ", 1)[-1])
            try:
                return f" (killed by signal {number}, {signal.Signals(number).name})"
            except ValueError:
                return f" (killed by signal {number})"
    return ""


def ghz_error_summary(path: Path) -> str:
    errors = ghz_error_messages(path.read_text())
    return "; ".join(f"{count} x {message}" for message, count in errors.items()) or "no errors"


def check_memory(needed: int) -> None:
    available = psutil.virtual_memory().available
    if needed and needed > available:
        raise CellFailed(
            f"refused before start: the server needs {needed / 2**30:.2f} GiB but only "
            f"{available / 2**30:.2f} GiB is available on this host"
        )


def timed(argv: list[str], time_file: str) -> list[str]:
    return ["/usr/bin/time", "-v", "-o", time_file, *argv]


def read_calibration(run_dir: Path) -> dict[str, object]:
    path = run_dir / "calibration.json"
    return json.loads(path.read_text()) if path.is_file() else {}


def gzip_file(path: Path) -> None:
    with path.open("rb") as src, gzip.open(path.with_name(path.name + ".gz"), "wb") as dst:
        shutil.copyfileobj(src, dst)
    path.unlink()


def start_dependencies(
    services_home: Path, names: list[str], sampler: ResourceSampler
) -> tuple[dict[str, int], list[str]]:
    """Each named service's pid, started first when it is down (a note says so), sampled."""
    from perflab.services import ServiceError, ensure

    pids: dict[str, int] = {}
    notes: list[str] = []
    for name in names:
        try:
            pid, note = ensure(services_home, name)
        except ServiceError as exc:
            raise CellFailed(f"refused before start: {exc}") from exc
        if note:
            notes.append(note)
        sampler.watch(f"dependency_{name}", pid)
        pids[name] = pid
    return pids, notes


def start_proxies(binary: Path, spec: CellSpec, work: Path) -> list[LatencyProxy]:
    """A Toxiproxy per latency_proxies entry; the server is pointed at each one.

    Its log and proxies.json (what each proxy applied) are written into work.
    """
    proxies: list[LatencyProxy] = []
    for entry in spec.latency_proxies:
        option = str(entry["option"])
        try:
            proxy = LatencyProxy.start(
                binary,
                upstream=str(entry["upstream"]),
                one_way_ms=entry.get("one_way_ms"),
                log_path=work / f"proxy-{option}.log",
            )
        except ProxyError as exc:
            for started in proxies:
                started.stop()
            raise CellFailed(f"latency proxy for {option}: {exc}") from exc
        proxies.append(proxy)
        spec.server.options[option] = str(entry["url"]).format(listen=proxy.listen)
    if proxies:
        described = {
            str(e["option"]): p.describe()
            for e, p in zip(spec.latency_proxies, proxies, strict=True)
        }
        (work / "proxies.json").write_text(json.dumps(described, indent=2))
    return proxies


def local_env(paths: HostPaths) -> dict[str, str]:
    """Servers and clients import generated code from the host prefix."""
    return {
        **os.environ,
        "PYTHONPATH": str(paths.gen / "python"),
        "PYTHONUNBUFFERED": "1",
    }


class CellRunner:
    def __init__(
        self,
        paths: HostPaths,
        runs_root: Path,
        server_agent: str = "",
        server_host: str = "",
    ) -> None:
        # Tools run with the cell folder as their working directory: every path is absolute.
        self.paths = HostPaths(home=paths.home.resolve(), src=paths.src.resolve())
        self.runs_root = runs_root.resolve()
        self.impls = discover(paths.src / "servers")
        # Multi-host topologies: the server runs on its own host, started by the agent
        # there (perflab.agent), and listens on server_host, this host's way to reach it.
        self.server_agent = server_agent
        self.server_host = server_host

    def env(self) -> dict[str, str]:
        return local_env(self.paths)

    def cell_dir(self, spec: CellSpec) -> Path:
        return self.runs_root / spec.run_id / spec.study / spec.cell_id

    def run(self, spec: CellSpec) -> CellRecord | None:
        """Runs the cell unless complete; returns its record (None when skipped)."""
        final = self.cell_dir(spec)
        if is_complete(final):
            return None
        final.parent.mkdir(parents=True, exist_ok=True)
        work = final.parent / f".partial-{spec.cell_id}"
        for stale in (work, final):
            if stale.exists():
                shutil.rmtree(stale)
        work.mkdir()
        record = self._execute(spec, work)
        record.write(work)
        os.rename(work, final)
        return record

    def _execute(self, spec: CellSpec, work: Path) -> CellRecord:
        pinning = plan_pinning()
        host = socket.gethostname()
        record = CellRecord(
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
        )
        sampler = ResourceSampler(work / "resources.csv")
        sampler.start()
        server: ServerProcess | RemoteServer | None = None
        dependencies: dict[str, int] = {}
        proxies: list[LatencyProxy] = []
        try:
            dependencies = self._start_dependencies(spec, sampler, record)
            proxies = self._start_proxies(spec, work)
            server = self._start_server(spec, pinning, work, sampler)
            self._load(spec, pinning, work, sampler, record)
        except CellFailed as exc:
            record.status, record.error = "failed", str(exc)
        except Exception:  # noqa: BLE001 - a cell's crash is data; the run goes on
            record.status, record.error = "failed", traceback.format_exc()
        finally:
            exit_code = server.exit_code() if server is not None else None
            stop_note = self._stop_server(server, record)
            if exit_code is not None:
                # The server's death explains whatever the load tool saw; say it first.
                died = (
                    f"server exited with code {exit_code} during the cell:\n"
                    f"{log_tail(work / 'server.log')}"
                )
                record.status = "failed"
                record.error = died + (f"\n\nthe load tool: {record.error}" if record.error else "")
            died = [name for name, pid in dependencies.items() if not process_alive(pid)]
            if isinstance(server, RemoteServer):
                died += server.dependencies_died()
                record.notes.extend(server.notes())
            if died:
                # The calls' errors are the dependency's doing: the cell is not a measurement.
                record.status = "failed"
                record.error = f"dependency {', '.join(died)} exited during the cell" + (
                    f"\n\n{record.error}" if record.error else ""
                )
            if stop_note:
                record.notes.append(stop_note)
            for proxy in proxies:
                proxy.stop()
            sampler.stop()
            if isinstance(server, RemoteServer):
                server.merge_samples(work / "resources.csv", sampler.phases, sampler.wall_t0)
            if (work / "ghz.json").is_file():
                note = thin_details(work / "ghz.json")
                if note:
                    record.notes.append(note)
                gzip_file(work / "ghz.json")
            record.end = now_iso()
        return record

    def _stop_server(self, server: ServerProcess | RemoteServer | None, record: CellRecord) -> str:
        """Stops the server; a remote one's log and samples come back with it."""
        if server is None:
            return ""
        try:
            return server.stop()
        except AgentError as exc:
            record.status = "failed"
            record.error = f"{exc}" + (f"\n\n{record.error}" if record.error else "")
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
    ) -> ServerProcess:
        if self.server_agent:
            return self._start_remote_server(spec, pinning, work)
        if spec.server.impl not in self.impls:
            raise CellFailed(f"unknown implementation {spec.server.impl!r}")
        check_memory(spec.server.memory_bytes)
        port = spec.server.port or free_port(spec.server.host)
        spec.server.port = port
        argv = command_argv(
            self.impls[spec.server.impl],
            self.paths,
            spec.server.options,
            host=spec.server.host,
            port=str(port),
        )
        env = {**self.env(), **spec.server.env}
        (work / "server.argv.json").write_text(json.dumps(argv))
        server = ServerProcess.start(
            pinned(argv, pinning.server_cpus, pinning), env, work / "server.log"
        )
        sampler.watch("server", server.proc.pid)
        server.wait_ready(spec.server.host, port, spec.server.ready_timeout_s)
        return server

    def _start_remote_server(self, spec: CellSpec, pinning: Pinning, work: Path) -> RemoteServer:
        spec.server.host = self.server_host
        server = RemoteServer(self.server_agent, work / "server.log")
        try:
            spec.server.port = server.start(spec, pinning.server_cpus, pinning.applied)
        except AgentError as exc:
            raise CellFailed(str(exc)) from exc
        return server

    def _load(
        self,
        spec: CellSpec,
        pinning: Pinning,
        work: Path,
        sampler: ResourceSampler,
        record: CellRecord,
    ) -> None:
        if spec.load.kind == "ghz":
            self._load_ghz(spec, pinning, work, sampler, record)
        elif spec.load.kind == "client":
            self._load_client(spec, pinning, work, sampler)
        else:
            raise CellFailed(f"load kind {spec.load.kind!r} is not known to this runner")

    def _load_client(
        self, spec: CellSpec, pinning: Pinning, work: Path, sampler: ResourceSampler
    ) -> None:
        """A study's own client; it warms up by itself and writes client.json."""
        if spec.load.client_impl not in self.impls:
            raise CellFailed(f"unknown client {spec.load.client_impl!r}")
        argv = command_argv(
            self.impls[spec.load.client_impl],
            self.paths,
            spec.load.client_options,
            target=f"{spec.server.host}:{spec.server.port}",
            out=str(work / "client.json"),
        )
        (work / "client.argv.json").write_text(json.dumps(argv))
        sampler.phase("measure")
        run_tool(
            timed(pinned(argv, pinning.client_cpus, pinning), "time.txt"),
            work,
            "client.log",
            spec.load.timeout_s,
            sampler,
            env=self.env(),
        )
        sampler.phase("stop")

    def _load_ghz(
        self,
        spec: CellSpec,
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
        binary = ghz_binary(self.paths.bin, version)
        target = f"{spec.server.host}:{spec.server.port}"
        proto_dir = self.paths.src / "proto"
        cpus = len(pinning.client_cpus)

        def argv(out: str, warmup: bool) -> list[str]:
            ghz = ghz_argv(binary, spec.load, proto_dir, target, cpus, work / out, warmup)
            return pinned(ghz, pinning.client_cpus, pinning)

        if spec.load.warmup_total or spec.load.warmup_s:
            sampler.phase("warmup")
            run_tool(argv("warmup.json", True), work, "warmup.log", spec.load.timeout_s, sampler)
            (work / "warmup.json").unlink(missing_ok=True)  # discarded by the rules
        sampler.phase("measure")
        run_tool(
            timed(argv("ghz.json", False), "time.txt"),
            work,
            "ghz.log",
            spec.load.timeout_s,
            sampler,
        )
        sampler.phase("stop")
        measured = {m.metric: m.value for m in parse_ghz((work / "ghz.json").read_text())}
        if not measured["ok"]:
            raise CellFailed(f"no call succeeded: {ghz_error_summary(work / 'ghz.json')}")
        rps = measured["rps"]
        ceiling = calibration.get("ceiling_rps")
        if spec.bound_check and ceiling and rps > BOUND_FRACTION * float(ceiling):
            record.status = "bound"
            record.notes.append(
                f"{rps:.0f} req/s is above {BOUND_FRACTION:.0%} of the load generator's "
                f"ceiling {float(ceiling):.0f} req/s: a lower bound"
            )
