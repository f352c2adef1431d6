"""How long a run will measure, said before it starts, priced from the committed reference
run of the topology:

- a cell whose configuration the reference ran, configured for as many seconds, costs what
  it took there;
- another cell whose load is configured in seconds (warm-up and measured duration) costs those
  seconds plus its implementation's overhead in the reference under the same latency
  profile (what its cells there took beyond their configured seconds: start, ready,
  connect, drain, teardown; behind a 250 ms far-S3 proxy that is some 5 s a cell, on
  loopback under 1 s), else its implementation's under any profile, else the study's;
- a cell sized otherwise (calls, bytes, orders) costs what the same configuration took in
  the reference, and when the reference lacks it, the median cell of its implementation
  (or study) there: priced by analogy, and counted as such; one whose client times more
  or fewer whole-payload calls than there (throughput's `measured_bytes`) costs that with
  its measured window scaled by the calls;
- a cell the runner hands the server of the cell before it (CellSpec.reuse_server) costs
  that less its implementation's wait for READY there;
- plus the reference's median gap between two cells per cell, its median handover per
  study, and the most the adaptive rounds may take;
- once the run has calibrated, all of it but the configured seconds and the latency-bound
  cells stretched to this host's pace (`Pace`): the same CPU kind runs at half the speed
  on some boots, and a second CPU kind at other speeds again.
"""

from __future__ import annotations

import copy
import json
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from perflab.contract.adaptive import configuration_of
from perflab.contract.cell import CellSpec, is_complete, iter_cells
from perflab.contract.phases import (
    PhaseTimes,
    TimedCell,
    run_pause_marks,
    seconds_between,
    split_between,
)
from perflab.contract.rounds import copied_id

# A study the reference never ran: a guess of a few seconds a cell, said as such.
UNKNOWN_CELL_S = 5.0

# A proxy delay from which a cell's time is the proxy's waits, not this host's CPU: behind
# 250 ms each way (aws_io's far S3) a listing waits seconds whatever the CPU; at 0.5 ms
# (orders' lan) the CPU still sets the pace.
LATENCY_BOUND_MS = 10.0


def configured_seconds(spec: dict[str, Any]) -> float | None:
    """The seconds a cell's load is configured to take (warm-up plus measured duration),
    or None when its window is sized in calls, bytes or orders instead. A warm-up sized in
    calls (aws_io's far S3: one call per worker) configures no seconds: its time counts
    with the cell's overhead under its latency profile."""
    load = spec.get("load", {})
    if load.get("kind") != "ghz" or not load.get("duration_s") or load.get("total"):
        return None
    warmup_s = 0.0 if load.get("warmup_total") else float(load.get("warmup_s") or 0.0)
    return warmup_s + float(load["duration_s"])


def timed_calls(spec: dict[str, Any]) -> int | None:
    """The whole-payload calls a cell's client times (a client given `expect_bytes`, one
    call unless `calls` says more); None for any other load."""
    options = spec.get("load", {}).get("client_options") or {}
    if "expect_bytes" not in options:
        return None
    return int(options.get("calls", 1))


def latency_bound(spec: dict[str, Any]) -> bool:
    """Whether a latency proxy in front of the cell sets its time (LATENCY_BOUND_MS)."""
    delays = [float(p.get("one_way_ms") or 0.0) for p in spec.get("latency_proxies") or []]
    return max(delays, default=0.0) >= LATENCY_BOUND_MS


def at_pace(seconds: float, spec: dict[str, Any], pace: float) -> float:
    """A cell's reference seconds on a host `pace` times as slow: its configured seconds (a
    ghz window sized in seconds lasts them on any host) and a latency-bound cell's whole
    time stay, the rest (starts, connects, teardowns, windows sized in calls or bytes)
    stretches with the CPU."""
    if pace == 1.0 or latency_bound(spec):
        return seconds
    fixed = min(configured_seconds(spec) or 0.0, seconds)
    return fixed + (seconds - fixed) * pace


def latency_profile(spec: dict[str, Any]) -> str:
    """The latency profile a cell ran under ('' where its study has none)."""
    return str(spec.get("params", {}).get("latency_profile", ""))


