"""Fixtures of the db tests: Chinook and the sample shop on SQLite and on PostgreSQL.

``backend`` is parametrized over ``sqlite`` and ``postgresql``, so every test that uses
``chinook_url`` or ``shop_url`` runs on both. PostgreSQL is the session's throwaway
cluster (``postgres_server``, tests/support/postgres.py) with Chinook copied into it from
the SQLite file. Without PostgreSQL binaries those runs are skipped with the reason
printed — except when ``CI=true``, where they fail. The handlers ``chinook`` and ``shop``
are module-scoped async fixtures: the suite's ``anyio_backend`` (tests/conftest.py) is
module-scoped for them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_search.db.sample import create_sample_database_async
from tests.support.data import build_chinook
from tests.support.databases import BACKENDS, copy_demo_assistant, make_handler, run_in_thread
from tests.support.postgres import copy_sqlite_to, create_database

# -- SQLite copies ---------------------------------------------------------------------


@pytest.fixture(scope="session")
def chinook_sqlite_master(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Chinook built once per session from the script in tests/data/chinook."""
    return build_chinook(tmp_path_factory.mktemp("chinook") / "chinook.sqlite")


@pytest.fixture(scope="session")
def shop_sqlite_master(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("shop") / "shop.db"

    async def load() -> None:
        await create_sample_database_async(target)

    run_in_thread(load)
    return target


# -- PostgreSQL (the cluster: tests/support/postgres.py) -------------------------------


@pytest.fixture(scope="session")
def chinook_postgres(postgres_server: str, chinook_sqlite_master: Path) -> str:
    async def load() -> None:
        await create_database(postgres_server, "chinook")
        await copy_sqlite_to(chinook_sqlite_master, f"{postgres_server}/chinook")

    run_in_thread(load)
    return f"{postgres_server}/chinook"


@pytest.fixture(scope="session")
def shop_postgres(postgres_server: str) -> str:
    async def load() -> None:
        await create_database(postgres_server, "shop")
        await create_sample_database_async(f"{postgres_server}/shop")

    run_in_thread(load)
    return f"{postgres_server}/shop"


# -- parametrized URLs -----------------------------------------------------------------


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def chinook_url(backend: str, request: pytest.FixtureRequest) -> str:
    if backend == "sqlite":
        return f"sqlite:///{request.getfixturevalue('chinook_sqlite_master')}"
    return str(request.getfixturevalue("chinook_postgres"))


@pytest.fixture
def shop_url(backend: str, request: pytest.FixtureRequest) -> str:
    if backend == "sqlite":
        return f"sqlite:///{request.getfixturevalue('shop_sqlite_master')}"
    return str(request.getfixturevalue("shop_postgres"))


@pytest.fixture(scope="module", params=BACKENDS)
async def chinook(request: pytest.FixtureRequest,
                  tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A db handler on Chinook (reflected), shared by the tests of a module."""
    if request.param == "sqlite":
        url = f"sqlite:///{request.getfixturevalue('chinook_sqlite_master')}"
    else:
        url = str(request.getfixturevalue("chinook_postgres"))
    handler = make_handler(url, tmp_path_factory.mktemp("chinook-home"))
    yield handler
    await handler.aclose()


@pytest.fixture
def demo_assistant(tmp_path: Path) -> Path:
    return copy_demo_assistant(tmp_path)


@pytest.fixture(scope="module", params=BACKENDS)
async def shop(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A db handler on the sample shop with the demo assistant's models."""
    if request.param == "sqlite":
        url = f"sqlite:///{request.getfixturevalue('shop_sqlite_master')}"
    else:
        url = str(request.getfixturevalue("shop_postgres"))
    root = tmp_path_factory.mktemp("shop-home")
    handler = make_handler(url, root, assistant_dir=copy_demo_assistant(root))
    yield handler
    await handler.aclose()
