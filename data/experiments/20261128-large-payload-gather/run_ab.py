"""The A/B behind ab.json: 10 GiB throughput cells whose server started right after another
10 GiB server of the runner stopped ("gathered", as a round that gathers its large payloads
runs them) against cells whose server started after a pause with no large server
("spread", as the shuffled round ran them before), in pairs of alternating order, each cell
on its own fresh server, through the real CellRunner, on the host prefix ~/.perflab that
`make setup` installed:

    .venv/bin/python data/experiments/20261128-large-payload-gather/run_ab.py \
        6 20 go,cpp,python

(pairs, pause seconds, implementations). Each implementation serves its own-language
client, security none; a discarded first cell starts each implementation's sequence, so
every gathered cell follows a 10 GiB cell. Prints each implementation's median throughput
and time to READY per arm and the paired ratio gathered over spread with its 90% t
interval; writes every cell's figures to ab.json beside this file.
"""

import copy
import json
import math
import statistics
import sys
import time
from pathlib import Path

from scipy.stats import t

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO))

from perflab.host.impls import HostPaths, discover  # noqa: E402
from perflab.host.runner import CellRunner  # noqa: E402
from perflab.studies.throughput import matrix as study  # noqa: E402
from tests.conftest import study_vars  # noqa: E402

SIZE = 10 << 30
ARMS = ("spread", "gathered")


def gib_per_s(runner: CellRunner, cell) -> float:
    result = json.loads((runner.cell_dir(cell) / "client.json").read_text())
    return next(m["value"] for m in result["metrics"] if m["metric"] == "throughput")


def measure(runner: CellRunner, base, name: str) -> tuple[float, float]:
    cell = copy.deepcopy(base)
    cell.cell_id = f"{base.cell_id}-{name}"
    record = runner.run(cell)
    assert record is not None and record.status == "ok", record
    return gib_per_s(runner, cell), record.phases["ready"]


def one_implementation(runner: CellRunner, base, pairs: int, pause_s: float) -> dict:
    measure(runner, base, "primer")
    rates: dict[str, list[float]] = {arm: [] for arm in ARMS}
    ready: dict[str, list[float]] = {arm: [] for arm in ARMS}
    for i in range(pairs):
        for arm in ARMS if i % 2 == 0 else ARMS[::-1]:
            if arm == "spread":
                time.sleep(pause_s)
            rate, seconds = measure(runner, base, f"{i}-{arm}")
            rates[arm].append(rate)
            ready[arm].append(seconds)
    logs = [math.log(g / s) for s, g in zip(rates["spread"], rates["gathered"], strict=True)]
    mean, se = statistics.mean(logs), statistics.stdev(logs) / math.sqrt(len(logs))
    half = float(t.ppf(0.95, len(logs) - 1)) * se
    return {
        "rates_gib_s": rates,
        "ready_s": ready,
        "ratio": math.exp(mean),
        "interval_90": [math.exp(mean - half), math.exp(mean + half)],
    }


def main() -> None:
    pairs, pause_s, impls = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3].split(",")
    config, _ = study_vars("throughput")
    matrix = study.checked(config, set(discover(REPO / "servers")))
    home = Path.home() / ".perflab"
    runner = CellRunner(HostPaths(home=home, src=home / "src"), Path("/tmp/abgruns"))
    run_id = f"abg{int(time.time())}"
    found = {"pairs": pairs, "pause_s": pause_s, "size": SIZE, "implementations": {}}
    out = Path(__file__).with_name("ab.json")
    try:
        for impl in impls:
            base = study.grpc_cell(run_id, matrix, impl, impl, "none", SIZE, 1)
            base.bound_check = False
            result = one_implementation(runner, base, pairs, pause_s)
            found["implementations"][impl] = result
            low, high = result["interval_90"]
            rates = result["rates_gib_s"]
            print(
                f"{impl}: GiB/s median spread {statistics.median(rates['spread']):.3f}"
                f" gathered {statistics.median(rates['gathered']):.3f}; ratio "
                f"{result['ratio']:.3f} [{low:.3f}, {high:.3f}]; ready s median spread "
                f"{statistics.median(result['ready_s']['spread']):.1f} gathered "
                f"{statistics.median(result['ready_s']['gathered']):.1f}",
                flush=True,
            )
            out.write_text(json.dumps(found, indent=1) + "\n")
    finally:
        runner.release()


if __name__ == "__main__":
    main()
