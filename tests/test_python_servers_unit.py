"""The Python servers' folders keep the contract without starting anything: every impl.toml
option is a flag the server's argparse accepts, and --host/--port are required."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from perflab.host.impls import read_impl
from tests.conftest import REPO

SERVERS = REPO / "servers"
# The hello servers; other studies' Python folders (clients, I/O servers) test their own.
PYTHON_IMPLS = sorted(
    p.parent
    for p in (SERVERS / "python").glob("*/impl.toml")
    if read_impl(p.parent, SERVERS).serves == ("hello",)
)


def argparse_flags(server: Path) -> dict[str, bool]:
    """Each --flag the script declares, mapped to whether it is required."""
    flags = {}
    for node in ast.walk(ast.parse(server.read_text())):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "add_argument"
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            required = any(
                k.arg == "required" and isinstance(k.value, ast.Constant) and k.value.value is True
                for k in node.keywords
            )
            flags[node.args[0].value] = required
    return flags


def test_the_hello_python_servers_are_all_there():
    assert {p.name for p in PYTHON_IMPLS} >= {"grpcio_sync", "grpc_aio", "grpclib"}


@pytest.mark.parametrize("folder", PYTHON_IMPLS, ids=lambda p: p.name)
def test_impl_options_are_server_flags(folder: Path):
    impl = read_impl(folder, SERVERS)
    assert impl.name == folder.name
    if impl.build == "seed000_stack":
        # The same server.py on seed 000's grpcio, run by that stack's venv.
        assert impl.command[0] == "{home}/venv-seed000/bin/python"
        server = Path(impl.command[1].replace("{src}", str(REPO)))
        assert "--gen-path" in impl.command
    else:
        assert impl.build == "codegen_python"
        assert list(impl.command[:2]) == ["{python}", "{here}/server.py"]
        server = folder / "server.py"
    flags = argparse_flags(server)
    assert flags.get("--host") is True and flags.get("--port") is True
    for key in impl.options:
        assert f"--{key}" in flags, f"{folder.name}: option {key} has no --{key} flag"
