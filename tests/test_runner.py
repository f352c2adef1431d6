"""The runner's own guarantees, with small real server processes written for the purpose:
a crashed or silent server marks its cell failed, complete cells are skipped, and a
half-written cell is never taken for a complete one."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from perflab.analysis import frames
from perflab.contract.cell import CellSpec
from perflab.host.impls import HostPaths
from perflab.host.launch import plan_pinning
from perflab.host.net import free_port, port_open
from perflab.host.runner import CellRunner
from tests.fixtures_live import hello_cell

# Listens, says READY, then behaves as told by its first argument.
SCRATCH_SERVER = textwrap.dedent("""
    import signal, socket, sys, time
    mode, host, port = sys.argv[1], sys.argv[3], int(sys.argv[5])
    if mode == "slowstop":  # takes its time to stop, as a server freeing a payload does
        signal.signal(signal.SIGTERM, lambda *_: (time.sleep(0.8), sys.exit(0)))
    if mode == "crash":
        print("cannot bind: address on fire", file=sys.stderr)
        sys.exit(3)
    sock = socket.socket()
    sock.bind((host, port))
    sock.listen()
    print(f"LISTENING {host}:{port}", flush=True)
    if mode == "silent":
        time.sleep(60)
    print("READY", flush=True)
    if mode == "dies":
        time.sleep(0.3)
        sys.exit(7)
    time.sleep(60)
""")


def scratch_tree(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    for mode in ("crash", "silent", "dies", "serves", "slowstop"):
        folder = src / "servers" / "scratch" / mode
        folder.mkdir(parents=True)
        (folder / "server.py").write_text(SCRATCH_SERVER)
        (folder / "impl.toml").write_text(
            f'name = "{mode}"\nlanguage = "python"\nserves = ["hello"]\n'
            f'command = ["{sys.executable}", "{{here}}/server.py", "{mode}", '
            '"--host", "{host}", "--port", "{port}"]\n'
        )
    (src / "proto").mkdir()
    (src / "proto" / "hello.proto").write_text(
        (Path(__file__).parent.parent / "proto" / "hello.proto").read_text()
    )
    return src


def spec(mode: str, ready_timeout_s: float = 20.0, port: int = 0) -> CellSpec:
    cell = hello_cell(f"scratch/{mode}", mode)
    cell.run_id = "run1"
    cell.server.ready_timeout_s = ready_timeout_s
    cell.server.port = port
    return cell


@pytest.fixture
def runner(tmp_path: Path) -> CellRunner:
    home = tmp_path / "home"
    (home / "bin").mkdir(parents=True)
    return CellRunner(HostPaths(home=home, src=scratch_tree(tmp_path)), tmp_path / "runs")


def test_pinning_splits_cpus_into_disjoint_halves():
    pinning = plan_pinning([0, 1, 2, 3])
    assert pinning.applied
    assert pinning.server_cpus == [0, 1] and pinning.client_cpus == [2, 3]
    assert not plan_pinning([0]).applied


@pytest.mark.live
def test_server_that_crashes_at_start_fails_its_cell_with_the_reason(runner):
    record = runner.run(spec("crash"))
    assert record.status == "failed"
    assert "exited with code 3 before READY" in record.error
    assert "address on fire" in record.error
    # What was started is on record even though it never got ready.
    argv = json.loads((runner.cell_dir(spec("crash")) / "server.argv.json").read_text())
    assert Path(argv[1]).name == "server.py" and int(argv[argv.index("--port") + 1]) > 0
    cell = json.loads((runner.cell_dir(spec("crash")) / "cell.json").read_text())
    assert cell["status"] == "failed"


@pytest.mark.live
def test_server_that_never_gets_ready_fails_after_its_timeout(runner):
    port = free_port("127.0.0.1")
    record = runner.run(spec("silent", ready_timeout_s=1.0, port=port))
    assert record.status == "failed"
    assert "not ready within 1 s" in record.error
    # The server that never got ready is stopped, not left behind holding its port.
    assert not port_open("127.0.0.1", port)


@pytest.mark.live
def test_cell_json_records_the_port_and_host_the_server_listened_on(runner):
    """The spec asks for port 0 (any free port); the record says which one it was."""
    record = runner.run(spec("serves"))
    # No ghz in this scratch home: the load fails, after the server started and listened.
    assert record.status == "failed"
    cell_dir = runner.cell_dir(spec("serves"))
    said = (cell_dir / "server.log").read_text().split("LISTENING ", 1)[1].split()[0]
    server = json.loads((cell_dir / "cell.json").read_text())["spec"]["server"]
    assert f"{server['host']}:{server['port']}" == said
    assert server["port"] != 0
    argv = json.loads((cell_dir / "server.argv.json").read_text())
    assert argv[argv.index("--port") + 1] == str(server["port"])


@pytest.mark.live
def test_cell_json_records_where_the_cells_time_went(runner):
    """Phase times add up to the cell's total; a load that never ran measured no window."""
    record = runner.run(spec("serves"))
    assert record.status == "failed"  # no ghz in the scratch home
    phases = json.loads((runner.cell_dir(spec("serves")) / "cell.json").read_text())["phases"]
    assert phases["ready"] > 0  # a Python process's start to its READY line
    assert phases["window"] == 0.0
    parts = sum(phases[k] for k in ("server_start", "ready", "warmup", "load", "teardown"))
    assert parts == pytest.approx(phases["total"], abs=0.005)


