"""Runtime settings from ``config/agent.yml``: LLM connectors, MCP servers, model
rerankers and the ``uses`` delegation switches.

```yaml
connectors:
  openai: {base_url: https://api.openai.com/v1, model: gpt-4o-mini, api_key_env: OPENAI_API_KEY}
mcp:
  servers:
    nlp: {command: python, args: [tools/nlp_server.py]}   # stdio
    remote: {url: http://127.0.0.1:8000/mcp}              # streamable HTTP
rerankers:
  tei: {url: http://127.0.0.1:8080/rerank, protocol: tei}
uses: {keyword: builtin, query: builtin, rerank: builtin}
```
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent_search._config_files import config_error, read_yaml
from agent_search._config_keys import did_you_mean
from agent_search.errors import ConfigError
from agent_search.mcp.client import MCPServerSettings
from agent_search.types import Count, Number

AGENT_FILE = "agent.yml"
OFFLINE = "offline"
"""The connector name that means: no LLM, the offline extractive responder."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ConnectorSettings(_Strict):
    """One OpenAI-compatible chat endpoint (OpenAI, Ollama, vLLM, llama.cpp server...)."""

    base_url: str
    model: str
    api_key_env: str | None = None
    api_key: str | None = Field(default=None, description="Literal key; prefer api_key_env")
    timeout: Number = Field(default=60.0, gt=0, description="Seconds for the whole answer")
    idle_timeout: Number = Field(default=20.0, gt=0, description="Seconds without a chunk")
    connect_timeout: Number = Field(default=5.0, gt=0)
    temperature: Number | None = None
    max_tokens: Count | None = Field(default=None, ge=1)
    headers: dict[str, str] = Field(default_factory=dict)

    def resolved_key(self) -> str | None:
        if self.api_key:
            return self.api_key
        return os.environ.get(self.api_key_env) if self.api_key_env else None

    def missing_key(self) -> str | None:
        """The name of the environment variable that should hold the key but is unset."""
        if self.api_key or not self.api_key_env:
            return None
        return None if os.environ.get(self.api_key_env) else self.api_key_env


class McpSettings(_Strict):
    servers: dict[str, MCPServerSettings] = Field(default_factory=dict)


class RerankerSettings(_Strict):
    """An HTTP rerank endpoint (Cohere ``/v1/rerank``, Jina ``/v1/rerank`` or
    text-embeddings-inference ``/rerank``)."""

    url: str
    protocol: Literal["cohere", "jina", "tei"] = "cohere"
    model: str | None = None
    api_key_env: str | None = None
    timeout: Number = Field(default=10.0, gt=0)


class DelegationSettings(_Strict):
    timeout: Number = Field(default=20.0, gt=0, description="Seconds per delegated call")
    retries: Count = Field(default=2, ge=0, le=5, description="Extra tries for invalid answers")


class RewriteSettings(_Strict):
    """The LLM rewrite of a follow-up into a whole question, run before the searches when
    the assistant has a language model (see :mod:`agent_search.agent._followup`)."""

    enabled: bool = True
    timeout: Number = Field(default=4.0, gt=0, le=60,
                            description="Seconds; then the builtin reading is used")


class GroundingSettings(_Strict):
    """The optional language-model verifier of the grounding (agent_search.grounding)."""

    verifier: str | None = Field(
        default=None, description="Connector that settles the sentences the offline "
                                  "check could not (none: offline only)")
    timeout: Number = Field(default=10.0, gt=0, le=120,
                            description="Seconds for all of one answer's verifications")
    sentences: Count = Field(default=8, ge=1, le=50,
                             description="Sentences of one answer put to the verifier")


class AgentSettings(_Strict):
    connectors: dict[str, ConnectorSettings] = Field(default_factory=dict)
    default_connector: str | None = None
    mcp: McpSettings = Field(default_factory=McpSettings)
    rerankers: dict[str, RerankerSettings] = Field(default_factory=dict)
    uses: dict[str, Any] = Field(default_factory=dict)
    delegation: DelegationSettings = Field(default_factory=DelegationSettings)
    rewrite: RewriteSettings = Field(default_factory=RewriteSettings)
    grounding: GroundingSettings = Field(default_factory=GroundingSettings)
    records: bool = Field(default=True, description="Store a search record per stream")
    server: dict[str, Any] = Field(default_factory=dict,
                                   description="Read by agent_search.server (ServerSettings)")
    file: str | None = Field(default=None, exclude=True)

    def connector_problem(self, name: str) -> tuple[str, str | None] | None:
        """Why ``name`` is not a connector (with the closest defined one), or None when
        it is one, or ``offline``."""
        if name == OFFLINE or name in self.connectors:
            return None
        defined = ", ".join(self.connectors) or "none"
        return (f"no connector {name!r} in {self.file or AGENT_FILE} connectors "
                f"(defined: {defined}; or {OFFLINE!r})",
                did_you_mean(name, [*self.connectors, OFFLINE]))

    def check_connectors(self, package_connector: str | None, package_file: str) -> None:
        """Refuse a ``default_connector`` or an assistant's ``connector`` that names no
        connector: a typo there would otherwise answer offline without a word."""
        for name, file, key in ((self.default_connector, self.file, "default_connector"),
                                (package_connector, package_file, "connector"),
                                (self.grounding.verifier, self.file, "grounding.verifier")):
            problem = self.connector_problem(name) if name else None
            if problem is not None:
                raise ConfigError(problem[0], file=file, key=key, hint=problem[1])

    @classmethod
    def load(cls, config_dir: str | Path | None) -> AgentSettings:
        """Settings from ``<config_dir>/agent.yml``; defaults when absent."""
        if config_dir is None:
            return cls()
        path = Path(config_dir) / AGENT_FILE
        if not path.is_file():
            return cls()
        data = read_yaml(path)
        try:
            settings = cls.model_validate(data)
        except ValidationError as exc:
            raise config_error(exc, file=str(path), model=cls) from exc
        settings.file = str(path)
        return settings
