"""The runner's side of the server agent (perflab.host.agent): ask it to start a cell's server,
and bring the server's log and samples back into the cell folder when it stops.

Every request carries the run's agent token (`Authorization: Bearer <token>`), read from a
file the server_agent role copied to this host (mode 0600). The token never enters a
cell spec, a cell.json or any other record.
"""

from __future__ import annotations

import csv
import io
import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, TypeVar

from perflab.contract.agent_messages import (
    ErrorReply,
    MessageError,
    StartReply,
    StartRequest,
    StatusReply,
    StopReply,
    from_dict,
    to_dict,
)
from perflab.contract.cell import CellSpec
from perflab.host.sampler import COLUMNS

REQUEST_TIMEOUT_S = 30.0
Reply = TypeVar("Reply")


class AgentError(RuntimeError):
    """The agent refused or could not be reached; the text says which and why."""


def read_token(path: Path) -> str:
    """The agent token kept in path; AgentError naming the file when there is none."""
    try:
        token = path.read_text().strip()
    except OSError as exc:
        raise AgentError(f"agent token file {path}: {exc.strerror or exc}") from exc
    if not token:
        raise AgentError(f"agent token file {path} is empty")
    return token


def call(url: str, path: str, token: str, payload: dict[str, Any] | None = None) -> dict[str, Any]:
    """One request to an agent; its refusals and absence become AgentError."""
    data = None if payload is None else json.dumps(payload).encode()
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(
        url.rstrip("/") + path,
        data=data,
        method="GET" if payload is None else "POST",
        headers=headers,
    )
    try:
        with urllib.request.urlopen(request, timeout=REQUEST_TIMEOUT_S) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:
        try:
            reason = from_dict(ErrorReply, json.loads(exc.read())).error
        except (ValueError, OSError):  # MessageError is a ValueError
            reason = ""
        raise AgentError(
            f"server agent {url} refused {path} ({exc.code}): {reason or exc.reason}"
        ) from exc
    except (urllib.error.URLError, OSError) as exc:
        raise AgentError(f"server agent {url} unreachable: {exc}") from exc


def answer(kind: type[Reply], url: str, path: str, raw: dict[str, Any]) -> Reply:
    """The agent's answer as its record; AgentError when it is not of that shape."""
    try:
        return from_dict(kind, raw)
    except MessageError as exc:
        raise AgentError(f"server agent {url} answered {path} with a malformed {exc}") from exc


class RemoteServer:
    """The runner's handle on a server the agent started; mirrors launch.ServerProcess."""

    def __init__(self, url: str, log_path: Path, token: str) -> None:
        self.url = url
        self.log_path = log_path
        self.token = token
        self.result: StopReply | None = None

    def _ask(self, kind: type[Reply], path: str, payload: dict[str, Any] | None = None) -> Reply:
        return answer(kind, self.url, path, call(self.url, path, self.token, payload))

    def start(self, spec: CellSpec, server_cpus: list[int], pin: bool) -> int:
        request = StartRequest(json.loads(spec.to_json()), server_cpus, pin)
        reply = self._ask(StartReply, "/start", to_dict(request))
        (self.log_path.parent / "server.argv.json").write_text(json.dumps(reply.argv))
        return reply.port

    def exit_code(self) -> int | None:
        if self.result is not None:
            return self.result.exit_code
        try:
            return self._ask(StatusReply, "/status").exit_code
        except AgentError:
            return None

    def stop(self) -> str:
        """Stops the server and keeps its log; returns a note as ServerProcess.stop does."""
        self.result = self._ask(StopReply, "/stop", {})
        self.log_path.write_text(self.result.server_log)
        for name, text in self.result.files.items():
            (self.log_path.parent / Path(name).name).write_text(text)
        return self.result.note

    def dependencies_died(self) -> list[str]:
        return list(self.result.dependencies_died) if self.result else []

    def notes(self) -> list[str]:
        return list(self.result.notes) if self.result else []

    def merge_samples(self, resources: Path, phases: list[tuple[float, str]], t0: float) -> None:
        """Appends the agent's server samples to the cell's resources.csv.

        Times are moved onto the runner's clock (both hosts' wall clocks; on netns they
        are one clock) and each sample takes the phase the runner was in at that time.
        """
        if self.result is None:
            return
        shift = self.result.started_wall - t0
        rows = list(csv.DictReader(io.StringIO(self.result.resources_csv)))
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
