"""A study client that takes its target on stdin (impl.toml `target_on_stdin`) is started
beside its server and sent the target when the server is ready: the orders client's
imports overlap its server's start. The cell measures what it measured before, the clock's
`load` starts at the target, and a cell whose server never gets ready leaves no client."""

from __future__ import annotations

import json

import psutil
import pytest

from perflab.host.impls import HostPaths, discover
from perflab.host.runner import CellRunner
from tests.conftest import REPO
from tests.test_orders_proxy import orders_cells


def test_only_the_clients_that_say_so_take_their_target_on_stdin():
    impls = discover(REPO / "servers")
    assert {key for key, impl in impls.items() if impl.target_on_stdin} == {
        "python/orders_client",
        "python/throughput_client",
    }


def clients_of(folder) -> list[psutil.Process]:
    """Processes still running whose argv names the cell's folder (its client's --out)."""
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        if any(str(folder) in part for part in proc.info["cmdline"] or []):
            found.append(proc)
    return found


@pytest.mark.live
def test_a_prestarted_orders_client_is_sent_its_target_when_the_server_is_ready(
    host_paths, tmp_path
):
    runner = CellRunner(HostPaths(home=host_paths.home, src=host_paths.src), tmp_path / "runs")
    cell = orders_cells(["none"])["none"]
    record = runner.run(cell)
    assert record is not None and record.status == "ok", record and record.error
    folder = runner.cell_dir(cell)
    argv = json.loads((folder / "client.argv.json").read_text())
    assert argv[argv.index("--target") + 1] == "-"
    report = json.loads((folder / "client.json").read_text())
    server = record.spec["server"]
    assert report["target"] == f"{server['host']}:{server['port']}"
    metrics = {m["metric"]: m["value"] for m in report["metrics"]}
    assert metrics["orders_ok"] == report["orders"] > 0 and metrics["orders_failed"] == 0
    # The client started before `load`: its imports are in no phase of the load.
    phases = record.phases
    assert 0 < phases["window"] <= phases["load"] < phases["total"]
    assert runner.prestarted is None and not clients_of(folder)


@pytest.mark.live
def test_a_cell_whose_server_fails_to_start_leaves_no_prestarted_client(host_paths, tmp_path):
    runner = CellRunner(HostPaths(home=host_paths.home, src=host_paths.src), tmp_path / "runs")
    cell = orders_cells(["none"])["none"]
    # The server exits at once, before READY: argparse refuses the value.
    cell.server.options = {**cell.server.options, "workers": "many"}
    record = runner.run(cell)
    assert record is not None and record.status == "failed"
    assert "before READY" in record.error
    folder = runner.cell_dir(cell)
    assert runner.prestarted is None
    assert not clients_of(folder), "the client started beside the failed server still runs"
    # It never got a target: it wrote no report of calls it did not make.
    assert not (folder / "client.json").exists()
