"""What the user pages tell a user to type: the package's own name on PyPI."""

from __future__ import annotations

import re

from ..support.doc_examples import ROOT

_INSTALL = re.compile(r"pip\s+install\s+(?:-U\s+)?([A-Za-z0-9_.\-\[\]]+)")
OURS = "agent-searchkit"
OTHER = "agent-search"  # another project's package on PyPI


def test_no_page_tells_users_to_install_the_other_project() -> None:
    """``pip install agent-search`` installs another project; a page may only warn
    against it ("Do not `pip install agent-search`")."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    wrong = []
    for page in pages:
        text = page.read_text(encoding="utf-8")
        for m in _INSTALL.finditer(text):
            name = m.group(1).split("[")[0]
            if name == OTHER and "do not" not in text[max(0, m.start() - 12):m.start()].lower():
                wrong.append(f"{page.name}: {text[m.start():m.end()]}")
    assert not wrong, wrong
    models = (ROOT / "docs" / "models.md").read_text(encoding="utf-8")
    assert f"pip install\n{OURS}" in models or f"pip install {OURS}" in models
