"""`make lab` starts JupyterLab on notebooks/ with the run RUN names: it answers on
127.0.0.1:LAB_PORT, lists the study notebooks through its contents API, and its kernels are
handed that run's folder (PERFLAB_RUN_DIR, read by every notebook's parameters cell)."""

from __future__ import annotations

import json
import os
import secrets
import urllib.request
from pathlib import Path

import psutil
import pytest
import yaml

from perflab.host.net import free_port, port_open
from tests.background import listening
from tests.conftest import REPO

pytestmark = pytest.mark.live

# A committed run: the localhost reference.
REFERENCE_RUNS = REPO / "data" / "reference" / "reference_runs.yml"
RUN = "data/" + yaml.safe_load(REFERENCE_RUNS.read_text())["localhost"]


def get(url: str, token: str) -> dict:
    request = urllib.request.Request(url, headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


def command_line(process: psutil.Process) -> list[str]:
    """Its argv; [] for a child that exited between being listed and read (make's shells
    end while the lab starts: a zombie or a vanished PID is not the lab)."""
    try:
        return process.cmdline()
    except (psutil.ZombieProcess, psutil.NoSuchProcess):
        return []


def test_make_lab_serves_the_notebooks_with_the_run(tmp_path: Path) -> None:
    port = free_port("127.0.0.1")
    token = secrets.token_hex(16)
    env = {key: value for key, value in os.environ.items() if not key.startswith("MAKE")}
    # Jupyter's config and runtime files in scratch folders, never the user's.
    env.update(
        JUPYTER_TOKEN=token,
        JUPYTER_CONFIG_DIR=str(tmp_path / "config"),
        JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
    )
    argv = ["make", "--no-print-directory", "lab", f"RUN={RUN}", f"LAB_PORT={port}"]
    out_dir = REPO / "tmp" / "lab" / Path(RUN).name
    made_out_dir = not out_dir.exists()
    with listening(argv, env, tmp_path / "lab.log", port, cwd=REPO, timeout_s=120) as make:
        base = f"http://127.0.0.1:{port}"
        listed = get(f"{base}/api/contents/", token)
        names = {item["name"] for item in listed["content"]}
        notebooks = {path.name for path in (REPO / "notebooks").glob("*.ipynb")}
        assert notebooks and notebooks <= names
        assert get(f"{base}/api/contents/hello.ipynb?content=0", token)["type"] == "notebook"
        # Without the token it is refused.
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"{base}/api/contents/", timeout=10)
        assert refused.value.code == 403
        [lab] = [
            child
            for child in psutil.Process(make.pid).children(recursive=True)
            if "jupyter" in " ".join(command_line(child))
        ]
        handed = lab.environ()
        assert handed["PERFLAB_RUN_DIR"] == str(REPO / RUN)
        assert handed["PERFLAB_REFERENCE_DIR"] == str(REPO / "data" / "reference")
        assert handed["PERFLAB_OUT_DIR"] == str(out_dir) and out_dir.is_dir()
        assert "--no-browser" in lab.cmdline() and "--ServerApp.ip=127.0.0.1" in lab.cmdline()
    # Stopped by its PID: nothing answers on the port, the server is gone.
    assert not port_open("127.0.0.1", port)
    assert not lab.is_running()
    if made_out_dir:
        out_dir.rmdir()  # empty: nothing ran in it
