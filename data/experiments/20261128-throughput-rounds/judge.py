"""Judge the throughput claims of this folder's run three ways, on the same cells: its
first 3 rounds (quick before this experiment), 5 rounds of the 1 GiB cells with the 512 MiB
and 10 GiB cells' first 3 (quick since), and all 5 rounds. Writes verdicts.json beside
this file.

    .venv/bin/python data/experiments/20261128-throughput-rounds/judge.py
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
sys.path.insert(0, str(REPO))

from perflab.analysis.judged import judge  # noqa: E402
from perflab.cli import claim_frame_hooks  # noqa: E402
from perflab.contract.adaptive import round_of  # noqa: E402

RUN = HERE / "20261128T1420Z-quick"
# The sizes quick runs per implementation with its own client only (its `once` sizes).
ONCE_SIZES = ("536870912", "10737418240")


def once_size(name: str) -> bool:
    return any(f"-{size}-r" in name for size in ONCE_SIZES)


# Arm name -> which cells (folder name, round) it keeps.
ARMS = {
    "3 rounds": lambda name, round_: round_ <= 3,
    "5 rounds, once sizes 3": lambda name, round_: round_ <= 3 or not once_size(name),
    "5 rounds": lambda name, round_: True,
}


def arm_copy(keep, into: Path) -> Path:
    """The run folder with only the cells `keep` accepts."""
    copy = into / RUN.name
    shutil.copytree(RUN, copy)
    for cell in (copy / "throughput").iterdir():
        round_ = round_of(cell.name)
        if round_ is not None and not keep(cell.name, round_):
            shutil.rmtree(cell)
    return copy


def judged(run_dir: Path) -> list[dict]:
    verdicts = judge(run_dir, REPO / "data" / "reference", claim_frame_hooks()).replication.verdicts
    return [
        {
            "claim": v.claim.id,
            "verdict": v.verdict,
            "effect": round(v.effect, 4),
            "low": round(v.interval.low, 4),
            "high": round(v.interval.high, 4),
            "margin": round(v.judging.margin, 4),
        }
        for v in verdicts
        if v.claim.study == "throughput" and v.effect is not None
    ]


def every_arm() -> dict[str, list[dict]]:
    found = {}
    for arm, keep in ARMS.items():
        with tempfile.TemporaryDirectory() as scratch:
            found[arm] = judged(arm_copy(keep, Path(scratch)))
    return found


if __name__ == "__main__":
    (HERE / "verdicts.json").write_text(json.dumps(every_arm(), indent=1) + "\n")
