"""What the simulation suite (perflab.analysis.simulation, `make simulate`) found about the
intervals' coverage, as one sentence the index states: the labels the verdicts print are
only as good as this check, so the index cites it with its trial count and its worst case."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

RESULTS_NAME = "simulation.json"


def read_results(reference_dir: Path) -> dict[str, Any] | None:
    """The suite's written results beside the claims, or None where it was never run."""
    path = reference_dir / RESULTS_NAME
    if not path.is_file():
        return None
    return json.loads(path.read_text())


def worst(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The case whose coverage falls furthest below its label, in Monte Carlo errors."""
    return min(
        records,
        key=lambda r: (r["coverage"] - r["label"]) / max(r["coverage_error"], 1e-3),
    )


def case_name(record: dict[str, Any]) -> str:
    return record["case"]["name"]


def coverage_sentence(document: dict[str, Any] | None) -> str:
    """The index's sentence on the checked coverage, from the suite's results file."""
    if not document or not document.get("results"):
        return (
            "The intervals' coverage is not checked by simulation on this checkout "
            f"(no data/reference/{RESULTS_NAME}; make simulate writes it)."
        )
    records = document["results"]
    corrected = [r for r in records if r["corrections"]]
    removed = [r for r in records if not r["corrections"]]
    held = [r for r in corrected if r["passes"]]
    # A boot drift case moves its intervals off the truth on purpose: what it checks is the
    # margin's cover of the drift (simulation.Result.passes), said on its own below.
    intervals = [r for r in corrected if not r["case"].get("history_runs")]
    low = worst(intervals)
    sentence = (
        f"Coverage checked by simulation through the real verdict code "
        f"(data/reference/{RESULTS_NAME}, {document['trials']:,} trials a case): "
        f"{len(held)} of {len(corrected)} designs keep their labelled coverage within three "
        f"Monte Carlo standard errors (the lowest, \u201c{case_name(low)}\u201d: "
        f"{low['coverage']:.1%} \u00b1 {low['coverage_error']:.1%} against {low['label']:.0%})"
    )
    drifts = [r["drift_covered"] / r["trials"] for r in corrected if r["case"].get("history_runs")]
    if drifts:
        sentence += (
            f"; a margin from the machine's A/A history covered a drift that changes from boot "
            f"to boot in {min(drifts):.1%}-{max(drifts):.1%} of trials (90% stated)"
        )
    missed = [case_name(r) for r in corrected if not r["passes"]]
    if missed:
        sentence += f"; not kept: {', '.join(missed)}"
    failing = sum(not r["passes"] for r in removed)
    sentence += (
        f". With the corrections removed, {failing} of {len(removed)} designs fall short of "
        "their label, which is what the corrections are for."
    )
    looks = looks_sentence(document.get("looks"))
    return f"{sentence} {looks}" if looks else sentence


def monte_carlo(record: dict[str, Any], key: str, digits: int = 1) -> str:
    """' +/- 0.5%': a share's Monte Carlo standard error where the record has it (results
    written before it was recorded have none: '')."""
    error = record.get(key)
    if error is None:
        return ""
    # One more digit where the asked ones would round a real error to '0%'.
    if 0 < error * 100 < 0.5 * 10**-digits:
        digits += 1
    return f" +/- {error:.{digits}%}"


def looks_sentence(looks: dict[str, Any] | None) -> str:
    """What the simulated looks (perflab.analysis.simulate_looks) found: whether a claim on
    its threshold is decided within the family error the index states, and what the look's
    own A/A rounds do to a claim the base margin hides; '' where they were not simulated."""
    if not looks or not looks.get("results"):
        return ""
    records = looks["results"]
    null = [r for r in records if r["case"]["truth"] == 1.0]
    effects = [r for r in records if r["case"]["truth"] != 1.0]
    parts = []
    if null:
        kept = all(r["keeps_family_error"] for r in null)
        worst = max(null, key=lambda r: r["decided_share"])
        parts.append(
            f"a claim on its threshold was decided at some look in at most "
            f"{worst['decided_share']:.1%}{monte_carlo(worst, 'decided_error')} "
            f"of the trials, {'within' if kept else 'above'} the "
            f"{null[0]['family_error']:.0%} the index states"
        )
    with_aa = {r["case"]["name"]: r for r in effects if r["aa_in_looks"]}
    for without in (r for r in effects if not r["aa_in_looks"]):
        mine = with_aa.get(without["case"]["name"])
        if mine is None:
            continue
        how = "more" if mine["holds_share"] > without["holds_share"] else "no more"
        # A claim the look gave no rounds is judged again on its base cells.
        same = "" if mine["case"].get("claim_in_look", True) else " on its base cells alone"
        parts.append(
            f"at a true {mine['case']['truth']:g}x{same} the look's own A/A rounds (a margin of "
            f"{mine['last_margin']:.0%} against the base rounds' {without['last_margin']:.0%}) "
            f"decided it {how} often: {mine['holds_share']:.0%}"
            f"{monte_carlo(mine, 'holds_error', 0)} against {without['holds_share']:.0%}"
            f"{monte_carlo(without, 'holds_error', 0)}"
        )
    counts = sorted({r.get("trials", looks["trials"]) for r in records})
    trials = f"{counts[0]:,}" if len(counts) == 1 else f"{counts[0]:,}-{counts[-1]:,}"
    return (
        f"The adaptive looks, simulated with their own A/A rounds ({trials} trials "
        f"a case): {'; '.join(parts)}."
    )
