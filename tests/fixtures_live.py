"""Fixtures of the live tests (registered by conftest.py's pytest_plugins): servers and the
server agent started the way perflab starts them, through perflab.host.launch.

Live tests start an implementation with `perflab.host.launch.serving(impl, paths, log, ...)`
(its impl.toml command and options, READY awaited, SIGTERM at the end); the agent fixture
below starts a real `perflab agent` with a token, as roles/server_agent does.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from perflab.contract.cell import CellSpec, LoadSpec, ServerSpec
from perflab.host.impls import HostPaths
from perflab.host.launch import ServerProcess
from perflab.host.net import free_port

REPO = Path(__file__).resolve().parent.parent
# The first ghz every host has (roles/ghz installs each of the one list in group_vars).
GHZ_VERSIONS = REPO / "inventory" / "group_vars" / "all" / "ghz.yml"
GHZ_VERSION = yaml.safe_load(GHZ_VERSIONS.read_text())["perflab_ghz_versions"][0]


def hello_cell(impl: str, name: str, options: dict | None = None) -> CellSpec:
    """A short real hello cell (ghz, 2 callers, 1 s) against impl, as the runner gets it."""
    return CellSpec(
        run_id="t",
        study="hello",
        cell_id=f"{name}-steady-c2-r1",
        scenario="steady",
        implementation=name,
        client="ghz",
        params={"concurrency": 2},
        repeat=1,
        server=ServerSpec(impl=impl, options=dict(options or {})),
        load=LoadSpec(
            kind="ghz",
            proto="hello.proto",
            call="helloworld.Greeter.SayHello",
            data={"name": "perflab"},
            concurrency=2,
            duration_s=1,
            warmup_s=0.5,
            ghz_version=GHZ_VERSION,
        ),
    )


@dataclass
class AgentHandle:
    """A running agent: where it answers, the token file its runners read, and its log."""

    url: str
    token_file: Path
    log_path: Path
    process: ServerProcess

    @property
    def token(self) -> str:
        return self.token_file.read_text().strip()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


def write_token(path: Path) -> Path:
    """A fresh token, mode 0600 from the start, as the server_agent role copies it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(secrets.token_urlsafe(32) + "\n")
    return path


@pytest.fixture
def agent(host_paths: HostPaths, tmp_path: Path) -> Iterator[AgentHandle]:
    """A real server agent on loopback (the netns topology runs the same code on its veth)."""
    port = free_port("127.0.0.1")
    token_file = write_token(tmp_path / "agent-token")
    argv = [
        sys.executable,
        "-m",
        "perflab",
        "agent",
        "--listen=127.0.0.1",
        f"--port={port}",
        f"--token-file={token_file}",
        f"--home={host_paths.home}",
        f"--src={REPO}",
    ]
    process = ServerProcess.start(
        argv, dict(os.environ), tmp_path / "agent.log", "127.0.0.1", port, cwd=REPO
    )
    try:
        process.wait_ready(30)
        yield AgentHandle(f"http://127.0.0.1:{port}", token_file, tmp_path / "agent.log", process)
    finally:
        process.stop()


STALL_SERVER = REPO / "tests" / "servers" / "stall_server.py"


@contextmanager
def stall_server(host_paths: HostPaths, stall_after: int, stall_s: float) -> Iterator[str]:
    """The stall server (host venv: it has grpcio) at its address: one handler thread that
    stalls `stall_s` on call `stall_after`; closing its stdin stops it."""
    argv = [str(host_paths.home / "venv" / "bin" / "python"), str(STALL_SERVER)]
    argv += ["--stall-after", str(stall_after), "--stall-s", str(stall_s)]
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert line.startswith("READY "), f"stall server said {line!r}"
        yield f"127.0.0.1:{line.split()[1]}"
    finally:
        proc.communicate(timeout=10)
