"""Where a run's minutes go: each cell's phase times (cell.json `phases`), the same times
read back from the raw files of cells recorded before that field, their sums per study,
and the run's measuring efficiency (measured windows over measuring wall time).

A cell's phases, in seconds, in the order they happen:

    server_start  cell start -> the server's own start: its dependencies and proxies
    ready         the server's process start -> READY and its port open, the load's proxy up
    warmup        ready -> the measuring tool's start: the runner's warm-up run (ghz); a
                  study client warms up inside `load`
    load          the measuring tool's run, process start to exit
    window        the measured window inside `load`, as the tool itself timed it
    teardown      load end -> cell end: stop server and proxies, keep the raw files
    total         cell start -> cell end

Cells recorded before the field have no split of server_start and ready: the raw files
(resources.csv's first sample of each phase) give both together, under server_start.
"""

from __future__ import annotations

import csv
import io
import json
import statistics
import time
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime
from pathlib import Path
from typing import Any

from perflab.contract.parsers import (
    MalformedRawFile,
    parse_client_json,
    parse_ghz,
    raw_exists,
    read_raw_text,
)

# A study client's metric that times its own measured window, in the unit given. The
# clients write different names for it; one that writes none (openssl speed) states no
# window, and its cell counts none.
CLIENT_WINDOW_METRICS = {"elapsed": 1.0, "stream_seconds": 1.0, "serve_all": 1.0}
# pyclients time each call: the window is calls x time per call (ms).
PER_CALL_WINDOW = ("time_per_call", "calls", 1e-3)
# The capacity generator runs many steps in one process and times each step's measured
# window itself (after the step's settle): the cell's window is their sum.
STEP_WINDOWS = ("steps", "measure_s")


@dataclass
class PhaseTimes:
    server_start: float = 0.0
    ready: float = 0.0
    warmup: float = 0.0
    load: float = 0.0
    window: float = 0.0
    teardown: float = 0.0
    total: float = 0.0

    def as_dict(self) -> dict[str, float]:
        return {key: round(value, 3) for key, value in asdict(self).items()}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> PhaseTimes:
        return cls(**{f.name: float(raw.get(f.name) or 0.0) for f in fields(cls)})

    @property
    def overhead(self) -> float:
        """Everything of the cell that is not its measured window."""
        return self.total - self.window


class PhaseClock:
    """Marks taken as a cell runs, made into its PhaseTimes at its end. A mark a failed
    cell never reached takes the time of the one before it: the phase took nothing, and
    the time up to the cell's end is its teardown."""

    MARKS = ("server", "ready", "load", "load_end")

    def __init__(self) -> None:
        self.t0 = time.monotonic()
        self.marks: dict[str, float] = {}

    def mark(self, name: str) -> None:
        if name not in self.MARKS:
            raise ValueError(f"no phase mark {name!r}; the marks are {self.MARKS}")
        self.marks[name] = time.monotonic()

    def times(self, window: float) -> PhaseTimes:
        at = [self.t0]
        for name in self.MARKS:
            at.append(self.marks.get(name, at[-1]))
        end = time.monotonic()
        return PhaseTimes(
            server_start=at[1] - at[0],
            ready=at[2] - at[1],
            warmup=at[3] - at[2],
            load=at[4] - at[3],
            window=window,
            teardown=end - at[4],
            total=end - at[0],
        )


def measured_window(folder: Path, load_kind: str) -> float:
    """The measured window of a cell's load as its tool timed it: ghz's `total`, or the
    client's own elapsed time; 0 when the tool wrote none (a failed cell, openssl speed)."""
    if load_kind == "ghz":
        path = folder / "ghz.json"
        if not raw_exists(path):
            return 0.0
        metrics = {m.metric: m.value for m in parse_ghz(read_raw_text(path), path)}
        return metrics["total"]
    path = folder / "client.json"
    if not raw_exists(path):
        return 0.0
    text = read_raw_text(path)
    metrics = {m.metric: m.value for m in parse_client_json(text, path)}
    for name, scale in CLIENT_WINDOW_METRICS.items():
        if name in metrics:
            return metrics[name] * scale
    per_call, count, scale = PER_CALL_WINDOW
    if per_call in metrics and count in metrics:
        return metrics[per_call] * metrics[count] * scale
    return step_windows(text, path)


