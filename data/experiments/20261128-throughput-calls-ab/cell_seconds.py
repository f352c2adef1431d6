"""Each A/B cell's wall time (its cell.json phases total), per configuration and arm, from
the folder `perflab ab` wrote its cells under; writes cell_seconds.json beside this file.

    .venv/bin/python data/experiments/20261128-throughput-calls-ab/cell_seconds.py \
        /tmp/perflab-ab/20261128T041739Z-ab
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(folder: Path) -> None:
    found: dict[str, dict[str, list[float]]] = {}
    # Cell folders are named <configuration>-p<pair>-<arm> (perflab.host.ab).
    for cell in sorted(folder.glob("*/*/cell.json")):
        name = re.fullmatch(r"(.+)-p(\d+)-([ab])", cell.parent.name)
        if name is None:
            continue
        record = json.loads(cell.read_text())
        by_arm = found.setdefault(name.group(1), {"a": [], "b": []})
        by_arm[name.group(3)].append((int(name.group(2)), record["phases"]["total"]))
    ordered = {
        config: {arm: [s for _, s in sorted(pairs)] for arm, pairs in arms.items()}
        for config, arms in found.items()
    }
    (HERE / "cell_seconds.json").write_text(json.dumps(ordered, indent=1) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
