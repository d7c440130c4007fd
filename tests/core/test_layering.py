"""The layers, as rules of what a module never reaches: the core (the searcher, the
registry, the configuration's schemas, the context, the rerankers, and the libraries the
handlers share: embedding, query, grounding) never reaches the agent, the server, the
CLI, the MCP server, the on-disk loader or the builtin handlers; the handlers never reach
the interfaces. "Reaches" follows imports through every module on the way, an import
inside a function included: a lazy import is a dependency that only moved.
``if TYPE_CHECKING:`` blocks do not run and do not count.

The package's face (``agent_search/__init__.py``) and :mod:`agent_search.loader` sit above
the core and may import anything; the face hands the loader to ``Searcher.from_config``
(:mod:`agent_search._assembly`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.imports import import_graph, module_imports, reached

ABOVE_CORE = {"agent_search", "agent_search.__main__", "agent_search.loader",
              "agent_search._builtins", "agent_search.demo", "agent_search.testing"}
"""Top-level modules that assemble the pieces; every other top-level module is core."""

CORE_PACKAGES = ("rerank", "embedding", "query", "grounding", "language")
"""Sub-packages that belong to the core (libraries every handler may use)."""

INTERFACES = ("agent", "server", "cli", "mcp.server")
HANDLERS = ("web", "kb", "db")
COMMANDS = {"agent_search.kb.calibrate"}
"""Commands kept beside their handler (``python -m agent_search.kb.calibrate``): they read
a project's files through the loader like any interface, so the handlers' rule skips them."""

RULES: list[tuple[str, tuple[str, ...]]] = [
    ("core", (*INTERFACES, *HANDLERS, "loader", "_builtins")),
    ("handlers", (*INTERFACES, "loader", "_builtins")),
]
"""(which modules, what they never reach), names under ``agent_search.``."""


def _within(module: str, names: tuple[str, ...]) -> bool:
    return any(module == f"agent_search.{n}" or module.startswith(f"agent_search.{n}.")
               for n in names)


def _is_core(module: str, graph: dict[str, set[str]]) -> bool:
    if module in ABOVE_CORE:
        return False
    parts = module.split(".")
    is_package = any(other.startswith(module + ".") for other in graph)
    return (len(parts) == 2 and not is_package) or _within(module, CORE_PACKAGES)


def _members(group: str, graph: dict[str, set[str]]) -> list[str]:
    if group == "core":
        return sorted(m for m in graph if _is_core(m, graph))
    return sorted(m for m in graph if _within(m, HANDLERS) and m not in COMMANDS)


def _breaks(group: str, never: tuple[str, ...], graph: dict[str, set[str]]) -> list[str]:
    out = []
    for module in _members(group, graph):
        for target, path in reached(graph, module).items():
            if _within(target, never):
                out.append(" -> ".join(path))
    return out


def test_the_checker_counts_imports_inside_functions(tmp_path: Path) -> None:
    source = tmp_path / "probe.py"
    source.write_text("from typing import TYPE_CHECKING\n"
                      "if TYPE_CHECKING:\n    from agent_search.server import app\n"
                      "def later():\n    from agent_search.agent import settings\n")
    modules = {"agent_search.agent.settings": source, "agent_search.server.app": source,
               "agent_search.probe": source}
    assert module_imports("agent_search.probe", source, modules) == {
        "agent_search.agent.settings"}


def test_the_checker_follows_paths() -> None:
    graph = {"agent_search.config": {"agent_search._x"},
             "agent_search._x": {"agent_search.agent.settings"},
             "agent_search.agent.settings": set()}
    assert _breaks("core", RULES[0][1], graph) == [
        "agent_search._x -> agent_search.agent.settings",
        "agent_search.config -> agent_search._x -> agent_search.agent.settings"]


def test_the_core_is_the_core() -> None:
    """The groups the rules speak of are the modules they mean (a renamed module or a
    new package cannot drop out of the rules unnoticed)."""
    core = _members("core", import_graph())
    for module in ("agent_search.config", "agent_search.searcher", "agent_search.registry",
                   "agent_search.context", "agent_search.query.nl._reading._meaning",
                   "agent_search.embedding._factory", "agent_search.rerank._resolve"):
        assert module in core
    assert not [m for m in core if _within(m, (*INTERFACES, *HANDLERS, "textsearch"))]


@pytest.mark.parametrize(("group", "never"), RULES, ids=[group for group, _ in RULES])
def test_layers(group: str, never: tuple[str, ...]) -> None:
    assert _breaks(group, never, import_graph()) == []