def step_windows(text: str, path: Path) -> float:
    """The sum of the measured windows of a many-step client's steps (STEP_WINDOWS); 0 for
    a client that reports no steps."""
    listed, seconds = STEP_WINDOWS
    steps = json.loads(text).get(listed)
    if not isinstance(steps, list):
        return 0.0
    try:
        return float(sum(float(step[seconds]) for step in steps))
    except (KeyError, TypeError, ValueError) as exc:
        raise MalformedRawFile(path, f"a step without its {seconds} ({exc})") from exc


def phase_starts(resources: str, path: Path | str = "resources.csv") -> dict[str, float]:
    """The time (s after the sampler started) of the first sample of each phase."""
    starts: dict[str, float] = {}
    try:
        for row in csv.DictReader(io.StringIO(resources)):
            starts.setdefault(row["phase"], float(row["t"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise MalformedRawFile(path, f"no t and phase columns to time phases by ({exc})") from exc
    return starts


def seconds_between(start: str, end: str) -> float:
    return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()


def phases_from_raw(folder: Path, record: dict[str, Any]) -> PhaseTimes:
    """A cell recorded without `phases`: its phase boundaries from resources.csv, its
    window from the tool's output, its total from cell.json's start and end."""
    total = seconds_between(record["start"], record["end"])
    path = folder / "resources.csv"
    starts = phase_starts(read_raw_text(path), path) if raw_exists(path) else {}
    kind = str(record.get("spec", {}).get("load", {}).get("kind", ""))
    measure = starts.get("measure")
    if measure is None:  # never loaded: the whole cell was start and stop
        return PhaseTimes(server_start=total, total=total)
    warmup = starts.get("warmup", measure)
    stop = starts.get("stop", total)
    return PhaseTimes(
        server_start=warmup,
        warmup=measure - warmup,
        load=stop - measure,
        window=measured_window(folder, kind),
        teardown=max(total - stop, 0.0),
        total=total,
    )


def cell_phases(folder: Path, record: dict[str, Any]) -> PhaseTimes:
    """The cell's phase times: as recorded, or read back from its raw files."""
    if record.get("phases"):
        return PhaseTimes.from_dict(record["phases"])
    return phases_from_raw(folder, record)


@dataclass
class TimedCell:
    study: str
    start: str
    end: str
    phases: PhaseTimes


@dataclass
class MeasuringSplit:
    """A run's measuring wall time (first cell start to last cell end, less its pauses), split."""

    wall: float
    by_study: dict[str, PhaseTimes]
    cells_by_study: dict[str, int]
    # Time between two cells of one study (the launcher's per-cell work), and between the
    # last cell of one study and the first of the next (the playbook's handover). A gap is
    # negative where a cell's teardown ran beside the next cell's start (the runner's
    # CellRunner.begin): the cells' phases then sum to more than the wall, and the gaps
    # give the overlap back, so the parts still add up to the wall.
    gaps: float
    handovers: float
    gap_count: int = 0
    handover_count: int = 0
    parts: dict[str, float] = field(default_factory=dict)
    # Time between a stop and its resume (progress.log's PAUSE_MARKS inside a gap): no
    # runner was measuring, so it is left out of `wall` (a `full` run may pause for days).
    paused: float = 0.0
    pause_count: int = 0

    @property
    def window(self) -> float:
        return sum(p.window for p in self.by_study.values())

    @property
    def efficiency(self) -> float:
        """Measured windows over measuring wall time (0 for a run with no time)."""
        return self.window / self.wall if self.wall > 0 else 0.0


# progress.log lines that mark a pause: a runner stopped by a signal, and a runner that
# found cells of its list complete already (a rerun of the same run id).
PAUSE_MARKS = ("stopped", "resumed")


def pause_marks(progress: str) -> list[datetime]:
    """When progress.log says a runner stopped or resumed (lines '<iso time> <mark> ...')."""
    marks = []
    for line in progress.splitlines():
        stamp, _, rest = line.partition(" ")
        if rest.split(" ", 1)[0].rstrip(":") in PAUSE_MARKS:
            try:
                marks.append(datetime.fromisoformat(stamp))
            except ValueError:
                continue  # not a line this module wrote: no mark
    return marks


def run_pause_marks(run_dir: Path) -> list[datetime]:
    """The pause marks of a run folder's progress.log (none without one)."""
    progress = run_dir / "progress.log"
    return pause_marks(progress.read_text()) if progress.is_file() else []


def paused_between(before: TimedCell, after: TimedCell, marks: list[datetime]) -> bool:
    """Whether the gap between two consecutive cells holds a stop or a resume: a pause."""
    ended, started = datetime.fromisoformat(before.end), datetime.fromisoformat(after.start)
    return any(ended <= mark <= started for mark in marks)


def split_between(cells: list[TimedCell], marks: list[datetime]) -> dict[str, list[float]]:
    """Each gap between two consecutive cells, as "gap" (same study) or "handover"; a gap
    with a pause mark in it (a stop and its resume) is neither. A teardown that overlapped
    the next cell's start counts as no gap, not a negative one: prices built on these (the
    estimate, a look's) then charge a cell its whole teardown, about 2% more than it costs."""
    cells = sorted(cells, key=lambda c: c.start)
    found: dict[str, list[float]] = {"gap": [], "handover": []}
    for before, after in zip(cells, cells[1:], strict=False):
        if paused_between(before, after, marks):
            continue
        kind = "gap" if before.study == after.study else "handover"
        found[kind].append(max(seconds_between(before.end, after.start), 0.0))
    return found


def median_gap(cells: list[TimedCell], marks: list[datetime] | None = None) -> float:
    """The median gap between two consecutive cells of one study (`split_between`), in
    seconds: what one more cell costs beyond its own time; 0 with fewer than two cells."""
    gaps = split_between(cells, marks or [])["gap"]
    return statistics.median(gaps) if gaps else 0.0


def split_cells(cells: list[TimedCell], marks: list[datetime] | None = None) -> MeasuringSplit:
    """Sums the cells' phases per study and times the gaps between them, in start order; a
    gap with a pause mark in it is a pause, not measuring time."""
    cells = sorted(cells, key=lambda c: c.start)
    marks = marks or []
    by_study: dict[str, PhaseTimes] = {}
    counts: dict[str, int] = {}
    for cell in cells:
        summed = by_study.setdefault(cell.study, PhaseTimes())
        for f in fields(PhaseTimes):
            setattr(summed, f.name, getattr(summed, f.name) + getattr(cell.phases, f.name))
        counts[cell.study] = counts.get(cell.study, 0) + 1
    gaps = handovers = paused = 0.0
    gap_count = handover_count = pause_count = 0
    for before, after in zip(cells, cells[1:], strict=False):
        gap = seconds_between(before.end, after.start)
        if paused_between(before, after, marks):
            paused, pause_count = paused + gap, pause_count + 1
        elif before.study == after.study:
            gaps, gap_count = gaps + gap, gap_count + 1
        else:
            handovers, handover_count = handovers + gap, handover_count + 1
    span = seconds_between(cells[0].start, max(c.end for c in cells)) if cells else 0.0
    split = MeasuringSplit(
        span - paused, by_study, counts, gaps, handovers, gap_count, handover_count
    )
    split.paused, split.pause_count = paused, pause_count
    split.parts = parts_of(split)
    return split


def parts_of(split: MeasuringSplit) -> dict[str, float]:
    """The wall time in the parts a reader asks about, seconds; they add up to the wall."""
    studies = split.by_study.values()
    return {
        "inside a measured window": split.window,
        "warm-up, client start and connect": sum(p.warmup + p.load - p.window for p in studies),
        "server start and readiness": sum(p.server_start + p.ready for p in studies),
        "teardown": sum(p.teardown for p in studies),
        "gaps between cells (negative: teardown beside the next start)": split.gaps,
        "handovers between studies": split.handovers,
    }


def run_split(run_dir: Path) -> MeasuringSplit:
    """Every complete cell of a run (A/A cells too: they took the time), split; a cell
    whose record has no start and end (none written by the runner) has no time to split."""
    from perflab.contract.cell import iter_cells

    cells = []
    for folder, record in iter_cells(run_dir, include_aa=True):
        if record.get("start") and record.get("end"):
            cells.append(
                TimedCell(
                    record["study"], record["start"], record["end"], cell_phases(folder, record)
                )
            )
    return split_cells(cells, run_pause_marks(run_dir))


@dataclass
class ConfigurationTime:
    """One configuration's cells (every repeat of one cell id), their phases summed."""

    study: str
    implementation: str
    configuration: str
    cells: int
    phases: PhaseTimes


def configuration_of(cell_id: str) -> str:
    """A cell id without its repeat (`-r3`): the configuration it repeats."""
    head, sep, tail = cell_id.rpartition("-r")
    return head if sep and tail.isdigit() else cell_id


def largest_overheads(
    cells: list[tuple[str, str, str, PhaseTimes]], top: int
) -> list[ConfigurationTime]:
    """The `top` configurations with the most time outside their measured windows, from
    (study, implementation, cell id, phases) of each cell, the most first."""
    by_key: dict[tuple[str, str, str], ConfigurationTime] = {}
    for study, implementation, cell_id, times in cells:
        key = (study, implementation, configuration_of(cell_id))
        entry = by_key.setdefault(key, ConfigurationTime(*key, 0, PhaseTimes()))
        entry.cells += 1
        for f in fields(PhaseTimes):
            setattr(entry.phases, f.name, getattr(entry.phases, f.name) + getattr(times, f.name))
    return sorted(by_key.values(), key=lambda e: e.phases.overhead, reverse=True)[:top]


def run_overheads(run_dir: Path, top: int) -> list[ConfigurationTime]:
    """largest_overheads over every complete cell of a run that has a start and an end."""
    from perflab.contract.cell import iter_cells

    return largest_overheads(
        [
            (r["study"], r.get("implementation", ""), r["cell_id"], cell_phases(folder, r))
            for folder, r in iter_cells(run_dir, include_aa=True)
            if r.get("start") and r.get("end")
        ],
        top,
    )


def overheads_table(entries: list[ConfigurationTime]) -> str:
    """The configurations as a markdown table, seconds outside the window split by part."""
    lines = [
        "| study | implementation | configuration | cells | outside window s | server start "
        "and ready | warm-up and connect | teardown | window s |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for e in entries:
        p = e.phases
        lines.append(
            f"| {e.study} | {e.implementation} | {e.configuration} | {e.cells} | "
            f"{p.overhead:.0f} | {p.server_start + p.ready:.0f} | "
            f"{p.warmup + p.load - p.window:.0f} | {p.teardown:.0f} | {p.window:.0f} |"
        )
    return "\n".join(lines)


def manifest_entry(split: MeasuringSplit) -> dict[str, Any]:
    """The split as the manifest keeps it (`measuring`): seconds, per study and in parts."""
    return {
        "wall_s": round(split.wall, 3),
        "window_s": round(split.window, 3),
        "efficiency": round(split.efficiency, 4),
        "gaps_s": round(split.gaps, 3),
        "handovers_s": round(split.handovers, 3),
        "paused_s": round(split.paused, 3),
        "parts_s": {name: round(value, 3) for name, value in split.parts.items()},
        "studies": {
            study: {"cells": split.cells_by_study[study], **times.as_dict()}
            for study, times in sorted(split.by_study.items())
        },
    }


def split_table(split: MeasuringSplit) -> str:
    """The split as a markdown table: part, minutes, share of the wall time."""
    lines = ["| part | minutes | share |", "|---|---:|---:|"]
    for name, seconds in split.parts.items():
        share = seconds / split.wall if split.wall else 0.0
        lines.append(f"| {name} | {seconds / 60:.1f} | {share:.0%} |")
    lines.append(f"| measuring wall time | {split.wall / 60:.1f} | 100% |")
    if split.pause_count:
        lines.append(
            f"\nLeft out: {split.paused / 60:.1f} min paused between a stop and its resume "
            f"({split.pause_count} pause{'s' if split.pause_count > 1 else ''})."
        )
    return "\n".join(lines)


def dumps(split: MeasuringSplit) -> str:
    return json.dumps(manifest_entry(split), indent=2, sort_keys=True)
