"""The benchmark host runs the runner, the agent and the CLI with the standard library and
psutil only: importing them loads no analysis package (pandas, numpy, matplotlib), so a host
never needs the controller's packages and a cell never pays for their import."""

from __future__ import annotations

import ast
import importlib.util
import json
import subprocess
import sys

import pytest

from tests.conftest import REPO

ANALYSIS_PACKAGES = ("pandas", "numpy", "matplotlib")
HOST_MODULES = [
    name
    for name in (
        "perflab",
        "perflab.host.runner",
        "perflab.host.agent",
        "perflab.cli",
        "perflab.host.launch",
        "perflab.contract.matrix",
    )
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


def test_the_package_itself_imports_nothing():
    # A namespace for its three layers: no lazy-import table, no module-class override, no
    # re-exports; a notebook imports the reader from perflab.analysis.frames by name.
    tree = ast.parse((REPO / "perflab" / "__init__.py").read_text())
    statements = [node for node in tree.body if not isinstance(node, ast.Expr)]
    assert statements == [], [ast.unparse(node) for node in statements]
