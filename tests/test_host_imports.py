"""The benchmark host runs the runner, the agent and the CLI with the standard library and
psutil only: importing them loads no analysis package (pandas, numpy, matplotlib), so a host
never needs the controller's packages and a cell never pays for their import."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pytest

import perflab
from tests.conftest import REPO

ANALYSIS_PACKAGES = ("pandas", "numpy", "matplotlib")
HOST_MODULES = [
    name
    for name in ("perflab", "perflab.runner", "perflab.agent", "perflab.cli", "perflab.launch")
    if importlib.util.find_spec(name) is not None
]
# A fresh interpreter imports the module and lists everything that came with it.
PROBE = (
    "import importlib, json, sys; importlib.import_module(sys.argv[1]); "
    "print(json.dumps(sorted(sys.modules)))"
)


@pytest.mark.live
@pytest.mark.parametrize("module", HOST_MODULES)
def test_host_module_imports_no_analysis_package(module: str):
    done = subprocess.run(
        [sys.executable, "-c", PROBE, module],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout)
    assert module in loaded
    pulled = sorted(name for name in loaded if name.split(".")[0] in ANALYSIS_PACKAGES)
    assert pulled == [], f"importing {module} loads {pulled[:5]}: keep analysis imports lazy"


def test_package_still_offers_the_loader_to_notebooks(tmp_path):
    # perflab.load is both a submodule and the function; importing the submodule must not
    # put the module where notebooks call the function.
    import perflab.load as submodule_or_function  # noqa: F401
    from perflab.load import load_cells

    assert callable(perflab.load) and perflab.load.__module__ == "perflab.load"
    assert perflab.load_cells is load_cells
    assert issubclass(perflab.MalformedRawFile, Exception)
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        _ = perflab.nothing_here
    assert perflab.load(tmp_path).empty