@dataclass
class ReferenceTimes:
    """What the reference run's cells took, keyed the ways a planned cell is priced."""

    name: str
    by_configuration: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    by_implementation: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    by_study: dict[str, list[float]] = field(default_factory=dict)
    overhead_by_implementation: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    # Keyed (study, configuration): the seconds its cells were configured for (None: sized
    # otherwise), so a planned cell configured alike is priced at what they took.
    configured_by_configuration: dict[tuple[str, str], float | None] = field(default_factory=dict)
    # Keyed (study, implementation, latency profile): what a proxy in front adds.
    overhead_by_regime: dict[tuple[str, str, str], list[float]] = field(default_factory=dict)
    overhead_by_study: dict[str, list[float]] = field(default_factory=dict)
    # Keyed (study, implementation): the wait for a cell's own server to say READY (cells
    # that started theirs), what a cell on a kept server does not spend.
    server_s_by_implementation: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    # Keyed (study, configuration): each cell's measured window, and the timed calls its
    # client made (a client sized in whole-payload calls), so a cell timing more of them is
    # priced at its configuration's time plus the windows they add.
    window_by_configuration: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    calls_by_configuration: dict[tuple[str, str], int] = field(default_factory=dict)
    gap_s: float = 0.0
    handover_s: float = 0.0

    @classmethod
    def read(cls, run_dir: Path) -> ReferenceTimes:
        times = cls(run_dir.name, defaultdict(list), defaultdict(list), defaultdict(list))
        times.overhead_by_implementation = defaultdict(list)
        times.overhead_by_regime = defaultdict(list)
        times.overhead_by_study = defaultdict(list)
        times.server_s_by_implementation = defaultdict(list)
        times.window_by_configuration = defaultdict(list)
        timed = []
        for cell in iter_cells(run_dir, include_aa=True):
            record = cell.record
            if not (record.get("start") and record.get("end")):
                continue
            # Only the cell's total and its place in time count here: no raw file is read.
            total = seconds_between(record["start"], record["end"])
            timed.append(
                TimedCell(record["study"], record["start"], record["end"], PhaseTimes(total=total))
            )
            times.add(record, total)
        gaps = split_between(timed, run_pause_marks(run_dir))
        times.gap_s = statistics.median(gaps["gap"]) if gaps["gap"] else 0.0
        times.handover_s = statistics.median(gaps["handover"]) if gaps["handover"] else 0.0
        return times

    def add(self, record: dict[str, Any], total: float) -> None:
        study, implementation = record["study"], record["implementation"]
        key = (study, configuration_of(record["cell_id"]))
        self.by_configuration[key].append(total)
        self.by_implementation[(study, implementation)].append(total)
        self.by_study[study].append(total)
        phases = record.get("phases") or {}
        if phases and not record.get("server_from"):
            ready = phases.get("ready", 0.0)
            self.server_s_by_implementation[(study, implementation)].append(ready)
        if phases.get("window"):
            self.window_by_configuration[key].append(phases["window"])
        calls = timed_calls(record.get("spec", {}))
        if calls is not None:
            self.calls_by_configuration[key] = calls
        configured = configured_seconds(record.get("spec", {}))
        self.configured_by_configuration[key] = configured
        if configured is not None:
            regime = (study, implementation, latency_profile(record.get("spec", {})))
            self.overhead_by_regime[regime].append(total - configured)
            self.overhead_by_implementation[(study, implementation)].append(total - configured)
            self.overhead_by_study[study].append(total - configured)


@dataclass(frozen=True)
class Price:
    seconds: float
    how: str  # "durations", "configuration", "analogy", "guess"


def price(spec: dict[str, Any], reference: ReferenceTimes) -> Price:
    """One planned cell's seconds, and how they were found."""
    study, implementation = spec["study"], spec.get("implementation", "")
    configured = configured_seconds(spec)
    key = (study, configuration_of(spec["cell_id"]))
    if key not in reference.by_configuration:
        # An A/A copy the reference did not run measures what its configuration's own cells
        # do: the same client, server and sizes, twice.
        key = (study, copied_id(key[1]))
    same = reference.by_configuration.get(key)
    if same and configured is not None and reference.configured_by_configuration[key] == configured:
        # The same configuration, configured for as long: what its cells took there.
        return Price(statistics.median(same), "configuration")
    calls, calls_there = timed_calls(spec), reference.calls_by_configuration.get(key)
    windows = reference.window_by_configuration.get(key)
    if same and windows and calls is not None and calls_there and calls != calls_there:
        # Its time there, each call's window added or taken away.
        per_call = statistics.median(windows) / calls_there
        return Price(statistics.median(same) + (calls - calls_there) * per_call, "calls")
    overheads = (
        reference.overhead_by_regime.get((study, implementation, latency_profile(spec)))
        or reference.overhead_by_implementation.get((study, implementation))
        or reference.overhead_by_study.get(study)
    )
    if configured is not None and overheads:
        return Price(configured + statistics.median(overheads), "durations")
    if same:
        return Price(statistics.median(same), "configuration")
    similar = reference.by_implementation.get((study, implementation)) or reference.by_study.get(
        study
    )
    if similar:
        return Price(statistics.median(similar), "analogy")
    return Price(UNKNOWN_CELL_S, "guess")


