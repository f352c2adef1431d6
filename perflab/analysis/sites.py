"""Every run a site: a run's readings, kept small, and which runs make one site.

A run's reading is, per claim and configuration, the effect its verdict rests on with the
run's own interval: the same numbers its report shows. Pooling works on the log of the
effect and a standard error taken from that interval (half its log width over the normal
quantile of its coverage; the exact intervals are not symmetric, so this is the usual
approximation of a meta-analysis that has intervals, not raw data).

A run's readings are written to `data/readings/<run_id>.json` (tens of KiB) by
`perflab readings`, from a run folder or from a run recovered from the repository's history
(`git archive <commit> data/<run_id>`): the pooled report reads these files, not the
runs, so runs that are no longer committed (20-70 MiB each) still count.

Runs are grouped into sites by topology and the hosts' facts: CPU model, CPU count, kernel,
and boot id. Two runs of one boot are one site with two runs, combined by inverse variance
before the sites are pooled. A run recorded before the manifest had a boot id stands in by
the day it started (`BOOT_FALLBACK`): two runs of one day on the same kernel count as one
site, the cautious side (fewer sites, wider intervals).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from perflab.analysis.claim_ids import current_id
from perflab.analysis.drift_history import MACHINE_FACTS, READINGS_HISTORY
from perflab.analysis.verdicts import NOT_MEASURED, Verdict

if TYPE_CHECKING:
    from perflab.analysis.run import Run, StudyHooks

READINGS_DIR = "readings"
BOOT_FALLBACK = "day"


class ReadingsError(ValueError):
    """A readings file or run that cannot be pooled; the message names it."""


@dataclass(frozen=True)
class Reading:
    """One claim's configuration in one run: the effect (a ratio or a rate) and its
    interval as the run's verdict states them."""

    claim: str
    configuration: dict[str, str]
    effect: float
    low: float
    high: float
    coverage: float
    method: str
    n: tuple[int, int]
    verdict: str

    def where(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.configuration.items()) or "all cells"

    def log_effect(self) -> float | None:
        return math.log(self.effect) if self.effect > 0 else None

    def se(self) -> float | None:
        """The standard error on the log scale the interval implies; None where it has no
        width or touches 0 (a rate of 0, a ratio with no interval)."""
        if not (self.low > 0 and self.high > self.low and 0 < self.coverage < 1):
            return None
        return (math.log(self.high) - math.log(self.low)) / (2 * normal_quantile(self.coverage))


@cache
def normal_quantile(coverage: float) -> float:
    """The z of a two-sided normal interval of `coverage` (scipy's ppf costs a millisecond,
    and a report asks it for every reading of every pooled run: a few coverages in all)."""
    from scipy.stats import norm

    return float(norm.ppf(0.5 + coverage / 2))


@dataclass(frozen=True)
class RunReadings:
    """A run's readings with what makes it a site."""

    run_id: str
    commit: str
    start: str
    topology: str
    profile: str
    hosts: dict[str, dict[str, Any]]
    readings: tuple[Reading, ...]
    # claim id -> the run's verdict on it, and why where it was not measured.
    verdicts: dict[str, str]
    not_measured: dict[str, str] = field(default_factory=dict)
    # Where the run folder came from: "" (this checkout) or the commit that held it.
    recovered_from: str = ""
    # Fix commit (perflab.analysis.fixes) -> whether the run's commit held it; None: unknown.
    fixes: dict[str, bool | None] = field(default_factory=dict)
    # Its A/A cells' log ratios per kind and metric (perflab.analysis.drift_history.AaSeries
    # as a dict): the history later runs of its machine take their margins from.
    aa_series: tuple[dict[str, Any], ...] = ()

    def site(self) -> str:
        """The site's key: topology, every host's machine facts, and the boot."""
        parts = [self.topology]
        for name in sorted(self.hosts):
            facts = self.hosts[name]
            machine = "/".join(str(facts.get(key, "?")) for key in MACHINE_FACTS)
            parts.append(f"{name}={machine}")
        parts.append(f"boot={self.boot()}")
        return " ".join(parts)

    def boot(self) -> str:
        boots = sorted({str(f.get("boot_id") or "") for f in self.hosts.values()} - {""})
        if boots:
            return ",".join(boots)
        return f"{BOOT_FALLBACK} {self.start[:10]}"

    def machine(self) -> str:
        """The machine in words, for the page: 'AMD EPYC, 2 CPUs, kernel 6.18.44-fc-v657'."""
        facts = next(iter(self.hosts.values()), {})
        return (
            f"{facts.get('cpu_model', '?')}, {facts.get('cpus', '?')} CPUs, kernel "
            f"{facts.get('kernel', '?')}"
        )


def reading_of(verdict: Verdict) -> list[Reading]:
    """A verdict's configurations that have an interval, as readings."""
    readings = []
    for pair in verdict.pairs:
        if pair.interval is None:
            continue
        readings.append(
            Reading(
                verdict.claim.id,
                {k: str(v) for k, v in pair.key.items()},
                float(pair.effect),
                float(pair.interval.low),
                float(pair.interval.high),
                float(pair.interval.coverage),
                pair.interval.method,
                (pair.n_numerator, pair.n_denominator),
                pair.verdict,
            )
        )
    return readings


