"""A server kept between the cells that share it (CellSpec.reuse_server): one process for
the cells of one key, each cell with its own log, samples and record of where its server
came from; a server that died, or a cell that failed, is never handed on; nothing is left
running when the runner ends."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from dataclasses import asdict, replace
from pathlib import Path

import pytest

from perflab.contract.cell import CellSpec, LoadSpec, ServerSpec
from perflab.contract.parsers import read_raw_text
from perflab.host.impls import HostPaths
from perflab.host.runner import CellRunner
from tests.fixtures_live import hello_cell

pytestmark = pytest.mark.live
REPO = Path(__file__).resolve().parent.parent

# Accepts connections and says so, one line each, until stopped.
SERVER = """
import socket, sys
host, port = sys.argv[2], int(sys.argv[4])
sock = socket.socket()
sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
sock.bind((host, port))
sock.listen()
print("READY", flush=True)
served = 0
while True:
    conn, _ = sock.accept()
    served += 1
    print(f"served {served}", flush=True)
    conn.close()
"""
# Connects once to its target, then writes client.json (exit 1 with --fail).
CLIENT = """
import json, socket, sys, time
target, out = sys.argv[2], sys.argv[4]
host, port = target.rsplit(":", 1)
with socket.create_connection((host, int(port)), timeout=5):
    time.sleep(0.05)
