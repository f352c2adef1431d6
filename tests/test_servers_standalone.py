"""A program under servers/ is a program of its own: no Python file there imports perflab.

What a server or client needs from the lab comes through its impl.toml command (options,
target, out); what the lab does around it (latency proxies, sampling, pinning) is the
runner's. An import of perflab would tie a server to the controller's source tree.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import REPO

# Generated stubs and installed packages are not the project's programs.
SKIPPED_FOLDERS = {"gen", "node_modules", "__pycache__", ".venv"}
# importlib.import_module("perflab...") and __import__("perflab...") import it too.
IMPORT_CALLS = {"import_module", "__import__"}


def perflab_imports(source: str, filename: str = "<source>") -> list[str]:
    """'line N: module' for every import of perflab (or a submodule) in source."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute | ast.Name)
            and getattr(node.func, "attr", getattr(node.func, "id", "")) in IMPORT_CALLS
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            names = [node.args[0].value]
        else:
            continue
        found += [f"line {node.lineno}: {n}" for n in names if n.split(".")[0] == "perflab"]
    return found


def server_sources() -> list[Path]:
    return sorted(
        path
        for path in (REPO / "servers").rglob("*.py")
        if not SKIPPED_FOLDERS & set(path.relative_to(REPO / "servers").parts)
    )


def test_no_program_under_servers_imports_perflab():
    sources = server_sources()
    assert any(p.parts[-2:] == ("orders_client", "client.py") for p in sources)
    offenders = {
        str(path.relative_to(REPO)): hits
        for path in sources
        if (hits := perflab_imports(path.read_text(), str(path)))
    }
    assert offenders == {}


def test_the_scan_sees_every_way_of_importing_perflab():
    source = (
        "import os\n"
        "import perflab.host.proxy\n"
        "from perflab.contract.latency import LATENCY_PROFILES\n"
        "import importlib\n"
        "importlib.import_module('perflab.host.net')\n"
        "from . import perflab_like\n"
        "import perflabs\n"
    )
    assert perflab_imports(source) == [
        "line 2: perflab.host.proxy",
        "line 3: perflab.contract.latency",
        "line 5: perflab.host.net",
    ]
