"""One project, one uvicorn server and one local OpenAI-compatible LLM per test module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agent_search.server import Service, ServiceOptions, create_app
from tests.support.http_service import ThreadedServer, WatchedHandler, register, write_project
from tests.support.llm_server import ThreadedChatServer
from tests.support.service_api import Running

FAILING_HOOK = "async def create(ctx, messages, options):\n    raise RuntimeError('hook broke')\n"

ASSISTANTS = {
    "offline": {"name": "Offline", "description": "answers offline"},
    "cite": {"name": "Cite", "connector": "cite"},
    "tools": {"name": "Tools", "connector": "tools", "tools": ["search"]},
    "stall": {"name": "Stall", "connector": "stall"},
    "broken": {"name": "Broken"},
}


@pytest.fixture(scope="module")
def llm() -> Iterator[ThreadedChatServer]:
    server = ThreadedChatServer().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory, llm: ThreadedChatServer
            ) -> Iterator[Running]:
    root = tmp_path_factory.mktemp("project")
    cdir, adir = write_project(root, llm_url=llm.base_url, assistants=ASSISTANTS,
                               hooks={"broken": FAILING_HOOK})
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AGENT_SEARCH_HOME", str(root / "home"))
        service = Service.load(ServiceOptions(config_dir=cdir, assistants_dir=adir,
                                              builtin_handlers=False))
    handler = WatchedHandler()
    register(handler, [service.searcher,
                       *(a.searcher for a in service.assistants.values())])
    server = ThreadedServer(create_app(service)).start()
    try:
        yield Running(server.url, service, handler, llm)
    finally:
        server.stop()
