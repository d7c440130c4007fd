"""The text-search abstraction of Semantic Kernel's ADR 0059 (option 4), in Python.

One :class:`TextSearch` interface — ``search`` (strings), ``get_text_search_results``
(name/value/link) and ``get_search_results`` (native records) — over our handlers, plus
methods specific to an implementation; any search turned into an LLM-callable function
(:func:`create_search_function`) and grouped in plugins; prompt templates that call them.

Implementations:

- :class:`SearcherTextSearch` — one search type of a :class:`~agent_search.Searcher`
  (any registered handler) or several, merged;
- :class:`KBTextSearch` — knowledge base, with name/value/link mapping and custom record
  types;
- :class:`DBTextSearch` — database models (``get_records`` for rows);
- :class:`WebProviderTextSearch` — one web provider, with its native page records and
  ``get_web_pages`` (full page text).
"""

from agent_search.errors import FilterError
from agent_search.textsearch.base import (
    OptionsLike,
    ResultMapper,
    StringMapper,
    TextSearch,
    TextSearchError,
)
from agent_search.textsearch.db_search import DBTextSearch
from agent_search.textsearch.filters import (
    ANY_FIELD,
    FilterSupport,
    TextSearchFilter,
    all_of,
    any_of,
    equal_to,
    not_equal_to,
    where,
)
from agent_search.textsearch.functions import (
    FunctionParameter,
    SearchFunction,
    ToolArgumentError,
    count_parameter,
    create_search_function,
    filter_from_arguments,
    query_parameter,
    site_parameter,
    skip_parameter,
)
from agent_search.textsearch.kb_search import KBTextSearch
from agent_search.textsearch.plugin import (
    SearchPlugin,
    create_plugin_with_get_search_results,
    create_plugin_with_get_text_search_results,
    create_plugin_with_text_search,
    create_search_plugin,
)
from agent_search.textsearch.request_filters import (
    BUILTIN_REQUEST_FILTERS,
    RequestFilter,
)
from agent_search.textsearch.results import KernelSearchResults, SearchOptions, TextSearchResult
from agent_search.textsearch.searcher_search import SearcherTextSearch
from agent_search.textsearch.templates import (
    DEFAULT_RAG_TEMPLATE,
    PromptTemplate,
    TemplateRenderError,
    render_prompt,
)
from agent_search.textsearch.web_search import WebProviderTextSearch
from agent_search.web.providers import (
    BingWebPage,
    BraveWebResult,
    GoogleWebPage,
    SearXNGResult,
    SerpAPIResult,
    SerperResult,
    TavilyResult,
)

__all__ = [
    "ANY_FIELD",
    "BUILTIN_REQUEST_FILTERS",
    "DEFAULT_RAG_TEMPLATE",
    "BingWebPage",
    "BraveWebResult",
    "DBTextSearch",
    "FilterError",
    "FilterSupport",
    "FunctionParameter",
    "GoogleWebPage",
    "KBTextSearch",
    "KernelSearchResults",
    "OptionsLike",
    "PromptTemplate",
    "RequestFilter",
    "ResultMapper",
    "SearXNGResult",
    "SearchFunction",
    "SearchOptions",
    "SearchPlugin",
    "SearcherTextSearch",
    "SerpAPIResult",
    "SerperResult",
    "StringMapper",
    "TavilyResult",
    "TemplateRenderError",
    "TextSearch",
    "TextSearchError",
    "TextSearchFilter",
    "TextSearchResult",
    "ToolArgumentError",
    "WebProviderTextSearch",
    "all_of",
    "any_of",
    "count_parameter",
    "create_plugin_with_get_search_results",
    "create_plugin_with_get_text_search_results",
    "create_plugin_with_text_search",
    "create_search_function",
    "create_search_plugin",
    "equal_to",
    "filter_from_arguments",
    "not_equal_to",
    "query_parameter",
    "render_prompt",
    "site_parameter",
    "skip_parameter",
    "where",
]
