"""An assistant's ``package.yao``: its name, LLM connector, prompts and search settings.

The file is JSONC (comments and trailing commas allowed). Parse errors and bad values are
reported as :class:`~agent_search.errors.ConfigError` naming the file, the line (for
syntax errors) or the key (for bad values).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    field_validator,
)

from agent_search._config_files import BUILTIN_TYPES, config_error, read_jsonc
from agent_search.errors import ConfigError

PACKAGE_FILE = "package.yao"


class PromptMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    role: Literal["system", "user", "assistant"] = "system"
    content: str


class _Refs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    collections: list[str] = Field(default_factory=list)
    models: list[str] = Field(default_factory=list)


class McpResourceRef(BaseModel):
    """One MCP resource (or a family of them) the assistant's users may attach as a
    ``mcp_resource`` data source: the server id and the URI; a URI ending in ``*``
    matches every URI that starts with what precedes it."""

    model_config = ConfigDict(extra="forbid")

    server: str = Field(min_length=1)
    uri: str = Field(min_length=1)

    def allows(self, server: str, uri: str) -> bool:
        if server != self.server:
            return False
        if self.uri.endswith("*"):
            return uri.startswith(self.uri[:-1])
        return uri == self.uri


class _Uses(BaseModel):
    """``uses`` of one assistant: the values are checked against what exists when the
    configuration is loaded (:mod:`agent_search._uses`)."""

    model_config = ConfigDict(extra="forbid")

    keyword: str | None = None
    query: str | None = None
    rerank: str | None = None


class AssistantPackage(BaseModel):
    """The validated content of ``package.yao``, unknown keys refused (a typo such as
    ``"serach"`` would otherwise switch search off without a word). ``search`` stays a
    raw mapping: it is a layer of :class:`~agent_search.config.SearchConfig` and
    validated there, with the same errors."""

    model_config = ConfigDict(extra="forbid")

    name: str = ""
    description: str = ""
    examples: list[Annotated[str, StringConstraints(min_length=1, max_length=200)]] = Field(
        default_factory=list, max_length=8,
        description="Example questions the chat page offers on an empty conversation")
    connector: str | None = None
    prompts: list[PromptMessage] = Field(default_factory=list)
    search: dict[str, Any] | bool | None = None
    kb: _Refs = Field(default_factory=_Refs)
    db: _Refs = Field(default_factory=_Refs)
    uses: _Uses = Field(default_factory=_Uses)
    tools: list[Literal["search"]] = Field(
        default_factory=list, description='Tools offered to the model: "search"')
    mcp_resources: list[McpResourceRef] = Field(
        default_factory=list, description="MCP resources users may attach as data "
        "sources; none listed: none may be read")
    options: dict[str, Any] = Field(default_factory=dict)

    @field_validator("prompts", mode="before")
    @classmethod
    def _prompts(cls, v: Any) -> Any:
        if isinstance(v, str):  # a single system prompt
            return [{"role": "system", "content": v}]
        return v

    @property
    def has_search_config(self) -> bool:
        """Does the assistant switch on any search type? (the spec's "has search config")"""
        if isinstance(self.search, bool):
            return self.search
        if not isinstance(self.search, dict):
            return False
        custom = self.search.get("types")
        sections = [*(self.search.get(t) for t in BUILTIN_TYPES),
                    *(custom.values() if isinstance(custom, dict) else ())]
        return any(value is True or (isinstance(value, dict) and value.get("enabled", True))
                   for value in sections)


def load_package(assistant_dir: Path) -> AssistantPackage:
    """Read and validate ``<assistant_dir>/package.yao``."""
    path = assistant_dir / PACKAGE_FILE
    if not path.is_file():
        raise ConfigError("assistant package not found", file=str(path))
    data = read_jsonc(path)
    try:
        return AssistantPackage.model_validate(data)
    except ValidationError as exc:
        raise config_error(exc, file=str(path), model=AssistantPackage) from exc


def sources_package(db_url: str | None, collections: Sequence[str]
                    ) -> tuple[AssistantPackage, dict[str, Any], str]:
    """An assistant made of command-line flags (``ask --db-url`` / ``--collection``): its
    package, its configuration layer (auto search of the database and/or the collections
    alone, web off) and the flags that layer came from, for errors."""
    layer: dict[str, Any] = {"web": {"enabled": False},
                             "db": {"enabled": False}, "kb": {"enabled": False}}
    if db_url is not None:
        layer["db"] = {"url": db_url, "enabled": True, "models": []}
    if collections:
        layer["kb"] = {"enabled": True, "collections": list(collections)}
    flags = " and ".join(f for f, on in (("--db-url", db_url is not None),
                                         ("--collection", bool(collections))) if on)
    name = "database" if db_url is not None and not collections else "sources"
    return AssistantPackage(name=name), layer, flags or "command line"
