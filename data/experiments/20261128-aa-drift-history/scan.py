"""Is there drift between the two copies of an A/A configuration beyond their noise?

Reads every committed run's A/A cells as the verdicts read them (perflab.analysis.noise:
per kind of client and metric, each round's log ratio of copy a over copy b) and writes
aa_series.json: per run, kind and metric, the rounds' log ratios, their mean, SD, the
paired t statistic and its two-sided p-value, and the margin the run judged that metric
with, then prints the README's two tables (`--tables`: from aa_series.json as it is).
Run from the repo root:

    .venv/bin/python data/experiments/20261128-aa-drift-history/scan.py
"""

from __future__ import annotations

import json
import math
import statistics
import sys
from pathlib import Path

from scipy import stats

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
sys.path.insert(0, str(REPO))

from perflab.analysis.noise import noise_floor  # noqa: E402
from perflab.analysis.replication import reference_claims  # noqa: E402
from perflab.analysis.run import read  # noqa: E402
from perflab.cli import claim_frame_hooks  # noqa: E402

# Every run of this machine with A/A cells, localhost and netns, as committed.
RUNS = [
    "20261125-netns",
    "20261125-quick",
    "20261125-reference",
    "20261126-netns",
    "20261126-reference",
    "20261126T170452Z-quick",
    "20261127-netns",
    "20261127T000845Z-quick",
    "20261127T012251Z-quick",
    "20261127T044109Z-quick",
    "20261127T082212Z-quick",
    "20261127T111956Z-quick",
    "20261127T175154Z-quick",
    "20261127T182348Z-quick",
    "20261127T210549Z-quick",
    "20261128T010419Z-quick",
    "20261128-netns",
]


def series(run_id: str) -> list[dict]:
    """One entry per A/A kind and metric of a run; a metric whose log ratios repeat another
    of the same kind's (ghz's rps and rps_ghz) is kept once."""
    run = read(REPO / "data" / run_id, claim_frame_hooks())
    claims = reference_claims(REPO / "data" / "reference", run.seed_rows_hooks)
    found = []
    for kind in noise_floor(run, claims).kinds:
        seen: set[tuple[float, ...]] = set()
        for metric in sorted(kind.log_ratios):
            logs = kind.log_ratios[metric]
            if len(logs) < 2 or logs in seen or statistics.stdev(logs) == 0:
                continue
            seen.add(logs)
            mean, sd = statistics.fmean(logs), statistics.stdev(logs)
            t = mean / (sd / math.sqrt(len(logs)))
            found.append(
                {
                    "run": run_id,
                    "topology": run.topology,
                    "study": kind.study,
                    "kind": kind.configuration,
                    "metric": metric,
                    "rounds": len(logs),
                    "log_ratios": list(logs),
                    "mean": mean,
                    "sd": sd,
                    "t": t,
                    "p": float(2 * stats.t.sf(abs(t), len(logs) - 1)),
                    "margin": kind.per_metric[metric],
                }
            )
    return found


def p_value_shares(found: list[dict]) -> str:
    """How many series' paired t tests reject "no drift" at each level: with no drift
    beyond the rounds' own noise, about that level's share of them."""
    lines = ["| level | series below it | share | expected with no drift |", "|---|---:|---:|---:|"]
    for level in (0.01, 0.05, 0.10, 0.20):
        below = sum(s["p"] < level for s in found)
        lines.append(
            f"| {level:.2f} | {below} of {len(found)} | {below / len(found):.1%} | {level:.0%} |"
        )
    return "\n".join(lines)


def pooled_drift(found: list[dict]) -> str:
    """Per study, kind (its first two values) and metric over the runs that measured it:
    the inverse-variance pooled drift of copy a over copy b with its 90% interval, Cochran's
    Q p-value for the runs' drifts differing by more than their noise, and each run's own
    far end of its A/A interval (the margin it judged the metric with, never below 10%)."""
    groups: dict[tuple[str, str, str], list[dict]] = {}
    for s in found:
        kind = ", ".join(s["kind"].split(", ")[:2])
        groups.setdefault((s["study"], kind, s["metric"]), []).append(s)
    lines = [
        "| study | kind | metric | runs | pooled drift a / b | 90% interval | runs differ (Q p) "
        "| each run's A/A far end, median [range] |",
        "|---|---|---|---:|---:|---|---:|---|",
    ]
    for (study, kind, metric), runs in sorted(groups.items()):
        if len(runs) < 3:
            continue
        weights = [r["rounds"] / r["sd"] ** 2 for r in runs]
        mean = sum(w * r["mean"] for w, r in zip(weights, runs, strict=True)) / sum(weights)
        half = stats.norm.ppf(0.95) / math.sqrt(sum(weights))
        q = sum(w * (r["mean"] - mean) ** 2 for w, r in zip(weights, runs, strict=True))
        margins = [r["margin"] for r in runs]
        lines.append(
            f"| {study} | {kind} | {metric} | {len(runs)} | {math.exp(mean):.3f} "
            f"| [{math.exp(mean - half):.3f}, {math.exp(mean + half):.3f}] "
            f"| {stats.chi2.sf(q, len(runs) - 1):.2f} | {statistics.median(margins):.0%} "
            f"[{min(margins):.0%}, {max(margins):.0%}] |"
        )
    return "\n".join(lines)


def main() -> None:
    if "--tables" not in sys.argv:
        found = []
        for run_id in RUNS:
            found += series(run_id)
            print(f"{run_id}: {sum(s['run'] == run_id for s in found)} series", file=sys.stderr)
        (HERE / "aa_series.json").write_text(json.dumps(found, indent=1) + "\n")
    found = json.loads((HERE / "aa_series.json").read_text())
    print(p_value_shares(found), pooled_drift(found), sep="\n\n")


if __name__ == "__main__":
    main()