json.dump({"metrics": [{"metric": "elapsed", "value": 0.05, "unit": "s"}]}, open(out, "w"))
sys.exit(1 if "--fail" in sys.argv else 0)
"""


def tree(tmp_path: Path) -> HostPaths:
    src = tmp_path / "src"
    for name, code, command in (
        ("server", SERVER, '"--host", "{host}", "--port", "{port}"'),
        ("client", CLIENT, '"--target", "{target}", "--out", "{out}"'),
        ("failing", CLIENT, '"--target", "{target}", "--out", "{out}", "--fail"'),
    ):
        folder = src / "servers" / "scratch" / name
        folder.mkdir(parents=True)
        (folder / "main.py").write_text(code)
        (folder / "impl.toml").write_text(
            f'name = "{name}"\nlanguage = "python"\nserves = ["hello"]\n'
            f'command = ["{sys.executable}", "{{here}}/main.py", {command}]\n'
        )
    home = tmp_path / "home"
    (home / "bin").mkdir(parents=True)
    return HostPaths(home=home, src=src)


def cell(cell_id: str, client: str = "client", reuse: bool = True) -> CellSpec:
    return CellSpec(
        run_id="run1",
        study="hello",
        cell_id=cell_id,
        scenario="steady",
        implementation="server",
        client=client,
        params={},
        repeat=1,
        server=ServerSpec(impl="scratch/server", ready_timeout_s=20),
        load=LoadSpec(kind="client", client_impl=f"scratch/{client}", timeout_s=30),
        reuse_server=reuse,
    )


def server_pids(cell_dir: Path) -> set[int]:
    with (cell_dir / "resources.csv").open() as handle:
        return {int(row["pid"]) for row in csv.DictReader(handle) if row["role"] == "server"}


def alive(pid: int) -> bool:
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split()[2] != "Z"


def test_cells_that_share_a_key_measure_one_server_each_with_its_own_log(tmp_path):
    runner = CellRunner(tree(tmp_path), tmp_path / "runs")
    cells = [cell("a-r1"), cell("b-r1"), cell("c-r1"), cell("own-r1", reuse=False)]
    try:
        records = [runner.run(spec, keep_server=index < 2) for index, spec in enumerate(cells)]
    finally:
        runner.release()
    assert [r.status for r in records] == ["ok"] * 4, [r.error for r in records]
    assert [r.server_from for r in records] == ["", "a-r1", "a-r1", ""]
    dirs = [runner.cell_dir(spec) for spec in cells]
    pids = [server_pids(d) for d in dirs]
    assert pids[0] == pids[1] == pids[2] and len(pids[0]) == 1
    assert pids[3].isdisjoint(pids[0])  # a cell that does not share starts its own
    ports = [json.loads((d / "cell.json").read_text())["spec"]["server"]["port"] for d in dirs]
    assert ports[0] == ports[1] == ports[2] != ports[3]
    # Each cell's server.log holds what the server said during that cell only.
    logs = [(d / "server.log").read_text().split() for d in dirs]
    # (1 is the runner's readiness probe of a server it started, 2 the cell's client.)
    assert logs[0] == ["READY", "served", "1", "served", "2"]
    assert logs[1] == ["served", "3"] and logs[2] == ["served", "4"]
    assert json.loads((dirs[1] / "server.argv.json").read_text()) == json.loads(
        (dirs[0] / "server.argv.json").read_text()
    )
    # A kept cell spends no time starting a server.
    phases = [json.loads((d / "cell.json").read_text())["phases"] for d in dirs]
    assert phases[1]["ready"] < phases[0]["ready"]
    assert not any(alive(pid) for found in pids for pid in found)


def test_a_server_that_died_or_served_a_failed_cell_is_not_handed_on(tmp_path):
    import os
    import signal

    runner = CellRunner(tree(tmp_path), tmp_path / "runs")
    try:
        first = runner.run(cell("a-r1"), keep_server=True)
        assert first.status == "ok" and runner.kept is not None
        os.kill(runner.kept.pid, signal.SIGKILL)  # dies while kept, between two cells
        runner.kept.proc.wait()
        second = runner.run(cell("b-r1"), keep_server=True)
        assert second.status == "ok" and second.server_from == ""
        assert any("kept from a-r1 exited with code -9 between cells" in n for n in second.notes)
        failed = runner.run(cell("c-r1", client="failing"), keep_server=True)
        assert failed.status == "failed" and runner.kept is None
        after = runner.run(cell("d-r1"))
        assert after.server_from == ""
    finally:
        runner.release()
    pids = [server_pids(runner.cell_dir(cell(name))) for name in ("b-r1", "c-r1", "d-r1")]
    assert pids[0] == pids[1] and pids[1].isdisjoint(pids[2])
    assert not any(alive(pid) for found in pids for pid in found)


def test_perflab_cells_keeps_a_server_only_for_the_next_cell_that_shares_it(tmp_path):
    paths = tree(tmp_path)
    specs = [cell("a-r1"), cell("b-r1"), cell("own-r1", reuse=False), cell("c-r1")]
    listed = tmp_path / "cells.json"
    listed.write_text(json.dumps([asdict(spec) for spec in specs]))
    argv = [sys.executable, "-m", "perflab", "cells", f"--home={paths.home}"]
    argv += [f"--src={paths.src}", f"--specs={listed}", f"--runs={tmp_path / 'runs'}"]
    done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    run = tmp_path / "runs" / "run1" / "hello"
    froms = {
        spec.cell_id: json.loads((run / spec.cell_id / "cell.json").read_text())["server_from"]
        for spec in specs
    }
    # c shares a's key, but a cell between them needed its own server: c starts afresh.
    assert froms == {"a-r1": "", "b-r1": "a-r1", "own-r1": "", "c-r1": ""}
    pids = {pid for spec in specs for pid in server_pids(run / spec.cell_id)}
    assert len(pids) == 3 and not any(alive(pid) for pid in pids)


def test_a_real_ghz_cell_measures_a_kept_go_server_as_well_as_a_fresh_one(host_paths, tmp_path):
    import yaml

    entry = yaml.safe_load((REPO / "inventory/group_vars/all/hello.yml").read_text())[
        "perflab_matrix_hello"
    ]["implementations"]["go"]
    first = replace(hello_cell(entry["impl"], "go"), reuse_server=True)
    second = replace(first, cell_id="go-steady-c2-r2", server=replace(first.server))
    runner = CellRunner(host_paths, tmp_path)
    try:
        records = [runner.run(first, keep_server=True), runner.run(second)]
    finally:
        runner.release()
    assert [r.status for r in records] == ["ok", "ok"], [r.error for r in records]
    assert records[1].server_from == first.cell_id
    ghz = [json.loads(read_raw_text(runner.cell_dir(s) / "ghz.json")) for s in (first, second)]
    assert all(report["count"] > 0 and report["rps"] > 0 for report in ghz)
    assert server_pids(runner.cell_dir(first)) == server_pids(runner.cell_dir(second))
