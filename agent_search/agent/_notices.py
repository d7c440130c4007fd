"""What a stream says about its set-up rather than about the question: a search type that
auto search leaves out because it is not configured, and how to turn it on.

Web search without its provider's API key is the common case (``make demo`` on a fresh
machine): it is not a failure of each question. Auto search leaves it out and the stream
says so once, as a ``notice`` event, instead of a failed ``web`` search on every question.
"""

from __future__ import annotations

from agent_search.config import SearchConfig
from agent_search.registry import Registry

WEB_SEARCH_OFF = "web_search_off"


def usable_types(types: list[str], registry: Registry, config: SearchConfig
                 ) -> tuple[list[str], list[tuple[str, str]]]:
    """The search types of ``types`` auto search can run, and (kind, text) notices for
    those it leaves out."""
    off = web_search_off(registry, config) if "web" in types else None
    if off is None:
        return types, []
    return [t for t in types if t != "web"], [(WEB_SEARCH_OFF, off)]


def web_search_off(registry: Registry, config: SearchConfig) -> str | None:
    """Why the built-in web search cannot run with ``config`` (its provider needs an API
    key the environment does not hold), as a notice that says how to turn it on; None when
    it can run, or when another handler serves ``web`` (its own search reports)."""
    handlers = registry.handlers("web")
    if not handlers:
        return None
    from agent_search.web import MissingAPIKeyError, WebHandler

    handler = handlers[0]
    if not isinstance(handler, WebHandler):
        return None
    try:
        handler.provider_for(handler.settings_for(config))
    except MissingAPIKeyError as exc:
        return (f"Web search is off: the {exc.provider} provider needs an API key. Set "
                f"{exc.env_var} to turn it on (or set web.enabled to false in the "
                "configuration to leave web search out).")
    except Exception:  # a bad web section: the search itself reports it, naming the key
        return None
    return None