@pytest.mark.live
def test_complete_cell_is_skipped_on_rerun(runner):
    first = runner.run(spec("crash"))
    before = (runner.cell_dir(spec("crash")) / "cell.json").read_text()
    assert first is not None
    assert runner.run(spec("crash")) is None
    assert (runner.cell_dir(spec("crash")) / "cell.json").read_text() == before


@pytest.mark.live
def test_half_written_cell_is_neither_loaded_nor_skipped(runner):
    partial = runner.runs_root / "run1" / "hello" / ".partial-crash-steady-c2-r1"
    partial.mkdir(parents=True)
    (partial / "cell.json").write_text("{}")  # as a crash mid-write could leave it
    assert frames.read_run(runner.runs_root / "run1").empty
    assert runner.run(spec("crash")) is not None  # it runs, and the stale partial is gone
    assert not partial.exists()


@pytest.mark.live
def test_failed_cell_loads_as_one_failed_row(runner):
    runner.run(spec("crash"))
    frame = frames.read_run(runner.runs_root / "run1")
    assert frame[["metric", "value", "status"]].values.tolist() == [["failed", 1.0, "failed"]]
    cells = frames.read_cells(runner.runs_root / "run1")
    assert "exited with code 3" in cells.loc[0, "error"]


@pytest.mark.live
def test_server_dying_mid_load_fails_the_cell_and_keeps_the_error_counts(tmp_path, host_paths):
    src = scratch_tree(tmp_path)
    runner = CellRunner(HostPaths(home=host_paths.home, src=src), tmp_path / "runs")
    record = runner.run(spec("dies"))
    assert record.status == "failed"
    assert "exited with code 7 during the cell" in record.error


def test_a_killed_client_is_named_with_its_signal(tmp_path):
    from perflab.host.runner import killed_by

    (tmp_path / "time.txt").write_text(
        'Command terminated by signal 9\n\tCommand being timed: "watch_client_go"\n'
    )
    assert killed_by(tmp_path / "time.txt") == " (killed by signal 9, SIGKILL)"
    (tmp_path / "time.txt").write_text('\tCommand being timed: "ghz"\n\tExit status: 1\n')
    assert killed_by(tmp_path / "time.txt") == ""
    assert killed_by(tmp_path / "missing.txt") == ""


def test_large_proxy_logs_are_stored_gzipped_and_read_back_whole(tmp_path):
    from perflab.contract.parsers import read_raw_text
    from perflab.host.runner import PROXY_LOG_GZIP_BYTES, compress_proxy_logs

    big = "".join(f'{{"message":"Accepted client","n":{i}}}\n' for i in range(5000))
    assert len(big) > PROXY_LOG_GZIP_BYTES
    (tmp_path / "proxy-load.log").write_text(big)
    (tmp_path / "proxy-s3_endpoint.log").write_text("started\n")
    (tmp_path / "server.log").write_text(big)  # read by analyses as it is: left alone
    compress_proxy_logs(tmp_path)
    assert not (tmp_path / "proxy-load.log").exists()
    assert read_raw_text(tmp_path / "proxy-load.log") == big
    assert (tmp_path / "proxy-s3_endpoint.log").read_text() == "started\n"
    assert (tmp_path / "server.log").read_text() == big
