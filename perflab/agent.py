"""The server agent: a cell's server started on another host, for multi-host topologies.

On localhost the runner starts each server itself. When servers have their own host
(the netns topology's `perflab-server` namespace, or an EC2 instance), the runner on
the client host asks this agent, over HTTP on the servers' own network, to start the
cell's server with its implementation, options and CPUs, and gets its port back. What
the server itself calls lives beside it, so the agent also starts the cell's dependencies
when they are down (aws_io's S3 and MongoDB, perflab.services) and their latency proxies,
and samples them. At the end it asks the agent to stop the server and receives the
server's log, the proxies' logs and the resource samples, which land in the cell folder
exactly as a local server's would: the data contract does not know which topology
produced it.

    python -m perflab agent --listen 10.77.0.1 --port 7070 --home ~/.perflab --src ~/.perflab/src

One server at a time (cells run one after the other). The agent only starts commands
from its own host's `servers/*/*/impl.toml`, never argv sent by a client.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from perflab.cell import CellSpec
from perflab.impls import HostPaths, command_argv, discover
from perflab.sampler import COLUMNS, ResourceSampler

REQUEST_TIMEOUT_S = 30.0


class AgentError(RuntimeError):
    """The agent refused or could not be reached; the text says which and why."""


@dataclass
class Running:
    """The one server this agent is running, and what it samples."""

    server: Any  # perflab.runner.ServerProcess (imported lazily: the runner imports us)
    sampler: ResourceSampler
    work: Path
    argv: list[str]
    started_wall: float
    # The server's dependencies (name: pid) and latency proxies, started for it here.
    dependencies: dict[str, int] = field(default_factory=dict)
    proxies: list[Any] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class Agent:
    def __init__(self, paths: HostPaths, services_home: Path | None = None) -> None:
        self.paths = HostPaths(home=paths.home.resolve(), src=paths.src.resolve())
        # Where perflab.services keeps this host's S3/MongoDB definitions and pid files;
        # netns hosts share the machine's disk, so each has its own (roles/s3_versitygw).
        self.services_home = (services_home or self.paths.home).expanduser()
        self.impls = discover(self.paths.src / "servers")
        self.running: Running | None = None
        self.lock = threading.Lock()

    def start(self, request: dict[str, Any]) -> dict[str, Any]:
        from perflab.runner import (
            CellFailed,
            Pinning,
            ServerProcess,
            check_memory,
            free_port,
            local_env,
            pinned,
            start_dependencies,
            start_proxies,
        )

        spec = CellSpec.from_dict(request["spec"])
        cpus = [int(c) for c in request.get("server_cpus", [])]
        pinning = Pinning(cpus, [], applied=bool(request.get("pin")) and bool(cpus))
        with self.lock:
            if self.running is not None:
                self._stop_locked()  # a client that crashed left one behind
            if spec.server.impl not in self.impls:
                raise AgentError(f"unknown implementation {spec.server.impl!r} on this host")
            try:
                check_memory(spec.server.memory_bytes)
            except CellFailed as exc:
                raise AgentError(str(exc)) from exc
            work = Path(tempfile.mkdtemp(prefix="perflab-agent-"))
            sampler = ResourceSampler(work / "resources.csv")
            started_wall = time.time()
            sampler.start()
            running = Running(None, sampler, work, [], started_wall)
            self.running = running
            try:
                # The server's own S3, MongoDB and latency proxies live beside it, on this host.
                running.dependencies, running.notes = start_dependencies(
                    self.services_home, spec.dependencies, sampler
                )
                running.proxies = start_proxies(self.paths.bin / "toxiproxy-server", spec, work)
                port = spec.server.port or free_port(spec.server.host)
                running.argv = command_argv(
                    self.impls[spec.server.impl],
                    self.paths,
                    spec.server.options,
                    host=spec.server.host,
                    port=str(port),
                )
                env = {**local_env(self.paths), **spec.server.env}
                running.server = ServerProcess.start(
                    pinned(running.argv, pinning.server_cpus, pinning), env, work / "server.log"
                )
                sampler.watch("server", running.server.proc.pid)
                running.server.wait_ready(spec.server.host, port, spec.server.ready_timeout_s)
            except CellFailed as exc:
                self._stop_locked()
                raise AgentError(str(exc)) from exc
            return {"port": port, "pid": running.server.proc.pid, "argv": running.argv}

    def status(self) -> dict[str, Any]:
        with self.lock:
            if self.running is None:
                return {"running": False, "exit_code": None}
            server = self.running.server
            return {"running": True, "exit_code": server.proc.poll() if server else None}

    def stop(self) -> dict[str, Any]:
        with self.lock:
            if self.running is None:
                raise AgentError("no server is running")
            return self._stop_locked()

    def _stop_locked(self) -> dict[str, Any]:
        from perflab.runner import process_alive

        running, self.running = self.running, None
        assert running is not None
        server = running.server
        exit_code = server.proc.poll() if server is not None else None
        note = server.stop() if server is not None else ""
        for proxy in running.proxies:
            proxy.stop()
        running.sampler.stop()
        files = {
            path.name: path.read_text(errors="replace")
            for path in running.work.iterdir()
            if path.name == "proxies.json" or path.name.startswith("proxy-")
        }
        result = {
            "exit_code": exit_code,
            "note": note,
            "notes": running.notes,
            "dependencies_died": [
                name for name, pid in running.dependencies.items() if not process_alive(pid)
            ],
            "server_log": read_or_empty(running.work / "server.log"),
            "resources_csv": (running.work / "resources.csv").read_text(),
            "files": files,
            "started_wall": running.started_wall,
            "argv": running.argv,
        }
        shutil.rmtree(running.work, ignore_errors=True)
        return result


def read_or_empty(path: Path) -> str:
    return path.read_text(errors="replace") if path.is_file() else ""


def handler_for(agent: Agent) -> type[BaseHTTPRequestHandler]:
    routes = {
        ("POST", "/start"): agent.start,
        ("GET", "/status"): lambda _body: agent.status(),
        ("POST", "/stop"): lambda _body: agent.stop(),
    }

    class Handler(BaseHTTPRequestHandler):
        def _reply(self, code: int, payload: dict[str, Any]) -> None:
            body = json.dumps(payload).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _route(self, method: str) -> None:
            action = routes.get((method, self.path))
            if action is None:
                self._reply(404, {"error": f"no route {method} {self.path}"})
                return
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
                self._reply(200, action(body))
            except AgentError as exc:
                self._reply(409, {"error": str(exc)})
            except Exception as exc:  # noqa: BLE001 - the caller records it in the cell
                self._reply(500, {"error": f"{type(exc).__name__}: {exc}"})

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            self._route("GET")

        def do_POST(self) -> None:  # noqa: N802
            self._route("POST")

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass  # one line per request would drown the agent's log

    return Handler


def serve(paths: HostPaths, listen: str, port: int, services_home: Path | None = None) -> None:
    agent = Agent(paths, services_home)
    httpd = ThreadingHTTPServer((listen, port), handler_for(agent))
    print("READY", flush=True)
    try:
        httpd.serve_forever()
    finally:
        if agent.running is not None:
            agent.stop()


def call(url: str, path: str, payload: dict[str, Any] | None = None) -> dict[str, Any]:
    """One request to an agent; its refusals and absence become AgentError."""
    data = None if payload is None else json.dumps(payload).encode()
    request = urllib.request.Request(
        url.rstrip("/") + path,
        data=data,
        method="GET" if payload is None else "POST",
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=REQUEST_TIMEOUT_S) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:
        try:
            reason = json.loads(exc.read()).get("error", "")
        except (ValueError, OSError):
            reason = ""
        raise AgentError(f"server agent {url} refused {path}: {reason or exc}") from exc
    except (urllib.error.URLError, OSError) as exc:
        raise AgentError(f"server agent {url} unreachable: {exc}") from exc


class RemoteServer:
    """The runner's handle on a server the agent started; mirrors runner.ServerProcess."""

    def __init__(self, url: str, log_path: Path) -> None:
        self.url = url
        self.log_path = log_path
        self.result: dict[str, Any] | None = None

    def start(self, spec: CellSpec, server_cpus: list[int], pin: bool) -> int:
        reply = call(
            self.url,
            "/start",
            {"spec": json.loads(spec.to_json()), "server_cpus": server_cpus, "pin": pin},
        )
        (self.log_path.parent / "server.argv.json").write_text(json.dumps(reply["argv"]))
        return int(reply["port"])

    def exit_code(self) -> int | None:
        if self.result is not None:
            return self.result["exit_code"]
        try:
            return call(self.url, "/status").get("exit_code")
        except AgentError:
            return None

    def stop(self) -> str:
        """Stops the server and keeps its log; returns a note as ServerProcess.stop does."""
        self.result = call(self.url, "/stop", {})
        self.log_path.write_text(self.result["server_log"])
        for name, text in self.result.get("files", {}).items():
            (self.log_path.parent / Path(name).name).write_text(text)
        return self.result["note"]

    def dependencies_died(self) -> list[str]:
        return list(self.result.get("dependencies_died", [])) if self.result else []

    def notes(self) -> list[str]:
        return list(self.result.get("notes", [])) if self.result else []

    def merge_samples(self, resources: Path, phases: list[tuple[float, str]], t0: float) -> None:
        """Appends the agent's server samples to the cell's resources.csv.

        Times are moved onto the runner's clock (both hosts' wall clocks; on netns they
        are one clock) and each sample takes the phase the runner was in at that time.
        """
        if self.result is None:
            return
        shift = self.result["started_wall"] - t0
        rows = list(csv.DictReader(io.StringIO(self.result["resources_csv"])))
        with resources.open("a", newline="") as handle:
            writer = csv.writer(handle)
            for row in rows:
                row["t"] = str(round(float(row["t"]) + shift, 3))
                row["phase"] = phase_at(phases, float(row["t"]))
                writer.writerow([row[c] for c in COLUMNS])


def phase_at(phases: list[tuple[float, str]], t: float) -> str:
    """The phase the runner had entered last at time t (its first phase before that)."""
    current = phases[0][1] if phases else "start"
    for start, name in phases:
        if start <= t:
            current = name
    return current
