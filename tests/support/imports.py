"""The package's import graph read from its source: which ``agent_search`` modules each
module imports when it runs — at import or later, an import inside a function counts;
``if TYPE_CHECKING:`` blocks do not run and do not count. Used by the import-circle and
the layering tests."""

from __future__ import annotations

import ast
from pathlib import Path

import agent_search

PACKAGE = Path(agent_search.__file__).parent


def package_modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def module_imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package modules ``name`` imports when it runs (at import or later)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    pending: list[ast.AST] = [ast.parse(path.read_text(encoding="utf-8"))]
    while pending:
        node = pending.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking(child):
                pending.extend(child.orelse)
                continue
            pending.append(child)
            targets: list[str] = []
            if isinstance(child, ast.Import):
                targets = [alias.name for alias in child.names]
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    kept = package.split(".")[: len(package.split(".")) - child.level + 1]
                    base = ".".join([*kept, base] if base else kept)
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                           for a in child.names]
            out.update(t for t in targets if t in modules and t != name)
    return out


def import_graph() -> dict[str, set[str]]:
    """Every package module → the package modules it imports (see module)."""
    modules = package_modules()
    return {name: module_imports(name, path, modules) for name, path in modules.items()}


def reached(graph: dict[str, set[str]], start: str) -> dict[str, list[str]]:
    """Every module ``start`` reaches through ``graph`` → one import path to it."""
    paths = {start: [start]}
    pending = [start]
    while pending:
        node = pending.pop()
        for target in sorted(graph.get(node, ())):
            if target not in paths:
                paths[target] = [*paths[node], target]
                pending.append(target)
    return paths
