"""The gateway's modules import one way (issue 15): API blueprints -> services -> store and
clients -> leaves, with metrics a leaf; no two modules import each other, directly or
round a circle. Read from the source, lazy imports inside functions included."""

from __future__ import annotations

import ast
from pathlib import Path

import services.gateway

ROOT = Path(services.gateway.__file__).parent


def _module(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = [p for p in rel.parts if p != "__init__"]
    return ".".join(["gateway", *parts])


def _imports(path: Path, name: str) -> set[str]:
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package.split(".")
            base = base[: len(base) - (node.level - 1)]
            target = ".".join([*base, node.module] if node.module else base)
            for alias in node.names:
                candidate = f"{target}.{alias.name}"
                out.add(
                    candidate
                    if (ROOT.parent / candidate.replace(".", "/")).with_suffix(".py").exists()
                    else target
                )
    return out


def graph() -> dict[str, set[str]]:
    modules = {_module(p): p for p in ROOT.rglob("*.py")}
    return {
        name: {i for i in _imports(path, name) if i in modules and i != name}
        for name, path in modules.items()
    }


def test_the_gateway_imports_in_one_direction():
    edges = graph()
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges[node]):
            if state.get(nxt) == 1:
                cycle = [*stack[stack.index(nxt) :], nxt]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node)
    assert edges["gateway.metrics"] <= {"gateway.keys"}, "metrics is a leaf: it reads key names only"
    assert edges["gateway.keys"] == set()
