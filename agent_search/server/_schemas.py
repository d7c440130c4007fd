"""Request bodies. Unknown fields are accepted where OpenAI clients send many (chat
completions) and refused elsewhere; sizes are bounded here, counts by the route (the
limits come from the configuration)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agent_search.types import Request


class ChatMessage(BaseModel):
    """An OpenAI-style message. ``content`` is text or a list of content parts (``text``
    parts, and ``data`` parts naming user data sources)."""

    model_config = ConfigDict(extra="allow")

    role: Literal["system", "user", "assistant", "tool"]
    content: str | list[dict[str, Any]] | None = None


class ToolFunction(BaseModel):
    model_config = ConfigDict(extra="allow")

    name: str = Field(min_length=1, max_length=64)


class ToolSpec(BaseModel):
    model_config = ConfigDict(extra="allow")

    type: Literal["function"] = "function"
    function: ToolFunction


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="allow")

    include_usage: bool = False


class ChatCompletionRequest(BaseModel):
    """``POST /v1/chat/completions``. ``model`` is an assistant id. Sampling fields of
    the OpenAI API are accepted and ignored (the assistant's connector decides them).
    ``search`` (an extension; ``extra_body`` in the openai client) forces auto search on
    or off."""

    model_config = ConfigDict(extra="allow")

    model: str = Field(min_length=1, max_length=200)
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool = False
    tools: list[ToolSpec] | None = None
    tool_choice: Any = None
    stream_options: StreamOptions | None = None
    search: bool | None = None
    research: bool = False

    @property
    def include_usage(self) -> bool:
        """``stream_options.include_usage``: a last chunk with the (estimated) usage."""
        return bool(self.stream_options and self.stream_options.include_usage)


class StreamRequest(BaseModel):
    """``POST /v1/assistants/{id}/stream``."""

    model_config = ConfigDict(extra="forbid")

    messages: list[ChatMessage] = Field(min_length=1)
    search: bool | None = None
    research: bool = False


class ResearchBody(BaseModel):
    """``POST /v1/research``: a question researched in rounds (see
    :mod:`agent_search.research`). Budgets may only lower the server's ``research``
    section; ``types`` defaults to it."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, max_length=4000)
    types: list[str] = Field(default_factory=list, max_length=10)
    limit: int | None = Field(default=None, ge=1, le=50)
    max_rounds: int | None = Field(default=None, ge=1)
    max_searches: int | None = Field(default=None, ge=1)
    deadline: float | None = Field(default=None, gt=0)


class SearchBody(BaseModel):
    """``POST /v1/search``: one request, or ``requests`` (run in parallel), optionally
    merged into one Result (deduplicated, weighted, reranked)."""

    model_config = ConfigDict(extra="forbid")

    requests: list[Request] = Field(min_length=1)
    merge: bool = False
