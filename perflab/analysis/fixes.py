"""Fixes to how a figure is measured, and the readings measured without them.

A fix (data/reference/measurement_fixes.yml) names its commit and the claims whose figures
it changes. A run keeps its own index as measured; but pooling must not average a biased
figure with unbiased ones, so a run whose commit lacks a fix has its readings of the fix's
claims left out of the pooled evidence, and the pooled page says which and why.

Whether a run's commit holds a fix is git's to say (ancestry), asked once, when its readings
file is written (`perflab readings`): the file records it (`RunReadings.fixes`), so pooling
reads files and starts no process. A file that does not say is kept, and the page says that
too.
"""

from __future__ import annotations

import dataclasses
import subprocess
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import yaml

from perflab.analysis.sites import RunReadings
from perflab.analysis.verdicts import NOT_MEASURED

FIXES_FILE = "measurement_fixes.yml"
# (fix commit, run commit) -> whether the run's commit holds the fix; None: git cannot tell.
Contains = Callable[[str, str], bool | None]


class FixesError(ValueError):
    """measurement_fixes.yml is malformed; the message names the entry."""


@dataclass(frozen=True)
class MeasurementFix:
    commit: str
    what: str
    claims: frozenset[str]

    def short(self) -> str:
        return self.commit[:8]


def read_fixes(reference_dir: Path, claim_ids: Iterable[str] | None = None) -> list[MeasurementFix]:
    """The fixes of `reference_dir`, each naming only claims in `claim_ids` (the claims
    file's; None: not checked, for a caller judging some claims only)."""
    path = reference_dir / FIXES_FILE
    if not path.is_file():
        return []
    fixes = []
    for entry in yaml.safe_load(path.read_text()) or []:
        commit, claims = str(entry.get("commit", "")), entry.get("claims") or []
        if len(commit) != 40 or not claims:
            raise FixesError(f"{path}: {entry!r} needs a full commit and its claims")
        unknown = sorted(set(claims) - set(claim_ids)) if claim_ids is not None else []
        if unknown:
            raise FixesError(f"{path}: fix {commit[:8]} names unknown claims {unknown}")
        fixes.append(MeasurementFix(commit, str(entry.get("what", "")), frozenset(claims)))
    return fixes


def git_contains(repo: Path) -> Contains:
    def contains(fix: str, commit: str) -> bool | None:
        done = subprocess.run(
            ["git", "-C", str(repo), "merge-base", "--is-ancestor", fix, commit],
            capture_output=True,
            check=False,
        )
        return {0: True, 1: False}.get(done.returncode)

    return contains


def holds_fix(run_commit: str, fix: str, contains: Contains) -> bool | None:
    """Whether every commit a run measured with holds `fix`: a run resumed across commits
    ("a + b-dirty") holds it only if each part does; a dirty tree counts as its commit."""
    parts = [part.strip().removesuffix("-dirty") for part in run_commit.split("+")]
    parts = [part for part in parts if part]
    if not parts:
        return None
    states = [contains(fix, part) for part in parts]
    if False in states:
        return False
    return None if None in states else True


def fix_states(
    run_commit: str, fixes: list[MeasurementFix], contains: Contains
) -> dict[str, bool | None]:
    return {fix.commit: holds_fix(run_commit, fix.commit, contains) for fix in fixes}


def fixes_held_by(reference_dir: Path, repo: Path) -> Callable[[str], dict[str, bool | None]]:
    """A run commit -> which of `reference_dir`'s fixes it held, asked of git in `repo`
    (sites.read_run_readings records it in the readings file)."""
    from perflab.analysis.claims import read_claims
    from perflab.analysis.published import CLAIMS_FILE

    claims = read_claims(reference_dir / CLAIMS_FILE)
    fixes = read_fixes(reference_dir, [claim.id for claim in claims])
    contains = git_contains(repo)
    return lambda commit: fix_states(commit, fixes, contains)


@dataclass(frozen=True)
class LeftOut:
    """What pooling set aside: per fix, the runs measured without it; and the runs whose
    readings file does not say."""

    without: dict[str, list[str]]
    unchecked: dict[str, list[str]]

    def sentence(self, fixes: list[MeasurementFix]) -> str:
        parts = []
        for fix in fixes:
            runs = self.without.get(fix.commit, [])
            if runs:
                parts.append(
                    f"{len(runs)} run(s) measured before fix {fix.short()} ({fix.what}) are "
                    f"left out of its {len(fix.claims)} claims: {', '.join(runs)}."
                )
            unsure = self.unchecked.get(fix.commit, [])
            if unsure:
                parts.append(
                    f"{len(unsure)} run(s) could not be checked for fix {fix.short()} and are "
                    f"pooled as measured: {', '.join(unsure)}."
                )
        return " ".join(parts)


def measured_with_fixes(
    runs: list[RunReadings], fixes: list[MeasurementFix]
) -> tuple[list[RunReadings], LeftOut]:
    """The runs with each reading a fix supersedes removed (its claim then reads 'not
    measured' for that run, with the fix as the reason)."""
    kept, left = [], LeftOut({}, {})
    for run in runs:
        drop: dict[str, str] = {}
        for fix in fixes:
            state = run.fixes.get(fix.commit)
            if state is False:
                left.without.setdefault(fix.commit, []).append(run.run_id)
                for claim in fix.claims:
                    drop[claim] = f"measured before fix {fix.short()}: {fix.what}"
            elif state is None:
                left.unchecked.setdefault(fix.commit, []).append(run.run_id)
        if not drop:
            kept.append(run)
            continue
        kept.append(
            dataclasses.replace(
                run,
                readings=tuple(r for r in run.readings if r.claim not in drop),
                verdicts={**run.verdicts, **dict.fromkeys(drop, NOT_MEASURED)},
                not_measured={**run.not_measured, **drop},
            )
        )
    return kept, left
