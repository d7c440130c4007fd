"""The kb and the embedder along their seams: no import circle between their modules
(counting imports inside functions and under ``TYPE_CHECKING``, through the packages'
lazy faces), and no module importing another package's private modules (``_name``): a
package's ``_`` modules are its own, others import its face. Module size follows the
topic: there is no cap on lines."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import agent_search

ROOT = Path(agent_search.__file__).parent
CHECKED = ("agent_search.kb", "agent_search.embedding")


def _name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_name(p): p for p in ROOT.rglob("*.py")}


def _faces(modules: dict[str, Path]) -> dict[str, dict[str, str]]:
    """Each lazy package face's map of name → module it lives in."""
    faces: dict[str, dict[str, str]] = {}
    for name, path in modules.items():
        if path.name == "__init__.py":
            found = re.findall(r'"(\w+)": "([\w.]+)"', path.read_text(encoding="utf-8"))
            faces[name] = {n: m if "." in m else f"{name}.{m}" for n, m in found}
    return faces


def _imports(path: Path) -> set[str]:
    """The modules ``path`` imports by name, anywhere in it (``from a import b`` counts as
    ``a.b`` when ``b`` is a module, else as ``a``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.update(f"{node.module}\0{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


def _targets(path: Path, modules: dict[str, Path], faces: dict[str, dict[str, str]]
             ) -> set[str]:
    """The agent_search modules ``path`` loads at run time: a name taken from a lazy face
    counts as the module the face takes it from."""
    out: set[str] = set()
    for item in _imports(path):
        base, _, name = item.partition("\0")
        if f"{base}.{name}" in modules:
            out.add(f"{base}.{name}")
        elif name and name in faces.get(base, {}):
            out.add(faces[base][name])
        elif base in modules:
            out.add(base)
    return out


def private_imports(modules: dict[str, Path]) -> list[str]:
    """``importer -> module`` for each import of a private module of a package the
    importer is not in (``a._b`` is ``a``'s, ``a._b._c`` is ``a._b``'s)."""
    bad = []
    for me, path in sorted(modules.items()):
        for item in sorted(_imports(path)):
            base, _, name = item.partition("\0")
            target = f"{base}.{name}" if f"{base}.{name}" in modules else base
            if target not in modules:
                continue  # another project's (its privates are not ours to judge)
            parts = target.split(".")
            for i, part in enumerate(parts):
                owner = ".".join(parts[:i])
                if part.startswith("_") and i and not (me + ".").startswith(owner + "."):
                    bad.append(f"{me} -> {target}")
                    break
    return bad


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


def _ours(name: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in CHECKED)


def test_no_import_circle_in_kb_or_embedding() -> None:
    modules = _modules()
    faces = _faces(modules)
    graph = {m: {t for t in _targets(p, modules, faces) if _ours(t) and t != m}
             for m, p in modules.items() if _ours(m) and p.name != "__init__.py"}
    cycle = _cycle(graph)
    assert cycle is None, " -> ".join(cycle or [])


def test_the_checker_sees_a_circle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_kb_privates_stay_in_kb() -> None:
    """Nothing imports a private module of the kb, of one of its sub-packages (from a
    sibling) or of the embedding package from outside it."""
    bad = [b for b in private_imports(_modules()) if _ours(b.split(" -> ")[1])]
    assert bad == []


def test_the_checker_sees_a_private_import(tmp_path: Path) -> None:
    files = {"p.a._x": tmp_path / "a.py", "p.a._s._y": tmp_path / "y.py",
             "p.a._s": tmp_path / "s.py", "p.b": tmp_path / "b.py"}
    files["p.a._x"].write_text("from p.a._s import thing\n")  # a sub-package's face
    files["p.a._s._y"].write_text("from p.a import _x\n")  # its own package's private
    files["p.a._s"].write_text("import os._x\n")  # not ours
    files["p.b"].write_text("from p.a._x import y\nfrom p.a._s._y import z\n")
    assert private_imports(files) == ["p.b -> p.a._s._y", "p.b -> p.a._x"]
