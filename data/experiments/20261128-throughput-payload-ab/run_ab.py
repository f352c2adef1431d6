"""The A/B behind ab.json: throughput cells whose server made its own payload (a private
anonymous map, filled before READY) against cells whose server mapped the payload an
earlier server of the runner kept in tmpfs (perflab.host.payloads), in pairs of
alternating order, each cell on its own fresh server, through the real CellRunner, on the
host prefix ~/.perflab that `make setup` installed. It needs the code it tested, which did
not land: `git apply data/experiments/20261128-throughput-payload-ab/kept-payload.patch` on
226b4c76, then `make setup` (the Go and C++ servers are rebuilt).

    .venv/bin/python data/experiments/20261128-throughput-payload-ab/run_ab.py \
        8 1073741824 go,cpp,python,python_aio

Each implementation serves its own-language client, security none. The kept arm's runner
makes the payload in one discarded cell first, so every kept cell measured maps it. Prints
each implementation's median throughput and time to READY per arm and the paired ratio
(kept over made); appends its figures to /tmp/abp.json.
"""

import copy
import json
import math
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO))

from perflab.host.impls import HostPaths, discover  # noqa: E402
from perflab.host.runner import CellRunner  # noqa: E402
from perflab.studies.throughput import matrix as study  # noqa: E402
from tests.conftest import study_vars  # noqa: E402

ARMS = ("made", "kept")


def gib_per_s(runner: CellRunner, cell) -> float:
    result = json.loads((runner.cell_dir(cell) / "client.json").read_text())
    return next(m["value"] for m in result["metrics"] if m["metric"] == "throughput")


def main() -> None:
    pairs, size, impls = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3].split(",")
    config, _ = study_vars("throughput")
    matrix = study.checked(config, set(discover(REPO / "servers")))
    home = Path.home() / ".perflab"
    paths = HostPaths(home=home, src=home / "src")
    runs = Path("/tmp/abpruns")
    run_id = f"abp{int(time.time())}"
    (runs / run_id).mkdir(parents=True)
    runners = {
        "made": CellRunner(paths, runs, keep_payloads=False),
        "kept": CellRunner(paths, runs),
    }
    out_path = Path("/tmp/abp.json")
    found = json.loads(out_path.read_text()) if out_path.exists() else []
    try:
        for impl in impls:
            base = study.grpc_cell(run_id, matrix, impl, impl, "none", size, 1)
            base.bound_check = False
            primer = copy.deepcopy(base)
            primer.cell_id = f"{base.cell_id}-primer"
            record = runners["kept"].run(primer)
            assert record is not None and record.status == "ok", record
            rates: dict[str, list[float]] = {arm: [] for arm in ARMS}
            ready: dict[str, list[float]] = {arm: [] for arm in ARMS}
            for i in range(pairs):
                for arm in ARMS if i % 2 == 0 else ARMS[::-1]:
                    cell = copy.deepcopy(base)
                    cell.cell_id = f"{base.cell_id}-{i}-{arm}"
                    record = runners[arm].run(cell)
                    assert record is not None and record.status == "ok", record
                    rates[arm].append(gib_per_s(runners[arm], cell))
                    ready[arm].append(record.phases["ready"])
            logs = [math.log(k / m) for m, k in zip(rates["made"], rates["kept"], strict=True)]
            mean, se = statistics.mean(logs), statistics.stdev(logs) / math.sqrt(len(logs))
            found.append({"implementation": impl, "size": size, **rates, "ready_s": ready})
            print(
                f"{impl} {size}: median GiB/s made {statistics.median(rates['made']):.3f} "
                f"kept {statistics.median(rates['kept']):.3f} paired ratio {math.exp(mean):.3f} "
                f"(se of log {se:.3f}); median ready s made "
                f"{statistics.median(ready['made']):.2f} "
                f"kept {statistics.median(ready['kept']):.2f}",
                flush=True,
            )
    finally:
        for runner in runners.values():
            runner.close()
    out_path.write_text(json.dumps(found, indent=1))


if __name__ == "__main__":
    main()
