"""A run as a report shows it: the run read once (perflab.analysis.run) and its claims
judged once, with the reference run's beside (perflab.analysis.replication).

A report executes one notebook per study, each in its own kernel, and papermill passes
them strings only. So the renderer judges the run once, in its own process, and leaves the
result in a cache file in the report folder for the notebooks to load (`open_judged`);
a notebook that finds no cache, or one of other data (JupyterLab on a run, a render that
died), reads and judges the run itself. The cache is keyed by the run's and the
reference's content and by the analysis code, so a stale one is never taken; the
renderer removes it when the pages are written.

Measured on data/20261125-quick: reading the run is about 10 s of CPU and judging it
several times that, and each of the 8 notebooks did both (plus the reference tables);
loading the cache takes well under a second.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from dataclasses import dataclass
from pathlib import Path

from perflab.analysis.drift_history import READINGS_HISTORY
from perflab.analysis.replication import Replication, replicate
from perflab.analysis.run import Run, StudyHooks, read

# In the report folder while its pages render; never committed (.gitignore).
CACHE_FILE = ".judged-run.pickle"
# The code a cached result was computed by: a change to the analysis makes it stale.
ANALYSIS_CODE = Path(__file__).resolve().parents[1]


@dataclass
class JudgedRun:
    """The run and every claim's verdict on it (the reference's beside)."""

    run: Run
    replication: Replication

    def study(self, study: str) -> Replication:
        """One study page's verdicts."""
        return self.replication.for_study(study)


def judge(
    run_dir: str | Path, reference_dir: str | Path, hooks: StudyHooks, side_by_side: bool = False
) -> JudgedRun:
    """Read the run once and judge it, and its reference run, once (`side_by_side`: the
    reference in a second process meanwhile, perflab.analysis.replication.replicate)."""
    run = read(run_dir, hooks, READINGS_HISTORY)
    return JudgedRun(run, replicate(run, reference_dir, side_by_side=side_by_side))


def fingerprint(*folders: Path) -> str:
    """A digest of every file's name, size and modification time under `folders`, and of
    the perflab package's sources: what the judged result depends on."""
    digest = hashlib.sha256()
    # The machine's readings set the margins (drift_history): a new one changes them.
    roots = [*folders, ANALYSIS_CODE, READINGS_HISTORY]
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            for name in sorted(filenames):
                path = Path(dirpath) / name
                if path.suffix == ".pyc":
                    continue
                stat = path.stat()
                digest.update(
                    f"{path.relative_to(root)}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode()
                )
    return digest.hexdigest()


def write_cache(judged: JudgedRun, reference_dir: Path, out_dir: Path) -> Path:
    """The judged run as the report's notebooks will load it."""
    path = out_dir / CACHE_FILE
    # Built here, once, rather than in each notebook that shows them.
    _ = judged.run.cell_table, judged.run.ceiling
    key = fingerprint(judged.run.folder.resolve(), reference_dir.resolve())
    path.write_bytes(pickle.dumps((key, judged), protocol=pickle.HIGHEST_PROTOCOL))
    return path


def open_judged(
    run_dir: str | Path,
    reference_dir: str | Path,
    out_dir: str | Path,
    hooks: StudyHooks,
) -> JudgedRun:
    """The renderer's judged run if it left one for this run's content in `out_dir`, else
    the run read and judged now."""
    path = Path(out_dir) / CACHE_FILE
    if path.is_file():
        key, judged = pickle.loads(path.read_bytes())
        folder, reference = Path(run_dir).resolve(), Path(reference_dir).resolve()
        if judged.run.folder.resolve() == folder and key == fingerprint(folder, reference):
            return judged
    return judge(run_dir, reference_dir, hooks)
