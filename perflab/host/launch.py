"""The one way a server is started: its impl.toml command and options, pinned to its CPUs,
in the host prefix's environment; then wait for READY, sample it, and stop it.

The runner (a server on this host), the agent (a server on the servers host, for a runner
elsewhere) and the live tests all start servers through `launch_server` (or `serving`, its
context-manager form), so a server behaves the same wherever it runs. What the server
itself calls is started beside it here too: its dependencies (perflab.host.services) and its
latency proxies (perflab.host.proxy).

A server says it is ready by printing a line `READY` on stdout once it listens; stdout and
stderr both go to its log. Stopping sends SIGTERM, waits STOP_GRACE_S, then kills the
process group and says so in a note.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

import psutil

from perflab.contract.cell import CellSpec
from perflab.host.impls import HostPaths, Implementation, UnknownImplementation, command_argv
from perflab.host.net import free_port, port_open
from perflab.host.procs import log_tail
from perflab.host.proxy import LatencyProxy, ProxyError
from perflab.host.sampler import ResourceSampler

STOP_GRACE_S = 10.0


class LaunchError(RuntimeError):
    """A server (or what it needs) could not be started or never got ready; says why."""


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
    if not pinning.applied or not cpus:
        return argv
    return ["taskset", "-c", ",".join(map(str, cpus)), *argv]


def server_env(paths: HostPaths, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment servers and clients run in: they import generated code from the
    host prefix, and print unbuffered so READY and errors reach the log at once."""
    return {
        **os.environ,
        "PYTHONPATH": str(paths.gen / "python"),
        "PYTHONUNBUFFERED": "1",
        **(extra or {}),
    }


def check_memory(needed: int) -> None:
    available = psutil.virtual_memory().available
    if needed and needed > available:
        raise LaunchError(
            f"refused before start: the server needs {needed / 2**30:.2f} GiB but only "
            f"{available / 2**30:.2f} GiB is available on this host"
        )


@dataclass
class ServerProcess:
    """A started server, its log, where it listens, and whether it said READY."""

    proc: subprocess.Popen[bytes]
    log_path: Path
    argv: list[str] = field(default_factory=list)  # as the implementation's command, unpinned
    host: str = ""
    port: int = 0
    ready: threading.Event = field(default_factory=threading.Event)
    # Where the pump writes the server's output now (relog moves it to the next cell).
    _log: IO[bytes] | None = None
    _log_lock: threading.Lock = field(default_factory=threading.Lock)
    _pumps_done: int = 0
    _pumps: list[threading.Thread] = field(default_factory=list)

    @classmethod
    def start(
        cls,
        argv: list[str],
        env: dict[str, str],
        log_path: Path,
        host: str = "",
        port: int = 0,
        cwd: Path | None = None,
    ) -> ServerProcess:
        """Starts argv in its own session (a cell's signals never reach it), logging to log_path."""
        log = log_path.open("wb")
        proc = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            # Pumped too (line by line, apart from stdout so no line is cut by the other
            # stream), so a kept server's traceback lands in the log of the cell it broke.
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            env=env,
            cwd=cwd,
            start_new_session=True,
        )
        server = cls(proc, log_path, list(argv), host, port, _log=log)
        assert proc.stdout is not None and proc.stderr is not None
        for stream in (proc.stdout, proc.stderr):
            pump = threading.Thread(target=server._pump, args=(stream,), daemon=True)
            pump.start()
            server._pumps.append(pump)
        return server

    def drained(self, timeout_s: float = 0.5) -> Path:
        """The log, once an exited server's last lines are in it (the pumps end at its
        streams' end, unless a child it left holds them: then after timeout_s at most):
        what a failed cell quotes must include the server's last words."""
        if self.proc.poll() is not None:
            deadline = time.monotonic() + timeout_s
            for pump in self._pumps:
                pump.join(max(0.0, deadline - time.monotonic()))
        return self.log_path

    def _pump(self, stream: IO[bytes]) -> None:
        for line in stream:
            with self._log_lock:
                assert self._log is not None
                self._log.write(line)
                self._log.flush()
            if stream is self.proc.stdout and line.strip() == b"READY":
                self.ready.set()
        with self._log_lock:
            self._pumps_done += 1
            if self._pumps_done == 2:  # the last stream closed: nothing more to write
                assert self._log is not None
                self._log.close()

    def relog(self, log_path: Path) -> None:
        """Sends what the server says from now on to log_path (a kept server's next cell)."""
        log = log_path.open("wb")
        with self._log_lock:
            assert self._log is not None
            previous, self._log, self.log_path = self._log, log, log_path
            if self._pumps_done == 2:  # nothing left to pump: the new log gets no line
                log.close()
        previous.close()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def exit_code(self) -> int | None:
        return self.proc.poll()

    def wait_ready(self, timeout_s: float, probe_port: bool = True) -> None:
        """Until READY (and, with probe_port, its port accepting connections), or LaunchError.

        probe_port=False for a server this host cannot reach (another network namespace).
        """
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise LaunchError(
                    f"server exited with code {self.proc.returncode} before READY:\n"
                    f"{log_tail(self.drained())}"
                )
            if self.ready.wait(0.05) and (not probe_port or port_open(self.host, self.port)):
                return
        raise LaunchError(f"server not ready within {timeout_s:.0f} s:\n{log_tail(self.log_path)}")

    def stop(self) -> str:
        """Stops the server; returns a note if it had to be killed."""
        if self.proc.poll() is not None:
            self.drained()  # exited by itself: its last lines still into the log first
            return ""
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(STOP_GRACE_S)
            note = ""
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
            note = f"server ignored SIGTERM for {STOP_GRACE_S:.0f} s and was killed"
        self.drained()  # its last lines (a STATS line on exit) in the cell's log, then sealed
        return note


