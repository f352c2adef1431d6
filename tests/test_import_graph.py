"""No import circle in perflab: the graph of every `import perflab...` (module level or
inside a function) between its modules is acyclic, and the agent never reaches the runner."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import REPO

PACKAGE = REPO / "perflab"


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, known: set[str]) -> set[str]:
    """perflab modules path imports, anywhere in it; `from perflab.x import y` counts x.y
    when that is a module, else x."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{alias.name}" for alias in node.names] + [node.module]
        else:
            continue
        for name in names:
            if name in known:
                found.add(name)
    found.discard(module_name(path))
    return found


def graph() -> dict[str, set[str]]:
    paths = sorted(PACKAGE.rglob("*.py"))
    known = {module_name(p) for p in paths}
    return {module_name(p): imports_of(p, known) for p in paths}


def reachable(edges: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        for nxt in edges.get(todo.pop(), set()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def test_perflab_has_no_import_circle():
    edges = graph()
    # A package imports its own submodules (perflab/__init__ re-exporting) by design: only
    # circles between two different modules count.
    circles = sorted(
        f"{a} -> {b} -> {a}"
        for a, targets in edges.items()
        for b in targets
        if a in reachable(edges, b) and not b.startswith(a + ".") and not a.startswith(b + ".")
    )
    assert not circles, circles


def test_the_agent_depends_on_launch_never_on_the_runner():
    edges = graph()
    assert "perflab.launch" in reachable(edges, "perflab.agent")
    assert "perflab.runner" not in reachable(edges, "perflab.agent")
    assert "perflab.agent" not in reachable(edges, "perflab.runner")
    assert "perflab.agent_client" in edges["perflab.runner"]
