"""The layers run one way (docs/architecture.md), read from the code's own imports.

Every module under services/ and workers/ is parsed (not imported) and each import,
top-level or inside a function, resolved to a module path. A module may import its own
package, any layer below its own, and nothing beside or above it:

    gateway, workers, cli, envs      (the entry points; none imports another)
    platform, balance                (live play; balance science; neither imports the other)
    runtime                          (process helpers: ports, topology, task client)
    engines, models, dashboards      (rules; shared pydantic bits; the panel list)

Flask never appears below the gateway, Celery never below the workers and the runtime's
task client, and no module takes another module's private (`_`) name.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# package prefix -> (layer, group): a lower layer may not import a higher one, and two
# groups of one layer may not import each other.
LAYERS = {
    "services.engines": (0, "engines"),
    "services.models": (0, "models"),
    "services.dashboards": (0, "dashboards"),
    "services.runtime": (1, "runtime"),
    "services.platform": (2, "platform"),
    "services.balance": (2, "balance"),
    "services.gateway": (3, "gateway"),
    "services.cli": (3, "cli"),
    "services.envs": (3, "envs"),
    "workers": (3, "workers"),
}
WEB = ("flask", "werkzeug", "flask_limiter", "jinja2")
QUEUEING = ("celery", "kombu")
# Third-party packages a group must not import: the web tier above the gateway only, the
# task queue in the workers, the entry points and the runtime's light client only.
BANNED = {
    "engines": WEB + QUEUEING + ("redis",),
    "models": WEB + QUEUEING,
    "dashboards": WEB + QUEUEING,
    "runtime": WEB,
    "platform": WEB + QUEUEING,
    "balance": WEB + QUEUEING,
    "workers": WEB,
    "cli": WEB,
    "envs": WEB + QUEUEING,
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer_of(module: str) -> tuple[int, str] | None:
    for prefix, layer in LAYERS.items():
        if module == prefix or module.startswith(prefix + "."):
            return layer
    return None


def imports(path: Path) -> list[tuple[int, str, list[str]]]:
    """(line, module, names taken) for every import in the file, relative ones resolved."""
    tree = ast.parse(path.read_text(), filename=str(path))
    here = module_name(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.append((node.lineno, target, [alias.name for alias in node.names]))
    return found


def sources() -> list[Path]:
    """Every module but the bare `services` package (a namespace for the layers)."""
    found = (p for top in ("services", "workers") for p in (ROOT / top).rglob("*.py"))
    return sorted(p for p in found if p != ROOT / "services" / "__init__.py")


def test_every_source_has_a_layer() -> None:
    assert [str(p) for p in sources() if layer_of(module_name(p)) is None] == []


def violations() -> list[str]:
    out = []
    known = {module_name(p) for p in sources()}
    for path in sources():
        here = module_name(path)
        layer, group = layer_of(here)  # type: ignore[misc]
        where = path.relative_to(ROOT)
        for line, target, names in imports(path):
            top = target.split(".")[0]
            if top in BANNED.get(group, ()):
                out.append(f"{where}:{line}: the {group} layer imports {target}")
            theirs = layer_of(target)
            if theirs is not None:
                their_layer, their_group = theirs
                if their_layer > layer or (their_layer == layer and their_group != group):
                    out.append(f"{where}:{line}: {group} imports {their_group} ({target})")
            for name in names:
                if name.startswith("_") and not name.startswith("__") and f"{target}.{name}" not in known:
                    out.append(f"{where}:{line}: takes the private name {name} of {target}")
    return out


def test_imports_run_one_way() -> None:
    assert violations() == []


def test_the_checker_sees_a_violation(tmp_path: Path) -> None:
    """The walk itself: a planted upward import, Flask in the platform and a private name
    are each reported (so an empty list above means something)."""
    planted = ROOT / "services" / "platform" / "_planted_for_test.py"
    planted.write_text(
        "from services.gateway import create_app\nimport flask\nfrom services.engines.core.config import _x\n"
    )
    try:
        found = [v for v in violations() if "_planted_for_test" in v]
    finally:
        planted.unlink()
    assert len(found) == 3, found


def module_graph() -> dict[str, set[str]]:
    """Module -> the project modules it imports (a name taken from a package counts as
    its submodule when there is one)."""
    known = {module_name(p): p for p in sources()}
    edges: dict[str, set[str]] = {}
    for name, path in known.items():
        out = set()
        for _line, target, names in imports(path):
            for taken in names or [""]:
                candidate = f"{target}.{taken}" if taken else target
                out.add(candidate if candidate in known else target)
        edges[name] = {m for m in out if m in known and m != name}
    return edges


def test_no_circles_above_the_engines() -> None:
    """Live play, balance and the entry points import in one direction inside their own
    packages too: no two modules import each other, directly or round a circle, lazy
    imports inside functions included."""
    edges = {
        name: {m for m in targets if not m.startswith("services.engines")}
        for name, targets in module_graph().items()
        if not name.startswith("services.engines")
    }
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
    assert edges["services.platform.metrics"] <= {
        "services.platform.keys",
        "services.platform.store",
        "services.runtime.broker",
    }, "metrics only reads: key names and the store's counts"
    assert edges["services.platform.keys"] == set()
