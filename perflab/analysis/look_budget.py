"""What a smaller adaptive look would have decided, replayed on runs that took one.

A run's recorded look (its adaptive.json) gave rounds to the claims its cap could pay for.
Planned again from the run's base rounds alone, with another cap, the same code chooses the
claims that cap pays for; each of those that the recorded look also chose has its verdict in
the run as it stands (the look's rounds are there), and a claim the smaller look leaves out
is counted undecided (it was open after the base rounds, and a later look judges its base
cells at a stricter coverage). A claim the replay chooses that the recorded look did not is
counted undecided too, and named: its rounds were never measured.

So each cap's count is what that look would have decided on the run's own cells, without
measuring anything again: `perflab look-budget` prints it, and the quick profile's cap in
inventory/group_vars/all/adaptive.yml rests on it.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from perflab.analysis.decisions import FAILS, HOLDS
from perflab.analysis.drift_history import READINGS_HISTORY
from perflab.analysis.ledger import LEDGER_FILE, Ledger
from perflab.analysis.replication import plan_next_look, replicate
from perflab.analysis.run import Run, StudyHooks, read
from perflab.contract.adaptive import Adaptive, round_of

DECIDED = {HOLDS, FAILS}


@dataclass(frozen=True)
class Replay:
    """One cap replayed on one run."""

    run_id: str
    minutes: float
    priced_s: float
    chosen: list[str]
    decided: list[str]
    # Chosen by the replay, never given rounds by the recorded look: counted undecided.
    unmeasured: list[str]


@dataclass(frozen=True)
class RunReplays:
    """A run's recorded look and every cap replayed on it."""

    run_id: str
    base_rounds: dict[str, int]
    recorded_minutes: float
    recorded_chosen: list[str]
    decided_without_look: int
    replays: list[Replay]


def base_view(run_dir: Path, into: Path) -> Ledger:
    """A folder holding the run as it stood before its first look: the cells of its base
    rounds (linked, not copied), its other files copied, no ledger. Returns the run's
    recorded ledger. A plan written there leaves the run itself untouched."""
    ledger = Ledger.read(run_dir)
    if ledger is None:
        raise ValueError(f"{run_dir}: no {LEDGER_FILE}, so no look to replay")
    for item in run_dir.iterdir():
        if item.name == LEDGER_FILE:
            continue
        if item.is_dir() and item.name in ledger.base_rounds:
            (into / item.name).mkdir()
            for cell in item.iterdir():
                found = round_of(cell.name)
                if found is None or found <= ledger.base_rounds[item.name]:
                    os.symlink(cell.resolve(), into / item.name / cell.name)
        elif item.is_dir():
            os.symlink(item.resolve(), into / item.name)
        else:
            shutil.copy2(item, into / item.name)
    return ledger


def replay(
    run_dir: str | Path,
    minutes: list[float],
    hooks: StudyHooks,
    plan_first_look: Callable[[Run, Adaptive], object],
    verdicts_of: Callable[[Run], dict[str, str]],
) -> RunReplays:
    """Each cap in `minutes` (the run's own look knobs otherwise) replayed on `run_dir`:
    `plan_first_look` plans look 1 of a run with given knobs (recording it in the run's
    folder), `verdicts_of` is each claim's verdict on a run as the report gives it."""
    run_dir = Path(run_dir)
    final = verdicts_of(read(run_dir, hooks, READINGS_HISTORY))
    with tempfile.TemporaryDirectory(prefix="look-budget-") as scratch:
        view = Path(scratch) / run_dir.name
        view.mkdir()
        ledger = base_view(run_dir, view)
        if not ledger.taken:
            raise ValueError(f"{run_dir}: its {LEDGER_FILE} records no look")
        recorded = ledger.taken[0]
        base = read(view, hooks, READINGS_HISTORY)
        replays = []
        for cap in minutes:
            (view / LEDGER_FILE).unlink(missing_ok=True)
            plan_first_look(base, dataclasses.replace(ledger.adaptive, max_minutes=cap))
            look = Ledger.read(view).taken[0]
            measured = [c for c in look.chosen_claims if c in recorded.chosen_claims]
            replays.append(
                Replay(
                    run_dir.name,
                    cap,
                    look.estimate_s,
                    sorted(look.chosen_claims),
                    sorted(c for c in measured if final.get(c) in DECIDED),
                    sorted(set(look.chosen_claims) - set(measured)),
                )
            )
    return RunReplays(
        run_dir.name,
        dict(ledger.base_rounds),
        ledger.adaptive.max_minutes,
        sorted(recorded.chosen_claims),
        sum(
            1
            for claim, verdict in final.items()
            if verdict in DECIDED and claim not in recorded.chosen_claims
        ),
        replays,
    )


def replay_on_reference_claims(
    run_dir: str | Path, reference_dir: str | Path, hooks: StudyHooks, minutes: list[float]
) -> RunReplays:
    """`replay` with the published claims, planned and judged as a run and its report do."""
    reference_dir = Path(reference_dir)
    return replay(
        run_dir,
        minutes,
        hooks,
        lambda run, knobs: plan_next_look(run, reference_dir, knobs, 1),
        lambda run: {v.claim.id: v.verdict for v in replicate(run, reference_dir).verdicts},
    )


def table(runs: list[RunReplays]) -> str:
    """Markdown: per run, what each cap's look priced, chose and decided."""
    caps = [r.minutes for r in runs[0].replays] if runs else []
    head = "| run | " + " | ".join(f"{cap:g} min" for cap in caps) + " |"
    rule = "|---|" + "---:|" * len(caps)
    rows = [
        f"| {run.run_id} | "
        + " | ".join(
            f"{len(r.decided)} of {len(r.chosen)}, {run.decided_without_look + len(r.decided)}"
            + (f" ({len(r.unmeasured)} unmeasured)" if r.unmeasured else "")
            for r in run.replays
        )
        + " |"
        for run in runs
    ]
    return "\n".join(
        [
            "Per look cap: the claims it decides of those it gives rounds, then the run's claims"
            " decided in all (a claim it would give rounds the run never measured: unmeasured)",
            head,
            rule,
            *rows,
        ]
    )


def as_json(runs: list[RunReplays]) -> dict:
    return {"runs": [dataclasses.asdict(run) for run in runs]}
