"""The FastAPI application: :func:`create_app` builds it around one :class:`Service`.

OpenAPI is at ``/openapi.json``, interactive docs at ``/docs``, the chat page at ``/``.
Nothing is loaded from a CDN: the page's files are ours, and the Swagger UI files of
``/docs`` come from the ``fastapi-offline`` package (FastAPI's own ``/docs`` would load
them from a CDN, and show a blank page offline).
:func:`app_from_env` is the factory uvicorn workers import (``--workers N``): the serve
command passes its flags through ``AGENT_SEARCH_SERVE_*`` environment variables.
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import fastapi_offline
from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse
from fastapi.staticfiles import StaticFiles

from agent_search.server import _lifecycle as lifecycle
from agent_search.server._errors import install_error_handlers
from agent_search.server._kb_routes import kb_router
from agent_search.server._middleware import PAGE_CSP, Authenticate, BodyLimit, Screen
from agent_search.server._routes import BEARER_SCHEME, document_routes, router
from agent_search.server.service import Service, ServiceOptions

STATIC = Path(__file__).parent / "static"
DOCS_STATIC = Path(fastapi_offline.__file__).parent / "static"
DOCS_CSP = ("default-src 'none'; script-src 'self' 'unsafe-inline'; "
            "style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; "
            "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
"""Swagger UI starts itself with an inline script; it loads nothing from other hosts."""
SWITCH_INTERVAL_S = 0.001
"""The interpreter's thread switch interval in a process that only serves (see
:func:`create_app`)."""
ENV_CONFIG = "AGENT_SEARCH_SERVE_CONFIG"
ENV_ASSISTANTS = "AGENT_SEARCH_SERVE_ASSISTANTS"
ENV_WORKERS = "AGENT_SEARCH_SERVE_WORKERS"


class _App(FastAPI):
    """FastAPI with what its OpenAPI document cannot see added: the ``/v1/`` routes'
    bearer scheme (the key is checked by ASGI middleware, :class:`Authenticate`) and the
    bodies the routes parse themselves and the plain search route
    (:func:`document_routes`)."""

    def openapi(self) -> dict[str, Any]:
        if self.openapi_schema is None:
            schema = super().openapi()
            schema.setdefault("components", {}).setdefault(
                "securitySchemes", {})["HTTPBearer"] = BEARER_SCHEME
            document_routes(schema, self.state.service.searcher.registry)
        return super().openapi()


def create_app(service: Service, *, own_process: bool = False) -> FastAPI:
    """The app serving ``service``. The service is closed when the app shuts down.

    ``own_process``: the app is all this process serves (``agent-search serve``), so at
    start it may move what is loaded by then (models, schemas, routes: ~100k objects
    that live as long as the process) out of the garbage collector's sight
    (``gc.freeze``); full collections then walk only what requests create."""

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await service.records.ensure()
        await service.warm()
        if own_process:
            gc.collect()
            gc.freeze()
            # the event loop waits at most this long for the interpreter lock a worker
            # thread holds (an upload's ingest, a search's retrieval) each time it wakes:
            # Python's 5 ms, paid at every wake-up of a streamed answer, doubled a chat's
            # latency while another tenant's upload ran
            sys.setswitchinterval(SWITCH_INTERVAL_S)
        undo = lifecycle.watch_signals([service])
        try:
            async with anyio.create_task_group() as watchers:
                watchers.start_soon(service.metrics.watch_loop)  # /metrics: the loop's lag
                try:
                    yield
                finally:
                    watchers.cancel_scope.cancel()
        finally:
            undo()
            await service.aclose()

    app = _App(title="agent-search", version=_version(), lifespan=lifespan,
                  docs_url=None, redoc_url=None,
                  description="Search for AI agents over HTTP: OpenAI-compatible chat with "
                              "auto search and citations, a native event stream, a search "
                              "API and a chat page.")
    app.state.service = service
    install_error_handlers(app)
    app.include_router(router)
    app.include_router(kb_router)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.mount("/docs-static", StaticFiles(directory=DOCS_STATIC), name="docs-static")

    @app.get("/docs", include_in_schema=False)
    async def docs() -> HTMLResponse:
        page = get_swagger_ui_html(openapi_url="/openapi.json", title="agent-search API",
                                   swagger_js_url="/docs-static/swagger-ui-bundle.js",
                                   swagger_css_url="/docs-static/swagger-ui.css",
                                   swagger_favicon_url="/docs-static/favicon.png")
        page.headers["Content-Security-Policy"] = DOCS_CSP
        return page

    @app.get("/", include_in_schema=False)
    async def page() -> FileResponse:
        return FileResponse(STATIC / "index.html",
                            headers={"Content-Security-Policy": PAGE_CSP,
                                     "Cache-Control": "no-cache"})

    # each added one wraps the ones before: screen the request, identify the caller,
    # bound the body, then route it
    from agent_search.kb.settings import KBSettings
    from agent_search.server._connections import configure
    from agent_search.server._kb_files import DOCUMENTS_PATH, FILES_PATH, upload_limit

    configure(service.settings.header_timeout_seconds,
              service.settings.max_connections_per_client)  # the HTTP protocol's guards
    uploads = upload_limit(KBSettings.from_config(service.searcher.config))
    app.add_middleware(BodyLimit, max_bytes=service.settings.max_body_bytes,
                       upload_bytes=uploads, upload_path=FILES_PATH,
                       streamed_path=DOCUMENTS_PATH)
    app.add_middleware(Authenticate, keys=service.keys, limiter=service.limiter,
                       metrics=service.metrics)
    app.add_middleware(Screen, local_mode=not service.keys.enabled, upload_path=FILES_PATH)
    return app


def app_from_env() -> FastAPI:
    """The factory uvicorn workers call (see the module docstring)."""
    config = os.environ.get(ENV_CONFIG)
    assistants = os.environ.get(ENV_ASSISTANTS)
    workers = os.environ.get(ENV_WORKERS, "")
    options = ServiceOptions(config_dir=Path(config) if config else None,
                             assistants_dir=Path(assistants) if assistants else None,
                             workers=int(workers) if workers.isdigit() else 2)
    return create_app(Service.load(options), own_process=True)


def _version() -> str:
    # the package's own: the distribution is agent-searchkit, and "agent-search" on PyPI
    # is another project whose metadata may be installed too
    from agent_search import __version__

    return __version__