@dataclass(frozen=True)
class Estimate:
    minutes_by_study: dict[str, float]
    adaptive_minutes: float
    reference: str
    guessed_studies: list[str]
    # How many cells were priced each way ("durations", "configuration", "analogy", "guess").
    priced: dict[str, int] = field(default_factory=dict)
    # Cells the runner will hand the server of the cell before them (CellSpec.reuse_server).
    kept_server: int = 0
    # How many times as slow this host is as the reference's (1.0: not yet measured).
    pace: float = 1.0

    @property
    def minutes(self) -> float:
        return sum(self.minutes_by_study.values()) + self.adaptive_minutes

    @property
    def cells(self) -> int:
        return sum(self.priced.values())

    def sentence(self) -> str:
        parts = ", ".join(f"{study} {m:.1f}" for study, m in self.minutes_by_study.items())
        guessed = (
            f"; {', '.join(self.guessed_studies)} guessed at {UNKNOWN_CELL_S:.0f} s a cell"
            if self.guessed_studies
            else ""
        )
        hours = f" ({self.minutes / 60:.1f} h)" if self.minutes >= 120 else ""
        scaled = (
            f"{self.priced['calls']} from it with their window scaled to the calls they time, "
            if self.priced.get("calls")
            else ""
        )
        kept = (
            f"; {self.kept_server} on a kept server, their wait for READY left out"
            if self.kept_server
            else ""
        )
        paced = (
            f" (its CPU-bound seconds x{self.pace:.2f}: this host's pace)"
            if self.pace != 1.0
            else ""
        )
        return (
            f"expected measuring time about {self.minutes:.0f} min{hours}{paced}: {parts} min, "
            f"plus at most {self.adaptive_minutes:.0f} min of adaptive rounds; of {self.cells} "
            f"cells, {self.priced.get('durations', 0)} priced from their configured seconds "
            f"and reference run {self.reference}'s overhead, "
            f"{self.priced.get('configuration', 0)} from the same configuration there, "
            f"{scaled}{self.priced.get('analogy', 0)} by analogy (the median cell of their "
            f"implementation or study there){guessed}{kept}"
        )


def estimate(
    cells: dict[str, list[dict]],
    reference_run: Path,
    adaptive_minutes: float,
    servers_kept: bool = True,
    pace: float = 1.0,
) -> Estimate:
    """The run's measuring minutes per study, from `cells` (study -> cell specs as dicts);
    `servers_kept` False where the servers run on another host, started per cell by its
    agent (the runner keeps only servers it started itself); `pace` how many times as slow
    this host is as the reference's (`pace_of`), 1.0 before it is measured. The adaptive
    rounds' minutes are a cap the look prices on this run's own cells: they do not scale."""
    reference = ReferenceTimes.read(reference_run)
    minutes: dict[str, float] = {}
    priced: dict[str, int] = defaultdict(int)
    guessed = []
    kept = 0
    # Ansible's per-item work, a runner's start and a study's handover are CPU work too.
    gap_s, handover_s = reference.gap_s * pace, reference.handover_s * pace
    for study, specs in cells.items():
        seconds = handover_s if specs else 0.0
        hows = set()
        for before, spec in zip([None, *specs], specs, strict=False):
            found = price({"study": study, **spec}, reference)
            priced[found.how] += 1
            hows.add(found.how)
            cell_s = found.seconds
            if servers_kept and on_kept_server(before, spec):
                kept += 1
                cell_s -= kept_saving(reference, study, spec, found.seconds)
            seconds += at_pace(cell_s, spec, pace) + gap_s
        if "guess" in hows:
            guessed.append(study)
        minutes[study] = seconds / 60
    return Estimate(
        minutes,
        adaptive_minutes,
        reference_run.name,
        guessed,
        dict(priced),
        kept_server=kept,
        pace=pace,
    )


