"""The kb package along its seams: no import circle between its modules (counting imports
inside functions and under ``TYPE_CHECKING``), and no module over 500 lines."""

from __future__ import annotations

import ast
from pathlib import Path

import agent_search.kb

PACKAGE = "agent_search.kb"
FOLDER = Path(agent_search.kb.__file__).parent


def _imports(path: Path) -> set[str]:
    """The kb modules ``path`` imports, anywhere in it (the package root excluded)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            base = node.module
            if base == PACKAGE:
                found.update(f"{PACKAGE}.{a.name}" for a in node.names
                             if (FOLDER / f"{a.name}.py").exists())
            elif base.startswith(PACKAGE + "."):
                found.add(base)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith(PACKAGE + "."))
    return found


def _graph() -> dict[str, set[str]]:
    return {f"{PACKAGE}.{p.stem}": _imports(p) for p in FOLDER.glob("*.py")
            if p.stem != "__init__"}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt):], nxt]
            if nxt in graph and nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start)):
            return found
    return None


def test_no_import_circle_in_kb() -> None:
    cycle = _cycle(_graph())
    assert cycle is None, " -> ".join(cycle or [])


def test_the_checker_sees_a_circle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_no_kb_module_over_500_lines() -> None:
    long = {p.name: n for p in FOLDER.glob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 500}
    assert long == {}
