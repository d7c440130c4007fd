"""Fixtures of the agent runtime tests: assistants written to tmp folders, small search
handlers of our own (handlers are pluggable, so these are real handlers, not mocks), and
a real OpenAI-compatible SSE server on 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from agent_search.agent import Assistant

from ..support.agents import AssistantFactory
from ..support.llm_server import ThreadedChatServer

HERE = Path(__file__).parent

BACKENDS = ["asyncio", "trio"]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Every async agent test runs on asyncio and on trio: the runtime is anyio only. The
    suite's ``anyio_backend`` (tests/conftest.py) takes the backend as its parameter; a
    test that chooses its own (``parametrize("anyio_backend", ...)``) or is marked
    ``asyncio_only`` (the db driver is asyncio's) keeps asyncio alone."""
    if "anyio_backend" not in metafunc.fixturenames:
        return
    if metafunc.definition.get_closest_marker("asyncio_only") is not None:
        return
    if any("anyio_backend" in _argnames(m.args[0])
           for m in metafunc.definition.iter_markers("parametrize")):
        return
    metafunc.parametrize("anyio_backend", BACKENDS, indirect=True, scope="function")


def _argnames(names: str | Sequence[str]) -> list[str]:
    return [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    h = tmp_path / "home"
    monkeypatch.setenv("AGENT_SEARCH_HOME", str(h))
    return h


@pytest.fixture
def make_assistant(tmp_path: Path, home: Path) -> AssistantFactory:
    """Write ``assistants/<id>/package.yao`` (+ hooks.py) and ``config/agent.yml`` under
    tmp_path and load it without builtin handlers; register test handlers yourself."""

    def make(package: dict[str, Any] | str | None = None, *, hooks: str | None = None,
             agent_yml: dict[str, Any] | None = None, search_yao: dict[str, Any] | None = None,
             assistant_id: str = "test", handlers: Sequence[Any] = ()) -> Assistant:
        root = tmp_path / "project"
        adir = root / "assistants" / assistant_id
        adir.mkdir(parents=True, exist_ok=True)
        cdir = root / "config"
        cdir.mkdir(parents=True, exist_ok=True)
        text = package if isinstance(package, str) else json.dumps(package or {"name": "t"})
        (adir / "package.yao").write_text(text)
        if hooks is not None:
            (adir / "hooks.py").write_text(hooks)
        if agent_yml is not None:
            (cdir / "agent.yml").write_text(yaml.safe_dump(agent_yml))
        if search_yao is not None:
            (cdir / "search.yao").write_text(json.dumps(search_yao))
        assistant = Assistant.load(adir, config_dir=cdir, builtin_handlers=False)
        for h in handlers:
            assistant.searcher.registry.register(h)
        return assistant

    return make


@pytest.fixture
def llm_server() -> Iterator[ThreadedChatServer]:
    server = ThreadedChatServer().start()
    yield server
    server.stop()




@pytest.fixture
def rerank_server() -> Iterator[Any]:
    from ..support.rerank_server import RerankServer

    server = RerankServer().start()
    yield server
    server.stop()
