"""The A/B behind ab.json: hello steady cells with a 1 s against a 0.25 s ghz warm-up, in
pairs of alternating order (1 s first in even pairs), each cell on its own fresh server,
through the real CellRunner, on the host prefix ~/.perflab that `make setup` installed.

    .venv/bin/python data/experiments/20261127-hello-warmup-ab/run_ab.py 8 go,cpp 10

Prints each implementation's median rate per arm and the paired ratio (0.25 s over 1 s,
the geometric mean of the pairs' ratios) and writes /tmp/abw.json. ab.json holds three
such invocations: 8 pairs of grpcio_sync_w10, grpclib_asyncio, go, cpp at concurrency 10;
of grpc_aio, grpclib_uvloop, grpcio_sync_w1 at 10; of grpcio_sync_w1, grpcio_sync_w10,
cpp at 50.
"""

import copy
import gzip
import json
import math
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO))

from perflab.contract.matrix import expand  # noqa: E402
from perflab.host.impls import HostPaths  # noqa: E402
from perflab.host.runner import CellRunner  # noqa: E402
from perflab.studies import get_study  # noqa: E402
from tests.conftest import matrix_only, study_vars  # noqa: E402
from tests.test_orders_live import IMPLS  # noqa: E402

ARMS = (1.0, 0.25)


def main() -> None:
    pairs, impls, concurrency = int(sys.argv[1]), sys.argv[2].split(","), sys.argv[3]
    matrix, profiles = study_vars("hello")
    cells = matrix_only(expand("abw", get_study("hello"), matrix, profiles, "quick", set(IMPLS)))
    home = Path.home() / ".perflab"
    runs = Path("/tmp/abwruns")
    run_id = f"abw{int(time.time())}"
    (runs / run_id).mkdir(parents=True)
    (runs / run_id / "calibration.json").write_text(json.dumps({"ghz_version": "0.93.0"}))
    runner = CellRunner(HostPaths(home=home, src=home / "src"), runs)
    out = {}
    for impl in impls:
        base = next(
            c
            for c in cells
            if c.implementation == impl
            and c.scenario == "steady"
            and str(c.params.get("concurrency")) == concurrency
            and c.params.get("stack", "current") == "current"
        )
        rates: dict[float, list[float]] = {arm: [] for arm in ARMS}
        for i in range(pairs):
            for warmup in ARMS if i % 2 == 0 else ARMS[::-1]:
                cell = copy.deepcopy(base)
                cell.run_id, cell.bound_check = run_id, False
                cell.cell_id = f"{base.cell_id}-{i}-w{warmup}"
                cell.load.warmup_s = warmup
                record = runner.run(cell)
                assert record is not None and record.status in ("ok", "bound"), record
                report = json.load(gzip.open(runner.cell_dir(cell) / "ghz.json.gz"))
                ok = report["statusCodeDistribution"].get("OK", 0)
                rates[warmup].append(ok / (report["total"] / 1e9))
        logs = [math.log(short / long) for long, short in zip(rates[1.0], rates[0.25])]
        mean, se = statistics.mean(logs), statistics.stdev(logs) / math.sqrt(len(logs))
        out[impl] = {"w1": rates[1.0], "w025": rates[0.25]}
        print(
            f"{impl} median rps w1 {statistics.median(rates[1.0]):.0f} "
            f"w0.25 {statistics.median(rates[0.25]):.0f} paired ratio {math.exp(mean):.3f} "
            f"(se of log {se:.3f})",
            flush=True,
        )
    Path("/tmp/abw.json").write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