# A run's CPU-bound seconds stretch as the square root of the ceilings' ratio, not the
# ratio itself: the ceiling is ghz and the C++ server saturating both cores, a cell's
# overhead is mostly one Python process starting or tearing down. Fitted on the 30 ordered
# pairs of six quick runs of 2026-11-27..29 on two CPU kinds (ceilings 21.8k-57.7k req/s),
# each pricing the other's cells: exponent 0.5 put all 30 within 15% (largest miss 9%,
# rms 4.4%), 1.0 put the largest miss at 45% and no pacing at 38%.
PACE_EXPONENT = 0.5


@dataclass(frozen=True)
class Pace:
    """How many times as slow a host is as the reference's, from each run's calibration
    ceiling (the C++ server under the chosen ghz: CPU-bound on both sides)."""

    ceiling_rps: float
    reference_ceiling_rps: float

    @property
    def factor(self) -> float:
        return (self.reference_ceiling_rps / self.ceiling_rps) ** PACE_EXPONENT

    def sentence(self) -> str:
        # The factor itself the estimate's own sentence gives (Estimate.sentence).
        return (
            f"at this host's pace (calibration ceiling {self.ceiling_rps:,.0f} req/s against "
            f"the reference's {self.reference_ceiling_rps:,.0f})"
        )


def pace_of(run_dir: Path, reference_run: Path) -> Pace | None:
    """The pace of the host `run_dir` calibrated on, against the reference's; None where
    either has no calibration ceiling (a run before its calibration, or without one)."""
    ceilings = []
    for folder in (run_dir, reference_run):
        path = folder / "calibration.json"
        try:
            ceiling = float(json.loads(path.read_text()).get("ceiling_rps") or 0.0)
        except FileNotFoundError:
            return None
        except (ValueError, AttributeError) as exc:
            raise ValueError(f"{path}: no calibration ceiling to pace the estimate by") from exc
        if ceiling <= 0:
            return None
        ceilings.append(ceiling)
    return Pace(*ceilings)


def on_kept_server(before: dict | None, spec: dict) -> bool:
    """Whether the runner will hand this cell the server of the cell before it
    (CellSpec.hands_server_to)."""
    if before is None or not (spec.get("reuse_server") and before.get("reuse_server")):
        return False
    previous, this = (CellSpec.from_dict(copy.deepcopy(s)) for s in (before, spec))
    return previous.hands_server_to(this)


def kept_saving(reference: ReferenceTimes, study: str, spec: dict, priced_s: float) -> float:
    """What a cell on a kept server does not spend: its implementation's wait for READY in
    the reference (the rest of a cell's start and teardown, its record, sampler, proxies
    and raw files, it still spends), never more than half the cell's price."""
    found = reference.server_s_by_implementation.get((study, spec.get("implementation", "")))
    return min(statistics.median(found), priced_s / 2) if found else 0.0


def left_to_run(cells: dict[str, list[dict]], run_dir: Path) -> tuple[dict[str, list[dict]], int]:
    """The cells a rerun of `run_dir`'s id still has to measure (those with no cell.json,
    as the runner skips them), and how many are complete already."""
    left = {
        study: [spec for spec in specs if not is_complete(run_dir / study / spec["cell_id"])]
        for study, specs in cells.items()
    }
    return left, sum(map(len, cells.values())) - sum(map(len, left.values()))


def measured_minutes(run_dir: Path) -> float:
    """What a run's measuring took, first cell start to last cell end less the pauses
    between a stop and its resume (to set beside its estimate)."""
    from perflab.contract.phases import run_split

    return run_split(run_dir).wall / 60


def reference_for(topology: str, reference_dir: Path) -> Path | None:
    """The committed reference run of a topology (reference_runs.yml), if its folder is here."""
    import yaml

    from perflab.analysis.replication import REFERENCE_RUNS_FILE

    path = reference_dir / REFERENCE_RUNS_FILE
    named = (yaml.safe_load(path.read_text()) or {}).get(topology) if path.is_file() else None
    folder = reference_dir.parent / named if named else None
    return folder if folder is not None and folder.is_dir() else None
