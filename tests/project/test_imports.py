"""app/ and engine/ have no import cycle, imports inside functions included (they are cycles too,
only deferred: app/i18n.py → app/window.py → … → app/i18n.py was one)."""
import ast
from tests import ROOT



def module_graph(packages=("app", "engine")) -> dict[str, set[str]]:
    """module → the project modules it imports anywhere in its body (relative imports resolved)."""
    files = {}
    for package in packages:
        for path in (ROOT / package).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            files[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph = {}
    for name, path in files.items():
        anchor = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(anchor[: len(anchor) - node.level + 1] + ([base] if base else []))
                submodules = [f"{base}.{alias.name}" for alias in node.names]
                # `from . import parallel` needs engine.core.parallel, not engine/__init__; `from engine import X` needs both
                targets = submodules + ([base] if not all(m in files for m in submodules) else [])
            else:
                continue
            for target in targets:
                while target and target not in files:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    found.add(target)
        graph[name] = found
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle as a path of modules (depth-first search), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node):
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)):
            return cycle
    return None


def test_the_graph_sees_function_level_and_relative_imports():
    graph = module_graph()
    assert "engine.models" in graph["app.controller"]  # a module-level import
    assert "app.pretrained" in graph["app.controller"]  # imported inside a method
    assert "engine.core.errors" in graph["engine.models"]  # relative, two dots


def test_the_detector_finds_a_cycle_through_a_function_level_import():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_app_and_engine_have_no_import_cycle():
    cycle = find_cycle(module_graph())
    assert cycle is None, " → ".join(cycle)
