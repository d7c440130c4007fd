"""User pages say what a user does, and the current figure: no issue numbers and no
paths of the maintainers' machines. A user reads the README and the pages of the site's
navigation; neither the issue tracker nor the folders beside a maintainer's checkout
(``../shared``, ``/work/``, ``/tmp/``) exist for them. Engineering notes, which may cite
both, live in ``docs/design/``, outside the navigation; the benchmark log in
``bench/LOG.md``; history in ``CHANGELOG.md``."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import yaml

from ..support.doc_examples import ROOT

DOCS = ROOT / "docs"

# "issue 21", "issues 24 and 26", "Issue #35", "the issue-25 figures", "PR 7", "#48"
# (not "&#123;" nor "page#48")
_ISSUE = re.compile(r"\b(?:issues?|PRs?|pull request)[\s-]+#?\d+|(?<![\w&/#])#\d+\b",
                    re.IGNORECASE)
# the maintainers' workplace: the data beside the checkout, its root, scratch folders
_PRIVATE = re.compile(r"\.\./shared\b|(?<![\w.~-])/work/|(?<![\w.~-])/tmp\b")


class _Loader(yaml.SafeLoader):
    """mkdocs.yml may hold ``!!python/name`` and ``!ENV`` tags; the nav needs none."""


_Loader.add_multi_constructor("", lambda loader, suffix, node: None)
_Loader.add_multi_constructor("tag:yaml.org,2002:python/",
                              lambda loader, suffix, node: None)


def _nav_files(entry: object) -> Iterator[str]:
    """The page files of mkdocs.yml's ``nav``, at any depth (links to URLs left out)."""
    if isinstance(entry, str):
        if not re.match(r"[a-z]+://", entry):
            yield entry
    elif isinstance(entry, list):
        for item in entry:
            yield from _nav_files(item)
    elif isinstance(entry, dict):
        for value in entry.values():
            yield from _nav_files(value)


def user_pages() -> list[Path]:
    """README.md and every page of the site's navigation."""
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_Loader)
    pages = [DOCS / name for name in _nav_files(config["nav"])]
    return [ROOT / "README.md", *pages]


def _hits(pattern: re.Pattern[str]) -> list[str]:
    found = []
    for page in user_pages():
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            found += [f"{page.relative_to(ROOT)}:{number}: {m.group(0)!r} in {line.strip()[:90]}"
                      for m in pattern.finditer(line)]
    return found


def test_the_user_pages_are_the_readme_and_the_navigation() -> None:
    pages = user_pages()
    assert all(page.is_file() for page in pages), [p for p in pages if not p.is_file()]
    names = {page.relative_to(ROOT).as_posix() for page in pages}
    assert {"README.md", "docs/index.md", "docs/knowledge-base.md",
            "docs/benchmarks.md"} <= names
    # engineering notes are not user pages: they stay out of the navigation
    assert not [name for name in names if name.startswith("docs/design/")]


def test_user_pages_name_no_issue_numbers() -> None:
    hits = _hits(_ISSUE)
    assert not hits, "\n".join(hits)


def test_user_pages_name_no_private_paths() -> None:
    hits = _hits(_PRIVATE)
    assert not hits, "\n".join(hits)


def test_the_patterns_catch_what_they_are_for() -> None:
    """The two patterns are the test: each catches its cases and lets ordinary text be."""
    for text in ("(issue 35)", "Issue #21", "issues 24 and 26", "see #48.", "PR 7",
                 "the issue-25 figures"):
        assert _ISSUE.search(text), text
    for text in ("&#1234;", "page.html#48", "`#id`", "an issue of size", "#### Heading"):
        assert not _ISSUE.search(text), text
    for text in ("../shared/data/beir-scifact", "/work/main", "`/tmp` folders", "/tmp/x"):
        assert _PRIVATE.search(text), text
    for text in ("shared cores", "$AGENT_SEARCH_HOME/work/x", "./tmp/x", "~/work/x"):
        assert not _PRIVATE.search(text), text
