"""`python -m perflab cells`: a list of cells in one process, progress per cell as `cell`
gives it, and a run interrupted between two cells resumed with none lost or run twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

import pytest

from perflab.contract.phases import run_split
from tests.test_runner import scratch_tree, spec

REPO = Path(__file__).resolve().parent.parent


def cells_list(tmp_path: Path, count: int) -> Path:
    """count cells whose server never says READY: each takes its 1.5 s ready timeout."""
    cells = []
    for index in range(1, count + 1):
        cell = spec("silent", ready_timeout_s=1.5)
        cell.cell_id = f"silent-{index}-r1"
        cells.append(asdict(cell))
    path = tmp_path / "cells.json"
    path.write_text(json.dumps(cells))
    return path


def start(tmp_path: Path, src: Path, specs: Path) -> subprocess.Popen[str]:
    home = tmp_path / "home"
    (home / "bin").mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-m", "perflab", "cells", f"--home={home}", f"--src={src}"]
    argv += [f"--specs={specs}", f"--runs={tmp_path / 'runs'}", "--progress=scratch"]
    return subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, text=True)


def wait_for(path: Path, text: str, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if path.is_file() and text in path.read_text():
            return
        time.sleep(0.02)
    raise AssertionError(f"{text!r} never appeared in {path}")


@pytest.mark.live
def test_a_run_interrupted_between_cells_resumes_with_none_lost_or_run_twice(tmp_path):
    src = scratch_tree(tmp_path)
    specs = cells_list(tmp_path, 3)
    progress = tmp_path / "runs" / "run1" / "progress.log"
    first = start(tmp_path, src, specs)
    wait_for(progress, "start scratch [1/3]")
    first.send_signal(signal.SIGTERM)  # mid-cell: that cell finishes, the next never starts
    out, _ = first.communicate(timeout=60)
    assert first.returncode == 128 + signal.SIGTERM
    assert "scratch [1/3] hello/silent-1-r1: failed: server not ready" in out
    assert "stopped by signal 15 before hello/silent-2-r1" in out
    cell_dir = tmp_path / "runs" / "run1" / "hello"
    assert sorted(p.name for p in cell_dir.iterdir()) == ["silent-1-r1"]  # whole, no partial
    written = (cell_dir / "silent-1-r1" / "cell.json").read_text()

    second = start(tmp_path, src, specs)
    out, _ = second.communicate(timeout=60)
    assert second.returncode == 0
    assert out.splitlines() == [
        "scratch [1/3] hello/silent-1-r1: complete already, skipped",
        "scratch [2/3] hello/silent-2-r1: failed: server not ready within 2 s:",
        "scratch [3/3] hello/silent-3-r1: failed: server not ready within 2 s:",
    ]
    assert (cell_dir / "silent-1-r1" / "cell.json").read_text() == written  # not run twice
    assert sorted(p.name for p in cell_dir.iterdir()) == [f"silent-{i}-r1" for i in (1, 2, 3)]
    ends = [line for line in progress.read_text().splitlines() if " end " in line]
    assert len(ends) == 4  # every cell named as it ended, the skip too
    # The stop and the resume are marked, so the time between them is a pause, not overhead.
    marks = [line.split(" ", 1)[1] for line in progress.read_text().splitlines()]
    assert "stopped by signal 15 before hello/silent-2-r1" in marks
    assert "resumed: 1 of these 3 cells complete already" in marks
    split = run_split(tmp_path / "runs" / "run1")
    assert split.pause_count == 1 and split.paused > 0
    assert split.gap_count == 1  # cells 2 -> 3 of the second runner


@pytest.mark.live
def test_a_bad_spec_in_the_list_is_refused_before_any_cell_runs(tmp_path):
    specs = cells_list(tmp_path, 2)
    cells = json.loads(specs.read_text())
    del cells[1]["server"]
    specs.write_text(json.dumps(cells))
    done = subprocess.run(
        [sys.executable, "-m", "perflab", "cells", f"--specs={specs}", f"--runs={tmp_path}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "perflab cells: bad cell spec: 'server'" in done.stderr
    assert not (tmp_path / "run1").exists()


def start_under_parent(tmp_path: Path, src: Path, specs: Path) -> tuple[subprocess.Popen[str], int]:
    """A runner started, as Ansible's task starts it, by a parent that gives it a session
    of its own; the parent (to kill) and the runner's pid."""
    home = tmp_path / "home"
    (home / "bin").mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-m", "perflab", "cells", f"--home={home}", f"--src={src}"]
    argv += [f"--specs={specs}", f"--runs={tmp_path / 'runs'}", "--progress=scratch"]
    # A parent that starts the runner in a session of its own, says its pid, and waits.
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            # The runner's stdout is a pipe only this parent reads: once it is gone, the
            # runner's next line meets a broken pipe, and it must still stop in good order.
            "import subprocess, sys; p = subprocess.Popen(sys.argv[1:], start_new_session=True,"
            " stdout=subprocess.PIPE); print(p.pid, flush=True); p.wait()",
            *argv,
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert parent.stdout is not None
    return parent, int(parent.stdout.readline())


