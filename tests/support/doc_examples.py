"""The fenced examples of README.md and docs/*.md, as the test runs them.

A block is run when its language is a shell (``sh``, ``bash``, ``shell``) or Python
(``python``, ``py``). A block of any language whose first line is ``# file: PATH`` or
``// file: PATH`` is a file of the example project: it is written there, before the
page's runnable blocks run. An HTML comment right before a block (invisible on GitHub
and in the site) says how to run it:

* ``<!-- example: skip REASON -->`` — not run; the skip shows REASON (only for what
  needs an API key, the network, or is the test run itself);
* ``<!-- example: slow -->`` — marked ``slow`` (run by ``make test-slow``);
* ``<!-- example: exit N -->`` — each command of the block must exit with N;
* ``<!-- example: server -->`` — runs while ``agent-search serve`` serves the example
  project; ``127.0.0.1:8000`` in the block is replaced by its real address.

Several words may be combined: ``<!-- example: slow, exit 1 -->``; ``skip`` comes last
(its reason runs to the end of the comment).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

SHELL = frozenset({"sh", "bash", "shell"})
PYTHON = frozenset({"python", "py"})

_FENCE = re.compile(r"^(?P<indent> *)(?P<fence>```+|~~~+)\s*(?P<lang>[\w+-]*)[^\n]*$")
_DIRECTIVE = re.compile(r"^\s*<!--\s*example:\s*(?P<words>.*?)\s*-->\s*$")
_FILE = re.compile(r"^\s*(?:#|//)\s*file:\s*(?P<path>\S+)\s*$")


@dataclass
class Block:
    page: Path
    line: int  # 1-based line of the opening fence
    lang: str
    code: str
    directives: dict[str, str] = field(default_factory=dict)

    @property
    def file(self) -> str | None:
        """The example-project path this block is the content of, if it is a file."""
        first = self.code.split("\n", 1)[0]
        found = _FILE.match(first)
        return found["path"] if found else None

    @property
    def runnable(self) -> bool:
        return self.file is None and self.lang in SHELL | PYTHON

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def _directives(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    head, skip, reason = text.partition("skip ")  # a reason runs to the end, commas too
    if skip:
        out["skip"] = reason.strip()
        text = head
    for word in (w.strip() for w in text.split(",")):
        name, _, value = word.partition(" ")
        if name:
            out[name] = value.strip()
    return out


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of ``page`` in order, with their directives."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        fence, indent = opening["fence"], len(opening["indent"])
        body: list[str] = []
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence):
            body.append(lines[j][indent:] if lines[j][:indent].isspace() else lines[j])
            j += 1
        k = i - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        directive = _DIRECTIVE.match(lines[k]) if k >= 0 else None
        found.append(Block(page, i + 1, opening["lang"].lower(), "\n".join(body) + "\n",
                           _directives(directive["words"]) if directive else {}))
        i = j + 1
    return found


def all_blocks() -> list[Block]:
    return [b for page in PAGES for b in blocks(page)]


def commands(code: str) -> list[str]:
    """The commands of a shell block: backslash continuations joined, blank and comment
    lines dropped."""
    out: list[str] = []
    pending = ""
    for raw in code.splitlines():
        line = pending + raw
        if line.rstrip().endswith("\\"):
            pending = line.rstrip()[:-1] + " "
            continue
        pending = ""
        if line.strip() and not line.lstrip().startswith("#"):
            out.append(line.strip())
    return out
