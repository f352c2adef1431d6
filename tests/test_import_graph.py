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
    "perflab.analysis": ("perflab.host", "perflab.studies", "perflab.cli"),
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


# Modules whose dynamic imports cross a floor today, each with the change that removes it.
# An entry that no longer crosses fails the test below: delete it then.
KNOWN_DYNAMIC_CROSSINGS: dict[str, str] = {
    # module -> the issue that removes its upward import by name; empty: there is none.
}
# Calls that import a module named by a string at run time.
DYNAMIC_IMPORTERS = {("importlib", "import_module"), (None, "import_module"), (None, "__import__")}


def literal_prefix(node: ast.AST, assigned: dict[str, ast.AST]) -> str | None:
    """The module a dynamic import names, as far as the source spells it: a string, the
    constant start of an f-string, or a name assigned one of those in the module; None
    when the source does not say (a crossing cannot be ruled out)."""
    if isinstance(node, ast.Name) and node.id in assigned:
        node = assigned[node.id]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr) and node.values:
        first = node.values[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            return first.value
    return None


def dynamic_imports(source: str) -> list[str | None]:
    """What each importlib.import_module / __import__ call in `source` imports (see
    literal_prefix)."""
    tree = ast.parse(source)
    assigned = {
        target.id: node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            key = (func.value.id, func.attr)
        elif isinstance(func, ast.Name):
            key = (None, func.id)
        else:
            continue
        if key in DYNAMIC_IMPORTERS:
            found.append(literal_prefix(node.args[0], assigned))
    return found


def dynamic_crossings(module: str, source: str) -> list[str]:
    """The dynamic imports of `module` that may reach a floor its layer must not import."""
    forbidden = layer_rule(module)
    if not forbidden:
        return []
    bad = []
    for target in dynamic_imports(source):
        if target is None:
            bad.append(f"{module} -> a module named at run time")
        elif not target.startswith("perflab"):
            continue  # a third-party module (e.g. a plugin of a library)
        elif any(target.startswith(p) or p.startswith(target) for p in forbidden):
            bad.append(f"{module} -> {target}...")
    return bad


def test_no_dynamic_import_crosses_a_floor():
    found = {
        module_name(path): dynamic_crossings(module_name(path), path.read_text())
        for path in sorted(PACKAGE.rglob("*.py"))
    }
    crossing = {module: bad for module, bad in found.items() if bad}
    unknown = {m: b for m, b in crossing.items() if m not in KNOWN_DYNAMIC_CROSSINGS}
    assert unknown == {}
    stale = [m for m in KNOWN_DYNAMIC_CROSSINGS if m not in crossing]
    assert stale == [], f"no longer crossing: delete them from KNOWN_DYNAMIC_CROSSINGS: {stale}"


def test_a_planted_dynamic_upward_import_fails():
    planted = """
import importlib

def hook(study):
    return importlib.import_module(f"perflab.studies.{study}.analysis")
"""
    assert dynamic_crossings("perflab.analysis.verdicts", planted) == [
        "perflab.analysis.verdicts -> perflab.studies...."
    ]
    by_name = "from importlib import import_module\nname = 'perflab.cli'\nimport_module(name)\n"
    assert dynamic_crossings("perflab.contract.cell", by_name) == [
        "perflab.contract.cell -> perflab.cli..."
    ]
    unread = "def f(x):\n    return __import__(x.name)\n"
    assert dynamic_crossings("perflab.host.runner", unread) == [
        "perflab.host.runner -> a module named at run time"
    ]
    # The CLI, on the top floor, may name a study at run time.
    assert dynamic_crossings("perflab.cli", planted) == []
    # The same import, downward, passes.
    down = "import importlib\nimportlib.import_module('perflab.contract.cell')\n"
    assert dynamic_crossings("perflab.analysis.verdicts", down) == []