def wait_gone(pid: int, timeout_s: float = 10.0) -> bool:
    """Whether the process ended (or is a zombie its killed parent left) within the time."""
    deadline = time.monotonic() + timeout_s
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return not Path(f"/proc/{pid}").exists() or (
        "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]
    )


@pytest.mark.live
def test_a_runner_whose_parent_ends_stops_after_its_cell_as_on_a_signal(tmp_path):
    """Ansible's Ctrl-C ends the task's processes, not the runner (its own session): the
    runner sees its parent gone, finishes its cell and stops, so a rerun runs alone."""
    src = scratch_tree(tmp_path)
    specs = cells_list(tmp_path, 3)
    progress = tmp_path / "runs" / "run1" / "progress.log"
    parent, runner_pid = start_under_parent(tmp_path, src, specs)
    try:
        wait_for(progress, "start scratch [1/3]")
        parent.kill()
        parent.wait(timeout=10)
        wait_for(progress, "stopped (its parent", timeout_s=30)
        assert wait_gone(runner_pid)
    finally:
        if Path(f"/proc/{runner_pid}").exists():
            os.kill(runner_pid, signal.SIGKILL)
    cell_dir = tmp_path / "runs" / "run1" / "hello"
    assert sorted(p.name for p in cell_dir.iterdir()) == ["silent-1-r1"]
    assert "before hello/silent-2-r1" in progress.read_text()


@pytest.mark.live
def test_a_runner_waiting_for_the_lock_gives_up_when_its_parent_ends(tmp_path):
    """A rerun waits for the stopped runner to finish its cell; stopped again meanwhile
    (its Ansible gone), it must not take the lock later and run the round unattended."""
    src = scratch_tree(tmp_path)
    specs = cells_list(tmp_path, 3)
    progress = tmp_path / "runs" / "run1" / "progress.log"
    first = start(tmp_path, src, specs)
    wait_for(progress, "start scratch [1/3]")
    parent, waiting_pid = start_under_parent(tmp_path, src, specs)
    try:
        wait_for(progress, "waiting for the run's other runner")
        parent.kill()
        parent.wait(timeout=10)
        wait_for(progress, "while waiting for the run's other runner", timeout_s=30)
        assert wait_gone(waiting_pid)
    finally:
        if Path(f"/proc/{waiting_pid}").exists():
            os.kill(waiting_pid, signal.SIGKILL)
    first.communicate(timeout=60)
    assert first.returncode == 0
    lines = progress.read_text().splitlines()
    stopped = f"stopped (its parent, pid {parent.pid}, ended) while waiting for the run's other"
    assert any(stopped in line for line in lines), lines
    # Only the first runner's three cells started: the waiting one ran none.
    assert len([line for line in lines if " start " in line]) == 3


@pytest.mark.live
def test_a_second_runner_of_the_run_waits_for_the_first_to_end(tmp_path):
    src = scratch_tree(tmp_path)
    specs = cells_list(tmp_path, 2)
    progress = tmp_path / "runs" / "run1" / "progress.log"
    first = start(tmp_path, src, specs)
    wait_for(progress, "start scratch [1/2]")
    second = start(tmp_path, src, specs)  # a rerun while the first still runs
    wait_for(progress, "waiting for the run's other runner")
    out_first, _ = first.communicate(timeout=60)
    out_second, _ = second.communicate(timeout=60)
    assert first.returncode == second.returncode == 0
    assert "complete already" not in out_first
    # The second ran nothing beside the first: it found both cells done when it got the lock.
    assert out_second.splitlines()[-2:] == [
        "scratch [1/2] hello/silent-1-r1: complete already, skipped",
        "scratch [2/2] hello/silent-2-r1: complete already, skipped",
    ]
    starts = [line for line in progress.read_text().splitlines() if " start " in line]
    ends = [line for line in progress.read_text().splitlines() if " end " in line]
    assert len(starts) == len(ends) == 4
