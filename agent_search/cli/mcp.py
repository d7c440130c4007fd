"""``agent-search mcp`` — the searcher as an MCP server over stdio (the server itself is
:mod:`agent_search.mcp.server`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import anyio
import typer

from agent_search.cli.app import app, check_identity
from agent_search.cli.search import build_searcher


@app.command("mcp")
def mcp_command(
    config: Annotated[Path | None, typer.Option("--config", help="Configuration folder")] = None,
    assistant: Annotated[
        str | None, typer.Option("--assistant", help="Assistant id or folder")
    ] = None,
    user: Annotated[str | None, typer.Option(
        "--user", help="Who the tools search for (user id for permission filters)")] = None,
    team: Annotated[str | None, typer.Option(
        "--team", help="The caller's team id (permission filters)")] = None,
    as_json: Annotated[bool, typer.Option(
        "--json", help="Accepted for uniformity: MCP speaks JSON-RPC on stdout anyway")] = False,
) -> None:
    """Serve web_search, kb_search, db_search and search over MCP (stdio)."""
    from agent_search.mcp.server import create_server

    user, team = check_identity(user, "--user"), check_identity(team, "--team")
    searcher = build_searcher(config, assistant)  # builtin web, kb and db handlers
    server, _ = create_server(searcher, user_id=user, team_id=team)

    async def serve() -> None:
        try:
            await server.run_stdio_async()
        finally:
            await searcher.aclose()

    anyio.run(serve)