def launch_server(
    impl: Implementation,
    paths: HostPaths,
    log_path: Path,
    *,
    options: Mapping[str, object] | None = None,
    host: str = "127.0.0.1",
    port: int = 0,
    env: Mapping[str, str] | None = None,
    pinning: Pinning | None = None,
    sampler: ResourceSampler | None = None,
    ready_timeout_s: float = 60.0,
    memory_bytes: int = 0,
    prefix: list[str] | None = None,
    argv_file: Path | None = None,
) -> ServerProcess:
    """Starts impl on host:port (0: a free port), waits for READY and returns it.

    A server that does not get ready is stopped before LaunchError is raised, so nothing
    is left behind. env is laid over server_env; prefix runs the command through another
    (e.g. `ip netns exec <ns>`; the port is then not probed from here). argv_file, when
    given, gets the command as JSON before it starts, so a server that fails is on record.
    """
    check_memory(memory_bytes)
    port = port or free_port(host)
    try:
        argv = command_argv(impl, paths, dict(options or {}), host=host, port=str(port))
    except UnknownImplementation as exc:
        raise LaunchError(str(exc)) from exc
    if argv_file is not None:
        argv_file.write_text(json.dumps(argv))
    full = [*(prefix or []), *argv]
    if pinning is not None:
        full = pinned(full, pinning.server_cpus, pinning)
    server = ServerProcess.start(full, server_env(paths, env), log_path, host, port)
    server.argv = argv
    if sampler is not None:
        sampler.watch("server", server.pid)
    try:
        server.wait_ready(ready_timeout_s, probe_port=not prefix)
    except LaunchError:
        server.stop()
        raise
    return server


@contextmanager
def serving(
    impl: Implementation, paths: HostPaths, log_path: Path, **kwargs: Any
) -> Iterator[ServerProcess]:
    """launch_server for a `with` block: the server is stopped when the block ends."""
    server = launch_server(impl, paths, log_path, **kwargs)
    try:
        yield server
    finally:
        server.stop()


def start_dependencies(
    services_home: Path, names: list[str], sampler: ResourceSampler
) -> tuple[dict[str, int], list[str]]:
    """Each named service's pid, started first when it is down (a note says so), sampled."""
    from perflab.host.services import ServiceError, ensure

    pids: dict[str, int] = {}
    notes: list[str] = []
    for name in names:
        try:
            pid, note = ensure(services_home, name)
        except ServiceError as exc:
            raise LaunchError(f"refused before start: {exc}") from exc
        if note:
            notes.append(note)
        sampler.watch(f"dependency_{name}", pid)
        pids[name] = pid
    return pids, notes


def start_proxies(binary: Path, spec: CellSpec, work: Path) -> list[LatencyProxy]:
    """A Toxiproxy per latency_proxies entry of the server's; the server is pointed at each.

    Its log and proxies.json (what each proxy applied) are written into work. Entries
    delaying the load generator's calls are the load generator's host's: start_load_proxy.
    """
    entries = spec.proxies_for("server")
    proxies: list[LatencyProxy] = []
    for entry in entries:
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
            raise LaunchError(f"latency proxy for {option}: {exc}") from exc
        proxies.append(proxy)
        spec.server.options[option] = str(entry["url"]).format(listen=proxy.listen)
    if proxies:
        described = {str(e["option"]): p.describe() for e, p in zip(entries, proxies, strict=True)}
        (work / "proxies.json").write_text(json.dumps(described, indent=2))
    return proxies


def start_load_proxy(
    binary: Path, spec: CellSpec, work: Path, sampler: ResourceSampler
) -> LatencyProxy | None:
    """The Toxiproxy in front of the started server that the load generator calls, when a
    latency_proxies entry asks for one (caller "load"); None when none does.

    It runs on this host, the load generator's, as the orders client's own proxy did, and is
    sampled as role "proxy". Its log is proxy-load.log; stop_load_proxy writes what it
    applied.
    """
    entries = spec.proxies_for("load")
    if not entries:
        return None
    if len(entries) > 1:
        raise LaunchError(f"latency_proxies: {len(entries)} entries for the load, at most one")
    try:
        proxy = LatencyProxy.start(
            binary,
            upstream=f"{spec.server.host}:{spec.server.port}",
            one_way_ms=entries[0].get("one_way_ms"),
            log_path=work / "proxy-load.log",
        )
    except ProxyError as exc:
        raise LaunchError(f"latency proxy for the load: {exc}") from exc
    sampler.watch("proxy", proxy.proc.pid)
    return proxy


def stop_load_proxy(proxy: LatencyProxy, work: Path) -> None:
    """Stops the load's proxy, what it applied written under "load" in the cell's
    proxies.json (beside any server proxies there: a remote server's agent writes those as
    the server stops, so this comes after)."""
    path = work / "proxies.json"
    described = json.loads(path.read_text()) if path.is_file() else {}
    described["load"] = proxy.describe()
    path.write_text(json.dumps(described, indent=2))
    proxy.stop()
