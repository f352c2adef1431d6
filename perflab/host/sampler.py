"""Resource samples of the processes in a cell, every 100 ms, into resources.csv."""

from __future__ import annotations

import contextlib
import csv
import threading
import time
from pathlib import Path

import psutil

COLUMNS = ("t", "pid", "role", "phase", "cpu_percent", "rss_bytes", "cpu_seconds")


class ResourceSampler:
    """Samples every process tree registered under a role until stopped.

    cpu_seconds is cumulative user+system time of that pid, so CPU spent in a
    phase is a difference of two samples and does not depend on the interval.
    """

    def __init__(self, out: Path, interval_s: float = 0.1) -> None:
        self._out = out
        self._interval_s = interval_s
        self._roots: dict[str, psutil.Process] = {}
        self._seen: dict[int, psutil.Process] = {}
        self._phase = "start"
        self._lock = threading.Lock()
        # Guards the writer: a phase change samples from the caller's thread.
        self._write_lock = threading.Lock()
        self._writer: csv.writer | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="resource-sampler", daemon=True)
        self._t0 = time.monotonic()
        # Where t = 0 is on the wall clock, and when each phase began (t): a server
        # sampled on another host (perflab.host.agent) is put on this timeline with them.
        self.wall_t0 = time.time()
        self.phases: list[tuple[float, str]] = [(0.0, self._phase)]

    def watch(self, role: str, pid: int) -> None:
        with self._lock, contextlib.suppress(psutil.NoSuchProcess):
            self._roots[role] = psutil.Process(pid)

    def unwatch(self, role: str) -> None:
        with self._lock:
            self._roots.pop(role, None)

    def phase(self, name: str) -> None:
        """Switches phase with one sample at the change, written under the old phase and
        the new: a phase's CPU (a difference of cumulative cpu_seconds) then spans exactly
        the phase, not the samples nearest it."""
        with self._write_lock:
            rows = self._rows() if self._writer is not None else []
            self._write(rows)
            self._phase = name
            self.phases.append((round(time.monotonic() - self._t0, 3), name))
            self._write([(t, pid, role, name, *rest) for t, pid, role, _, *rest in rows])

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _tree(self, root: psutil.Process) -> list[psutil.Process]:
        try:
            return [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            return []

    def _write(self, rows: list[tuple]) -> None:
        if self._writer is not None:
            self._writer.writerows(rows)

    def _sample(self) -> None:
        with self._write_lock:
            self._write(self._rows())

    def _rows(self) -> list[tuple]:
        now = round(time.monotonic() - self._t0, 3)
        rows = []
        with self._lock:
            roots = dict(self._roots)
        for role, root in roots.items():
            for proc in self._tree(root):
                # Reuse one Process object per pid: cpu_percent() measures since its last call.
                proc = self._seen.setdefault(proc.pid, proc)
                try:
                    with proc.oneshot():
                        cpu = proc.cpu_percent(interval=None)
                        rss = proc.memory_info().rss
                        times = proc.cpu_times()
                except (psutil.NoSuchProcess, psutil.ZombieProcess, psutil.AccessDenied):
                    continue
                if rss == 0:
                    continue  # exiting: a zero here is not memory the process ever had
                rows.append(
                    (
                        now,
                        proc.pid,
                        role,
                        self._phase,
                        cpu,
                        rss,
                        round(times.user + times.system, 3),
                    )
                )
        return rows

    def _loop(self) -> None:
        with self._out.open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(COLUMNS)
            with self._write_lock:
                self._writer = writer
            while not self._stop.is_set():
                self._sample()
                self._stop.wait(self._interval_s)
            self._sample()
            with self._write_lock:
                self._writer = None
