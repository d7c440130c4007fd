"""The one door from the core up to the loader: where :meth:`Searcher.from_config
<agent_search.searcher.Searcher.from_config>` finds what reads a project's files.

The core reads no project file and knows neither the agent, the server nor the builtin
handlers (``tests/core/test_layering.py``); :mod:`agent_search.loader`, above it, knows
them all. The package's face (``agent_search/__init__.py``) hands the loader's
:func:`~agent_search.loader.searcher_from_config` in here when the package is imported —
which every import of an ``agent_search`` module does first — so ``from_config`` works
however :class:`~agent_search.searcher.Searcher` was imported, and a program that builds
its searcher from a :class:`~agent_search.config.SearchConfig` of its own never loads the
loader. This module imports nothing, so the face stays free to load."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_from_config: Callable[..., Any] | None = None


def use_loader(from_config: Callable[..., Any]) -> None:
    """Make ``from_config(cls, config_dir, **options)`` what ``Searcher.from_config``
    calls (done once, by the package's face)."""
    global _from_config
    _from_config = from_config


def loader() -> Callable[..., Any]:
    """What ``Searcher.from_config`` calls; an error when nothing was handed in (only a
    module loaded without its package could see that)."""
    if _from_config is None:
        raise RuntimeError("agent_search's loader is not set up: import agent_search")
    return _from_config


_chat_client: Callable[..., Any] | None = None


def use_chat_client(factory: Callable[..., Any]) -> None:
    """Make ``factory(name, *, base_url, model, api_key_env, timeout)`` what the core
    calls for an OpenAI-compatible chat client (the research mode's LLM planner): the
    client lives in the agent runtime, above the core (done once, by the package's face)."""
    global _chat_client
    _chat_client = factory


def chat_client() -> Callable[..., Any]:
    """The chat-client factory handed in by the package's face (see
    :func:`use_chat_client`); a client has ``stream_chat(messages)`` and ``aclose()``
    and raises the package's ``RunError`` when the endpoint fails."""
    if _chat_client is None:
        raise RuntimeError("agent_search's chat client is not set up: import agent_search")
    return _chat_client
