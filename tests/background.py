"""A tool started for a test as a real process (an emulator, JupyterLab): up when its port
answers, stopped by its PID afterwards, whatever the test did."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from perflab.host.net import port_open
from perflab.host.procs import log_tail


class NotListening(RuntimeError):
    """The process exited, or its port did not answer in time; the message holds its log."""


@contextmanager
def listening(
    argv: list[str],
    env: dict[str, str],
    log_path: Path,
    port: int,
    host: str = "127.0.0.1",
    cwd: Path | None = None,
    timeout_s: float = 60.0,
) -> Iterator[subprocess.Popen[bytes]]:
    """argv running in its own session with its output in log_path, once host:port accepts
    connections; SIGTERM to its session (its PID is the session's id) at the end, SIGKILL after
    10 s."""
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            argv,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            cwd=cwd,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + timeout_s
        while not port_open(host, port):
            if proc.poll() is not None:
                raise NotListening(
                    f"{argv[0]} exited with {proc.returncode}:\n{log_tail(log_path, 30)}"
                )
            if time.monotonic() > deadline:
                raise NotListening(
                    f"{argv[0]} not on {host}:{port} in {timeout_s:.0f} s:\n"
                    f"{log_tail(log_path, 30)}"
                )
            time.sleep(0.2)
        yield proc
    finally:
        if proc.poll() is None:
            # Its session: a wrapper (make, a shell) and the tool it started go together.
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
