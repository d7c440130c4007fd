"""``bench/`` is a package run as modules (``python -m bench.bench_kb``): no benchmark
edits ``sys.path`` to find its siblings or the package, and none imports from the tests
or runs one of their files (what both need lives in ``bench`` or ``agent_search``)."""

from __future__ import annotations

import ast
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench"


def _offences(source: str) -> list[str]:
    """The ``tests`` imports, paths to a file under ``tests/`` and ``sys.path`` uses in
    ``source``, by line."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            names = [node.module or ""]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            names = []
        found += [f"line {node.lineno}: imports {n}" for n in names
                  if n == "tests" or n.startswith("tests.")]
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                node.value.startswith(("tests/", "tests\\")) and node.value.endswith(".py"):
            found.append(f"line {node.lineno}: runs {node.value}")
        if isinstance(node, ast.Attribute) and node.attr == "path" and \
                isinstance(node.value, ast.Name) and node.value.id == "sys":
            found.append(f"line {node.lineno}: sys.path")
    return found


def test_offences_are_found() -> None:
    source = ("import sys\nfrom tests.support import kb\nsys.path.insert(0, '.')\nimport os\n"
              "run([sys.executable, str(ROOT / 'tests/support/llm_server.py')])\n")
    assert sorted(_offences(source)) == ["line 2: imports tests.support", "line 3: sys.path",
                                         "line 5: runs tests/support/llm_server.py"]


def test_benchmarks_neither_edit_sys_path_nor_import_tests() -> None:
    assert (BENCH / "__init__.py").is_file()
    offences = {path.name: problems for path in sorted(BENCH.glob("*.py"))
                if (problems := _offences(path.read_text(encoding="utf-8")))}
    assert offences == {}
