"""Long-running dependencies of a study (S3, MongoDB, ...) as plain background processes.

There is no systemd on every host, so a role describes each service once in
`<home>/services/<name>.json` and this module starts, stops and checks it, keeping a
pid file and a log beside the definition:

    python -m perflab.host.services start|stop|restart|status <name> [--home ~/.perflab]
    python -m perflab.host.services probe s3=http://127.0.0.1:17070 mongo=mongodb://127.0.0.1:27117

A definition holds no secret: secrets live in `env_file` (KEY=VALUE lines, mode 0600),
read only when the process starts, so they never reach argv, logs or run data.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import psutil

from perflab.host.net import port_open
from perflab.host.procs import log_tail

START_TIMEOUT_S = 30.0
STOP_GRACE_S = 10.0


class ServiceError(RuntimeError):
    """A service that cannot be started or reached; the message names it and its endpoint."""


@dataclass
class Service:
    name: str
    argv: list[str]
    host: str
    port: int
    folder: Path  # <home>/services: the definition, pid file and log live here
    env_file: str = ""
    cwd: str = ""

    @property
    def pid_file(self) -> Path:
        return self.folder / f"{self.name}.pid"

    @property
    def log_file(self) -> Path:
        return self.folder / f"{self.name}.log"

    @property
    def endpoint(self) -> str:
        return f"{self.host}:{self.port}"


def services_dir(home: Path) -> Path:
    return Path(home).expanduser() / "services"


def load(home: Path, name: str) -> Service:
    path = services_dir(home) / f"{name}.json"
    try:
        raw = json.loads(path.read_text())
        return Service(
            name=name,
            argv=[str(a) for a in raw["argv"]],
            host=str(raw["host"]),
            port=int(raw["port"]),
            folder=path.parent,
            env_file=str(raw.get("env_file", "")),
            cwd=str(raw.get("cwd", "")),
        )
    except (OSError, json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise ServiceError(f"service {name!r}: cannot read its definition {path}: {exc}") from exc


def pid(service: Service) -> int | None:
    """The live process of the service, or None (a stale pid file counts as stopped)."""
    try:
        value = int(service.pid_file.read_text().strip())
        proc = psutil.Process(value)
        # A recycled pid belongs to some other program: compare the executable's name.
        if proc.status() == psutil.STATUS_ZOMBIE:
            return None
        if Path(proc.cmdline()[0]).name != Path(service.argv[0]).name:
            return None
        return value
    except (OSError, ValueError, IndexError, psutil.Error):
        return None


def read_env_file(path: str) -> dict[str, str]:
    env: dict[str, str] = {}
    if not path:
        return env
    for line in Path(path).read_text().splitlines():
        key, sep, value = line.partition("=")
        if sep and not key.strip().startswith("#"):
            env[key.strip()] = value.strip()
    return env


def start(service: Service, timeout_s: float = START_TIMEOUT_S) -> bool:
    """Starts the service unless it runs; True when it had to be started."""
    if pid(service) is not None:
        return False
    # A process that was just killed can hold its port for a moment: give it that moment.
    deadline = time.monotonic() + 2.0
    while port_open(service.host, service.port) and time.monotonic() < deadline:
        time.sleep(0.1)
    if port_open(service.host, service.port):
        raise ServiceError(
            f"service {service.name}: {service.endpoint} is taken by another process "
            f"(no live pid in {service.pid_file})"
        )
    env = {**os.environ, **read_env_file(service.env_file)}
    with service.log_file.open("ab") as log:
        proc = subprocess.Popen(
            service.argv,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            cwd=service.cwd or None,
            # Its own session: a test's or a cell's signals never reach it.
            start_new_session=True,
        )
    service.pid_file.write_text(f"{proc.pid}\n")
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            service.pid_file.unlink(missing_ok=True)
            raise ServiceError(
                f"service {service.name} ({service.endpoint}) exited with code "
                f"{proc.returncode} at start:\n{log_tail(service.log_file)}"
            )
        if port_open(service.host, service.port):
            return True
        time.sleep(0.1)
    stop(service)
    raise ServiceError(
        f"service {service.name} did not listen on {service.endpoint} within {timeout_s:.0f} s:\n"
        f"{log_tail(service.log_file)}"
    )


def stop(service: Service) -> bool:
    """Stops the service if it runs; True when it was running."""
    value = pid(service)
    if value is None:
        service.pid_file.unlink(missing_ok=True)
        return False
    proc = psutil.Process(value)
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(STOP_GRACE_S)
    except psutil.TimeoutExpired:
        proc.kill()
        proc.wait(STOP_GRACE_S)
    service.pid_file.unlink(missing_ok=True)
    return True


def ensure(home: Path, name: str) -> tuple[int, str]:
    """The service's pid, starting it first when it is down; the note says if it was."""
    service = load(home, name)
    started = start(service)
    value = pid(service)
    if value is None:
        raise ServiceError(f"service {name} ({service.endpoint}) is not running after start")
    note = ""
    if started:
        note = f"dependency {name} ({service.endpoint}) was down and has been restarted"
    return value, note


def safe_endpoint(url: str) -> str:
    """host:port of a URL or URI, without user, password or query (they may hold secrets)."""
    parts = urlsplit(url if "://" in url else f"tcp://{url}")
    host = parts.hostname or ""
    default = {"http": 80, "https": 443, "mongodb": 27017}.get(parts.scheme, 0)
    try:
        port = parts.port or default
    except ValueError:
        port = default
    return f"{host}:{port}"


def probe(targets: dict[str, str], timeout_s: float = 2.0) -> list[str]:
    """The problems found: one line per target whose TCP endpoint does not accept connections."""
    problems = []
    for name, url in targets.items():
        endpoint = safe_endpoint(url)
        host, _, port = endpoint.rpartition(":")
        if not host or not port.isdigit() or int(port) == 0:
            problems.append(f"{name}: cannot tell host and port from the configured endpoint")
        elif not port_open(host, int(port), timeout_s):
            problems.append(f"{name} unreachable at {endpoint}: nothing accepts connections there")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="perflab.host.services", description=__doc__)
    parser.add_argument("action", choices=["start", "stop", "restart", "status", "probe"])
    parser.add_argument("names", nargs="+", help="service names, or name=url for probe")
    parser.add_argument("--home", default="~/.perflab")
    args = parser.parse_args(argv)
    home = Path(args.home).expanduser()
    if args.action == "probe":
        targets = dict(item.partition("=")[::2] for item in args.names)
        problems = probe(targets)
        for line in problems:
            print(f"refused: {line}", file=sys.stderr)
        if not problems:
            print("reachable: " + ", ".join(f"{n} {safe_endpoint(u)}" for n, u in targets.items()))
        return 1 if problems else 0
    code = 0
    for name in args.names:
        try:
            service = load(home, name)
            if args.action == "status":
                value = pid(service)
                print(f"{name}: " + (f"running (pid {value})" if value else "stopped"))
                code = code or (0 if value else 3)
            elif args.action == "stop":
                print(f"{name}: " + ("stopped" if stop(service) else "not running"))
            else:
                if args.action == "restart":
                    stop(service)
                started = start(service)
                print(f"{name}: " + ("started" if started else "running already"))
        except ServiceError as exc:
            print(str(exc), file=sys.stderr)
            code = 1
    return code


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
