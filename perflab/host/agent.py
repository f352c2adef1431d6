"""The server agent: a cell's server started on another host, for multi-host topologies.

On localhost the runner starts each server itself. When servers have their own host
(the netns topology's `perflab-server` namespace, or an EC2 instance), the runner on
the client host asks this agent, over HTTP on the servers' own network, to start the
cell's server with its implementation, options and CPUs, and gets its port back. What
the server itself calls lives beside it, so the agent also starts the cell's dependencies
when they are down (aws_io's S3 and MongoDB, perflab.host.services) and their latency proxies,
and samples them. At the end it asks the agent to stop the server and receives the
server's log, the proxies' logs and the resource samples, which land in the cell folder
exactly as a local server's would: the data contract does not know which topology
produced it. The runner's side is perflab.host.agent_client; both start nothing but what
perflab.host.launch starts.

    python -m perflab agent --listen 10.77.0.1 --port 7070 --token-file ~/.perflab/agent/token \
        --home ~/.perflab --src ~/.perflab/src

Locked down (issue 13): every request must carry the run's token (`Authorization: Bearer`,
the file the server_agent role copied here, mode 0600, read at each request so a new run's
token takes effect without a restart), or it gets 401 and changes nothing. The agent
listens on the data address only, never a wildcard one. A start request may only choose
among this host's implementations and their declared options (perflab.host.agent_policy) and
carries no environment. Every refusal is logged with its reason.

One server at a time (cells run one after the other).
"""

from __future__ import annotations

import hmac
import json
import logging
import shutil
import stat
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from perflab.contract.agent_messages import (
    ErrorReply,
    StartReply,
    StatusReply,
    StopReply,
    to_dict,
)
from perflab.host.agent_policy import Refused, check_request
from perflab.host.impls import HostPaths, discover
from perflab.host.launch import (
    LaunchError,
    Pinning,
    ServerProcess,
    launch_server,
    start_dependencies,
    start_proxies,
)
from perflab.host.procs import process_alive
from perflab.host.proxy import LatencyProxy
from perflab.host.sampler import ResourceSampler
from perflab.host.services import services_dir

LOG = logging.getLogger("perflab.host.agent")
MAX_BODY_BYTES = 1 << 20  # a cell spec is a few KiB
WILDCARD_ADDRESSES = {"", "0.0.0.0", "::", "[::]"}


class Busy(RuntimeError):
    """A request that is well formed but cannot be served now (409)."""


class Unauthorized(RuntimeError):
    """No token, or not this run's token (401)."""


@dataclass
class Running:
    """The one server this agent is running, and what it samples."""

    sampler: ResourceSampler
    work: Path
    started_wall: float
    server: ServerProcess | None = None
    # The server's dependencies (name: pid) and latency proxies, started for it here.
    dependencies: dict[str, int] = field(default_factory=dict)
    proxies: list[LatencyProxy] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def read_token_file(path: Path) -> str:
    """The token in path, or "" when there is none (then every request is refused)."""
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def check_token_file(path: Path) -> None:
    """Refuses to serve with a token others on the host can read."""
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        raise SystemExit(f"perflab agent: token file {path}: {exc.strerror or exc}") from exc
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise SystemExit(
            f"perflab agent: token file {path} is readable by others (mode "
            f"{stat.S_IMODE(mode):04o}); it must be 0600"
        )
    if not read_token_file(path):
        raise SystemExit(f"perflab agent: token file {path} is empty")


