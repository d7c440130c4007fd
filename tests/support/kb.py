"""Knowledge-base test homes: the offline model prepared once, a fresh data home per test
(sharing it through a link), and a home with a set of documents ingested with their
access — shared by the kb and security folders."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

import anyio
import pytest

from agent_search import SearchConfig
from agent_search.kb import Access, close_stores, ingest_paths, prepare_model_dir


def prepared_model_home(factory: pytest.TempPathFactory, name: str) -> Path:
    """A folder whose ``models/`` holds the offline model, built once per caller's scope."""
    home = factory.mktemp(name)
    prepare_model_dir(home, 256)
    return home


def linked_home(tmp_path: Path, model_home: Path,
                monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh data home (``$AGENT_SEARCH_HOME``) linking the prepared model; the kb
    stores are closed afterwards."""
    h = tmp_path / "home"
    h.mkdir()
    (h / "models").symlink_to(model_home / "models", target_is_directory=True)
    monkeypatch.setenv("AGENT_SEARCH_HOME", str(h))
    yield h
    close_stores()


def ingested_home(factory: pytest.TempPathFactory, name: str, collection: str,
                  docs: Mapping[str, tuple[str, Access]]) -> Iterator[Path]:
    """A data home whose ``collection`` holds ``docs`` (file name → text and access),
    ingested one file at a time with the entity graph."""
    base = prepared_model_home(factory, name)
    folder = base / "docs"
    folder.mkdir()
    config = SearchConfig(home=base)

    async def ingest() -> None:
        for file, (text, access) in docs.items():
            (folder / file).write_text(text, encoding="utf-8")
            await ingest_paths(config, [folder / file], collection, access=access, graph=True)

    anyio.run(ingest)
    yield base
    close_stores()
