"""No import circle in perflab: the graph of every `import perflab...` (module level or
inside a function) between its modules is acyclic, the agent never reaches the runner, and
the three layers keep to their places: `perflab.contract` imports neither `perflab.host` nor
`perflab.analysis`, `perflab.host` never imports `perflab.analysis`, and a study's matrix
(imported by the host) stays at contract level."""

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
    assert "perflab.host.launch" in reachable(edges, "perflab.host.agent")
    assert "perflab.host.runner" not in reachable(edges, "perflab.host.agent")
    assert "perflab.host.agent" not in reachable(edges, "perflab.host.runner")
    assert "perflab.host.agent_client" in edges["perflab.host.runner"]


LAYER_RULES = {
    # prefix of an importing module -> prefixes it must never import
    "perflab.contract": ("perflab.host", "perflab.analysis", "perflab.studies", "perflab.cli"),
    "perflab.host": ("perflab.analysis", "perflab.cli"),
    "perflab.analysis": ("perflab.host", "perflab.cli"),
}


def layer_rule(module: str) -> tuple[str, ...]:
    if module.startswith("perflab.studies.") and module.endswith(".matrix"):
        return ("perflab.host", "perflab.analysis", "perflab.cli")
    for prefix, forbidden in LAYER_RULES.items():
        if module == prefix or module.startswith(prefix + "."):
            return forbidden
    return ()


def crossings(edges: dict[str, set[str]]) -> list[str]:
    return sorted(
        f"{module} -> {target}"
        for module, targets in edges.items()
        for target in reachable(edges, module) | targets
        if any(target == p or target.startswith(p + ".") for p in layer_rule(module))
    )


def test_layers_import_only_downwards():
    edges = graph()
    assert {"perflab.host.runner", "perflab.contract.cell", "perflab.analysis.frames"} <= set(edges)
    assert crossings(edges) == []


def test_the_layer_check_catches_a_crossing():
    # The same check on a graph with one bad arrow, direct or through a third module.
    edges = {
        "perflab.contract.cell": {"perflab.contract.params"},
        "perflab.contract.params": {"perflab.analysis.stats"},
        "perflab.host.runner": {"perflab.contract.cell"},
        "perflab.analysis.stats": set(),
    }
    assert crossings(edges) == [
        "perflab.contract.cell -> perflab.analysis.stats",
        "perflab.contract.params -> perflab.analysis.stats",
        "perflab.host.runner -> perflab.analysis.stats",
    ]
