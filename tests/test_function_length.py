"""No function in perflab/ is longer than MAX_LINES, from its `def` to its last line, except
the argparse setup named in ARGPARSE_SETUP: a longer one is several steps that want names."""

from __future__ import annotations

import ast
from textwrap import indent

from tests.conftest import REPO

PACKAGE = REPO / "perflab"
MAX_LINES = 60
# Declaring a command line is one long list of options, read top to bottom.
ARGPARSE_SETUP = {("perflab/cli.py", "parser")}


def long_functions(source: str, limit: int = MAX_LINES) -> dict[str, int]:
    """Name -> lines of every function (methods and nested ones too) over `limit` lines."""
    return {
        node.name: node.end_lineno - node.lineno + 1
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > limit
    }


def package_long_functions() -> dict[tuple[str, str], int]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(REPO).as_posix()
        for name, lines in long_functions(path.read_text()).items():
            found[(where, name)] = lines
    return found


def test_no_function_in_perflab_is_over_the_limit():
    allowed = ARGPARSE_SETUP
    over = {key: lines for key, lines in package_long_functions().items() if key not in allowed}
    assert not over, f"functions over {MAX_LINES} lines (split them into named steps): {over}"


def test_a_long_function_is_found_with_its_length_and_a_short_one_is_not():
    body = "".join(f"x{i} = {i}\n" for i in range(MAX_LINES - 1))
    fits = "def fits():\n" + indent(body, "    ")
    method = "class Holder:\n    def method(self):\n" + indent(body + "y = 1\n", " " * 8)
    nested = "def outer():\n    def inner():\n" + indent(body, " " * 8)
    assert long_functions(fits) == {}
    assert long_functions(method) == {"method": MAX_LINES + 1}
    assert long_functions(nested) == {"outer": MAX_LINES + 1}
