"""The one settings model of a connection to an MCP server.

Used by ``mcp.servers`` in ``config/agent.yml`` (``uses.*``, ``mcp_resource`` data
sources, MCP rerankers) and, with the search tool to call, by ``web.mcp_servers`` (the
``mcp:<server>`` web provider).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agent_search.types import Number


class MCPServerSettings(BaseModel):
    """How to reach one MCP server: a stdio ``command`` (with ``args``, ``env``, ``cwd``)
    or a streamable-HTTP ``url`` (with ``headers``)."""

    model_config = ConfigDict(extra="forbid")

    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(
        default_factory=dict, description="Added to a safe default environment (stdio)")
    cwd: str | None = Field(default=None, description=(
        "Working directory of a stdio server (default: beside config/agent.yml for "
        "agent servers, the current directory otherwise)"))
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    timeout: Number | None = Field(default=None, gt=0, description=(
        "Seconds per call at most (default: the caller's: web.timeout for the web "
        "provider, delegation.timeout for uses.*, else 30)"))

    @model_validator(mode="after")
    def _one_transport(self) -> MCPServerSettings:
        if (self.command is None) == (self.url is None):
            raise ValueError("an MCP server needs exactly one of 'command' (stdio) or "
                             "'url' (streamable HTTP)")
        return self
