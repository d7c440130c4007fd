"""agent-search: the search layer for AI agent runtimes.

Web, knowledge-base and database searches run by pluggable handlers in parallel; results
are merged, deduplicated, weighted, reranked and given request-unique citation ids.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent_search._assembly import use_chat_client, use_loader
from agent_search._lazy import lazy_exports

if TYPE_CHECKING:
    from agent_search.citation import CitationAllocator, build_prompt
    from agent_search.config import SearchConfig
    from agent_search.context import Context
    from agent_search.deps import Deps
    from agent_search.errors import AgentSearchError, ConfigError, InputError, RunError
    from agent_search.events import Event, EventSink, ListSink, NullSink
    from agent_search.loader import load_config
    from agent_search.registry import Handler, Registry
    from agent_search.rerank import Reranker, ScoreReranker
    from agent_search.searcher import Searcher
    from agent_search.trace import TraceNode, span
    from agent_search.types import (
        CitationConfig,
        GraphNode,
        QueryOrder,
        QueryWhere,
        Request,
        RerankOptions,
        Result,
        ResultItem,
    )

_HOME = {
    "AgentSearchError": "errors", "CitationAllocator": "citation", "CitationConfig": "types",
    "ConfigError": "errors", "Context": "context", "Deps": "deps", "Event": "events",
    "EventSink": "events", "GraphNode": "types", "Handler": "registry",
    "InputError": "errors", "ListSink": "events", "NullSink": "events",
    "QueryOrder": "types", "QueryWhere": "types", "Registry": "registry",
    "Request": "types", "RerankOptions": "types", "Reranker": "rerank", "Result": "types",
    "ResultItem": "types", "RunError": "errors", "ScoreReranker": "rerank",
    "SearchConfig": "config", "Searcher": "searcher", "TraceNode": "trace",
    "build_prompt": "citation", "load_config": "loader", "span": "trace",
}
"""Where each public name lives, imported on first use: ``import agent_search`` costs
next to nothing, and a process (a CLI command, a sandboxed parser) loads only the modules
it uses (issue 31)."""


__getattr__, __dir__ = lazy_exports(__name__, _HOME)


def _searcher_from_config(cls: Any, *args: Any, **options: Any) -> Any:
    """``Searcher.from_config``: the loader above the core, imported on first use (the
    core never imports it; see :mod:`agent_search._assembly`)."""
    from agent_search.loader import searcher_from_config

    return searcher_from_config(cls, *args, **options)


def _chat_client(name: str, **settings: Any) -> Any:
    """An OpenAI-compatible chat client of the agent runtime, for the core's optional LLM
    steps (research planning); imported on first use, as the loader is."""
    from agent_search.loader import chat_client

    return chat_client(name, **settings)


use_loader(_searcher_from_config)
use_chat_client(_chat_client)


__version__ = "0.1.0"

__all__ = [
    "AgentSearchError",
    "CitationAllocator",
    "CitationConfig",
    "ConfigError",
    "Context",
    "Deps",
    "Event",
    "EventSink",
    "GraphNode",
    "Handler",
    "InputError",
    "ListSink",
    "NullSink",
    "QueryOrder",
    "QueryWhere",
    "Registry",
    "Request",
    "RerankOptions",
    "Reranker",
    "Result",
    "ResultItem",
    "RunError",
    "ScoreReranker",
    "SearchConfig",
    "Searcher",
    "TraceNode",
    "build_prompt",
    "load_config",
    "span",
]
