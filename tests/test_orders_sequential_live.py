"""orders study, live: the sequential client (the log's reading of seed 003) runs its clients
one after another, so their times add up to the cell's elapsed time, and through the `lan`
proxy (Toxiproxy, 1 ms each way) no client hides a round trip: each client's time is at
least its orders x the proxy's round trip.

Runs real orders cells (server, client, proxy) through the runner, as a run does.
"""

from __future__ import annotations

import json

import pytest

from perflab.contract.matrix import expand
from perflab.host.impls import HostPaths
from perflab.host.runner import CellRunner
from perflab.studies import get_study
from tests.conftest import matrix_only, study_vars
from tests.test_orders_live import IMPLS

pytestmark = pytest.mark.live

CLIENTS, PER_CLIENT = 3, 50


def sequential_cells(profiles: list[str]) -> dict[str, object]:
    """Repeat 1 of the matrix's sequential cell per profile: 3 clients x 50 orders."""
    matrix, _ = study_vars("orders")
    matrix.update(
        topology="localhost",
        modes=["unary"],
        security=["plaintext"],
        latency_profiles=["none"],
        clients=[1],
        orders=[30],
        warmup=2,
        repeats=1,
        seed_unary_profiles=[],
        scale_modes=[],
        aa_pair={},
        sequential_profiles=profiles,
        sequential_clients=[CLIENTS],
        sequential_orders_per_client=PER_CLIENT,
    )
    cells = matrix_only(expand("run1", get_study("orders"), matrix, {}, "smoke", set(IMPLS)))
    return {
        cell.params["latency_profile"]: cell
        for cell in cells
        if cell.params["client_order"] == "sequential"
    }


@pytest.fixture(scope="module")
def ran(host_paths, tmp_path_factory) -> dict[str, dict]:
    if not (host_paths.bin / "toxiproxy-server").is_file():
        pytest.fail("no toxiproxy-server: roles/toxiproxy installs it (make setup)")
    runs = tmp_path_factory.mktemp("runs")
    runner = CellRunner(HostPaths(home=host_paths.home, src=host_paths.src), runs)
    reports = {}
    for profile, cell in sequential_cells(["none", "lan"]).items():
        record = runner.run(cell)
        assert record is not None and record.status == "ok", record and record.error
        folder = runner.cell_dir(cell)
        reports[profile] = {
            "client": json.loads((folder / "client.json").read_text()),
            "proxies": json.loads((folder / "proxies.json").read_text())
            if (folder / "proxies.json").exists()
            else {},
        }
    return reports


@pytest.mark.parametrize("profile", ["none", "lan"])
def test_client_times_add_up_to_the_elapsed_time(ran, profile):
    report = ran[profile]["client"]
    metrics = {m["metric"]: m["value"] for m in report["metrics"]}
    times = report["sequential"]["client_elapsed_s"]
    cumulative = report["sequential"]["cumulative_s"]
    assert report["client_order"] == "sequential" and report["errors"] == {}
    assert metrics["orders_ok"] == CLIENTS * PER_CLIENT
    assert report["orders_per_client"] == [PER_CLIENT] * CLIENTS and len(times) == CLIENTS
    # One after another: each cumulative time is the sum of the clients so far, up to the
    # bookkeeping between two clients (a print), well under a millisecond.
    for done, total in zip(range(1, CLIENTS + 1), cumulative, strict=True):
        assert total == pytest.approx(sum(times[:done]), abs=1e-3 * done)
    assert metrics["elapsed"] == cumulative[-1]


def test_no_sequential_client_hides_a_round_trip_on_lan(ran):
    proxy = ran["lan"]["proxies"]["load"]
    round_trip_s = 2 * proxy["applied_ms"] / 1000
    assert round_trip_s > 0
    times = ran["lan"]["client"]["sequential"]["client_elapsed_s"]
    # Each client's own orders (its warm-up too) pass the proxy one at a time.
    for index, seconds in enumerate(times):
        assert seconds >= PER_CLIENT * round_trip_s, (index, seconds)