class Agent:
    def __init__(
        self,
        paths: HostPaths,
        listen: str,
        token_file: Path,
        services_home: Path | None = None,
    ) -> None:
        self.paths = HostPaths(home=paths.home.resolve(), src=paths.src.resolve())
        self.listen = listen
        self.token_file = token_file
        # Where perflab.host.services keeps this host's S3/MongoDB definitions and pid files;
        # netns hosts share the machine's disk, so each has its own (roles/s3_versitygw).
        self.services_home = (services_home or self.paths.home).expanduser()
        self.impls = discover(self.paths.src / "servers")
        self.running: Running | None = None
        self.lock = threading.Lock()

    def authorize(self, header: str | None) -> None:
        """Unauthorized unless header is `Bearer <this run's token>`."""
        expected = read_token_file(self.token_file)
        if not expected:
            raise Unauthorized(f"the agent has no token ({self.token_file} missing or empty)")
        scheme, _, given = (header or "").partition(" ")
        if scheme != "Bearer" or not given:
            raise Unauthorized("no token: send Authorization: Bearer <the run's agent token>")
        if not hmac.compare_digest(given.strip().encode(), expected.encode()):
            raise Unauthorized("wrong token")

    def services(self) -> set[str]:
        return {path.stem for path in services_dir(self.services_home).glob("*.json")}

    def start(self, request: dict[str, Any]) -> dict[str, Any]:
        spec, cpus, pin = check_request(request, self.impls, self.listen, self.services())
        pinning = Pinning(cpus, [], applied=pin and bool(cpus))
        with self.lock:
            if self.running is not None:
                self._stop_locked()  # a client that crashed left one behind
            work = Path(tempfile.mkdtemp(prefix="perflab-agent-"))
            sampler = ResourceSampler(work / "resources.csv")
            running = Running(sampler, work, time.time())
            sampler.start()
            self.running = running
            try:
                # The server's own S3, MongoDB and latency proxies live beside it, on this host.
                running.dependencies, running.notes = start_dependencies(
                    self.services_home, spec.dependencies, sampler
                )
                running.proxies = start_proxies(self.paths.bin / "toxiproxy-server", spec, work)
                # No environment from the request (check_request refused any): the server
                # runs in launch.server_env, as a local one does.
                running.server = launch_server(
                    self.impls[spec.server.impl],
                    self.paths,
                    work / "server.log",
                    options=spec.server.options,
                    host=self.listen,
                    port=spec.server.port,
                    pinning=pinning,
                    sampler=sampler,
                    ready_timeout_s=spec.server.ready_timeout_s,
                    memory_bytes=spec.server.memory_bytes,
                )
            except LaunchError as exc:
                self._stop_locked()
                raise Busy(str(exc)) from exc
            server = running.server
            return to_dict(StartReply(port=server.port, pid=server.pid, argv=server.argv))

    def status(self) -> dict[str, Any]:
        with self.lock:
            if self.running is None:
                return to_dict(StatusReply(running=False, exit_code=None))
            server = self.running.server
            exit_code = server.exit_code() if server else None
            return to_dict(StatusReply(running=True, exit_code=exit_code))

    def stop(self) -> dict[str, Any]:
        with self.lock:
            if self.running is None:
                raise Busy("no server is running")
            return self._stop_locked()

    def _stop_locked(self) -> dict[str, Any]:
        running, self.running = self.running, None
        assert running is not None
        server = running.server
        exit_code = server.exit_code() if server is not None else None
        note = server.stop() if server is not None else ""
        for proxy in running.proxies:
            proxy.stop()
        running.sampler.stop()
        files = {
            path.name: path.read_text(errors="replace")
            for path in running.work.iterdir()
            if path.name == "proxies.json" or path.name.startswith("proxy-")
        }
        result = StopReply(
            exit_code=exit_code,
            note=note,
            notes=running.notes,
            dependencies_died=[
                name for name, pid in running.dependencies.items() if not process_alive(pid)
            ],
            server_log=read_or_empty(running.work / "server.log"),
            resources_csv=(running.work / "resources.csv").read_text(),
            files=files,
            started_wall=running.started_wall,
            argv=server.argv if server is not None else [],
        )
        shutil.rmtree(running.work, ignore_errors=True)
        return to_dict(result)


def read_or_empty(path: Path) -> str:
    return path.read_text(errors="replace") if path.is_file() else ""


def reply_json(handler: BaseHTTPRequestHandler, code: int, payload: dict[str, Any]) -> None:
    body = json.dumps(payload).encode()
    handler.send_response(code)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def read_json_body(handler: BaseHTTPRequestHandler) -> Any:
    """The request's JSON body ({} when empty); Refused when too large or not JSON."""
    length_text = handler.headers.get("Content-Length") or "0"
    length = int(length_text) if length_text.isdigit() else -1
    if not 0 <= length <= MAX_BODY_BYTES:
        raise Refused(f"a request body of {length} bytes is refused")
    try:
        return json.loads(handler.rfile.read(length) or b"{}")
    except ValueError as exc:
        raise Refused(f"the body is not JSON: {exc}") from exc


def handler_for(agent: Agent) -> type[BaseHTTPRequestHandler]:
    routes: dict[tuple[str, str], Callable[[Any], dict[str, Any]]] = {
        ("POST", "/start"): agent.start,
        ("GET", "/status"): lambda _body: agent.status(),
        ("POST", "/stop"): lambda _body: agent.stop(),
    }

    class Handler(BaseHTTPRequestHandler):
        def _refuse(self, method: str, code: int, reason: str) -> None:
            LOG.warning(
                "refused %s %s from %s (%d): %s",
                method,
                self.path,
                self.client_address[0],
                code,
                reason,
            )
            reply_json(self, code, to_dict(ErrorReply(reason)))

        def _route(self, method: str) -> None:
            action = routes.get((method, self.path))
            if action is None:
                self._refuse(method, 404, f"no route {method} {self.path}")
                return
            try:
                # Before the body is even read: without this run's token nothing happens.
                agent.authorize(self.headers.get("Authorization"))
                reply = action(read_json_body(self))
            except Unauthorized as exc:
                self._refuse(method, 401, str(exc))
            except Refused as exc:
                self._refuse(method, 400, str(exc))
            except Busy as exc:
                self._refuse(method, 409, str(exc))
            except Exception as exc:  # noqa: BLE001 - the caller records it in the cell
                LOG.exception("failed %s %s", method, self.path)
                reply_json(self, 500, to_dict(ErrorReply(f"{type(exc).__name__}: {exc}")))
            else:
                LOG.info("%s %s from %s: done", method, self.path, self.client_address[0])
                reply_json(self, 200, reply)

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            self._route("GET")

        def do_POST(self) -> None:  # noqa: N802
            self._route("POST")

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass  # _route logs one line per request, refusals with their reason

    return Handler


def serve(
    paths: HostPaths,
    listen: str,
    port: int,
    token_file: Path,
    services_home: Path | None = None,
) -> None:
    if listen in WILDCARD_ADDRESSES:
        # Every address would include networks other than the servers' own.
        raise SystemExit(f"perflab agent: --listen {listen!r} refused: give the data address")
    check_token_file(token_file)
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    agent = Agent(paths, listen, token_file, services_home)
    httpd = ThreadingHTTPServer((listen, port), handler_for(agent))
    LOG.info("listening on %s:%d, %d implementations", listen, port, len(agent.impls))
    print("READY", flush=True)
    try:
        httpd.serve_forever()
    finally:
        if agent.running is not None:
            agent.stop()
