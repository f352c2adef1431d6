"""Pure parsers of raw tool output into (metric, value, unit) rows.

Each takes the text or object as the tool wrote it and raises MalformedRawFile, naming
the file, when it is not what that tool writes. No parser touches the disk except to
read the one file it is given.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

NS_PER_MS = 1e6


class MalformedRawFile(ValueError):
    """A raw output file that is missing or not what its tool writes; the message names it."""

    def __init__(self, path: Path | str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = Path(path)


@dataclass(frozen=True)
class Metric:
    metric: str
    value: float
    unit: str


def read_raw_text(path: Path) -> str:
    """Reads path, or path + '.gz' when only the compressed copy exists."""
    gz = path.with_name(path.name + ".gz")
    try:
        if path.is_file():
            return path.read_text()
        if gz.is_file():
            with gzip.open(gz, "rt") as handle:
                return handle.read()
    except (OSError, UnicodeDecodeError, EOFError) as exc:
        raise MalformedRawFile(path, f"cannot be read: {exc}") from exc
    raise MalformedRawFile(path, "missing (neither it nor its .gz exists)")


def raw_exists(path: Path) -> bool:
    return path.is_file() or path.with_name(path.name + ".gz").is_file()


GHZ_REQUIRED = ("count", "total", "average", "fastest", "slowest", "rps", "latencyDistribution")


def parse_ghz(text: str, path: Path | str = "ghz.json") -> list[Metric]:
    """ghz --format json: rate, latency percentiles, counts and errors by status code."""
    try:
        report: dict[str, Any] = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MalformedRawFile(path, f"not JSON ({exc})") from exc
    if not isinstance(report, dict):
        raise MalformedRawFile(path, "not a ghz JSON report (top level is not an object)")
    missing = [key for key in GHZ_REQUIRED if key not in report]
    if missing:
        raise MalformedRawFile(path, f"not a ghz JSON report: missing {missing}")
    codes: dict[str, int] = report.get("statusCodeDistribution") or {}
    ok = codes.get("OK", 0)
    total_s = report["total"] / 1e9
    rows = [
        # ghz's own rps counts failed calls too (all-refused calls reach thousands per
        # second), so the rate reported here is successful calls per second.
        Metric("rps", ok / total_s if total_s > 0 else 0.0, "req/s"),
        Metric("rps_ghz", float(report["rps"]), "req/s"),
        Metric("count", float(report["count"]), "calls"),
        Metric("ok", float(ok), "calls"),
        Metric("errors", float(sum(n for code, n in codes.items() if code != "OK")), "calls"),
        Metric("total", total_s, "s"),
    ]
    if ok:
        # ghz's latency figures describe successful calls only; without one they are zeros.
        rows += [
            Metric("latency_mean", report["average"] / NS_PER_MS, "ms"),
            Metric("latency_fastest", report["fastest"] / NS_PER_MS, "ms"),
            Metric("latency_slowest", report["slowest"] / NS_PER_MS, "ms"),
        ]
    rows += [
        Metric(f"errors_{code}", float(n), "calls")
        for code, n in sorted(codes.items())
        if code != "OK"
    ]
    for entry in report["latencyDistribution"] or []:
        rows.append(Metric(f"latency_p{entry['percentage']:g}", entry["latency"] / NS_PER_MS, "ms"))
    return rows


def ghz_error_messages(text: str) -> dict[str, int]:
    """ghz's errorDistribution: the text of every distinct error and how often it came."""
    return dict(json.loads(text).get("errorDistribution") or {})


# GNU time -v: "\tMaximum resident set size (kbytes): 40352"
TIME_FIELDS = {
    "User time (seconds)": ("cpu_user", "s"),
    "System time (seconds)": ("cpu_system", "s"),
    "Maximum resident set size (kbytes)": ("max_rss", "KiB"),
    "Major (requiring I/O) page faults": ("page_faults_major", "count"),
    "Minor (reclaiming a frame) page faults": ("page_faults_minor", "count"),
    "Voluntary context switches": ("ctx_switches_voluntary", "count"),
    "Involuntary context switches": ("ctx_switches_involuntary", "count"),
    "Exit status": ("exit_status", "code"),
}


def parse_time_v(text: str, path: Path | str = "time.txt", prefix: str = "client_") -> list[Metric]:
    """GNU `/usr/bin/time -v` output: CPU seconds, max RSS, page faults, context switches."""
    found: dict[str, Metric] = {}
    for line in text.splitlines():
        # Keys hold colons of their own ("(h:mm:ss or m:ss)"); values never do.
        key, _, value = line.strip().rpartition(": ")
        if key not in TIME_FIELDS:
            continue
        name, unit = TIME_FIELDS[key]
        try:
            found[name] = Metric(prefix + name, float(value), unit)
        except ValueError as exc:
            raise MalformedRawFile(path, f"{key!r} is not a number: {value!r}") from exc
    missing = [
        name for name, _ in TIME_FIELDS.values() if name not in found and name != "exit_status"
    ]
    if missing:
        raise MalformedRawFile(path, f"not GNU time -v output: missing {missing}")
    rows = list(found.values())
    rows.append(
        Metric(prefix + "cpu_seconds", found["cpu_user"].value + found["cpu_system"].value, "s")
    )
    return rows


