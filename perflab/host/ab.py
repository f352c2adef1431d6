"""Running an A/B of two knob values (perflab ab): the same configurations expanded under
each arm's overrides, run in pairs of one cell per arm, back to back, in alternating order,
each cell on its own fresh server, through the runner a run uses.

An arm's overrides are laid over the chosen profile's (nested mappings merged key by key),
so what is tested is the knob as a profile would set it, validated as a run validates it.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

from perflab.contract.cell import CellSpec, cell_record
from perflab.contract.matrix import MatrixError, expand
from perflab.contract.study import Study
from perflab.host.runner import CellRunner

ARMS = ("a", "b")


def merged(base: Any, over: Any) -> Any:
    """`over` laid on `base`: mappings merged key by key, anything else replaced."""
    if isinstance(base, dict) and isinstance(over, dict):
        out = copy.deepcopy(base)
        for key, value in over.items():
            out[key] = merged(base.get(key), value)
        return out
    return copy.deepcopy(over)


def base_id(cell: CellSpec) -> str:
    """A cell's configuration: its id without the round."""
    return cell.cell_id.removesuffix(f"-r{cell.repeat}")


def arm_cells(
    study: Study,
    config: dict[str, Any],
    profiles: dict[str, Any],
    profile: str,
    overrides: dict[str, Any],
    known_impls: set[str],
    run_id: str,
) -> dict[str, CellSpec]:
    """The profile's first-round cells (no A/A copies) under one arm's overrides, by
    configuration; a bad override is refused as a bad matrix value is (MatrixError)."""
    arm_profiles = {**profiles, profile: merged(profiles.get(profile) or {}, overrides)}
    cells = expand(run_id, study, config, arm_profiles, profile, known_impls)
    return {base_id(c): c for c in cells if c.repeat == 1 and "aa" not in c.params}


def check_configurations(cells: dict[str, dict[str, CellSpec]], configurations: list[str]) -> None:
    """MatrixError naming each configuration that is not one of both arms."""
    missing = [c for c in configurations if not all(c in cells[arm] for arm in ARMS)]
    if missing:
        raise MatrixError(
            f"--cell {', '.join(missing)}: not a configuration of both arms (one of "
            f"{', '.join(sorted(cells['a'])[:6])}, ...)"
        )


def run_pairs(
    runner: CellRunner,
    cells: dict[str, dict[str, CellSpec]],
    configurations: list[str],
    pairs: int,
    said: Callable[[str], None],
) -> dict[str, dict[str, list[Path]]]:
    """`pairs` pairs of every configuration (check_configurations has found each in both
    arms), arm a first in odd pairs; each cell its own id (configuration, pair, arm) and
    repeat (the pair), so a rerun of one A/B run id skips what is complete, as a run does.
    Returns each cell's folder, by configuration and arm."""
    folders: dict[str, dict[str, list[Path]]] = {}
    total, done = len(configurations) * pairs * len(ARMS), 0
    for configuration in configurations:
        folders[configuration] = {arm: [] for arm in ARMS}
        for pair in range(1, pairs + 1):
            for arm in ARMS if pair % 2 else ARMS[::-1]:
                cell = copy.deepcopy(cells[arm][configuration])
                cell.repeat = pair
                cell.cell_id = f"{configuration}-p{pair}-{arm}"
                record = runner.run(cell)
                done += 1
                folder = runner.cell_dir(cell)
                status = record.status if record else cell_record(folder)["status"]
                folders[configuration][arm].append(folder)
                said(f"[{done}/{total}] {configuration} pair {pair} arm {arm}: {status}")
    return folders
