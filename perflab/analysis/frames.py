"""A run folder -> one tidy DataFrame, one row per (cell, metric).

Columns: run_id, study, scenario, implementation, client, <params...>, repeat, metric,
value, unit, plus cell_id and status. Nothing downstream needs to know which study or
tool made a row. pandas is imported inside the functions so that host-side code can
import perflab without it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from perflab.contract.cell import RunCell, iter_cells
from perflab.contract.parsers import (
    MalformedRawFile,
    Metric,
    parse_client_json,
    parse_ghz,
    parse_resources,
    parse_time_v,
    raw_exists,
    read_raw_text,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "MalformedRawFile",
    "read_run",
    "tidy_frame",
    "read_cells",
    "cell_table",
    "read_manifest",
    "read_reference",
]

ID_COLUMNS = ["run_id", "study", "scenario", "implementation", "client"]
# A study hook's derived row (Hooks.claim_frame) that divides its cell's value by another
# cell's names that cell here: the row rests on both, so a verdict's evidence, and a look's
# rounds, take both (perflab.analysis.verdicts.rested_on). Empty on a cell's own rows.
DIVIDED_BY_CELL = "divided_by_cell"
# Raw files each load kind must leave in a complete, non-failed cell.
REQUIRED_RAW = {
    "ghz": ("ghz.json", "time.txt", "resources.csv"),
    "client": ("client.json", "time.txt", "resources.csv"),
}
PARSERS = {
    "ghz.json": parse_ghz,
    "client.json": parse_client_json,
    "time.txt": parse_time_v,
    "resources.csv": parse_resources,
}


def derived(metrics: list[Metric]) -> list[Metric]:
    """CPU per call, when the cell counted calls and sampled CPU."""
    by_name = {m.metric: m.value for m in metrics}
    calls = by_name.get("ok") or by_name.get("calls")
    rows = []
    if calls:
        for role in ("server", "client"):
            seconds = by_name.get(f"{role}_cpu_seconds")
            if seconds is not None:
                rows.append(Metric(f"{role}_cpu_us_per_call", seconds * 1e6 / calls, "us"))
    return rows


def cell_metrics(folder: Path, cell: dict[str, Any]) -> list[Metric]:
    """Metrics of every raw file; a complete cell must have all its load kind writes.

    A failed cell keeps what its tools managed to write (error counts above all), but a
    raw file its crash left unreadable is passed over: the cell's error already says why.
    """
    failed = cell["status"] == "failed"
    kind = cell.get("spec", {}).get("load", {}).get("kind", "ghz")
    required = () if failed else REQUIRED_RAW.get(kind, ())
    metrics: list[Metric] = []
    for name, parser in PARSERS.items():
        path = folder / name
        if name not in required and not raw_exists(path):
            continue
        try:
            metrics += parser(read_raw_text(path), path)
        except MalformedRawFile:
            if not failed:
                raise
    return metrics + derived(metrics)


def read_run(run_dir: str | Path, include_aa: bool = False) -> pd.DataFrame:
    """Every complete cell of a run as tidy rows (`tidy_frame`); the A/A cells (param `aa`,
    the run's noise floor) only with `include_aa`. A report reads its run once instead
    (perflab.analysis.run)."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise FileNotFoundError(f"{run_dir}: no such run folder")
    return tidy_frame(iter_cells(run_dir, include_aa=include_aa), run_dir.name)


def tidy_frame(
    cells: Iterable[RunCell], run_id: str, parsed: Mapping[Path, list[Metric]] | None = None
) -> pd.DataFrame:
    """The cells as tidy rows; a failed cell adds a row metric 'failed'. `parsed`: each
    cell folder's metrics where the caller parsed its raw files already (Run.metrics)."""
    import pandas as pd

    rows: list[dict[str, Any]] = []
    for folder, cell in cells:
        base = {
            "run_id": cell.get("run_id", run_id),
            "study": cell["study"],
            "scenario": cell["scenario"],
            "implementation": cell["implementation"],
            "client": cell.get("client", ""),
            **cell["params"],
            "repeat": cell.get("repeat", 1),
            "cell_id": cell["cell_id"],
            "status": cell["status"],
        }
        if cell["status"] == "failed":
            rows.append({**base, "metric": "failed", "value": 1.0, "unit": "cells"})
        found = parsed[folder] if parsed is not None else cell_metrics(folder, cell)
        for metric in found:
            rows.append(
                {**base, "metric": metric.metric, "value": metric.value, "unit": metric.unit}
            )
    columns = ID_COLUMNS + ["repeat", "metric", "value", "unit", "cell_id", "status"]
    frame = pd.DataFrame(rows)
    if frame.empty:
        return pd.DataFrame(columns=columns)
    params = [c for c in frame.columns if c not in columns]
    for name in params:
        frame[name] = whole_numbers_as_int(frame[name])
    return frame[ID_COLUMNS + params + columns[len(ID_COLUMNS) :]]


def whole_numbers_as_int(column: pd.Series) -> pd.Series:
    """A parameter that only holds whole numbers (concurrency, sizes) stays an integer.

    Rows of other studies leave it empty, which would make pandas store it as float and
    print concurrency 2 as 2.0; the nullable Int64 keeps both the gaps and the integers.
    """
    import pandas as pd

    if not pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column):
        return column
    values = column.dropna()
    if values.empty or not (values == values.round()).all():
        return column
    return column.astype("Int64")


def read_cells(run_dir: str | Path) -> pd.DataFrame:
    """One row per cell (`cell_table`)."""
    return cell_table(iter_cells(run_dir))


def cell_table(cells: Iterable[RunCell]) -> pd.DataFrame:
    """One row per cell: status, error, notes, pinning, start/end. For failure tables."""
    import pandas as pd

    rows = []
    for _, cell in cells:
        rows.append(
            {
                "study": cell["study"],
                "cell_id": cell["cell_id"],
                "scenario": cell["scenario"],
                "implementation": cell["implementation"],
                "client": cell.get("client", ""),
                "repeat": cell.get("repeat", 1),
                "status": cell["status"],
                "error": cell.get("error", ""),
                "notes": "; ".join(cell.get("notes", [])),
                "server_cpus": ",".join(map(str, cell.get("pinning", {}).get("server_cpus", []))),
                "client_cpus": ",".join(map(str, cell.get("pinning", {}).get("client_cpus", []))),
                "start": cell.get("start", ""),
                "loadavg_start": cell.get("loadavg_start"),
                "end": cell.get("end", ""),
                **{f"param_{k}": v for k, v in cell["params"].items()},
            }
        )
    return pd.DataFrame(rows)


def read_manifest(run_dir: str | Path) -> dict[str, Any]:
    path = Path(run_dir) / "manifest.json"
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise MalformedRawFile(path, f"unreadable run manifest ({exc})") from exc


def read_reference(reference_dir: str | Path, study: str) -> pd.DataFrame:
    """The published numbers of a study, transcribed from its seed (data/reference/<study>.csv)."""
    import pandas as pd

    path = Path(reference_dir) / f"{study}.csv"
    if not path.is_file():
        raise MalformedRawFile(path, "no published reference for this study")
    return pd.read_csv(path)