def read_run_readings(
    run: Run,
    reference_dir: Path,
    recovered_from: str = "",
    fixes_held: Callable[[str], dict[str, bool | None]] | None = None,
) -> RunReadings:
    """A run's readings, judged as its own report judges it (perflab.analysis.replication):
    with the claims of `reference_dir` and the seed configurations each covers, so a claim
    whose seed figure sits inside the noise reads 'at its threshold' as its index says.
    `fixes_held` says, from the run's commit, which measurement fixes it held (built by the
    caller from perflab.analysis.fixes, which reads these files and so sits above them)."""
    from perflab.analysis.adaptive import judge_run_looks
    from perflab.analysis.noise import margins_by_look, noise_floor, series_of
    from perflab.analysis.published import reference_claims
    from perflab.analysis.verdicts import Judging

    claims = reference_claims(reference_dir, run.seed_rows_hooks)
    manifest = run.manifest or {}
    commit = str(manifest.get("git_sha", ""))
    # As replication.replicate judges a run for its index, without the reference beside it.
    floor = noise_floor(run, claims)
    by_study = floor.judging_by_study()
    ledger = run.ledger
    by_look = margins_by_look(run, claims, ledger.looks(), ledger.base_rounds) if ledger else {}
    verdicts = judge_run_looks(run, claims, Judging(), by_study, by_look)
    readings = [r for verdict in verdicts for r in reading_of(verdict)]
    hosts = {
        name: {key: facts.get(key) for key in (*MACHINE_FACTS, "boot_id")}
        for name, facts in (manifest.get("hosts") or {}).items()
    }
    return RunReadings(
        run_id=str(manifest.get("run_id", run.run_id)),
        commit=commit,
        start=str(manifest.get("start", "")),
        topology=str(manifest.get("topology", "localhost")),
        profile=str(manifest.get("profile", "")),
        hosts=hosts,
        readings=tuple(readings),
        verdicts={v.claim.id: v.verdict for v in verdicts},
        not_measured={v.claim.id: v.reason for v in verdicts if v.verdict == NOT_MEASURED},
        recovered_from=recovered_from,
        fixes=fixes_held(commit) if fixes_held else {},
        aa_series=tuple(asdict(s) for kind in floor.kinds for s in series_of(kind)),
    )


def write_readings(readings: RunReadings, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{readings.run_id}.json"
    data = asdict(readings)
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    return path


def load_readings(path: Path) -> RunReadings:
    """A readings file, or a ReadingsError naming it and what is wrong."""
    try:
        data = json.loads(Path(path).read_text())
        # A file written before the one id convention names old ids (claim_ids).
        rows = tuple(
            Reading(**{**row, "n": tuple(row["n"]), "claim": current_id(row["claim"])})
            for row in data.pop("readings")
        )
        for key in ("verdicts", "not_measured"):
            data[key] = {current_id(claim): said for claim, said in data.get(key, {}).items()}
        data["aa_series"] = tuple(data.get("aa_series", ()))
        return RunReadings(**data, readings=rows)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ReadingsError(f"{path}: not a readings file ({exc})") from exc


def readings_of(source: Path, reference_dir: Path, hooks: StudyHooks) -> RunReadings:
    """A readings file as it is, or a run folder judged now (with the studies' claim-frame
    hooks, against `reference_dir` as read_run_readings judges it)."""
    from perflab.analysis.run import read

    if source.is_file():
        return load_readings(source)
    if (source / "manifest.json").is_file():
        return read_run_readings(read(source, hooks, READINGS_HISTORY), reference_dir)
    raise ReadingsError(f"{source}: neither a readings file nor a run folder with manifest.json")


def sites_of(runs: list[RunReadings]) -> dict[str, list[RunReadings]]:
    """The runs grouped by site, in the order they came."""
    sites: dict[str, list[RunReadings]] = {}
    for run in runs:
        sites.setdefault(run.site(), []).append(run)
    return sites


def recover_run(repo: Path, commit: str, run_id: str, into: Path) -> Path:
    """A run folder as commit `commit` held it (`git archive`), unpacked under `into`."""
    import subprocess
    import tarfile

    into.mkdir(parents=True, exist_ok=True)
    archive = into / f"{run_id}.tar"
    done = subprocess.run(
        ["git", "-C", str(repo), "archive", "-o", str(archive), commit, f"data/{run_id}"],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise ReadingsError(f"data/{run_id} at {commit}: {done.stderr.strip()}")
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    archive.unlink()
    return into / "data" / run_id


def collect_runs(sources: list[Path], reference_dir: Path, hooks: StudyHooks) -> list[RunReadings]:
    """Every source's readings (see readings_of); a run named twice is an error naming both
    sources."""
    runs: dict[str, tuple[Path, RunReadings]] = {}
    for source in sources:
        run = readings_of(source, reference_dir, hooks)
        if run.run_id in runs:
            raise ReadingsError(
                f"run {run.run_id} is given twice: {runs[run.run_id][0]} and {source}"
            )
        runs[run.run_id] = (source, run)
    return [run for _, run in runs.values()]
