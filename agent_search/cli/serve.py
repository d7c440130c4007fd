"""``agent-search serve`` — the HTTP service on uvicorn (see ``agent_search.server``).

Refuses to start, with one line saying why, when the set-up would be unsafe or broken:
API keys are missing and the host is not loopback; ``--workers N > 1`` with the embedded
knowledge base (a single-process store: use a Qdrant server, ``kb.url``).
"""

from __future__ import annotations

import errno
import ipaddress
import os
import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from agent_search._locations import find_assistants_dir
from agent_search.cli.app import app, fail
from agent_search.cli.search import resolve_config_dir
from agent_search.errors import AgentSearchError

if TYPE_CHECKING:
    from agent_search.server.settings import ServerSettings

_SHUTDOWN_MARGIN = 5.0
"""Seconds uvicorn waits for connections beyond the drain's grace before cutting them."""


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _assistants_dir(assistants: Path | None, config_dir: Path | None) -> Path | None:
    if assistants is not None:
        if not assistants.is_dir():
            raise ValueError(f"--assistants {assistants}: not a folder")
        return assistants
    return find_assistants_dir(config_dir)


def _check_free(host: str, port: int) -> None:
    """Exit 2 with one line when ``host:port`` cannot be bound (in use, or not an address
    of this machine), instead of uvicorn's multi-line error after start-up. Bound the way
    uvicorn binds (``SO_REUSEADDR``), then released at once."""
    if port == 0:
        return
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        fail(f"--host {host}: {exc.strerror or exc}")
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                fail(f"--port {port}: {host}:{port} is already in use")
            fail(f"--host {host} --port {port}: cannot bind: {exc.strerror or exc}")


def uvicorn_options(settings: ServerSettings) -> dict[str, float | str]:
    """What ``server`` in agent.yml sets of uvicorn's behaviour: the shutdown grace, and
    how long an idle keep-alive connection stays open (``http_keep_alive_seconds``, above
    common clients' pool timeouts, so a client never reuses a connection the server is
    closing); and the HTTP protocol, uvicorn's httptools one with a deadline for a
    request's head and a bound per client address
    (:mod:`agent_search.server._connections`, whose limits the app sets from
    ``settings`` in each worker)."""
    from agent_search.server._connections import PROTOCOL

    return {"timeout_graceful_shutdown": settings.grace_seconds + _SHUTDOWN_MARGIN,
            "timeout_keep_alive": settings.http_keep_alive_seconds, "http": PROTOCOL}


@app.command()
def serve(
    host: Annotated[str, typer.Option("--host", help="Address to bind")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port")] = 8000,
    config: Annotated[Path | None, typer.Option("--config", help="Config folder")] = None,
    assistants: Annotated[Path | None, typer.Option(
        "--assistants", help="Folder of assistants (one sub-folder each)")] = None,
    workers: Annotated[int, typer.Option("--workers", min=1, max=64,
                                         help="Worker processes")] = 1,
) -> None:
    """Serve chat completions, the event stream, search, records, metrics and the chat page."""
    import uvicorn

    from agent_search._builtins import check_builtin_sections
    from agent_search.loader import load_config
    from agent_search.server.app import ENV_ASSISTANTS, ENV_CONFIG, ENV_WORKERS, create_app
    from agent_search.server.service import Service, ServiceOptions
    from agent_search.server.settings import ServerSettings

    try:
        cdir = resolve_config_dir(config)
        adir = _assistants_dir(assistants, cdir)
        settings = ServerSettings.load(cdir)
        keyed = bool(settings.api_keys)
        if keyed:
            from agent_search.server import KeyRing

            KeyRing(settings)  # env keys must be set now, not at the first request
        search_config = load_config(cdir, assistants_dir=adir)
        check_builtin_sections(search_config)
    except (ValueError, AgentSearchError) as exc:
        fail(str(exc))
    if not keyed and not is_loopback(host):
        fail(f"--host {host}: no API keys are configured (server.api_keys in "
             "config/agent.yml), so the server only binds to loopback (127.0.0.1)")
    if workers > 1 and not search_config.kb.url:
        fail(f"--workers {workers}: the knowledge base is embedded (no kb.url), and an "
             "embedded store can be opened by one process only; use --workers 1, or a "
             "Qdrant server (kb.url)")
    _check_free(host, port)
    from agent_search.server._connections import raise_open_file_limit

    raise_open_file_limit()  # before the workers start: they inherit it
    where = f"http://{host if ':' not in host else f'[{host}]'}:{port}"

    def banner() -> None:  # after the configuration was found good: an error stays one line
        if not keyed:
            print(f"agent-search: no API keys configured: serving on loopback only, {where}",
                  file=sys.stderr)
        print(f"agent-search: chat page {where}/ · API docs {where}/docs", file=sys.stderr)

    common = dict(host=host, port=port, log_level="info", proxy_headers=False,
                  **uvicorn_options(settings))
    if workers > 1:
        try:  # the workers load the assistants: check their files here, once, first
            _check_assistants(cdir, adir)
        except (ValueError, AgentSearchError) as exc:
            fail(str(exc))
        banner()
        os.environ[ENV_CONFIG] = str(cdir.resolve()) if cdir else ""
        os.environ[ENV_ASSISTANTS] = str(adir.resolve()) if adir else ""
        os.environ[ENV_WORKERS] = str(workers)  # the rate limit is shared across them
        uvicorn.run("agent_search.server.app:app_from_env", factory=True, workers=workers,
                    **common)  # type: ignore[arg-type]
        return
    try:
        service = Service.load(ServiceOptions(config_dir=cdir, assistants_dir=adir))
    except (ValueError, AgentSearchError) as exc:
        fail(str(exc))
    banner()
    uvicorn.run(create_app(service, own_process=True), **common)  # type: ignore[arg-type]


def _check_assistants(config_dir: Path | None, assistants_dir: Path | None) -> None:
    """Validate every assistant's files as loading it would (package, models, uses,
    connector), without building its searcher: for ``--workers N``, whose worker
    processes load the assistants themselves."""
    from agent_search._builtins import check_builtin_sections
    from agent_search.agent.package import load_package
    from agent_search.agent.settings import AgentSettings
    from agent_search.db.models import load_definitions
    from agent_search.loader import load_config
    from agent_search.server.service import find_assistants

    settings = AgentSettings.load(config_dir)
    for path in find_assistants(assistants_dir):
        settings.check_connectors(load_package(path).connector, str(path / "package.yao"))
        check_builtin_sections(load_config(config_dir, assistant_dir=path))
        load_definitions(config_dir, path)