# GNU time -v leads with this line when the command it timed was killed (the OOM killer's
# SIGKILL shows nowhere else).
TERMINATED_BY = re.compile(r"^Command terminated by signal (\d+)", re.MULTILINE)


def terminating_signal(text: str) -> int | None:
    """The signal that killed the command GNU time -v timed, or None when none did."""
    found = TERMINATED_BY.search(text)
    return int(found.group(1)) if found else None


RESOURCE_COLUMNS = ("t", "pid", "role", "phase", "cpu_percent", "rss_bytes", "cpu_seconds")


def parse_resources(text: str, path: Path | str = "resources.csv") -> list[Metric]:
    """psutil samples: per role, CPU in the measured phase and peak RSS.

    CPU comes from the cumulative `cpu_seconds` of each process, between its first and
    its last sample inside the "measure" phase: nothing before the phase (a warm-up, a
    server building its payload) is counted. `<role>_cpu_window` is the time between those
    samples and `<role>_cpu_percent_mean` the CPU over it in % of one core, so a process
    pinned to one core reads at most 100% plus the tick resolution (10 ms over the window).
    The sampler takes a sample at each phase change, so in new runs the window is the phase;
    in older runs it starts up to one sampling interval late and ends up to one early.
    """
    reader = csv.DictReader(io.StringIO(text))
    if reader.fieldnames is None or not set(RESOURCE_COLUMNS) <= set(reader.fieldnames):
        raise MalformedRawFile(
            path, f"expected columns {RESOURCE_COLUMNS}, got {reader.fieldnames}"
        )
    # role -> pid -> [(t, phase, rss, cpu_seconds)]
    series: dict[str, dict[str, list[tuple[float, str, float, float]]]] = {}
    try:
        for row in reader:
            series.setdefault(row["role"], {}).setdefault(row["pid"], []).append(
                (
                    float(row["t"]),
                    row["phase"],
                    float(row["rss_bytes"]),
                    float(row["cpu_seconds"]),
                )
            )
    except (TypeError, ValueError) as exc:
        raise MalformedRawFile(path, f"line {reader.line_num}: {exc}") from exc
    rows = []
    for role, pids in sorted(series.items()):
        measured = [s for samples in pids.values() for s in samples if s[1] == "measure"]
        cpu_seconds = sum(
            phase[-1][3] - phase[0][3]
            for phase in ([s for s in samples if s[1] == "measure"] for samples in pids.values())
            if phase
        )
        peak_rss = max((s[2] for samples in pids.values() for s in samples), default=0.0)
        # The client's exact CPU and RSS come from /usr/bin/time -v (client_* metrics);
        # its samples are named apart so neither overwrites the other.
        # Dependencies (S3, MongoDB, ...) are sampled only, so they keep their own name.
        name = role if role == "server" or role.startswith("dependency_") else f"{role}_sampled"
        rows.append(Metric(f"{name}_rss_peak", peak_rss / 2**20, "MiB"))
        window = (max(s[0] for s in measured) - min(s[0] for s in measured)) if measured else 0.0
        if window > 0:  # one sample in the phase measures no CPU
            rows.append(Metric(f"{name}_cpu_seconds", cpu_seconds, "s"))
            rows.append(Metric(f"{name}_cpu_window", window, "s"))
            rows.append(Metric(f"{name}_cpu_percent_mean", 100 * cpu_seconds / window, "percent"))
    return rows


def resources_frame_rows(text: str, path: Path | str = "resources.csv") -> list[dict[str, Any]]:
    """The samples themselves, for time-series plots."""
    reader = csv.DictReader(io.StringIO(text))
    if reader.fieldnames is None or not set(RESOURCE_COLUMNS) <= set(reader.fieldnames):
        raise MalformedRawFile(
            path, f"expected columns {RESOURCE_COLUMNS}, got {reader.fieldnames}"
        )
    return list(reader)


def parse_client_json(text: str, path: Path | str = "client.json") -> list[Metric]:
    """A study client's output: {"metrics": [{"metric", "value", "unit"}, ...], ...}."""
    try:
        report = json.loads(text)
        return [
            Metric(str(m["metric"]), float(m["value"]), str(m["unit"])) for m in report["metrics"]
        ]
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise MalformedRawFile(path, f"not a client report with a metrics list ({exc})") from exc


def client_cdfs(text: str, path: Path | str = "client.json") -> dict[str, list[list[float]]]:
    """A study client's latency CDFs, {name: [[quantile, microseconds], ...]} ({} if none)."""
    try:
        report = json.loads(text)
        return dict(report.get("cdf_us") or {})
    except (json.JSONDecodeError, AttributeError, TypeError, ValueError) as exc:
        raise MalformedRawFile(path, f"not a client report with latency CDFs ({exc})") from exc


SERVER_STATS_PREFIX = "STATS "


def parse_server_stats(text: str, path: Path | str = "server.log") -> dict[str, Any]:
    """The last `STATS {...}` line a server prints on exit; {} when it did not get to it."""
    for line in reversed(text.splitlines()):
        if line.startswith(SERVER_STATS_PREFIX):
            try:
                stats = json.loads(line.removeprefix(SERVER_STATS_PREFIX))
            except json.JSONDecodeError as exc:
                raise MalformedRawFile(path, f"STATS line is not JSON ({exc})") from exc
            if not isinstance(stats, dict):
                raise MalformedRawFile(path, "STATS line is not a JSON object")
            return stats
    return {}
