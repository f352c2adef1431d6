"""A cell's teardown runs beside the next cell's start (CellRunner.begin), never beside a
measurement: the next cell waits for it before its load, and cells that must not share
the host's memory or an agent wait before they start."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from perflab.contract.cell import is_complete, read_cell_json
from perflab.contract.phases import run_split
from perflab.host.impls import HostPaths
from perflab.host.runner import CellRunner, Finishing, TeardownFailed
from tests.test_runner import scratch_tree, spec


def named(mode: str, cell_id: str):
    cell = spec(mode)
    cell.cell_id = cell_id
    return cell


@pytest.mark.live
def test_the_next_cell_starts_beside_a_teardown_and_loads_only_after_it(tmp_path: Path):
    home = tmp_path / "home"
    (home / "bin").mkdir(parents=True)
    runner = CellRunner(HostPaths(home=home, src=scratch_tree(tmp_path)), tmp_path / "runs")
    first, second = named("slowstop", "slow-1-r1"), named("serves", "serves-2-r1")
    first_dir = runner.cell_dir(first)
    seen_at_load: list[bool] = []
    load = runner._load

    def watched_load(*args, **kwargs):
        seen_at_load.append(is_complete(first_dir))
        return load(*args, **kwargs)

    runner._load = watched_load  # type: ignore[method-assign]
    ended: list[str] = []
    assert runner.begin(first, False, lambda record: ended.append(record.cell_id))
    assert runner.begin(second, False, lambda record: ended.append(record.cell_id))
    runner.release()

    # At its own load the first cell runs; at the second's, its folder is whole already.
    assert seen_at_load == [False, True]
    assert ended == ["slow-1-r1", "serves-2-r1"]
    one = read_cell_json(first_dir / "cell.json")
    two = read_cell_json(runner.cell_dir(second) / "cell.json")
    assert one["phases"]["teardown"] >= 0.8  # its server took 0.8 s to stop
    assert two["start"] < one["end"]  # the second started while the first tore down
    split = run_split(tmp_path / "runs" / "run1")
    assert split.gaps < 0  # the overlap, given back so the parts add up to the wall
    assert sum(split.parts.values()) == pytest.approx(split.wall, abs=0.01)


def finishing_of(mode: str, gather: str = "", memory_bytes: int = 0) -> Finishing:
    cell = spec(mode)
    cell.gather, cell.server.memory_bytes = gather, memory_bytes
    return Finishing.start(cell, lambda: None)


def test_gathered_payloads_remote_servers_and_memory_beyond_the_host_wait(tmp_path: Path):
    runner = CellRunner(HostPaths(home=tmp_path, src=scratch_tree(tmp_path)), tmp_path / "runs")
    plain = spec("serves")
    runner.finishing = finishing_of("serves")
    assert runner._may_start_beside(plain)
    runner.finishing = finishing_of("serves", gather="large_payload")
    assert not runner._may_start_beside(plain)
    runner.finishing = finishing_of("serves")
    big = spec("serves")
    big.server.memory_bytes = 2**60  # more than any host has free
    assert not runner._may_start_beside(big)
    runner.server_agent = "10.77.0.1:7700"
    assert not runner._may_start_beside(plain)
    runner.finishing = None
    assert runner._may_start_beside(plain)  # nothing to wait for


def test_a_teardown_that_fails_raises_its_error_when_waited_for():
    release = threading.Event()

    def fails() -> None:
        release.wait(5)
        raise OSError("no space left to write cell.json")

    finishing = Finishing.start(spec("serves"), fails)
    release.set()
    with pytest.raises(TeardownFailed, match="teardown of serves-steady-c2-r1 failed") as raised:
        finishing.wait()
    assert "no space left" in str(raised.value.__cause__)
